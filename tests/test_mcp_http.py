"""`muxd mcp --http`: the real SDK streamable HTTP client against a real `muxd mcp` process and daemon."""

from __future__ import annotations

import asyncio
import json
import re
import secrets
import sys
from collections import Counter

import httpx2
import pytest

from muxd.errors import Forbidden
from muxd.mcp_server.http_auth import token_key
from muxd.protocol.access_messages import CheckTokens
from muxd.testing.mcp_http import HttpMcp, create_token
from muxd.testing.mcp_stdio import call_error, call_ok, wait_budget_s
from muxd.testing.patience import patient_wait_for, stretched
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import async_wait_until, wait_until
from test_mcp_server import QUIET_KEYS, SUMMARY_KEYS

FAKE_CLAUDE = [sys.executable, "-m", "muxd.testing.fake_agent", "claude"]
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "t", "version": "0"}}}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _assert_unauthorized(response: httpx2.Response) -> None:
    assert response.status_code == 401, response.text
    assert response.headers["www-authenticate"].startswith("Bearer ")
    assert response.json()["error"] == "invalid_token"


def test_http_requires_a_bearer_token(muxd_server: MuxdTestServer) -> None:
    mcp = HttpMcp(muxd_server)
    try:
        with httpx2.Client(timeout=stretched(10)) as http:
            _assert_unauthorized(http.post(mcp.url, json=INITIALIZE, headers=MCP_HEADERS))
            _assert_unauthorized(http.post(mcp.url, json=INITIALIZE,
                                           headers={**MCP_HEADERS, "Authorization": "Basic dXNlcjpwdw=="}))
            _assert_unauthorized(http.post(mcp.url, json=INITIALIZE,
                                           headers={**MCP_HEADERS, "Authorization": "Bearer x"}))
            _assert_unauthorized(http.get(mcp.metrics_url))
            # Still serving after each refusal: an authenticated initialize goes through.
            token = create_token(muxd_server, "view_only")
            ok = http.post(mcp.url, json=INITIALIZE, headers={**MCP_HEADERS, "Authorization": f"Bearer {token}"})
            assert ok.status_code == 200, ok.text
            assert "mcp-session-id" in ok.headers
        assert "serving http://127.0.0.1:" in "".join(mcp.log)
        assert not any("warning" in line for line in mcp.log)  # loopback: no warning
    finally:
        assert mcp.stop() == 0


async def _drive(mcp: HttpMcp, token: str) -> None:
    async with mcp.session(token) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert {"agent_summary", "list_panes", "read_pane", "send_input", "wait_for"} <= set(tools)
        assert set(tools["agent_summary"].output_schema["properties"]) >= SUMMARY_KEYS | {"recent_output"}

        shell = await call_ok(session, "create_pane", command=["bash", "--norc"], name="sh", env={"PS1": "$ "})
        agent = await call_ok(session, "create_pane", command=FAKE_CLAUDE, name="claude", columns=100, lines=30)
        await call_ok(session, "send_input", pane_id="sh", text="echo via-$((40+2))", submit=True)

        async def shell_answered() -> bool:
            return "via-42" in (await call_ok(session, "read_pane", pane_id="sh", lines=5))["text"].splitlines()

        await async_wait_until(shell_answered, timeout=10, interval=0.25, message="via-42 in read_pane")
        # wait_for's event connection presents the same token as the call.
        found = await call_ok(session, "wait_for", pane_id="sh", pattern=r"^via-\d+$",
                              timeout_s=wait_budget_s(5))
        assert found["matched"] and found["line"] == "via-42"

        async def claude_detected() -> bool:
            summary = await call_ok(session, "agent_summary", pane_id="claude")
            return summary["agent_type"] == "claude"

        await async_wait_until(claude_detected, timeout=15, interval=0.25, message="claude detected")
        summary = await call_ok(session, "agent_summary", pane_id=agent["id"], include_recent_output=True,
                                output_lines=5)
        assert SUMMARY_KEYS | {"recent_output"} <= set(summary) <= SUMMARY_KEYS | QUIET_KEYS | {"recent_output"}
        assert summary["is_agent"] is True and summary["pane_id"] == agent["id"]
        assert 0 < len(summary["recent_output"]) <= 5
        plain = await call_ok(session, "agent_summary", pane_id=shell["id"])
        assert SUMMARY_KEYS <= set(plain) <= SUMMARY_KEYS | QUIET_KEYS and plain["is_agent"] is False and plain["agent_type"] in (None, "shell")

        panes = (await call_ok(session, "list_panes"))["panes"]
        assert {p["name"] for p in panes} == {"sh", "claude"}
        screen = await call_ok(session, "read_pane", pane_id="claude", lines=30)
        assert screen["lines"] > 0 and screen["cursor"]

        # Errors keep their code; the server keeps serving after each.
        assert "not_found" in await call_error(session, "agent_summary", pane_id="%999")
        message = await call_error(session, "agent_summary", pane_id="sh", output_lines=51)
        assert "bad_request" in message and "output_lines" in message
        assert "bad_request" in await call_error(session, "read_pane", pane_id="sh", lines="many")
        assert (await call_ok(session, "list_agents"))["agents"]

    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=stretched(10)) as http:
        metrics = await http.get(mcp.metrics_url)
    assert metrics.status_code == 200 and metrics.headers["content-type"].startswith("text/plain")
    assert 'mcp_calls_total{tool="agent_summary"}' in metrics.text
    assert 'mcp_errors_total{tool="agent_summary",code="not_found"}' in metrics.text


