"""The history's output tap is on a pane only while it has work: off while an idle agent is in
front (its redraws cost recording nothing), on again once the agent leaves its shell, so a
command a person types there is still recorded from the shell's prompt marks."""

from __future__ import annotations

import json
import shlex

from muxd.testing.fake_agent_panes import FAKE_AGENT, agent_state
from muxd.testing.wait import wait_until

COMMAND = "ls /no/such/dir"


def _agent_type(server, pane: str) -> str | None:
    panes = json.loads(server.run_here("list-panes", "-a", "--json", check=True).stdout)
    return next(p["agent"].get("agent_type") for p in panes if p["id"] == pane)


def _typed_commands(server) -> list[dict]:
    rows = json.loads(server.cli("history", "--json", "--status", "failed", check=True).stdout)["executions"]
    return [r for r in rows if r["message"] == COMMAND]


def test_a_command_typed_after_the_agent_left_its_shell_is_recorded(muxd_server):
    s = muxd_server
    shell = s.cli("new-session", "-d", "-P", "-s", "sh", check=True).stdout.strip()
    wait_until(lambda: s.cli("run", "-t", shell, "--wait", "--", "true").returncode == 0 or None,
               timeout=15, interval=0.5, message="the shell writes prompt marks")
    s.cli("send-keys", "-t", shell, shlex.join([*FAKE_AGENT, "claude"]), "Enter", check=True)
    wait_until(lambda: agent_state(s, shell) == "Idle" and _agent_type(s, shell) == "claude",
               timeout=20, message="the agent idle in front of the shell")
    s.cli("send-keys", "-t", shell, "quit", "Enter", check=True)
    wait_until(lambda: _agent_type(s, shell) != "claude", timeout=20, message="the shell in front again")

    s.cli("send-keys", "-t", shell, COMMAND, "Enter", check=True)
    wait_until(lambda: _typed_commands(s) or None, timeout=15, message="the typed command recorded")
    [row] = _typed_commands(s)
    assert row["triggered_by"] == "manual" and row["pane_id"] == shell, row
