"""Claude Code 2.1.330's agent teams for real, offline: the lead spawns a teammate, a second
claude in a pane of its own, with the `tmux` command (muxd/testing/fake_models/teams.py).

Under real tmux 3.3a (a private server, with a `tmux` on PATH recording each call), the tmux
command lines it sends are the ones tests/shim_data/claude_tmux_commands.txt lists; in a muxd pane opted into
the tmux shim (`--tmux-shim`), the same lines make the teammate a muxd pane: listed, detected
as claude, answering its own script of the same fake model server, reachable by keys, and
closed when the lead quits.
Needs `.ci/install-agents`; skips when the CLI is not installed.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from muxd.testing.fake_models import AnthropicFake, Say, launch
from muxd.testing.fake_models.agent_pane import AgentPane, end_processes_with_home
from muxd.testing.fake_models.teams import TmuxRecorder, server_env, spawn_turns, with_agent_teams
from muxd.testing.outer_terminal import OuterTerminal
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until

pytestmark = pytest.mark.agents

TEAMMATE = "helper"
MARKER = "TEAM-BRIEF-4821"  # opens the teammate's conversation: the fake plays its script there
BRIEF = f"{MARKER}: tell me the fruit of the day."
ANSWER = "The fruit of the day is PINEAPPLE."
FOLLOW_UP = "And tomorrow's is MANGO."
LEAD_SAID = "The teammate is on it."
SPAWN_TIMEOUT_S = 30.0


@pytest.fixture
def team(tmp_path: Path) -> Iterator[tuple[AnthropicFake, launch.AgentLaunch]]:
    """The fake model server scripted for both agents, and the lead's launch (team mode on)."""
    bin_dir, why = launch.find_cli("claude")
    if bin_dir is None:
        pytest.skip(why)
    fake = AnthropicFake(spawn_turns(TEAMMATE, BRIEF, said=LEAD_SAID))
    fake.converse(MARKER, [[Say(ANSWER, 0.02)], [Say(FOLLOW_UP, 0.02)]])
    with fake:
        lead = with_agent_teams(launch.claude(tmp_path, fake.url, bin_dir, "--permission-mode", "default"))
        try:
            yield fake, lead
        finally:
            end_processes_with_home(lead.home)  # the teammates, whatever server ran them


def test_claude_code_spawns_its_teammate_with_these_tmux_commands(team, tmp_path):
    fake, lead = team
    recorder = TmuxRecorder(tmp_path / "tmux-bin")
    env = {**lead.env, "PATH": recorder.path(lead.env["PATH"])}
    command = f"cd {shlex.quote(str(lead.cwd))} && exec " + shlex.join(
        ["env", *(f"{k}={v}" for k, v in env.items()), *lead.argv])
    # The tmux server's environment is what the pane it makes for the teammate starts with.
    terminal = OuterTerminal({**launch.BASE_ENV, **server_env(lead)}, columns=160, lines=40, command=command)
    try:
        terminal.wait_for("? for shortcuts", timeout=SPAWN_TIMEOUT_S)
        terminal.tmux("send-keys", "-t", "outer", "-l", "ask a teammate for the fruit of the day")
        terminal.tmux("send-keys", "-t", "outer", "Enter")

        def teammate_pane() -> str | None:
            panes = terminal.tmux("list-panes", "-a", "-F", "#{pane_id}").split()
            return next((p for p in panes[1:] if ANSWER in terminal.tmux("capture-pane", "-p", "-t", p)), None)

        teammate = wait_until(teammate_pane, timeout=SPAWN_TIMEOUT_S, message="the teammate's answer in a tmux pane")
        lead_pane, socket = terminal.tmux("display-message", "-p", "-t", "outer", "#{pane_id} #{socket_path}").split()
        calls = [c for c in recorder.calls() if c.argv[:2] == ["-S", socket]]
        by_name = {c.command: c for c in calls}
        assert all(c.exit == 0 and c.pane == lead_pane for c in calls), calls
        split = by_name["split-window"]
        assert split.argv[2:] == ["split-window", "-d", "-t", lead_pane, "-h", "-l", "70%", "-P", "-F", "#{pane_id}",
                                  "--", "cat"], split
        assert split.stdout == f"{teammate}\n"
        respawn = by_name["respawn-pane"]
        assert respawn.argv[2:6] == ["respawn-pane", "-k", "-t", teammate] and respawn.argv[6] == "--", respawn
        started = shlex.split(respawn.argv[7])
        assert started[:3] == ["cd", str(lead.cwd), "&&"] and f"ANTHROPIC_BASE_URL={fake.url}" in started
        assert started[started.index("--agent-name") + 1] == TEAMMATE
        assert [c.command for c in calls] == [
            "display-message", "list-panes", "split-window", "set-option", "set-option", "set-option",
            "select-pane", "set-option", "list-panes", "set-option", "set-option", "respawn-pane"]
        assert fake.main_requests(MARKER), "the teammate spoke to the fake in its own conversation"
    finally:
        terminal.close()


