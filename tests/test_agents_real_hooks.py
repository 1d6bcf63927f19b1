"""The real CLIs call muxd's hooks, offline against the scripted model servers: Claude Code and
Codex started by muxd get them per run by default (their argv, not the user's files), and an agent typed
at a shell in a muxd pane gets them from `muxd hooks install` (the user's own configuration,
beside the user's own hooks, which still fire). That an event got through is seen in the pane's
published states: a field whose source is `hook`.
Needs `.ci/install-agents`; skips when a CLI is not installed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from muxd.agent_hook_files import config_path, installed
from muxd.testing.fake_models import (AnthropicFake, Call, GeminiFake, OpenAIChatFake, OpenAIResponsesFake, Say, Think,
                                      launch)
from muxd.testing.fake_models.agent_pane import AgentPane
from muxd.testing.patience import stretched
from muxd.testing.wait import wait_until

pytestmark = pytest.mark.agents

ANSWER = "Done with the hooks."
CODEX_REVIEW = "Hooks need review"  # Codex's screen for hooks it does not trust
QWEN_COMMAND = "mkdir -p demo && sleep 3 && ls"  # Qwen blocks a command that starts with a sleep


def _cli(agent: str) -> Path:
    bin_dir, why = launch.find_cli(agent)
    if bin_dir is None:
        pytest.skip(why)
    return bin_dir


def _hook_details(pane: AgentPane, mark: int = 0) -> set[str]:
    """The hook events named as the source of some field of the states published since `mark`."""
    return {p.get("detail") or "" for s in pane.states.since(mark) for p in (s.get("sources") or {}).values()
            if p.get("source") == "hook"}


def _wait_hooked(pane: AgentPane, *events: str, mark: int = 0) -> None:
    try:
        wait_until(lambda: set(events) <= _hook_details(pane, mark), timeout=60, interval=0.1,
                   message=f"states sourced from the hooks {events}")
    except AssertionError:
        raise AssertionError(pane.report(f"no state from the hooks {events}; got {_hook_details(pane, mark)}",
                                         mark)) from None


def _wait_certain_idle(pane: AgentPane, mark: int) -> None:
    """After the turn's end hook: Idle, and certain (the hook and the screen agree)."""
    wait_until(lambda: any(st["activity"]["state"] == "Idle" and st.get("confidence") == "certain"
                           for st in pane.states.since(mark)), timeout=30, interval=0.1,
               message="a certain Idle after the turn's end hook")


def _cmdline(pane: AgentPane) -> list[str]:
    pid = pane.server.cli("display-message", "-p", "-t", pane.pane_id, "#{pane_pid}", check=True).stdout.strip()
    return Path(f"/proc/{pid}/cmdline").read_bytes().rstrip(b"\0").decode().split("\0")


def _install(launch_: launch.AgentLaunch, agent: str) -> None:
    env = {**os.environ, **{k: v for k, v in launch_.env.items() if k in ("HOME", "CODEX_HOME")}}
    done = subprocess.run([sys.executable, "-m", "muxd", "hooks", "install", "--agent", agent], env=env,
                          capture_output=True, text=True, timeout=stretched(60))
    assert done.returncode == 0, done.stderr


def _user_capture_hook(tmp_path: Path) -> tuple[str, Path]:
    """A hook of the user's own: it appends its event's name to a file."""
    log = tmp_path / "user-hook.log"
    script = tmp_path / "user-hook.py"
    script.write_text(f"import json, sys\nopen({str(log)!r}, 'a').write(json.load(sys.stdin)"
                      f"['hook_event_name'] + '\\n')\n")
    return f"{sys.executable} {script}", log


@pytest.fixture
def pane_of(muxd_server) -> Iterator:
    panes: list[AgentPane] = []

    def start(launch_: launch.AgentLaunch, *, from_shell: bool = False) -> AgentPane:
        pane = AgentPane(muxd_server, launch_)
        panes.append(pane)
        return pane.start(from_shell=from_shell)

    yield start
    for pane in panes:
        pane.close()


def test_claude_started_by_muxd_calls_muxds_hooks(pane_of, tmp_path):
    bin_dir = _cli("claude")
    fake = AnthropicFake([[Say("I will run a command.", 0.05), Call("Bash", {"command": "mkdir -p demo && ls demo", "description": "Make a directory"})],
                        [Say(ANSWER, 0.05)]])
    with fake:
        launch_ = launch.claude(tmp_path, fake.url, bin_dir, "--permission-mode", "default")
        pane = pane_of(launch_)
        pane.wait_for("Idle")
        argv = _cmdline(pane)
        settings = json.loads(argv[argv.index("--settings") + 1])
        assert "Stop" in settings["hooks"] and argv[argv.index("--settings") - 1].endswith("claude")
        assert not installed("claude", launch_.env)  # not in the user's files: in the argv
        mark = pane.mark()
        pane.submit("please make a directory")
        pane.wait_for("AwaitingConfirmation")
        pane.press("Enter")
        pane.wait_for("Idle", lambda s: ANSWER in pane.screen(), what="Idle after the answer")
        _wait_hooked(pane, "UserPromptSubmit", "Stop", mark=mark)
        assert _hook_details(pane, mark) & {"PreToolUse", "PermissionRequest", "PostToolUse"}
        states = pane.states.since(mark)
        # During the turn the tool came from the hooks, exactly as the agent ran it.
        assert any(((st.get("sources") or {}).get("tool") or {}).get("source") == "hook"
                   and st.get("tool") == "Bash" for st in states), pane.report("no tool from the hooks", mark)
        _wait_certain_idle(pane, mark)


