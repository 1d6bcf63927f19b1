"""A prompt for a pane where no agent runs (issue 28): `muxd submit` and MCP send_task refuse it
in one line, since the shell there would run it as a command, unless forced; an agent's pane
takes it as before. A prompt that waited for a busy agent which then quit to its shell is not
typed there either: it fails as `no_agent`, unless it was forced."""

from __future__ import annotations

import asyncio
import json
import shlex
import subprocess
import sys

from muxd.testing.fake_agent_panes import FAKE_AGENT, START_TIMEOUT_S, agent_state, start_fake_agent
from muxd.testing.mcp_stdio import call_error, call_ok, mcp_session
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until

SHELL_START_TIMEOUT_S = 30.0


def start_shell(server: MuxdTestServer, name: str) -> str:
    """A session `name` whose pane runs bash, once bash is its foreground process; the pane id."""
    pane = server.cli("new-session", "-d", "-P", "-s", name, "--", "bash", "--norc", "--noprofile",
                      check=True).stdout.strip()
    wait_until(lambda: server.cli("display", "-p", "-t", pane, "#{pane_current_command}",
                                  check=True).stdout.strip() == "bash",
               timeout=SHELL_START_TIMEOUT_S, message="bash in front of the pane")
    return pane


def test_submit_to_a_shell_is_refused_unless_forced(muxd_server):
    s = muxd_server
    pane = start_shell(s, "scratch")
    refused = s.cli("submit", "-t", pane, "hello")
    assert refused.returncode != 0 and refused.stdout == ""
    assert refused.stderr.strip().splitlines() == [
        f"muxd: no agent in {pane}: bash runs there and would run the prompt as a command; "
        "--force sends it anyway"], refused.stderr

    forced = s.cli("submit", "-t", pane, "forcedword", "--force")
    assert forced.returncode == 0 and forced.stdout.startswith("exec_"), forced.stderr
    # The forced word reaches the shell, so the refused one would have been there before it.
    screen = s.wait_for_text(pane, "forcedword: command not found", timeout=SHELL_START_TIMEOUT_S)
    assert "hello" not in screen, screen


def test_an_agent_pane_takes_a_prompt_without_force(muxd_server):
    s = muxd_server
    start_fake_agent(s, "worker")
    done = s.cli("submit", "-t", "worker", "hello", "--wait")
    assert done.returncode == 0 and "success" in done.stdout, done.stdout + done.stderr


async def _send_task_to_a_shell(server: MuxdTestServer, pane: str) -> None:
    async with mcp_session(server) as session:
        error = await call_error(session, "send_task", pane_id=pane, message="hello")
        assert error == (f"bad_request: no agent in {pane}: bash runs there and would run the prompt as a "
                         "command; force=true sends it anyway"), error
        sent = await call_ok(session, "send_task", pane_id=pane, message="forcedword", force=True)
        assert sent["created"] and sent["pane_id"] == pane


def test_send_task_to_a_shell_is_bad_request_unless_forced(muxd_server):
    pane = start_shell(muxd_server, "scratch")
    asyncio.run(_send_task_to_a_shell(muxd_server, pane))
    screen = muxd_server.wait_for_text(pane, "forcedword: command not found", timeout=SHELL_START_TIMEOUT_S)
    assert "hello" not in screen, screen


QUEUE_END_TIMEOUT_S = 90.0  # a tool turn, a settle, the quit turn's unseen grace, on a loaded machine


def start_agent_over_shell(server: MuxdTestServer, name: str) -> str:
    """A session `name` whose pane runs the fake Claude Code from bash, and bash again once it
    quits (`bash -c 'agent; exec bash'`, as a person runs an agent from a shell); once Idle."""
    script = f"{shlex.join(FAKE_AGENT)} claude; exec bash --norc --noprofile"
    pane = server.cli("new-session", "-d", "-P", "-s", name, "--name", name, "--", "bash", "-c", script,
                      check=True).stdout.strip()
    wait_until(lambda: agent_state(server, pane) == "Idle", timeout=START_TIMEOUT_S, message=f"{name} idle")
    return pane


def submitted(server: MuxdTestServer, pane: str, message: str, *extra: str) -> str:
    """The id of a prompt `muxd submit` queued behind a busy agent."""
    out = server.cli("submit", "-t", pane, message, *extra)
    assert out.returncode == 0 and out.stdout.endswith(" pending\n"), out.stdout + out.stderr
    return out.stdout.split()[0]


def active_ids(server: MuxdTestServer) -> list[str]:
    listed = json.loads(server.cli("history", "--active", "--json", check=True).stdout)
    return [e["id"] for e in listed["executions"]]


def test_a_prompt_queued_for_an_agent_that_quits_to_its_shell_is_not_typed_there_unless_forced(muxd_server):
    s = muxd_server
    pane = start_agent_over_shell(s, "worker")
    # The agent busy: it asks for a yes, and nothing else is delivered until its turn ends.
    busy = s.cli("submit", "-t", pane, "tool")
    assert busy.returncode == 0, busy.stderr
    wait_until(lambda: agent_state(s, pane) == "AwaitingConfirmation", timeout=START_TIMEOUT_S,
               message="the agent asks")
    quit_id = submitted(s, pane, "quit")  # delivered next: the agent exits to bash
    # Waited for by the submitter (`--wait`): it must get the end, not the pending row.
    waiting = subprocess.Popen([sys.executable, "-m", "muxd", "-L", s.name, "submit", "-t", pane, "hello", "--wait",
                                "--json"], env=s.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: len(active_ids(s)) == 3, timeout=START_TIMEOUT_S, message="hello queued")
        forced_id = submitted(s, pane, "forcedword", "--force")
        s.cli("send-keys", "-t", pane, "1", "Enter", check=True)  # yes: the turn ends, the queue runs
        out, err = waiting.communicate(timeout=QUEUE_END_TIMEOUT_S)
    finally:
        waiting.kill()
    assert waiting.returncode == 1, out + err  # --wait: not a success
    hello = json.loads(out)
    assert hello["status"] == "failed" and hello["started_at"] is None, hello
    assert hello["error"]["type"] == "no_agent", hello
    assert hello["error"]["message"] == (f"no agent in {pane}: the agent exited before the prompt was delivered "
                                         "(bash runs there)"), hello
    # The forced one, queued after it, reached bash: so would "hello" have, before it.
    screen = s.wait_for_text(pane, "forcedword: command not found", timeout=QUEUE_END_TIMEOUT_S)
    assert "hello" not in screen and screen.count("command not found") == 1, screen
    shown = json.loads(s.cli("show", forced_id, "--json", check=True).stdout)["execution"]
    assert shown["started_at"] is not None and (shown["error"] or {}).get("type") != "no_agent", shown
    assert json.loads(s.cli("show", quit_id, "--json", check=True).stdout)["execution"]["started_at"] is not None
