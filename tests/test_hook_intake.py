"""`muxd hook` and the daemon's intake of hook events: a pane's own token posts for its own pane
only, a payload must be a bounded JSON object, a pane's events are rate-limited, and the
command never holds up or fails the agent whose hook runs it."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from muxd.client.connection import Client
from muxd.config import HOOK_EVENTS_BURST, HOOK_JSON_DEPTH_MAX, HOOK_PAYLOAD_MAX_CHARS
from muxd.errors import BadRequest, Forbidden, RateLimited
from muxd.protocol import messages as m
from muxd.testing.patience import stretched
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until

HOOK = [sys.executable, "-m", "muxd", "hook", "--agent", "claude"]
STOP = json.dumps({"hook_event_name": "Stop", "session_id": "s-1"})


def _pane_token(server: MuxdTestServer, session: str) -> tuple[str, str]:
    """A new pane that shows its own MUXD_TOKEN, and that token."""
    server.cli("new-session", "-d", "-s", session, "--", "sh", "-c",
               'echo "token=$MUXD_TOKEN."; exec cat', check=True)
    text = server.wait_for_text(session, "token=muxd_")
    token = text.split("token=", 1)[1].split(".", 1)[0]
    pane = server.panes(session)[0]["id"]
    return pane, token


def test_a_pane_token_posts_hook_events_for_its_own_pane_only(muxd_server: MuxdTestServer) -> None:
    mine, token = _pane_token(muxd_server, "agent")
    other, _ = _pane_token(muxd_server, "other")

    async def post() -> None:
        agent = await Client.connect(muxd_server.socket_path, token=token)
        try:
            reply = await agent.call(m.HookEvent, target=mine, agent="claude", payload=STOP)
            assert isinstance(reply, m.Ok)
            with pytest.raises(Forbidden):
                await agent.call(m.HookEvent, target=other, agent="claude", payload=STOP)
        finally:
            await agent.close()

    asyncio.run(post())


@pytest.mark.parametrize(("payload", "why"), [
    ("not json", "hook payload is not JSON"),
    ("[1, 2]", "hook payload is a JSON list, not an object"),
    ("[" * (HOOK_JSON_DEPTH_MAX + 1) + "]" * (HOOK_JSON_DEPTH_MAX + 1), "nests deeper than"),
])
def test_a_payload_that_is_not_a_bounded_json_object_is_a_bad_request(
        muxd_server: MuxdTestServer, payload: str, why: str) -> None:
    pane, _ = _pane_token(muxd_server, "agent")

    async def post() -> None:
        owner = await muxd_server.client()
        try:
            with pytest.raises(BadRequest, match=why):
                await owner.call(m.HookEvent, target=pane, agent="claude", payload=payload)
            with pytest.raises(BadRequest):  # longer than the protocol takes
                await owner.call(m.HookEvent, target=pane, agent="claude",
                                 payload="x" * (HOOK_PAYLOAD_MAX_CHARS + 1))
            assert isinstance(await owner.call(m.HookEvent, target=pane, agent="claude", payload=STOP), m.Ok)
        finally:
            await owner.close()

    asyncio.run(post())


def test_a_panes_hook_events_are_rate_limited(muxd_server: MuxdTestServer) -> None:
    pane, _ = _pane_token(muxd_server, "agent")
    other, _ = _pane_token(muxd_server, "other")

    async def post() -> tuple[int, RateLimited] | None:
        owner = await muxd_server.client()
        try:
            # Sent at once, not one after another's reply: the bucket cannot refill meanwhile.
            calls = [owner.call(m.HookEvent, target=pane, agent="claude", payload=STOP)
                     for _ in range(HOOK_EVENTS_BURST * 2)]
            replies = await asyncio.gather(*calls, return_exceptions=True)
            # Another pane's agent has a rate of its own.
            assert isinstance(await owner.call(m.HookEvent, target=other, agent="claude", payload=STOP), m.Ok)
            return replies
        finally:
            await owner.close()

    replies = asyncio.run(post())
    taken = sum(isinstance(r, m.Ok) for r in replies)
    limited = [r for r in replies if isinstance(r, RateLimited)]
    assert taken + len(limited) == len(replies), [r for r in replies if not isinstance(r, (m.Ok, RateLimited))]
    assert HOOK_EVENTS_BURST <= taken < len(replies) and limited
    assert "retry after" in limited[0].message


def test_muxd_hook_in_a_pane_reaches_its_daemon(muxd_server: MuxdTestServer) -> None:
    """Run as an agent's hook runs it: in the pane, the payload on stdin. A payload the daemon
    refuses shows the daemon's answer (with MUXD_HOOK_DEBUG) and still exits 0."""
    script = (f"echo '[1]' | MUXD_HOOK_DEBUG=1 {' '.join(HOOK)} 2>&1; echo bad-rc=$?; "
              f"echo '{STOP}' | MUXD_HOOK_DEBUG=1 {' '.join(HOOK)} 2>&1; echo good-rc=$?; exec cat")
    muxd_server.cli("new-session", "-d", "-s", "agent", "--", "sh", "-c", script, check=True)
    text = muxd_server.wait_for_text("agent", "good-rc=0", timeout=30)
    assert "muxd hook: hook payload is a JSON list, not an object" in text
    assert "bad-rc=0" in text
    between = text.split("bad-rc=0", 1)[1].split("good-rc=0", 1)[0]
    assert between.strip() == "", f"the good event printed something: {between!r}"