def test_codex_started_by_muxd_calls_muxds_hooks_trusted_without_a_review(pane_of, tmp_path):
    bin_dir = _cli("codex")
    fake = OpenAIResponsesFake([[Say(ANSWER, 0.05)]])
    with fake:
        launch_ = launch.codex(tmp_path, fake.url, bin_dir)
        user_config = config_path("codex", launch_.env).read_text()
        pane = pane_of(launch_)
        pane.wait_for("Idle")
        assert CODEX_REVIEW not in pane.screen()
        assert "hooks.Stop=[{hooks=[" in " ".join(_cmdline(pane))
        mark = pane.mark()
        pane.submit("say something")
        pane.wait_for("Idle", lambda s: ANSWER in pane.screen(), what="Idle after the answer")
        _wait_hooked(pane, "UserPromptSubmit", "Stop", mark=mark)
        _wait_certain_idle(pane, mark)
        assert config_path("codex", launch_.env).read_text().startswith(user_config)


def _fusion_rule(state: dict) -> str | None:
    return (state.get("fusion") or {}).get("rule")


def test_claude_interrupted_mid_turn_is_idle_at_once_though_no_stop_comes(pane_of, tmp_path):
    """Claude Code fires no Stop when Esc interrupts it: its screen's "⎿ Interrupted" ends the
    turn the hooks opened, rather than the hold that keeps a quiet turn busy running out."""
    bin_dir = _cli("claude")
    fake = AnthropicFake([[Think(300, 0.1), Say("too late", 0.03)]])
    with fake:
        pane = pane_of(launch.claude(tmp_path, fake.url, bin_dir))
        pane.wait_for("Idle")
        mark = pane.mark()
        pane.submit("think for long")
        pane.wait_for("Thinking", lambda s: _fusion_rule(s) == "agree", what="Thinking, the hooks and the screen agreeing")
        pane.press("Escape")
        idle = pane.wait_for("Idle", what="Idle after the interrupt")
        with pane.explained("interrupted", mark):
            # the screen's word (no hook told it), and not the hold of a quiet turn running out
            assert _fusion_rule(idle) == "agree" and idle["confidence"] == "screen", idle["fusion"]


def test_codex_tools_from_its_hooks_in_its_own_names_and_an_interrupt(pane_of, tmp_path):
    bin_dir = _cli("codex")
    fake = OpenAIResponsesFake([[Call("exec_command", {"cmd": "sleep 60; echo slept"})], [Say(ANSWER, 0.05)]])
    with fake:
        pane = pane_of(launch.codex(tmp_path, fake.url, bin_dir, "--dangerously-bypass-approvals-and-sandbox"))
        pane.wait_for("Idle")
        mark = pane.mark()
        pane.submit("run a long command")
        running = pane.wait_for("ToolUse", lambda s: ((s.get("sources") or {}).get("tool") or {}).get("source") == "hook",
                                what="the tool from the hooks")
        with pane.explained("tool", mark):
            assert running["tool"] == "exec_command" and running["tool_input"] == "sleep 60; echo slept"
        pane.wait_for("ToolUse", lambda s: _fusion_rule(s) == "agree", what="the command on screen too")
        pane.press("C-c")
        idle = pane.wait_for("Idle", what="Idle after Ctrl-C")
        with pane.explained("interrupted", mark):
            assert _fusion_rule(idle) in ("screen-only", "agree", "hook-newer"), idle["fusion"]


def test_claude_typed_at_a_shell_calls_the_installed_hooks_beside_the_users_own(pane_of, tmp_path):
    bin_dir = _cli("claude")
    fake = AnthropicFake([[Say(ANSWER, 0.05)]])
    with fake:
        launch_ = launch.claude(tmp_path, fake.url, bin_dir)
        command, log = _user_capture_hook(tmp_path)
        settings = config_path("claude", launch_.env)
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": command}]}]}}))
        _install(launch_, "claude")
        pane = pane_of(launch_, from_shell=True)
        pane.wait_for("Idle", lambda s: s["agent_type"] == "claude", what="Claude at its prompt")
        assert "--settings" not in _cmdline(pane)  # typed at the shell: its argv is the person's
        mark = pane.mark()
        pane.submit("say something")
        pane.wait_for("Idle", lambda s: ANSWER in pane.screen(), what="Idle after the answer")
        _wait_hooked(pane, "UserPromptSubmit", "Stop", mark=mark)
        wait_until(lambda: log.exists() and "Stop" in log.read_text(), timeout=10, message="the user's hook ran")


