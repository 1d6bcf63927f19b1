"""Live state across hosts on a shared PostgreSQL database (issue 30): each daemon's heartbeat
(`fleet_hosts`) and its panes' agent summaries as it last published them (`fleet_panes`),
migration 7 of pg_schema.py. Jobs of the writer thread, as every table module's.

Time that decides something is the database's: a heartbeat is `now()` when written, and a host
is stale when `now()` has gone FLEET_STALE_AFTER_S past it, so no two hosts' clocks are compared.
The panes' own times (a summary's `observed_at`, its sources') are their daemon's wall clock, as
everywhere in muxd: they tell a reader when, not whether.

A host found stale is taken over once: the first daemon whose UPDATE sets its `stale_since`
(the row lock orders daemons that race; the second finds it set) interrupts, in that
transaction, the executions the dead daemon left running. Its own next start clears the mark.
A host stale long enough (`forget_stale`) is forgotten the same way, by one daemon: its host row
and panes go, the history it wrote stays.

Every change another daemon's view of the fleet would show is told on FLEET_CHANNEL in its own
transaction (store/pg_listen.py), the host it is about as the payload: a publish, a start, a clean
stop, a beat that ends a silence (its own host's); a take-over or a forgetting (the host taken
over or forgotten: whoever writes it tells, since a dead host tells nothing). The listeners
(daemon/work/fleet_news.py) skip what is about their own host.
"""

from __future__ import annotations

import sqlite3
from typing import Any, NamedTuple

from muxd.store.database import transaction
from muxd.store.execution_rows import ACTIVE_ROWS
from muxd.store.hosts import HOST_SQL

FLEET_CHANNEL = "muxd_fleet"  # a LISTEN channel (store/pg_listen.py); not its notify(): no psycopg here

# epoch seconds of a timestamptz on the database's clock
_EPOCH = "extract(epoch from {})::double precision"


def _tell(c: sqlite3.Connection, host: str | None = None) -> None:
    """Tell the fleet's listeners of `host` (None: this one) when the transaction commits."""
    c.execute(f"SELECT pg_notify(?, {HOST_SQL if host is None else '?'})",
              (FLEET_CHANNEL,) if host is None else (FLEET_CHANNEL, host))


class HostRow(NamedTuple):
    host: str
    pid: int
    started_at: float     # the daemon's clock
    beat_at: float        # the database's clock, epoch seconds
    stale: bool           # beat_at older than the reader's bound, on the database's clock
    stale_since: float | None  # when a daemon took the host over (interrupted its executions)


class PaneRow(NamedTuple):
    host: str
    pane_id: str
    state: str
    agent_type: str | None
    pane: str              # PaneInfo as JSON (protocol/pane_messages.py)
    summary: str           # AgentSummary as JSON
    observed_at: float     # when its daemon built them (its clock)
    age_s: float           # since it was published, on the database's clock


def begin(c: sqlite3.Connection, pid: int, started_at: float) -> None:
    """This daemon's start: its host row fresh (a beat now, no stale mark), the panes its last run
    published gone (they died with it)."""
    with transaction(c):
        c.execute(f"INSERT INTO fleet_hosts (host, pid, started_at, beat_at) VALUES ({HOST_SQL}, ?, ?, now()) "
                  f"ON CONFLICT (host) DO UPDATE SET pid = excluded.pid, started_at = excluded.started_at, "
                  f"beat_at = excluded.beat_at, stale_since = NULL", (pid, started_at))
        c.execute(f"DELETE FROM fleet_panes WHERE host = {HOST_SQL}")
        _tell(c)


def beat(c: sqlite3.Connection, pid: int, started_at: float, stale_after_s: float) -> bool:
    """A heartbeat: this host's row says the database's now(). A row another daemon deleted
    (never done today) or a stale mark (a daemon thought this one dead) is made right again.
    True when there was such a mark: this live host was taken over (its heartbeats could not be
    written for a while), and what it runs was written as interrupted. A beat that ends a silence
    (no row, a mark, or a last beat older than `stale_after_s`) is told: the others showed it stale."""
    with transaction(c, immediate=True):
        before = c.execute(f"SELECT stale_since IS NOT NULL, beat_at < now() - make_interval(secs => ?) "
                           f"FROM fleet_hosts WHERE host = {HOST_SQL} FOR UPDATE", (stale_after_s,)).fetchone()
        c.execute(f"INSERT INTO fleet_hosts (host, pid, started_at, beat_at) VALUES ({HOST_SQL}, ?, ?, now()) "
                  f"ON CONFLICT (host) DO UPDATE SET beat_at = excluded.beat_at, stale_since = NULL",
                  (pid, started_at))
        if before is None or any(before):
            _tell(c)
    return bool(before and before[0])