def test_muxd_hook_outside_a_pane_or_without_a_daemon_exits_0_silently(tmp_path: Path) -> None:
    base = {k: v for k, v in os.environ.items() if k not in ("MUXD", "MUXD_PANE", "MUXD_TOKEN")}
    outside = subprocess.run(HOOK, input=STOP, capture_output=True, text=True, timeout=stretched(30), env=base)
    assert (outside.returncode, outside.stdout, outside.stderr) == (0, "", "")
    gone = subprocess.run(HOOK, input=STOP, capture_output=True, text=True, timeout=stretched(30),
                          env={**base, "MUXD": str(tmp_path / "none.sock"), "MUXD_PANE": "%1"})
    assert (gone.returncode, gone.stdout, gone.stderr) == (0, "", "")


def test_muxd_hook_gives_up_on_a_daemon_that_never_answers(tmp_path: Path) -> None:
    """A socket that accepts and then says nothing: the hook still ends, with 0 (the agent is
    not held up for longer than the hook's own timeouts)."""
    path = tmp_path / "mute.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(4)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                accepted.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        base = {k: v for k, v in os.environ.items() if k not in ("MUXD", "MUXD_PANE", "MUXD_TOKEN")}
        done = subprocess.run(HOOK, input=STOP, capture_output=True, text=True, timeout=stretched(30),
                              env={**base, "MUXD": str(path), "MUXD_PANE": "%1", "MUXD_HOOK_DEBUG": "1"})
        assert done.returncode == 0 and done.stdout == ""
        assert done.stderr.startswith("muxd hook: "), done.stderr
        wait_until(lambda: bool(accepted), timeout=5, message="the hook connected")
    finally:
        stop.set()
        thread.join()
        listener.close()
        for conn in accepted:
            conn.close()


def _summary(server: MuxdTestServer, target: str) -> dict:
    return json.loads(server.cli("summary", "-t", target, "--json", check=True).stdout)


def test_a_hook_event_from_the_pane_becomes_its_agent_state_with_its_source(muxd_server: MuxdTestServer) -> None:
    """`muxd hook` run in the pane, as Claude Code's UserPromptSubmit hook runs it: the pane's
    summary says Thinking, from the hook, with the exact prompt; the Stop that follows makes it
    Idle. (The screen here is `cat`'s, which says nothing of an agent: the hooks' word stands.)"""
    prompt = json.dumps({"hook_event_name": "UserPromptSubmit", "session_id": "s-1", "prompt": "fix the bug"})
    muxd_server.cli("new-session", "-d", "-s", "agent", "--", "sh", "-c",
                    f"printf '%s' '{prompt}' | {' '.join(HOOK)}; echo sent; exec cat", check=True)
    muxd_server.wait_for_text("agent", "sent", timeout=30)
    wait_until(lambda: _summary(muxd_server, "agent")["activity"]["state"] == "Thinking", timeout=10,
               message="the prompt's hook read as Thinking")
    summary = _summary(muxd_server, "agent")
    assert summary["agent_type"] == "claude" and summary["session"]["id"] == "s-1"
    assert summary["sources"]["state"]["source"] == "hook"
    assert summary["sources"]["state"]["detail"] == "UserPromptSubmit"
    assert "fix the bug" in muxd_server.cli("explain", "-t", "agent", check=True).stdout

    async def stop() -> None:
        owner = await muxd_server.client()
        try:
            await owner.call(m.HookEvent, target="agent", agent="claude", payload=STOP)
        finally:
            await owner.close()

    asyncio.run(stop())
    wait_until(lambda: _summary(muxd_server, "agent")["activity"]["state"] == "Idle", timeout=10,
               message="the Stop hook read as Idle")
    assert _summary(muxd_server, "agent")["sources"]["state"]["detail"] == "Stop"
