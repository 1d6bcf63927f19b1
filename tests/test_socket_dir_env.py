"""The user's server is found whatever environment a client passes (`env -i`, as the Inspector
launches without -e), and `muxd mcp` never starts an empty one: with none running it says so."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from muxd.paths import socket_dir
from muxd.testing.mcp_http import HttpMcp
from muxd.testing.mcp_stdio import call_ok, result_text
from muxd.testing.patience import stretched
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until

# Variables that would point the test's processes elsewhere than a user's plain shell does.
_MOVED = ("MUXD_SOCKET_DIR", "MUXD_TOKEN", "MUXD_PANE", "MUXD_CLI_TOKEN", "MUXD_CONFIG")
STOP_TIMEOUT_S = 10.0


class UserServer:
    """A server in the default socket directory, started from a shell whose environment has what a
    desktop session sets (XDG_RUNTIME_DIR among it); a unique name keeps it apart from others there."""

    def __init__(self, tmp: Path) -> None:
        self.name = f"t{uuid.uuid4().hex[:10]}"
        runtime = tmp / "runtime"
        runtime.mkdir(mode=0o700)
        home = tmp / "home"
        home.mkdir()
        self.env = {**{k: v for k, v in os.environ.items() if k not in _MOVED},
                    "XDG_RUNTIME_DIR": str(runtime), "HOME": str(home), "MUXD_CONFIG": os.devnull,
                    "MUXD_DB": str(tmp / "muxd.db")}
        self.dir = Path(f"/tmp/muxd-{os.getuid()}")

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "muxd", "-L", self.name, *args], env=self.env,
                              capture_output=True, text=True, timeout=stretched(30))

    def files(self) -> list[Path]:
        return sorted(self.dir.glob(f"{self.name}.*"))

    def stop(self) -> None:
        lock = self.dir / f"{self.name}.lock"
        if lock.exists():
            try:
                pid = int(lock.read_text().strip())
                os.kill(pid, signal.SIGTERM)
                wait_until(lambda: not (self.dir / f"{self.name}.sock").exists(), timeout=STOP_TIMEOUT_S,
                           message="daemon exit")
            except (ValueError, ProcessLookupError):
                pass
        for path in self.files():
            path.unlink(missing_ok=True)


@pytest.fixture
def user_server(tmp_path: Path) -> Iterator[UserServer]:
    server = UserServer(tmp_path)
    try:
        yield server
    finally:
        server.stop()


def _stripped(name: str) -> StdioServerParameters:
    """`muxd -L NAME mcp` as a client that passes no environment at all starts it."""
    return StdioServerParameters(command="env", args=["-i", sys.executable, "-m", "muxd", "-L", name, "mcp"],
                                 env={}, cwd=str(Path(__file__).resolve().parents[1]))


def test_socket_dir_is_not_moved_by_other_variables(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("MUXD_SOCKET_DIR", raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    assert socket_dir() == Path(f"/tmp/muxd-{os.getuid()}")
    monkeypatch.setenv("MUXD_SOCKET_DIR", str(tmp_path / "mine"))
    assert socket_dir() == tmp_path / "mine"


def test_stripped_environment_finds_the_users_server(user_server: UserServer) -> None:
    made = user_server.cli("new-session", "-d", "-s", "work")
    assert made.returncode == 0, made.stderr
    asyncio.run(_sees_the_pane(user_server.name))


async def _sees_the_pane(name: str) -> None:
    async with stdio_client(_stripped(name)) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        panes = await call_ok(session, "list_panes")
        assert [p["session"] for p in panes["panes"]] == ["work"], panes


def test_no_server_is_said_and_none_is_started(user_server: UserServer, tmp_path: Path) -> None:
    errlog = tmp_path / "mcp.err"
    asyncio.run(_answers_no_server(user_server, errlog))
    socket = user_server.dir / f"{user_server.name}.sock"
    said = errlog.read_text()
    assert f"server_not_running: no muxd server runs at {socket}" in said, said
    assert len(said.strip().splitlines()) == 1, said


async def _answers_no_server(server: UserServer, errlog: Path) -> None:
    socket = server.dir / f"{server.name}.sock"
    with errlog.open("w") as err:
        async with stdio_client(_stripped(server.name), errlog=err) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            assert {t.name for t in (await session.list_tools()).tools} >= {"agent_summary", "list_panes"}
            for tool in ("agent_summary", "list_panes"):
                result = await session.call_tool(tool, {})
                assert result.is_error, result.structured_content
                assert result_text(result).startswith(f"server_not_running: no muxd server runs at {socket}")
            assert server.files() == []  # no daemon, no lock, no log: nothing was started
            # Once the user's server runs, the next call reaches it: no restart of the client needed.
            made = server.cli("new-session", "-d", "-s", "later")
            assert made.returncode == 0, made.stderr
            panes = await call_ok(session, "list_panes")
            assert [p["session"] for p in panes["panes"]] == ["later"]


def test_http_does_not_start_a_server(muxd_unstarted: MuxdTestServer) -> None:
    mcp = HttpMcp(muxd_unstarted)
    try:
        assert any(f"no muxd server runs at {muxd_unstarted.socket_path}" in line for line in mcp.log), mcp.log
    finally:
        assert mcp.stop() == 0
    assert not muxd_unstarted.socket_path.exists()
    assert not (muxd_unstarted.socket_dir / f"{muxd_unstarted.name}.lock").exists()
