"""muxd/daemon/panes/agent_argv.py: which programs the daemon starts get muxd's hook flags, where
they go, and when they are left alone."""

from __future__ import annotations

import json

import pytest

from muxd.agent_hooks import claude_run_flags, codex_run_flags, guarded_hook_command
from muxd.daemon.panes.agent_argv import with_agent_hooks


@pytest.fixture
def env(tmp_path):
    return {"HOME": str(tmp_path)}


@pytest.mark.parametrize(("argv", "at"), [
    (["claude"], 1),
    (["/opt/bin/claude", "--permission-mode", "default"], 1),
    (["claude", "fix the bug"], 1),
    (["env", "-u", "CI", "-uCI_X", "TERM=xterm", "claude", "-c"], 6),
    (["env", "-i", "--unset", "X", "--chdir=/tmp", "--", "claude"], 7),
])
def test_claude_sessions_get_the_settings_right_after_the_program(env, argv, at):
    assert with_agent_hooks(argv, env) == [*argv[:at], *claude_run_flags(), *argv[at:]]


@pytest.mark.parametrize("argv", [["codex"], ["codex", "exec", "say hi"], ["codex", "resume", "--last"],
                                  ["env", "-u", "CI", "codex"]])
def test_codex_sessions_get_their_config_overrides(env, argv):
    at = argv.index("codex") + 1
    assert with_agent_hooks(argv, env) == [*argv[:at], *codex_run_flags(), *argv[at:]]


@pytest.mark.parametrize("argv", [
    ["bash"], ["gemini"], ["aider"], ["sh", "-c", "claude"], ["claude", "mcp", "list"], ["claude", "--version"],
    ["codex", "login"], ["codex", "app-server"], ["env", "-S", "claude -c"], ["env"], ["env", "A=b"], [],
    ["claude-wrapper"],
])
def test_other_programs_and_management_commands_are_left_alone(env, argv):
    assert with_agent_hooks(argv, env) == argv


def test_an_agent_whose_user_config_has_muxds_hooks_is_left_alone(tmp_path, env):
    """Hooks in the user's settings and again per run would fire twice."""
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": guarded_hook_command("claude")}]}]}}))
    assert with_agent_hooks(["claude"], env) == ["claude"]
    assert with_agent_hooks(["codex"], env) != ["codex"]  # Codex's own file has none


def test_the_hooks_per_run_are_on_unless_refused(env):
    """On by default; off when the pane's (or the server's) environment says MUXD_AGENT_HOOKS=0."""
    assert with_agent_hooks(["claude"], {**env, "MUXD_AGENT_HOOKS": "0"}) == ["claude"]
    assert with_agent_hooks(["claude"], {"HOME": env["HOME"]}) != ["claude"]
    assert with_agent_hooks(["codex"], {**env, "MUXD_AGENT_HOOKS": "1"}) != ["codex"]


def test_the_daemon_starts_and_respawns_an_agent_with_its_flags_and_shows_the_command_asked(muxd_server, tmp_path):
    """A stand-in `claude` that prints the words it was given: the daemon adds the settings when
    it starts the pane and again when respawn-pane starts it anew; the pane's command stays the
    one asked for."""
    claude = tmp_path / "claude"
    claude.write_text('#!/bin/sh\nprintf "words=%s\\n" "$#"; for w in "$@"; do echo "[$w]"; done; exec cat\n')
    claude.chmod(0o755)
    muxd_server.cli("new-session", "-d", "-s", "a", "-x", "400", "-y", "50", "--",
                    str(claude), "--resume", check=True)
    screen = muxd_server.wait_for_text("a", "[--resume]")
    assert "words=3" in screen and "[--settings]" in screen  # --settings, its JSON, --resume
    started = muxd_server.cli("display-message", "-p", "-t", "a", "#{pane_start_command}", check=True)
    assert started.stdout.strip() == f"{claude} --resume"
    muxd_server.cli("respawn-pane", "-k", "-t", "a", check=True)
    muxd_server.wait_for_text("a", "[--resume]")
    assert "words=3" in muxd_server.capture("a")