def test_codex_typed_at_a_shell_calls_the_installed_hooks_it_trusts(pane_of, tmp_path):
    bin_dir = _cli("codex")
    fake = OpenAIResponsesFake([[Say(ANSWER, 0.05)]])
    with fake:
        launch_ = launch.codex(tmp_path, fake.url, bin_dir)
        _install(launch_, "codex")
        pane = pane_of(launch_, from_shell=True)
        pane.wait_for("Idle", lambda s: s["agent_type"] == "codex", what="Codex at its prompt")
        assert CODEX_REVIEW not in pane.screen()
        mark = pane.mark()
        pane.submit("say something")
        pane.wait_for("Idle", lambda s: ANSWER in pane.screen(), what="Idle after the answer")
        _wait_hooked(pane, "UserPromptSubmit", "Stop", mark=mark)


def test_gemini_calls_the_hooks_installed_in_its_user_settings(pane_of, tmp_path):
    """Gemini CLI 0.61 has no per-run way: muxd starts it plain and it reads the installed hooks."""
    bin_dir = _cli("gemini")
    fake = GeminiFake([[Say(ANSWER, 0.05)]])
    with fake:
        launch_ = launch.gemini(tmp_path, fake.url, bin_dir)
        _install(launch_, "gemini")
        settings = json.loads(config_path("gemini", launch_.env).read_text())
        assert settings["security"]["auth"]["selectedType"] == "gemini-api-key"  # theirs, kept
        pane = pane_of(launch_)
        pane.wait_for("Idle")
        assert _cmdline(pane)[-1].endswith("gemini")
        mark = pane.mark()
        pane.submit("say something")
        pane.wait_for("Idle", lambda s: ANSWER in pane.screen(), what="Idle after the answer")
        _wait_hooked(pane, "BeforeAgent", "AfterAgent", mark=mark)
        _wait_certain_idle(pane, mark)


def test_qwen_calls_the_hooks_installed_in_its_user_settings_with_its_tools(pane_of, tmp_path):
    """Qwen Code 0.15.10 has Claude's hook events in Gemini's settings file and, like Gemini, no
    per-run way: muxd starts it plain and it reads the installed hooks."""
    bin_dir = _cli("qwen")
    fake = OpenAIChatFake([[Call("run_shell_command", {"command": QWEN_COMMAND, "description": "Make a directory"})],
                           [Say(ANSWER, 0.05)]])
    with fake:
        launch_ = launch.qwen(tmp_path, fake.url, bin_dir, "--approval-mode", "yolo")
        _install(launch_, "qwen")
        settings = json.loads(config_path("qwen", launch_.env).read_text())
        assert settings["model"]["name"] == "fake-model"  # theirs, kept
        assert [g["hooks"][0]["name"] for g in settings["hooks"]["Stop"]] == ["muxd"]
        pane = pane_of(launch_)
        pane.wait_for("Idle")
        argv = _cmdline(pane)
        assert argv[-2:] == ["--approval-mode", "yolo"] and "hooks" not in " ".join(argv)  # started plain
        mark = pane.mark()
        pane.submit("run a command")
        running = pane.wait_for("ToolUse", lambda s: ((s.get("sources") or {}).get("tool") or {}).get("source") == "hook",
                                what="the tool from the hooks")
        with pane.explained("tool", mark):
            assert running["tool"] == "run_shell_command" and running["tool_input"] == QWEN_COMMAND
        pane.wait_for("Idle", lambda s: ANSWER in pane.screen(), what="Idle after the answer")
        _wait_hooked(pane, "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", mark=mark)
        _wait_certain_idle(pane, mark)


def test_cline_calls_the_hook_files_installed_in_its_hooks_directory(pane_of, tmp_path):
    """Cline 3.0.65 reads hooks only as files in ~/.cline/hooks (its `--hooks-dir` is read by
    nothing): muxd starts it plain and it runs the installed files, its payload on their stdin."""
    bin_dir = _cli("cline")
    command = "sleep 2; echo hi"
    fake = OpenAIChatFake([[Call("run_commands", {"commands": [command]})], [Say(ANSWER, 0.05)]])
    with fake:
        launch_ = launch.cline(tmp_path, fake.url, bin_dir)
        _install(launch_, "cline")
        assert installed("cline", launch_.env)
        pane = pane_of(launch_)  # its close ends Cline's hub daemon too (found by its HOME)
        pane.wait_for("Idle", timeout=40)  # Cline's first start builds its databases
        mark = pane.mark()
        pane.submit("run a command")
        pane.wait_for("AwaitingConfirmation", what="the approval dialog")
        pane.press("y")
        running = pane.wait_for("ToolUse", lambda s: ((s.get("sources") or {}).get("tool") or {}).get("source")
                                == "hook", what="the tool from the hooks")
        with pane.explained("tool", mark):
            assert running["tool"] == "run_commands" and running["tool_input"] == command
        pane.wait_for("Idle", lambda s: ANSWER in pane.screen(), what="Idle after the answer")
        _wait_hooked(pane, "agent_start", "tool_call", "tool_result", "agent_end", mark=mark)
        _wait_certain_idle(pane, mark)
