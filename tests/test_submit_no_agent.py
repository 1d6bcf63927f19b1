"""A prompt for a pane where no agent runs (issue 28): `muxd submit` and MCP send_task refuse it
in one line, since the shell there would run it as a command, unless forced; an agent's pane
takes it as before."""

from __future__ import annotations

import asyncio

from muxd.testing.fake_agent_panes import start_fake_agent
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
