"""A request acts on the target its access check resolved, never on one resolved again later.

The race: a pane-bound agent names its own pane by name while the owner creates a session of
that name. Were the target checked when the request is read and resolved again when its handler
runs, the owner's request, handled in between, would turn the agent's keys into the owner's new
pane. The daemon runs in this test's own loop, so both requests are read before either runs.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from muxd.client.connection import Client
from muxd.daemon.commands import load_all
from muxd.daemon.server import Daemon
from muxd.errors import Forbidden, NotFound
from muxd.protocol import messages as m
from muxd.protocol.codec import encode
from muxd.testing.patience import patient_wait_for
from muxd.testing.wait import async_wait_until

ROUNDS = 20
MARKER = "agent-typed-this"


@pytest.fixture
def daemon_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    socket_dir = Path(tmp_path) / "s"
    socket_dir.mkdir(mode=0o700)
    monkeypatch.setenv("MUXD_SOCKET_DIR", str(socket_dir))
    monkeypatch.setenv("MUXD_DB", str(socket_dir / "t.db"))
    return socket_dir / "t.sock", socket_dir / "t.lock"


async def _pipelined(client: Client, request: object) -> asyncio.Future[object]:
    """Write `request` now and return its reply-to-be, without yielding to the loop."""
    future: asyncio.Future[object] = asyncio.get_running_loop().create_future()
    client._pending[request.id] = future  # type: ignore[attr-defined]
    client._writer.write(encode(request))
    return future


async def _race(socket_path: Path, lock_path: Path) -> None:
    daemon = Daemon(socket_path, lock_path, commands=load_all(), detection=False)
    serving = asyncio.create_task(daemon.serve())
    await async_wait_until(lambda: _true(socket_path.exists()), timeout=10, message="daemon listening")
    owner = await Client.connect(socket_path)
    try:
        mine = (await owner.call(m.NewSession, name="agents",
                                 spawn=m.Spawn(command=["cat"], pane_name="mine"))).pane
        secret = (await owner.call(m.CreateToken, tier="execute_advanced", panes=[mine.id])).secret
        agent = await Client.connect(socket_path, token=secret)
        try:
            outcomes = []
            for round_ in range(ROUNDS):
                created = await _pipelined(owner, m.NewSession(
                    id=10_000 + round_, name="mine", spawn=m.Spawn(command=["cat"])))
                typed = await _pipelined(agent, m.SendKeys(
                    id=10_000 + round_, target="mine", keys=[f"{MARKER}-{round_}", "Enter"]))
                reply = await patient_wait_for(created, 10)
                assert isinstance(reply, m.PaneReply), reply
                outcomes.append(await patient_wait_for(typed, 10))
                owners_pane = reply.pane.id
                # The agent's keys went to its own pane or nowhere; never to the owner's new one.
                await owner.call(m.SendKeys, target=owners_pane, keys=["owner-was-here", "Enter"])
                await async_wait_until(lambda: _shows(owner, owners_pane, "owner-was-here"), timeout=10,
                                       message="the owner's pane echoing its own line")
                screen = (await owner.call(m.CapturePane, target=owners_pane)).text
                assert MARKER not in screen, f"round {round_}: the agent typed into {owners_pane}:\n{screen}"
                await owner.call(m.KillSession, target="mine")
            # Handled in order, the owner's session existed when the agent's request was checked.
            assert all(isinstance(o, m.Error) and o.code == "forbidden" for o in outcomes), outcomes

            # A scoped principal names what it acts on: no "newest session" for it.
            for request, fields in ((m.SendKeys, {"keys": ["x"]}), (m.CapturePane, {}), (m.Summary, {}),
                                    (m.SplitWindow, {}), (m.ResizePane, {"columns": 60})):
                with pytest.raises(Forbidden, match="must name its target"):
                    await agent.call(request, **fields)
            assert (await agent.call(m.CapturePane, target="mine")).text is not None
            with pytest.raises(Forbidden, match="not among the panes"):
                await agent.call(m.CapturePane, target="%x")
            with pytest.raises(NotFound, match="can't find pane: %x"):
                await owner.call(m.CapturePane, target="%x")
        finally:
            await agent.close()
    finally:
        await owner.close()
        daemon.request_shutdown()
        await patient_wait_for(serving, 10)


async def _true(value: bool) -> bool:
    return value


async def _shows(client: Client, pane: str, text: str) -> bool:
    return text in (await client.call(m.CapturePane, target=pane)).text


def test_a_request_acts_on_the_target_its_check_resolved(daemon_paths: tuple[Path, Path]) -> None:
    asyncio.run(patient_wait_for(_race(*daemon_paths), timeout=90))
