"""The web view's agents grid is live for the other hosts of a shared PostgreSQL database too (issue
31): `muxd web` of host alpha, its /events stream read as the page's script reads it, shows beta's
fake agent turning waiting within seconds though nothing happens on alpha (which runs no pane),
and beta killed shown stale once alpha takes it over; each daemon listens on one connection.
Alpha's daemon hears the fleet's changes on the fleet channel (daemon/work/fleet_news.py): never
its own, and a burst of another host's as a few."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import threading
import time

from muxd.config import ENV_FLEET_STALE, FLEET_HEARD_MIN_INTERVAL_S
from muxd.daemon.work.fleet_news import FleetNews
from muxd.store import fleet
from muxd.store.hosts import use_host
from muxd.store.pg_connection import connect as pg_connect
from muxd.store.pg_listen import PgListener
from muxd.store.pg_schema import migrate as pg_migrate
from muxd.testing.fake_agent_panes import ask, start_fake_agent
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import async_wait_until, wait_until
from muxd.testing.web import EventStream, WebClient, WebView, make_token

STALE_S = 5.0      # $MUXD_FLEET_STALE_S: a beat every ~1.7 s, beta's death taken over in seconds
SEEN_TIMEOUT_S = 20.0
LIVE_WITHIN_S = 5.0  # beta's change on alpha's stream: its publish (≤ 0.3 s), a notification, a read
BURST = 20


class GridReader:
    """Every grid an /events stream sends, as they come (a thread reads the stream)."""

    def __init__(self, stream: EventStream) -> None:
        self.grids: list[str] = []
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream: EventStream) -> None:
        try:
            while (event := stream.next_event()) is not None:
                if event[0] == "grid":
                    self.grids.append(event[1])
        except (OSError, ValueError):  # the test closed the stream
            pass

    def card_state(self, target: str) -> str | None:
        """The state the newest grid shows for `target`'s card (None: no card)."""
        if not self.grids:
            return None
        found = re.search(rf'data-pane="{re.escape(target)}" data-state="([^"]*)"', self.grids[-1])
        return found[1] if found else None


def _daemon(url: str, host: str) -> MuxdTestServer:
    return MuxdTestServer(env={"MUXD_DB": url, "MUXD_HOST": host, ENV_FLEET_STALE: str(STALE_S)}).start()


def _fleet_state(server: MuxdTestServer, target: str) -> str | None:
    listed = json.loads(server.run_here("ls", "--all-hosts", "--json", check=True).stdout)
    return next((p["agent"]["activity"]["state"] for p in listed["panes"] if p["target"] == target), None)