def publish(c: sqlite3.Connection, panes: list[tuple[str, str, str | None, str, str, float]],
            gone: list[str]) -> None:
    """Write this host's changed panes ((pane_id, state, agent_type, pane JSON, summary JSON,
    observed_at) each) and remove those `gone`, in one transaction."""
    with transaction(c):
        if panes:
            c.executemany(
                f"INSERT INTO fleet_panes (host, pane_id, state, agent_type, pane, summary, observed_at, "
                f"published_at) VALUES ({HOST_SQL}, ?, ?, ?, ?, ?, ?, now()) ON CONFLICT (host, pane_id) DO UPDATE SET "
                f"state = excluded.state, agent_type = excluded.agent_type, pane = excluded.pane, "
                f"summary = excluded.summary, observed_at = excluded.observed_at, published_at = excluded.published_at",
                panes)
        if gone:
            c.executemany(f"DELETE FROM fleet_panes WHERE host = {HOST_SQL} AND pane_id = ?",
                          [(pane_id,) for pane_id in gone])
        _tell(c)


def leave(c: sqlite3.Connection) -> None:
    """This daemon stops cleanly: its host row and panes go (a stale row means a daemon died)."""
    with transaction(c):
        c.execute(f"DELETE FROM fleet_hosts WHERE host = {HOST_SQL}")
        _tell(c)


def take_over_stale(c: sqlite3.Connection, stale_after_s: float, now: float,
                    error: tuple[str, str, str]) -> list[tuple[str, int]]:
    """Mark every other host whose heartbeat is older than `stale_after_s` (the database's clock)
    stale, each exactly once, and end the executions it left pending or running as `interrupted`
    (`error`: type, message, stack hash; ended at `now`, this daemon's clock). [(host, executions
    interrupted)] for the hosts taken over by this call."""
    with transaction(c):
        taken = [host for host, in c.execute(
            f"UPDATE fleet_hosts SET stale_since = now() WHERE host <> {HOST_SQL} AND stale_since IS NULL "
            f"AND beat_at < now() - make_interval(secs => ?) RETURNING host", (stale_after_s,)).fetchall()]
        counts = []
        for host in taken:
            ended = c.execute(
                f"UPDATE executions SET status = 'interrupted', completed_at = ?, error_type = ?, error_message = ?, "
                f"stack_hash = ?, duration_ms = CASE WHEN started_at IS NULL THEN NULL "
                f"ELSE greatest(0, round((? - started_at) * 1000))::bigint END "
                f"WHERE host = ? AND {ACTIVE_ROWS}", (now, *error, now, host)).rowcount
            counts.append((host, ended))
            _tell(c, host)
    return counts


def host_run(c: sqlite3.Connection, host: str) -> float | None:
    """Which run of `host`'s daemon the fleet knows now: its row's `started_at`, set anew by each
    start (whose pane ids start again); None when the host has no row (stopped cleanly, forgotten)."""
    row = c.execute("SELECT started_at FROM fleet_hosts WHERE host = ?", (host,)).fetchone()
    return float(row[0]) if row is not None else None


def forget_stale(c: sqlite3.Connection, forget_after_s: float) -> list[str]:
    """Forget every other host whose heartbeat is older than `forget_after_s` (the database's clock)
    and that was taken over already: its host row and, with it, its panes; each by one caller only
    (the DELETE's row locks order a race). Its executions and every other row it wrote stay. The
    hosts forgotten by this call."""
    with transaction(c):
        forgotten = sorted(host for host, in c.execute(
            f"DELETE FROM fleet_hosts WHERE host <> {HOST_SQL} AND stale_since IS NOT NULL "
            f"AND beat_at < now() - make_interval(secs => ?) RETURNING host", (forget_after_s,)).fetchall())
        for host in forgotten:
            _tell(c, host)
    return forgotten


def _hosts(c: sqlite3.Connection, stale_after_s: float, where: str, params: tuple[Any, ...]) -> list[HostRow]:
    rows = c.execute(
        f"SELECT host, pid, started_at, {_EPOCH.format('beat_at')}, beat_at < now() - make_interval(secs => ?), "
        f"{_EPOCH.format('stale_since')} FROM fleet_hosts WHERE {where} ORDER BY host",
        (stale_after_s, *params)).fetchall()
    return [HostRow(host, pid, started, beat_at, bool(stale), since) for host, pid, started, beat_at, stale, since in rows]


def read_fleet(c: sqlite3.Connection, stale_after_s: float, host: str | None = None) -> tuple[list[HostRow], list[PaneRow]]:
    """The other hosts (only `host`, when given) and the panes they published, host by host."""
    where, params = (f"host <> {HOST_SQL}", ()) if host is None else (f"host <> {HOST_SQL} AND host = ?", (host,))
    hosts = _hosts(c, stale_after_s, where, params)
    panes = [PaneRow(*row) for row in c.execute(
        f"SELECT host, pane_id, state, agent_type, pane, summary, observed_at, "
        f"{_EPOCH.format('now() - published_at')} FROM fleet_panes WHERE {where} ORDER BY host, "
        f"length(pane_id), pane_id", params).fetchall()]
    return hosts, panes
