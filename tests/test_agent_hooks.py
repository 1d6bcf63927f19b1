"""muxd/agent_hooks.py: the hook command and the per-run settings of each agent CLI."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tomllib

from muxd.agent_hooks import (CODEX_SESSION_FLAGS_SOURCE, HOOK_EVENTS, claude_run_flags, claude_run_settings,
                              codex_event_label, codex_hook_key, codex_run_flags, codex_trusted_hash,
                              guarded_hook_command, hook_argv, hook_command_agent)

# Hashes Codex 0.169.0 wrote itself ("Trust all and continue") for hooks given with `-c`: the
# command, the event, the timeout it was given, and the trusted_hash it recorded.
CODEX_WROTE = [
    ("/work/h2/.venv/bin/python /tmp/wiring/capture.py /tmp/pytest-of-root/pytest-220/test_codex_trust_written0"
     "/x.jsonl Stop", "Stop", "sha256:4eca8573cb2c1d2fde05d416a67cd46f1fcd8017967a5818aa240594bbff73bd"),
    # SessionEnd and Interrupt were given 10 s; Codex holds them to 3 s, and hashes that.
    ("/work/h2/.venv/bin/python /tmp/wiring/capture.py /tmp/pytest-of-root/pytest-239/test_codex_trust_written0"
     "/x.jsonl SessionEnd", "SessionEnd",
     "sha256:97cc9c3f5b4458fefcd28c83c9e0896a62cb712d3fe03d2a4b79397a2685d7ed"),
]


def test_the_hook_command_is_this_installs_muxd_by_absolute_path():
    argv = hook_argv("claude")
    assert argv[-3:] == ["hook", "--agent", "claude"]
    assert os.path.isabs(argv[0])
    assert os.path.dirname(argv[0]) == os.path.dirname(sys.executable) or argv[:3] == [sys.executable, "-m", "muxd"]


def test_the_guarded_command_runs_muxd_hook_only_inside_a_pane_and_never_fails(tmp_path):
    """The guard of the user's own configuration: outside a pane nothing runs; inside, muxd hook
    runs; a muxd that is gone fails nothing."""
    fake = tmp_path / "muxd"
    fake.write_text(f"#!/bin/sh\necho ran \"$@\" >> {tmp_path / 'log'}\nexit 3\n")
    fake.chmod(0o755)
    line = guarded_hook_command("codex").replace(shlex.join(hook_argv("codex")[:-3]), shlex.quote(str(fake)))
    env = {k: v for k, v in os.environ.items() if k != "MUXD_PANE"}
    outside = subprocess.run(["sh", "-c", line], env=env, capture_output=True, text=True)
    assert (outside.returncode, outside.stdout, outside.stderr) == (0, "", "")
    assert not (tmp_path / "log").exists()
    inside = subprocess.run(["sh", "-c", line], env={**env, "MUXD_PANE": "%3"}, capture_output=True, text=True)
    assert inside.returncode == 0
    assert (tmp_path / "log").read_text() == "ran hook --agent codex\n"
    gone = line.replace(shlex.quote(str(fake)), shlex.quote(str(tmp_path / "nothing")))
    assert subprocess.run(["sh", "-c", gone], env={**env, "MUXD_PANE": "%3"}, capture_output=True).returncode == 0


def test_muxds_hook_commands_are_known_wherever_muxd_was_installed():
    assert hook_command_agent(guarded_hook_command("gemini")) == "gemini"
    moved = '[ -z "${MUXD_PANE:-}" ] || /opt/old/venv/bin/muxd hook --agent claude || true'
    assert hook_command_agent(moved) == "claude"
    assert hook_command_agent('[ -z "${MUXD_PANE:-}" ] || /usr/bin/python3 -m muxd hook --agent codex || true') == "codex"
    assert hook_command_agent("/home/me/bin/notify.sh") is None
    assert hook_command_agent("muxd hook --agent claude") is None  # not guarded: not one install wrote


def test_claude_gets_every_event_in_exec_form():
    settings = claude_run_settings()
    assert set(settings["hooks"]) == set(HOOK_EVENTS["claude"])
    assert {"UserPromptSubmit", "PreToolUse", "PostToolUse", "Notification", "Stop", "StopFailure",
            "SubagentStop", "SessionStart", "SessionEnd"} <= set(settings["hooks"])
    for groups in settings["hooks"].values():
        [group] = groups
        [handler] = group["hooks"]
        assert [handler["command"], *handler["args"]] == hook_argv("claude")
        assert handler["type"] == "command" and handler["timeout"] > 0 and "async" not in handler
    flag, value = claude_run_flags()
    assert flag == "--settings" and json.loads(value) == settings


def test_codex_gets_its_hooks_and_their_trust_as_config_overrides():
    flags = codex_run_flags()
    assert flags[::2] == ["-c"] * (len(flags) // 2)
    overrides = {}
    for override in flags[1::2]:
        key, _, value = override.partition("=")
        overrides[key] = tomllib.loads(f"v = {value}")["v"]  # each value is TOML, as Codex parses it
    command = shlex.join(hook_argv("codex"))
    for event in HOOK_EVENTS["codex"]:
        [group] = overrides[f"hooks.{event}"]
        [handler] = group["hooks"]
        assert handler["type"] == "command" and handler["command"] == command
        state = overrides["hooks.state"][f"{CODEX_SESSION_FLAGS_SOURCE}:{codex_event_label(event)}:0:0"]
        assert state == {"trusted_hash": codex_trusted_hash(event, command)}
    assert len(overrides["hooks.state"]) == len(HOOK_EVENTS["codex"])


def test_codex_trust_hashes_are_the_ones_codex_writes():
    for command, event, written in CODEX_WROTE:
        assert codex_trusted_hash(event, command) == written
    assert codex_event_label("PreToolUse") == "pre_tool_use" and codex_event_label("Stop") == "stop"
    assert codex_hook_key("/h/.codex/config.toml", "UserPromptSubmit", 2) == "/h/.codex/config.toml:user_prompt_submit:2:0"