def test_http_drives_panes_and_serves_metrics(muxd_server: MuxdTestServer) -> None:
    mcp = HttpMcp(muxd_server)
    try:
        asyncio.run(patient_wait_for(_drive(mcp, create_token(muxd_server, "admin")), timeout=40))
    finally:
        assert mcp.stop() == 0


async def _refusals(mcp: HttpMcp, server: MuxdTestServer, view_only: str) -> None:
    async with httpx2.AsyncClient(timeout=stretched(10)) as http:
        for bad in ("muxd_" + "x" * 43, "not-a-token"):
            response = await http.post(mcp.url, json=INITIALIZE,
                                       headers={**MCP_HEADERS, "Authorization": f"Bearer {bad}"})
            _assert_unauthorized(response)
    server.cli("new-session", "-d", "--name", "work", "--", "bash", "--norc", check=True)
    async with mcp.session(view_only) as session:
        assert [p["name"] for p in (await call_ok(session, "list_panes"))["panes"]] == ["work"]
        message = await call_error(session, "send_input", pane_id="work", text="rm -rf /", submit=True)
        assert "forbidden" in message and "execute_" in message, message
        assert "forbidden" in await call_error(session, "kill_pane", pane_id="work")
        summary = await call_ok(session, "agent_summary", pane_id="work")  # still serving, reads allowed
        assert json.loads(json.dumps(summary))["pane_id"].startswith("%")


def test_http_refuses_unknown_tokens_and_enforces_tiers(muxd_server: MuxdTestServer) -> None:
    view_only = create_token(muxd_server, "view_only")
    mcp = HttpMcp(muxd_server)
    try:
        asyncio.run(patient_wait_for(_refusals(mcp, muxd_server, view_only), timeout=30))
    finally:
        assert mcp.stop() == 0


def test_http_address_errors_and_non_loopback_warning(muxd_server: MuxdTestServer) -> None:
    for bad in ("8765", "127.0.0.1:70000"):
        out = muxd_server.cli("mcp", "--http", bad)
        assert out.returncode == 1 and "HOST:PORT" in out.stderr, (bad, out.stderr)
    mcp = HttpMcp(muxd_server, address="0.0.0.0:0")
    try:
        assert any("warning" in line and "0.0.0.0" in line for line in mcp.log)
    finally:
        assert mcp.stop() == 0


def test_a_refused_token_is_refused_again_without_asking_the_daemon(muxd_server: MuxdTestServer,
                                                                   monkeypatch) -> None:
    from muxd.client.connection import Client
    from muxd.mcp_server import http_auth, token_checks

    greetings: list[str] = []  # Hellos with a token
    lookups: list[list[str]] = []  # check-tokens requests, by the hashes they asked about
    real_connect, real_ask = Client.connect, token_checks.TokenChecks._ask

    async def counting_connect(*args, **kwargs):  # the real connection, counted
        if kwargs.get("token"):
            greetings.append(kwargs["token"])
        return await real_connect(*args, **kwargs)

    async def counting_ask(self, keys):
        lookups.append(keys)
        return await real_ask(self, keys)

    monkeypatch.setattr(Client, "connect", counting_connect)
    monkeypatch.setattr(token_checks.TokenChecks, "_ask", counting_ask)
    good = create_token(muxd_server, "view_only")
    wrong = "muxd_" + "A" * http_auth.TOKEN_SECRET_CHARS

    async def scenario() -> None:
        verifier = http_auth.DaemonTokenVerifier(str(muxd_server.socket_path))
        try:
            for _ in range(5):
                assert await verifier.verify_token(wrong) is None
            # Looked up once by its hash, never greeted; the next four answered from memory.
            assert greetings == [] and lookups == [[token_key(wrong)]]
            for bad in ("muxd_wrong", good + "A", good[:-1] + "!", "", "x" * 100_000):
                assert await verifier.verify_token(bad) is None  # not a token's shape: not even asked
            assert greetings == [] and len(lookups) == 1
            first = await verifier.verify_token(good)  # other tokens are unaffected
            assert first is not None and greetings == [good] and len(lookups) == 2
            # A token the daemon welcomed is greeted again (its connection lost) without a lookup.
            verifier.forget(first.daemon_client)  # type: ignore[attr-defined]
            assert await verifier.verify_token(good) is not None
            assert greetings == [good, good] and len(lookups) == 2
        finally:
            await verifier.close()

    asyncio.run(patient_wait_for(scenario(), timeout=30))


