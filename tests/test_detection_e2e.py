"""Detection inside the daemon: states published for live panes, events, summary, plug-ins."""

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from muxd.daemon.panes import detection
from muxd.protocol.messages import AgentStateChanged, PaneExited, Subscribe
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import async_wait_until, wait_until

PLUGIN_DIR = Path(__file__).parent / "plugin_data"


def agent(server, pane_id="%0"):
    panes = json.loads(server.cli("list-panes", "-a", "--json", check=True).stdout)
    return next(p for p in panes if p["id"] == pane_id)["agent"]


@pytest.fixture
def plugin_server():
    env = {"PYTHONPATH": os.pathsep.join([str(PLUGIN_DIR), os.environ.get("PYTHONPATH", "")])}
    server = MuxdTestServer(env=env).start()
    try:
        yield server
    finally:
        server.stop()


def test_a_plugin_detector_is_picked_up_and_drives_published_states(plugin_server):
    s = plugin_server
    s.cli("new-session", "-d", "-s", "d", "--", "sh", "-c",
          "echo DEMO-AGENT ready; read x; echo DEMO-AGENT working; exec sleep 600", check=True)
    state = wait_until(lambda: (lambda a: a if a["activity"]["state"] == "Idle" else None)(agent(s)),
                       message="demo agent idle")
    assert state["agent_type"] == "demo" and state["is_agent"]
    assert state["evidence"] == {"detector": "demo", "rule": "demo-banner", "line": None}
    s.cli("send-keys", "-t", "d", "Enter", check=True)
    state = wait_until(lambda: (lambda a: a if a["activity"]["state"] == "Thinking" else None)(agent(s)),
                       message="demo agent busy")
    assert state["activity"]["description"] == "working"
    summary = json.loads(s.cli("summary", "-t", "d", "--json", "--output", "3", check=True).stdout)
    assert summary["agent_type"] == "demo" and summary["activity"]["state"] == "Thinking"
    assert summary["recent_output"] == ["DEMO-AGENT ready", "", "DEMO-AGENT working"]
    assert set(summary) == {"pane_id", "agent_type", "is_agent", "activity", "session", "recent_tools", "limit",
                            "context", "confirmation", "error", "recent_output", "background", "confidence",
                            "sources"}
    assert summary["confirmation"] is None and summary["error"] is None
    assert summary["confidence"] == "screen" and summary["sources"]["state"]["source"] == "screen"
    assert summary["sources"]["state"]["detail"] == "demo-banner"
    table = s.cli("ls", check=True).stdout
    assert "demo" in table and "Thinking" in table and "working" in table


def test_state_changes_and_exits_are_events(muxd_server):
    s = muxd_server
    s.cli("new-session", "-d", "-s", "e", "--", "sh", "-c", "read x; exit 4", check=True)
    events = []

    async def watch():
        client = await s.client(on_event=events.append)
        try:
            await client.call(Subscribe)
            s.cli("send-keys", "-t", "e", "Enter", check=True)

            async def both_arrived() -> bool:
                return any(isinstance(e, PaneExited) for e in events) and any(
                    isinstance(e, AgentStateChanged) and e.state.activity.state == "Exited" for e in events)

            await async_wait_until(both_arrived, timeout=10, message="exit events")
        finally:
            await client.close()

    asyncio.run(watch())
    exits = [e for e in events if isinstance(e, PaneExited)]
    assert exits and exits[0].pane_id == "%0" and exits[0].exit_code == 4
    states = [e.state.activity.state for e in events if isinstance(e, AgentStateChanged)]
    assert states[-1] == "Exited"


def test_summary_of_a_plain_shell(muxd_server):
    s = muxd_server
    s.cli("new-session", "-d", "-s", "sh", "--tag", "worker", "--", "bash", "--norc", check=True)
    wait_until(lambda: agent(s)["agent_type"] == "shell", message="shell recognised")
    summary = json.loads(s.cli("summary", "-t", "sh", "--json", check=True).stdout)
    assert summary["is_agent"] is False and summary["agent_type"] == "shell"
    assert summary["context"]["tags"] == ["worker"] and summary["recent_output"] is None
    assert summary["session"] == {"id": None, "model": None, "tokens_used": None}
    assert summary["recent_tools"] == []
    bad = s.cli("summary", "-t", "sh", "--output", "51")
    assert bad.returncode == 1 and "out of range" in bad.stderr


def test_foreground_process_follows_an_exec(monkeypatch):
    # One process that execs another program: the name and argv follow it. The first read may
    # land in the middle of sh's own exec (no argv mapped yet), which must not stick either.
    monkeypatch.setattr(detection, "PROCESS_RECHECK_S", 0.0)
    child = subprocess.Popen(["sh", "-c", f"read x; exec {sys.executable} -c 'import sys; sys.stdin.read()' after-exec"],
                             stdin=subprocess.PIPE)
    try:
        pane = type("PaneStub", (), {"foreground_pid": lambda self: child.pid})()
        foreground = detection.ForegroundProcess()
        wait_until(lambda: foreground.of(pane).argv[:2] == ["sh", "-c"], message="sh's argv")
        assert foreground.name == "sh"
        child.stdin.write(b"go\n")
        child.stdin.flush()
        wait_until(lambda: foreground.of(pane).argv[-1:] == ["after-exec"], message="argv after the exec")
        assert foreground.pid == child.pid and foreground.name != "sh"
    finally:
        child.kill()
        child.wait()


def test_a_shell_without_job_control_is_seen_through_to_the_command_it_runs():
    # `sh -c "agent; read x"`: the terminal's foreground group is led by sh, but the program
    # on screen is its child in that group; once the child is gone, sh itself is in front.
    child = subprocess.Popen(["sh", "-c", f"{sys.executable} -c 'import sys; sys.stdin.readline()' the-command; read x"],
                             stdin=subprocess.PIPE, start_new_session=True)
    try:
        pane = type("PaneStub", (), {"foreground_pid": lambda self: child.pid})()
        foreground = detection.ForegroundProcess()
        wait_until(lambda: foreground.of(pane).argv[-1:] == ["the-command"], message="the command sh runs")
        assert foreground.pid != child.pid and foreground.leader == child.pid and foreground.shell_leads
        child.stdin.write(b"done\n")
        child.stdin.flush()
        wait_until(lambda: foreground.of(pane).name == "sh", message="sh in front again")
        assert foreground.pid == child.pid
    finally:
        child.kill()
        child.wait()
