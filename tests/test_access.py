"""Access control end to end: real daemon, real SQLite file, the real CLI, and `muxd mcp` driven by
the real MCP SDK client over stdio. Tokens, tiers, a pane's own MUXD_TOKEN, grants, restarts."""

from __future__ import annotations

import asyncio
import hashlib
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from muxd.errors import Forbidden, Unauthorized
from muxd.protocol import messages as m
from muxd.testing.mcp_http import stdio_session
from muxd.testing.mcp_stdio import call_error, call_ok, mcp_session
from muxd.testing.pane_tokens import SECRET, pane_token
from muxd.testing.patience import patient_wait_for, stretched
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import async_wait_until, wait_until



def make_token(server: MuxdTestServer, tier: str, name: str, *extra: str) -> str:
    out = server.cli("token", "create", "--tier", tier, "--name", name, *extra, check=True).stdout.strip()
    assert SECRET.match(out), out
    return out


def new_shell(server: MuxdTestServer, *args: str) -> str:
    """A bash pane (new session, or what `args` says); returns its id."""
    verb = args or ("new-session", "-d")
    out = server.cli(*verb, "-P", "--", "bash", "--norc", "--noprofile", check=True).stdout.strip()
    assert out.startswith("%"), out
    return out


def db_files(server: MuxdTestServer) -> bytes:
    return b"".join(p.read_bytes() for p in Path(server.env["MUXD_DB"]).parent.glob(Path(server.env["MUXD_DB"]).name + "*"))


async def synced(server: MuxdTestServer) -> None:
    """Every database write queued so far has landed (queries run after them on the one writer)."""
    client = await server.client()
    try:
        await client.call(m.GetToolHistory, limit=1)
    finally:
        await client.close()


# ------------------------------------------------------------------ tokens and tiers

async def _tiers(server: MuxdTestServer, pane: str) -> None:
    secrets = {tier: make_token(server, tier, tier.replace("_", "-"))
               for tier in ("view_only", "execute_basic", "execute_advanced", "admin")}
    clients = {tier: await server.client(token=secret) for tier, secret in secrets.items()}
    try:
        assert clients["view_only"].welcome is not None
        assert (clients["view_only"].welcome.principal, clients["view_only"].welcome.tier) == \
            ("token:view-only", "view_only")
        for tier, client in clients.items():  # safe views: every tier
            assert [p.id for p in (await client.call(m.ListPanes, all=True)).panes] == [pane]
            await client.call(m.CapturePane, target=pane)
        for tier in ("view_only", "execute_basic"):  # moderate: execute_advanced and up
            with pytest.raises(Forbidden, match="send-keys is moderate: it needs tier execute_advanced"):
                await clients[tier].call(m.SendKeys, target=pane, keys=["true", "Enter"])
            with pytest.raises(Forbidden, match="needs tier execute_advanced"):
                await clients[tier].call(m.ResizePane, target=pane, columns=60)
        await clients["execute_advanced"].call(m.SendKeys, target=pane, keys=["true", "Enter"])
        with pytest.raises(Forbidden, match="kill-pane is dangerous: it needs tier admin or higher"):
            await clients["execute_advanced"].call(m.KillPane, target=pane)
        with pytest.raises(Forbidden, match="needs tier admin"):
            await clients["execute_advanced"].call(m.CreateToken, tier="admin")
        # An unscoped admin token may administer; it still cannot see secrets in the list.
        listed = await clients["admin"].call(m.ListTokens)
        assert {t.name for t in listed.tokens} >= {"view-only", "admin"}
        assert not any(s.encode() in m_encode(listed) for s in secrets.values())
        # The daemon kept serving every one of them after each denial.
        assert (await clients["view_only"].call(m.ServerStatus)).panes == 1
    finally:
        for client in clients.values():
            await client.close()

    # Bad and revoked tokens are refused at Hello with `unauthorized`; the daemon keeps serving.
    with pytest.raises(Unauthorized, match="unknown or revoked token"):
        await server.client(token="muxd_" + "x" * 43)
    assert server.cli("token", "revoke", "execute-basic", check=True).returncode == 0
    with pytest.raises(Unauthorized):
        await server.client(token=secrets["execute_basic"])
    listing = server.cli("token", "list", "-a", check=True).stdout
    assert "execute-basic" in listing and not any(s in listing for s in secrets.values())

    # Only hashes reach the database file.
    await synced(server)
    stored = db_files(server)
    for secret in secrets.values():
        assert secret.encode() not in stored
        assert hashlib.sha256(secret.encode()).hexdigest().encode() in stored

    # The MCP server fails fast on the tier too, naming the tier needed.
    async with mcp_session(server, MUXD_TOKEN=secrets["view_only"]) as session:
        assert [p["id"] for p in (await call_ok(session, "list_panes"))["panes"]] == [pane]
        message = await call_error(session, "send_input", pane_id=pane, text="x")
        assert "forbidden: " in message and "needs tier execute_advanced" in message
        assert "needs tier admin" in await call_error(session, "kill_pane", pane_id=pane)
        assert (await call_ok(session, "agent_summary", pane_id=pane))["pane_id"] == pane