def test_looking_tokens_up_is_for_token_administrators(muxd_server: MuxdTestServer) -> None:
    live, revoked = create_token(muxd_server, "execute_advanced", "live"), create_token(muxd_server, "admin", "gone")
    muxd_server.cli("token", "revoke", "gone", check=True)
    asked = [token_key(live), token_key(revoked), "0" * 64]

    async def scenario() -> None:
        owner, other = await muxd_server.client(), await muxd_server.client(token=live)
        try:
            assert (await owner.call(CheckTokens, token_sha256=asked)).live == [True, False, False]
            with pytest.raises(Forbidden, match="check-tokens is admin"):  # an oracle of token hashes
                await other.call(CheckTokens, token_sha256=asked)
        finally:
            await owner.close()
            await other.close()

    asyncio.run(patient_wait_for(scenario(), timeout=30))


def test_too_many_tokens_waiting_to_be_checked_is_a_429(muxd_server: MuxdTestServer, monkeypatch) -> None:
    from muxd.mcp_server import token_checks

    monkeypatch.setattr(token_checks, "TOKEN_CHECK_BATCH_MAX", 2)

    async def scenario() -> list[object]:
        checks = token_checks.TokenChecks(str(muxd_server.socket_path))
        try:
            return await asyncio.gather(*(checks.is_live(f"{n:064x}") for n in range(3)), return_exceptions=True)
        finally:
            await checks.close()

    first, second, third = asyncio.run(patient_wait_for(scenario(), timeout=30))
    assert (first, second) == (False, False)  # made-up hashes: not live
    assert isinstance(third, token_checks.TokenCheckUnavailable) and third.status == 429, third


def test_a_token_that_cannot_be_checked_is_a_503_not_a_400(muxd_server: MuxdTestServer) -> None:
    """The daemon gone: the client is told to retry later (it was a 400, as if its request were wrong)."""
    token = create_token(muxd_server, "view_only")
    mcp = HttpMcp(muxd_server)
    try:
        muxd_server.cli("kill-server", check=True)
        wait_until(lambda: not muxd_server.running(), timeout=10, message="daemon exit")
        with httpx2.Client(timeout=stretched(10)) as http:
            answer = http.post(mcp.url, json=INITIALIZE, headers={**MCP_HEADERS, "Authorization": f"Bearer {token}"})
        assert answer.status_code == 503 and answer.headers["retry-after"] == "1", (answer.status_code, answer.text)
        assert answer.json()["error"] == "temporarily_unavailable" and "unreachable" in answer.text
    finally:
        assert mcp.stop() == 0


# ------------------------------------------------------------------ a flood of made-up tokens

FLOOD_TOKENS = 300  # half shaped like muxd tokens (each needs the daemon to say no), half not
_REFUSED_HELLO = "refused a hello with an unknown or revoked token"
_MORE = re.compile(r"(\d+) more in the last")