def _panes(server: MuxdTestServer) -> list[dict[str, Any]]:
    return json.loads(server.cli("list-panes", "-a", "--json", check=True).stdout)  # type: ignore[no-any-return]


def test_a_teammate_claude_code_spawns_through_the_tmux_shim_is_a_muxd_pane(team):
    fake, lead = team
    # The daemon's environment is what a pane it makes for `tmux split-window` starts with.
    server = MuxdTestServer(env=server_env(lead)).start()
    pane = AgentPane(server, replace(lead, pane_flags=("--tmux-shim",)), session="team")
    try:
        pane.start().wait_for("Idle", lambda s: s["session"]["model"], what="the lead Idle")
        pane.run_turn("ask a teammate for the fruit of the day", LEAD_SAID)

        def teammate() -> dict[str, Any] | None:
            return next((p for p in _panes(server) if p["id"] != pane.pane_id), None)

        helper = wait_until(teammate, timeout=SPAWN_TIMEOUT_S, message="a second pane")
        server.wait_for_text(helper["id"], ANSWER, timeout=SPAWN_TIMEOUT_S)
        # Its model is read off its screen, and can come after its prompt does (fresh CI once saw Idle without it).
        helper = wait_until(lambda: (p := teammate()) and p["agent"]["activity"]["state"] == "Idle"
                            and p["agent"]["session"]["model"] and p,
                            timeout=SPAWN_TIMEOUT_S, message="the teammate Idle after its answer, its model shown")
        assert helper["agent"]["agent_type"] == "claude"
        summary = json.loads(server.cli("summary", "-t", helper["id"], "--json", check=True).stdout)
        assert summary["agent_type"] == "claude" and summary["activity"]["state"] == "Idle"
        lead_row = next(p for p in _panes(server) if p["id"] == pane.pane_id)
        assert (helper["session"], helper["window_id"]) == (lead_row["session"], lead_row["window_id"]), "a split"
        assert helper["cwd"] == str(lead.cwd)
        assert helper["command"][:2] == ["/bin/sh", "-c"] and f"--agent-name {TEAMMATE}" in helper["command"][2]
        assert fake.main_requests(MARKER), "the teammate spoke to the fake in its own conversation"

        # Reachable as any muxd pane: typed into, it answers its next scripted turn.
        server.cli("send-keys", "-t", helper["id"], "-l", "and tomorrow?", check=True)
        server.cli("send-keys", "-t", helper["id"], "Enter", check=True)
        server.wait_for_text(helper["id"], FOLLOW_UP, timeout=SPAWN_TIMEOUT_S)
        assert len(fake.main_requests(MARKER)) >= 2

        # The lead, quitting, stops its teammate: `tmux kill-pane` closes the muxd pane.
        pane.mark()
        pane.submit("/exit")
        asking = pane.wait_for("AwaitingConfirmation", what="the lead asking to stop its teammate")
        with pane.explained("exit with a teammate running"):
            assert asking["confirmation"]["prompt"] == "Background work is running" and asking["tool"] is None
            assert asking["confirmation"]["options"][0] == "1. Exit and stop tasks"
        pane.press("Enter")
        pane.wait_for("Exited", timeout=SPAWN_TIMEOUT_S)
        wait_until(lambda: teammate() is None, timeout=SPAWN_TIMEOUT_S, message="the teammate's pane closed")
    finally:
        pane.close()
        server.stop()