def m_encode(value: object) -> bytes:
    import msgspec

    return msgspec.msgpack.encode(value)


def test_tokens_and_tiers(muxd_server: MuxdTestServer) -> None:
    pane = new_shell(muxd_server)
    asyncio.run(patient_wait_for(_tiers(muxd_server, pane), timeout=30))
    assert muxd_server.cli("ls", check=True).stdout.count("bash") >= 1


# ------------------------------------------------------------------ a pane's own token

async def _agent(server: MuxdTestServer, me: str, other: str, token: str) -> None:
    owner = await server.client()  # someone else's call in the audit trail, which the agent must not see
    await owner.call(m.RecordCall, tool="list_panes", args_sha256="0" * 64, status="ok")
    await owner.close()
    async with mcp_session(server, MUXD_TOKEN=token) as session:
        assert [p["id"] for p in (await call_ok(session, "list_panes"))["panes"]] == [me]
        assert [a.split()[0] for a in (await call_ok(session, "list_agents"))["agents"]] == [me]
        for tool, args in (("read_pane", {}), ("agent_summary", {}), ("send_input", {"text": "x"})):
            message = await call_error(session, tool, pane_id=other, **args)
            assert "forbidden: " in message and "not among the panes agent:" in message, message
        # A name that does not exist gets the same answer: existence does not leak.
        assert "forbidden" in await call_error(session, "read_pane", pane_id="no-such-pane")
        await call_ok(session, "read_pane", pane_id=me)
        await call_ok(session, "send_input", pane_id=me, text="echo self-ok", submit=True)
        # execute_advanced (the default for pane tokens): no kills.
        assert "needs tier admin" in await call_error(session, "kill_pane", pane_id=me)

        assert server.cli("grant", "-t", other, "--to", me, check=True).returncode == 0
        assert sorted(p["id"] for p in (await call_ok(session, "list_panes"))["panes"]) == sorted([me, other])
        await call_ok(session, "read_pane", pane_id=other)

        created = await call_ok(session, "create_pane", command=["bash", "--norc"])
        assert created["id"] in {p["id"] for p in (await call_ok(session, "list_panes"))["panes"]}

        server.cli("grant", "--revoke", "-t", other, "--to", me, check=True)
        assert "forbidden" in await call_error(session, "read_pane", pane_id=other)

        # Its audit trail is its own: every row it may read is one of its calls.
        mine = await call_ok(session, "get_tool_history", limit=100)
        assert mine["count"] >= 10 and {r["principal"] for r in mine["calls"]} == {f"agent:{me}"}
        assert "forbidden" in await call_error(session, "get_tool_history", principal="system")

    # The protocol client sees the same world, events included.
    events: list[object] = []
    client = await server.client(token=token, on_event=events.append)
    try:
        await client.call(m.Subscribe)
        hidden = new_shell(server)
        server.cli("send-keys", "-t", hidden, "exit", "Enter", check=True)
        wait_until(lambda: "exited" in server.cli("list-panes", "-a", check=True).stdout, timeout=10,
                   message="the hidden pane exited")
        server.cli("send-keys", "-t", created["id"], "exit", "Enter", check=True)
        async def own_exit_seen() -> bool:
            return any(isinstance(e, m.PaneExited) and e.pane_id == created["id"] for e in events)

        await async_wait_until(own_exit_seen, timeout=10, message="its own pane's exit event")
        assert not any(getattr(e, "pane_id", None) == hidden for e in events)
        server.cli("kill-pane", "-t", hidden, check=True)
        assert client.welcome is not None and client.welcome.principal == f"agent:{me}"
        assert client.welcome.tier == "execute_advanced" and me in (client.welcome.panes or [])
        sessions = (await client.call(m.ListSessions)).sessions
        assert all(s.panes >= 1 for s in sessions) and len(sessions) == 2  # its own + the one it created
        assert (await client.call(m.ServerStatus)).panes == 2
        with pytest.raises(Forbidden):
            await client.call(m.KillSession, target=other)
        with pytest.raises(Forbidden, match="list-tokens is admin: it needs tier admin"):
            await client.call(m.ListTokens)
    finally:
        await client.close()