def _made_up_tokens() -> list[str]:
    shaped = [f"muxd_{secrets.token_urlsafe(32)}" for _ in range(FLOOD_TOKENS // 2)]
    return shaped + [f"tok-{secrets.token_hex(16)}" for _ in range(FLOOD_TOKENS // 2)]


async def _flood(mcp: HttpMcp, good: str) -> tuple[Counter[int], int]:
    """The flood's statuses, and how often the good token was turned away after it."""
    async with httpx2.AsyncClient(timeout=stretched(30)) as http:
        answers = await asyncio.gather(*(http.post(mcp.url, json=INITIALIZE,
                                                   headers={**MCP_HEADERS, "Authorization": f"Bearer {token}"})
                                         for token in _made_up_tokens()))
        statuses = Counter(a.status_code for a in answers)
        ok = await http.post(mcp.url, json=INITIALIZE, headers={**MCP_HEADERS, "Authorization": f"Bearer {good}"})
    return statuses, int(ok.status_code != 200)


def _sampled(text: str, message: str) -> tuple[int, int]:
    """How many log records mention `message` (the first one; the counts of the rest), and how many
    events they stand for. Works on the text: the MCP process's log handler wraps long records."""
    records = text.count(message)
    counts = [int(n) for n in _MORE.findall(text)]
    return records, records - len(counts) + sum(counts)


def test_made_up_tokens_cost_no_daemon_connection_each_nor_a_log_line_each(muxd_server: MuxdTestServer) -> None:
    good = create_token(muxd_server, "view_only")
    mcp = HttpMcp(muxd_server)
    try:
        statuses, turned_away = asyncio.run(patient_wait_for(_flood(mcp, good), timeout=60))
    finally:
        assert mcp.stop() == 0  # its refusal counts are logged as it stops
    # 401 for each: looked up in the daemon's table (or not shaped like a token); the good one served.
    assert statuses == Counter({401: FLOOD_TOKENS}) and turned_away == 0, statuses
    records, refused = _sampled("".join(mcp.log), "refused a bearer token")
    assert 1 <= records <= 3 and refused == FLOOD_TOKENS and len(mcp.log) <= 10, mcp.log

    muxd_server.cli("kill-server", check=True)
    wait_until(lambda: not muxd_server.running(), timeout=10, message="daemon exit")
    # Not one daemon connection for a made-up token: they were looked up, never greeted.
    assert _REFUSED_HELLO not in muxd_server.log_path.read_text()


LEGIT_CLIENTS = 10
FLOOD_CONNECTIONS = 8


async def _new_clients_during_a_flood(mcp: HttpMcp, tokens: list[str]) -> tuple[int, Counter[int]]:
    """How many of the new SDK clients (one fresh token each) connect and call a tool while made-up
    tokens pour in over FLOOD_CONNECTIONS connections; and the flood's statuses."""
    flooding = asyncio.Event()
    statuses: Counter[int] = Counter()

    async def flood() -> None:
        async with httpx2.AsyncClient(timeout=stretched(30)) as http:
            while not stopped.is_set():
                made_up = f"muxd_{secrets.token_urlsafe(32)}"
                answer = await http.post(mcp.url, json=INITIALIZE,
                                         headers={**MCP_HEADERS, "Authorization": f"Bearer {made_up}"})
                statuses[answer.status_code] += 1
                if sum(statuses.values()) >= 4 * FLOOD_CONNECTIONS:
                    flooding.set()

    async def client(token: str) -> bool:
        try:
            async with mcp.session(token) as session:
                return not (await session.call_tool("list_panes", {})).is_error
        except Exception:  # the SDK client gives up on a 400/429: what the issue saw
            return False

    stopped = asyncio.Event()
    floods = [asyncio.create_task(flood()) for _ in range(FLOOD_CONNECTIONS)]
    try:
        await patient_wait_for(flooding.wait(), timeout=30)
        served = await asyncio.gather(*(client(token) for token in tokens))
    finally:
        stopped.set()
        await asyncio.gather(*floods, return_exceptions=True)
    return sum(served), statuses


def test_made_up_tokens_do_not_starve_new_real_ones(muxd_server: MuxdTestServer) -> None:
    tokens = [create_token(muxd_server, "view_only") for _ in range(LEGIT_CLIENTS)]  # none seen by the server
    mcp = HttpMcp(muxd_server)
    try:
        served, statuses = asyncio.run(patient_wait_for(_new_clients_during_a_flood(mcp, tokens), timeout=120))
    finally:
        assert mcp.stop() == 0
    assert served == LEGIT_CLIENTS, (served, statuses)  # it was 1 of 10, the rest a 400
    assert set(statuses) == {401}, statuses


# ------------------------------------------------------------------ a revoked token

def _list_tools(http: httpx2.Client, mcp: HttpMcp, headers: dict[str, str]) -> httpx2.Response:
    return http.post(mcp.url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=headers)


def test_a_revoked_token_stops_working_at_once(muxd_server: MuxdTestServer) -> None:
    token = create_token(muxd_server, "view_only", name="leaver")
    other = create_token(muxd_server, "view_only")
    mcp = HttpMcp(muxd_server)
    try:
        with httpx2.Client(timeout=stretched(10)) as http:
            sessions = {}
            for secret in (token, other):
                headers = {**MCP_HEADERS, "Authorization": f"Bearer {secret}"}
                hello = http.post(mcp.url, json=INITIALIZE, headers=headers)
                assert hello.status_code == 200, hello.text
                sessions[secret] = {**headers, "mcp-session-id": hello.headers["mcp-session-id"],
                                    "mcp-protocol-version": INITIALIZE["params"]["protocolVersion"]}
                assert _list_tools(http, mcp, sessions[secret]).status_code == 200
            muxd_server.cli("token", "revoke", "leaver", check=True)
            # At once, with no pause: list_tools never reaches the daemon, yet it is refused too.
            refused = _list_tools(http, mcp, sessions[token])
            assert refused.status_code == 401, (refused.status_code, refused.text[:200])
            _assert_unauthorized(refused)
            _assert_unauthorized(http.get(mcp.metrics_url, headers={"Authorization": f"Bearer {token}"}))
            # The other token's cached connection is untouched.
            assert _list_tools(http, mcp, sessions[other]).status_code == 200
    finally:
        assert mcp.stop() == 0