def test_another_hosts_agent_turning_waiting_reaches_the_grids_stream_with_nothing_happening_here(
        postgres_url: str) -> None:
    alpha, beta = _daemon(postgres_url, "alpha"), _daemon(postgres_url, "beta")
    view: WebView | None = None
    stream: EventStream | None = None
    try:
        pane = start_fake_agent(beta, "remote")
        target = f"{pane}@beta"
        wait_until(lambda: _fleet_state(alpha, target) == "Idle", timeout=SEEN_TIMEOUT_S,
                   message="beta's agent on alpha")
        view = WebView(alpha)
        web = WebClient(view.origin)
        web.login(make_token(alpha, "view_only", "fleet-watcher"))
        stream = EventStream(view.origin, web.cookies)
        assert stream.status == 200
        reader = GridReader(stream)
        # A token bound to beta's pane alone hears beta's changes too (an event of no pane, of its host).
        bound = WebClient(view.origin)
        bound.login(alpha.run_here("token", "create", "--tier", "view_only", "--name", "beta-watcher",
                                   "--pane", target, check=True).stdout.strip())
        bound_stream = EventStream(view.origin, bound.cookies)
        bound_reader = GridReader(bound_stream)
        wait_until(lambda: reader.card_state(target) == "Idle", timeout=SEEN_TIMEOUT_S, message="beta's card, idle")
        wait_until(lambda: bound_reader.card_state(target) == "Idle", timeout=SEEN_TIMEOUT_S,
                   message="beta's card, idle, to the pane-bound token")
        db = pg_connect(postgres_url)
        try:  # each daemon hears tokens, actions and the fleet on one connection (PgDatabase.listener)
            assert db.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                              "AND query LIKE 'LISTEN %'").fetchone() == (2,)
        finally:
            db.close()

        asked_at = time.monotonic()
        ask(beta, pane)  # back once beta's own daemon saw it ask (a CLI round, slow on a loaded machine)
        told_s = time.monotonic() - asked_at
        # The card says what the other host's attention board says of it (waiting), as a local one's does.
        wait_until(lambda: reader.card_state(target) == "waiting", timeout=LIVE_WITHIN_S,
                   message="beta's card waiting on alpha's stream")
        wait_until(lambda: bound_reader.card_state(target) == "waiting", timeout=LIVE_WITHIN_S,
                   message="beta's card waiting on the pane-bound token's stream")
        bound_stream.close()
        took_s = time.monotonic() - asked_at
        assert json.loads(alpha.run_here("list-panes", "-a", "--json", check=True).stdout) == []  # nothing local
        assert '<span class="host">beta</span>' in reader.grids[-1]
        print(f"beta asked -> alpha's stream: {took_s:.2f} s (beta's own watch: {told_s:.2f} s)")

        # Beta dies: nobody writes for it, alpha takes it over (its next beat past the bound) and says so.
        os.kill(beta.pid, signal.SIGKILL)
        killed_at = time.monotonic()
        wait_until(lambda: f'<span class="host">beta (stale)</span>' in (reader.grids or [""])[-1],
                   timeout=STALE_S + SEEN_TIMEOUT_S, message="beta's card stale on alpha's stream")
        print(f"beta killed -> stale on alpha's stream: {time.monotonic() - killed_at:.2f} s")
    finally:
        if stream is not None:
            stream.close()
        if view is not None:
            view.stop()
        beta.stop()
        alpha.stop()


def test_a_daemon_hears_other_hosts_changes_never_its_own_and_a_burst_as_a_few(postgres_url: str) -> None:
    """FleetNews of host alpha on the fleet channel: alpha's own publishes wake nothing; twenty of
    beta's in a burst are told at most once per FLEET_HEARD_MIN_INTERVAL_S; gamma's, written after
    all of them, come last (notifications arrive in commit order, so alpha's would have come first)."""
    writers = {host: pg_connect(postgres_url) for host in ("alpha", "beta", "gamma")}
    for host, c in writers.items():
        use_host(c, host)
    pg_migrate(writers["alpha"])
    for c in writers.values():
        fleet.begin(c, 1, 0.0)

    def publish(host: str, state: str) -> None:
        fleet.publish(writers[host], [("%1", state, "claude", "{}", "{}", time.time())], [])

    async def run() -> tuple[list[str | None], float]:
        heard: list[str | None] = []
        listener = PgListener(postgres_url).start()
        news = FleetNews(listener, "alpha", heard.append).start()
        try:
            await async_wait_until(lambda: _now(bool(heard)), timeout=SEEN_TIMEOUT_S,
                                   message="the news listening (its first gap told)")
            assert heard == [None]
            for n in range(BURST):
                publish("alpha", f"own-{n}")
            started = time.monotonic()
            for n in range(BURST):
                publish("beta", f"state-{n}")
            burst_s = time.monotonic() - started
            publish("gamma", "Idle")
            await async_wait_until(lambda: _now("gamma" in heard), timeout=SEEN_TIMEOUT_S,
                                   message="gamma's publish heard")
            return heard, burst_s
        finally:
            news.stop()
            listener.stop()

    try:
        heard, burst_s = asyncio.run(run())
    finally:
        for c in writers.values():
            c.close()
    assert "alpha" not in heard and heard[-1] == "gamma", heard
    told = heard[1:-1]
    assert set(told) == {"beta"} and len(told) <= 2 + burst_s / FLEET_HEARD_MIN_INTERVAL_S, (told, burst_s)
    assert len(told) < BURST


async def _now(value: bool) -> bool:
    """A condition known without waiting, as async_wait_until asks it (the loop hears meanwhile)."""
    return value