def test_pane_token_sees_only_its_pane_until_granted(muxd_server: MuxdTestServer) -> None:
    me = new_shell(muxd_server)
    other = new_shell(muxd_server)
    token = pane_token(muxd_server, me)
    asyncio.run(patient_wait_for(_agent(muxd_server, me, other, token), timeout=30))

    # The pane is gone: its token goes with it. The daemon serves on.
    muxd_server.cli("kill-pane", "-t", me, check=True)

    async def refused() -> bool:
        try:
            client = await muxd_server.client(token=token)
        except Unauthorized:
            return True
        await client.close()
        return False

    asyncio.run(async_wait_until(refused, timeout=5, message="the dead pane's token refused"))
    assert other in muxd_server.cli("ls", check=True).stdout


def test_human_cli_in_a_pane_acts_as_the_owner_unless_told(muxd_server: MuxdTestServer) -> None:
    me = new_shell(muxd_server)
    other = new_shell(muxd_server)
    token = pane_token(muxd_server, me)
    # As tmux inside tmux: `muxd ls` in a pane (MUXD_TOKEN set) still sees everything...
    in_pane = {**muxd_server.env, "MUXD_TOKEN": token}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "muxd", "-L", muxd_server.name, *args], env=in_pane,
                              capture_output=True, text=True, timeout=stretched(30))

    listing = cli("ls").stdout
    assert me in listing and other in listing
    # ... and acts as the token only when asked (--token, or MUXD_CLI_TOKEN).
    scoped = cli("--token", token, "ls").stdout
    assert me in scoped and other not in scoped
    denied = cli("--token", token, "capture-pane", "-p", "-t", other)
    assert denied.returncode == 1 and "not among the panes" in denied.stderr
    in_pane["MUXD_CLI_TOKEN"] = token
    assert other not in cli("ls").stdout


