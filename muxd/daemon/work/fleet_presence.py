"""`FleetPresence`: this daemon's part of the live state across hosts on a shared PostgreSQL
database (issue 30; store/fleet.py holds the tables).

- Its panes' summaries are published on change: any event on the bus (a state change, a pane
  gone) asks for a look, and a look at most every FLEET_PUBLISH_MIN_INTERVAL_S compares each
  pane's summary with what was last written and writes only what differs, on the writer thread
  (one write in flight at a time; a failed one is written again at the next look).
- A heartbeat every `beat_interval_s` (database clock), after which the panes are looked at
  anyway (what no event tells: a title, a cwd) and other hosts whose heartbeat went stale are
  taken over: their running executions interrupted, once in the fleet; those stale past
  `forget_after_s` (MUXD_FLEET_FORGET_S) forgotten, once too: their rows here go, their history stays.
- Its start takes its host back (a fresh beat, its last run's panes gone); a clean stop removes
  its host row, so only a daemon that died is ever shown stale.
- What the other daemons write is heard as they write it (fleet_news.py) and told to
  `on_others_changed(host)`: the daemon's fleet-changed event, for a live board of their panes.
- Other hosts are taken over only once this daemon has itself beaten for a whole staleness bound
  without a failure: when the database went away, no host could beat, and each must have the
  bound's time to beat again after it came back before it is judged dead (issue 30).

The loop only builds the summaries (they read pane state); encoding them and every write are
the writer thread's.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import time
from collections.abc import Callable

import msgspec

from muxd.config import (
    ENV_FLEET_FORGET, ENV_FLEET_STALE, FLEET_BEAT_INTERVAL_S, FLEET_FORGET_AFTER_S, FLEET_PUBLISH_MIN_INTERVAL_S,
    FLEET_STALE_AFTER_S,
)
from muxd.daemon.work.fleet_news import FleetNews
from muxd.daemon.work.fleet_view import fleet_view
from muxd.errors import StoreUnavailable
from muxd.executions.fingerprint import stack_hash
from muxd.protocol.event_messages import FLEET_EVENT_KINDS
from muxd.protocol.fleet_messages import FleetHost, FleetPane
from muxd.protocol.pane_messages import AgentSummary, PaneInfo
from muxd.sampled_log import FailureStreak
from muxd.store import fleet
from muxd.store.database import Database, seconds_from_env
from muxd.store.sqlite_executions import INTERRUPTED_MESSAGE

log = logging.getLogger(__name__)
Snapshot = Callable[[], dict[str, tuple[PaneInfo, AgentSummary]]]  # pane id -> its record and summary
_encoder = msgspec.json.Encoder()
# What another host's stale heartbeat leaves of its running executions (the start's own words).
TAKEN_OVER_ERROR = ("interrupted", INTERRUPTED_MESSAGE, stack_hash("interrupted", INTERRUPTED_MESSAGE))


def stale_after_from_env(env: dict[str, str]) -> float:
    """$MUXD_FLEET_STALE_S in seconds (unset or empty: FLEET_STALE_AFTER_S); BadRequest naming it
    when it is not a number above 0."""
    return seconds_from_env(env, ENV_FLEET_STALE, FLEET_STALE_AFTER_S)


def forget_after_from_env(env: dict[str, str], stale_after_s: float) -> float:
    """$MUXD_FLEET_FORGET_S in seconds (unset or empty: FLEET_FORGET_AFTER_S), never below
    `stale_after_s`: a host is taken over (its executions interrupted) before it is forgotten."""
    return max(seconds_from_env(env, ENV_FLEET_FORGET, FLEET_FORGET_AFTER_S), stale_after_s)


def _unchanging(summary: AgentSummary) -> AgentSummary:
    """`summary` without what changes by itself each second (its duration): what a write compares."""
    return msgspec.structs.replace(summary, activity=msgspec.structs.replace(summary.activity, duration_secs=None))


class FleetPresence:
    def __init__(self, db: Database, snapshot: Snapshot, *, stale_after_s: float | None = None,
                 forget_after_s: float | None = None) -> None:
        self.db = db
        self.snapshot = snapshot
        env = dict(os.environ)
        self.stale_after_s = stale_after_from_env(env) if stale_after_s is None else stale_after_s
        self.forget_after_s = (forget_after_from_env(env, self.stale_after_s) if forget_after_s is None
                               else max(forget_after_s, self.stale_after_s))
        # Three beats within the bound, and never rarer than FLEET_BEAT_INTERVAL_S.
        self.beat_interval_s = min(FLEET_BEAT_INTERVAL_S, self.stale_after_s / 3)
        self.started_at = time.time()
        self._published: dict[str, bytes] = {}  # pane id -> what was last written (its comparison key)
        self._last_look = 0.0
        self._look: asyncio.TimerHandle | None = None
        self._writing = False
        self._again = False
        self._closed = False
        self._begun = False
        self._beating: asyncio.Task[None] | None = None
        # Since when (loop clock) this daemon's beats have gone through without a break; None
        # while they fail. Others' staleness is judged only a whole bound after it.
        self._steady_since: float | None = None
        self._beat_failures = FailureStreak(log, "fleet: this host's heartbeat")
        self._loop: asyncio.AbstractEventLoop | None = None
        # Told (on the loop) when this live host finds it was taken over: its running executions,
        # written as interrupted by the host that did, are to be written again as they are.
        self.on_taken_back: Callable[[], None] | None = None
        # Told (on the loop) when another host changed what this one shows of it (None: any may have).
        self.on_others_changed: Callable[[str | None], None] | None = None
        self._news: FleetNews | None = None

    async def open(self) -> None:
        """Take this host back (before the daemon serves), then beat until closed; hear the others."""
        self._loop = asyncio.get_running_loop()
        listener = self.db.listener  # a PgDatabase's (store/pg_database.py)
        if listener is not None and self.on_others_changed is not None:
            self._news = FleetNews(listener, self.db.host, self.on_others_changed).start()
        if await self._begin():
            self._steady_since = self._loop.time() - self.stale_after_s  # a start judges at its first beat
        self._beating = self._loop.create_task(self._beat_now_and_then())

    async def _begin(self) -> bool:
        """This host fresh and its last run's panes gone; False (logged) when the database failed:
        the next beat tries again, for a beat alone would show those dead panes as live."""
        pid = os.getpid()
        try:
            await self.db.call(lambda c: fleet.begin(c, pid, self.started_at), "publishing this host")
        except StoreUnavailable as exc:
            self._beat_failures.failed(exc.message)
            return False
        self._begun = True
        return True

    async def others(self, host: str | None = None) -> tuple[list[FleetHost], list[FleetPane]]:
        """The other hosts (only `host`) and their panes as last published, judged by this
        daemon's staleness bound; StoreUnavailable when the database cannot be read."""
        bound = self.stale_after_s
        return fleet_view(*await self.db.call(lambda c: fleet.read_fleet(c, bound, host),  # type: ignore[arg-type]
                                              "reading the other hosts' panes"))

    def changed(self, event: object = None) -> None:
        """Something may have changed (a bus listener): look within FLEET_PUBLISH_MIN_INTERVAL_S."""
        if self._closed or self._look is not None or self._loop is None:
            return
        if getattr(event, "kind", None) in FLEET_EVENT_KINDS:  # another host's news changes nothing here
            return
        delay = max(0.0, self._last_look + FLEET_PUBLISH_MIN_INTERVAL_S - self._loop.time())
        self._look = self._loop.call_later(delay, self._look_now)

    def _look_now(self) -> None:
        self._look = None
        if self._closed or not self._begun:  # a write before begin's would be deleted by it
            return
        if self._writing:  # one write at a time: look again once it is done
            self._again = True
            return
        assert self._loop is not None
        self._last_look = self._loop.time()
        now, built_at = self.snapshot(), time.time()
        keys = {pane_id: _encoder.encode((info, _unchanging(summary))) for pane_id, (info, summary) in now.items()}
        changed = {pane_id: now[pane_id] for pane_id, key in keys.items() if self._published.get(pane_id) != key}
        gone = [pane_id for pane_id in self._published if pane_id not in now]
        if not changed and not gone:
            return
        self._writing = True

        def write(c: object) -> None:
            rows = [(pane_id, summary.activity.state, summary.agent_type, _encoder.encode(info).decode(),
                     _encoder.encode(summary).decode(), built_at)
                    for pane_id, (info, summary) in changed.items()]
            fleet.publish(c, rows, gone)  # type: ignore[arg-type]  # the writer's connection

        future = self.db.run_soon(write)
        fresh = {pane_id: keys[pane_id] for pane_id in changed}
        future.add_done_callback(lambda done: self._loop.call_soon_threadsafe(  # type: ignore[union-attr]
            self._written, done, fresh, gone))

    def _written(self, done: concurrent.futures.Future[None], fresh: dict[str, bytes], gone: list[str]) -> None:
        self._writing = False
        failure = done.exception()
        if failure is not None:
            log.error("fleet: publishing this host's panes: %r", failure)
        else:
            self._published.update(fresh)
            for pane_id in gone:
                self._published.pop(pane_id, None)
        if self._again:
            self._again = False
            self.changed()

    async def _beat_now_and_then(self) -> None:
        pid, error = os.getpid(), TAKEN_OVER_ERROR
        while not self._closed:
            await asyncio.sleep(self.beat_interval_s)
            if not self._begun and not await self._begin():
                continue
            try:
                taken_back = await self.db.call(lambda c: fleet.beat(c, pid, self.started_at, self.stale_after_s),
                                                "writing this host's heartbeat")
                taken = await self._take_over_stale(error)
                forgotten = await self.db.call(lambda c: fleet.forget_stale(c, self.forget_after_s),
                                               "forgetting hosts stale for long")
            except StoreUnavailable as exc:
                self._steady_since = None
                self._beat_failures.failed(exc.message)
                continue
            self._beat_failures.succeeded()
            if taken_back:
                log.warning("fleet: another host took this one for dead (its heartbeats were not written for "
                            "%.0f s): what runs here is written again", self.stale_after_s)
                if self.on_taken_back is not None:
                    self.on_taken_back()
            for host, interrupted in taken:
                log.warning("fleet: host %s sent no heartbeat for %.0f s: its %d running execution(s) are now "
                            "interrupted", host, self.stale_after_s, interrupted)
            for host in forgotten:
                log.warning("fleet: host %s sent no heartbeat for %.0f s: forgotten (its history stays)",
                            host, self.forget_after_s)
            self.changed()

    async def _take_over_stale(self, error: tuple[str, str, str]) -> list[tuple[str, int]]:
        """Take over the hosts gone stale, once this daemon's own beats have gone through for a
        whole bound ([] before: their silence may have been the database's, not theirs)."""
        assert self._loop is not None
        now = self._loop.time()
        if self._steady_since is None:
            self._steady_since = now
        if now - self._steady_since < self.stale_after_s:
            return []
        return await self.db.call(lambda c: fleet.take_over_stale(c, self.stale_after_s, time.time(), error),
                                  "looking for hosts gone stale")

    def close(self) -> None:
        """The daemon stops cleanly: its host row and panes go (queued before the database closes)."""
        if self._closed:
            return
        self._closed = True
        if self._look is not None:
            self._look.cancel()
        if self._beating is not None:
            self._beating.cancel()
        if self._news is not None:
            self._news.stop()
        self.db.submit(fleet.leave, "removing this host from the fleet")