def test_mcp_in_a_pane_without_its_token_refuses_to_act_as_the_owner(muxd_server: MuxdTestServer,
                                                                     tmp_path: Path) -> None:
    """An agent CLI that keeps MUXD_TOKEN from its MCP servers (Gemini CLI, unless told to allow
    it) starts `muxd mcp` with MUXD_PANE alone: it refuses, rather than serve every pane."""
    me = new_shell(muxd_server)
    other = new_shell(muxd_server)
    err = tmp_path / "mcp.err"
    mcp = shlex.join([sys.executable, "-m", "muxd", "-L", muxd_server.name, "mcp"])
    muxd_server.cli("send-keys", "-t", me, f"env -u MUXD_TOKEN {mcp} </dev/null 2>{err}; echo mcp-exit=$?", "Enter",
                    check=True)
    wait_until(lambda: "mcp-exit=1" in muxd_server.capture(me), timeout=30, message="muxd mcp refusing in the pane")
    [line] = err.read_text().splitlines()
    assert line.startswith(f"muxd: mcp in pane {me} has no $MUXD_TOKEN and would act as the socket's owner"), line
    assert "security.environmentVariableRedaction.allowed" in line and "--token-file" in line, line
    token = pane_token(muxd_server, me)

    async def served() -> None:
        async with stdio_session(muxd_server, MUXD_PANE=me, MUXD_TOKEN=token) as session:  # as its pane's agent
            assert [p["id"] for p in (await call_ok(session, "list_panes"))["panes"]] == [me]
        async with stdio_session(muxd_server, "--as-owner", MUXD_PANE=me) as session:  # the owner, when asked
            assert {me, other} <= {p["id"] for p in (await call_ok(session, "list_panes"))["panes"]}

    asyncio.run(asyncio.wait_for(served(), timeout=30))



def test_mcp_whose_agent_hid_the_pane_too_still_refuses(muxd_server: MuxdTestServer, tmp_path: Path) -> None:
    """Codex without `env_vars` passes its MCP servers neither MUXD_TOKEN nor MUXD_PANE: the
    agent CLI above `muxd mcp`, started in the pane, still holds them, so it refuses all the same."""
    me = new_shell(muxd_server)
    err = tmp_path / "mcp.err"
    mcp = shlex.join(["env", "-u", "MUXD_TOKEN", "-u", "MUXD_PANE", "-u", "MUXD",
                      sys.executable, "-m", "muxd", "-L", muxd_server.name, "mcp"])
    muxd_server.cli("send-keys", "-t", me, f"{mcp} </dev/null 2>{err}; echo mcp-exit=$?", "Enter", check=True)
    wait_until(lambda: "mcp-exit=1" in muxd_server.capture(me), timeout=30, message="muxd mcp refusing in the pane")
    [line] = err.read_text().splitlines()
    assert line.startswith(f"muxd: mcp in pane {me} has no $MUXD_TOKEN"), line


def test_only_a_pane_of_the_served_server_counts_among_the_ancestors(tmp_path: Path) -> None:
    """A process chain as an agent CLI makes it: an ancestor with MUXD_PANE and MUXD, a child
    without them. A pane of another server (a test run in a pane of the user's own) is no pane."""
    probe = ("import sys; from muxd.cli.mcp_commands import pane_of_ancestors; "
             "print(pane_of_ancestors(sys.argv[1]))")

    def found(served: str) -> str:
        child = shlex.join(["env", "-u", "MUXD_PANE", "-u", "MUXD", sys.executable, "-c", probe, served])
        return subprocess.run(["sh", "-c", f"{child}; true"], capture_output=True, text=True, check=True,
                              env={"PATH": "/usr/bin:/bin", "MUXD_PANE": "%7", "MUXD": "/run/a.sock"},
                              timeout=30).stdout.strip()

    assert found("/run/a.sock") == "%7"
    assert found("/run/other.sock") == "None"


# ------------------------------------------------------------------ restarts

def test_tokens_survive_a_restart_pane_tokens_do_not(muxd_server: MuxdTestServer) -> None:
    pane = new_shell(muxd_server)
    agent = pane_token(muxd_server, pane)
    user = make_token(muxd_server, "execute_basic", "ci-bot")
    muxd_server.cli("kill-server", check=True)
    wait_until(lambda: not muxd_server.running(), timeout=10, message="daemon exit")
    muxd_server.start()

    async def after() -> None:
        client = await muxd_server.client(token=user)
        try:
            assert client.welcome is not None and client.welcome.principal == "token:ci-bot"
            assert (await client.call(m.ListPanes, all=True)).panes == []
        finally:
            await client.close()
        with pytest.raises(Unauthorized):
            await muxd_server.client(token=agent)

    asyncio.run(patient_wait_for(after(), timeout=10))
