"""`host_actions`: what one daemon of a shared PostgreSQL database asks another to do to a pane
or an execution of its host (issue 30): send a prompt, cancel an execution, dispatch tasks.

The asking daemon has checked the caller's access; it inserts a `pending` row for the owning
host and tells that host's channel. The owner claims its pending rows (one UPDATE: each row is
claimed once, whoever else looks), applies each as a local request would be, and answers on the
row: `done` with what it did (the execution, the dispatchers), or `refused` with the typed
error; then it tells the asking host's channel. A row the asker takes back before it is claimed
is `withdrawn` (a cancel of a prompt not delivered yet). One channel per host
(`channel_of`): a host's name may hold characters a channel cannot. An owner forgets its answered
actions after a while (`forget_answered`): the executions they made stay in the history.
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from typing import Any, Literal

import msgspec

from muxd.store.execution_rows import ENDED_ROWS
from muxd.store.hosts import HOST_SQL

ActionKind = Literal["send", "cancel", "dispatch"]
ActionState = Literal["pending", "claimed", "done", "refused", "withdrawn"]
# A notification's payload on a host's channel: an action for it, an answer for it, an end it waits for.
TOLD_ACTION, TOLD_ANSWER, TOLD_ENDED = "action", "answer", "ended"
_COLUMNS = ("seq, kind, host, from_host, pane_id, execution_id, principal, request, state, answer, "
            "error_code, error_message, error_detail, created_at, answered_at")


class HostAction(msgspec.Struct, frozen=True, kw_only=True):
    seq: int
    kind: ActionKind
    host: str                      # the owner: the host of the pane or execution acted on
    from_host: str                 # the host of the daemon that asked
    pane_id: str | None            # %N, on `host`
    execution_id: str | None       # send: the id the asker allocated; cancel: the one to cancel
    principal: str                 # who asked, as the asker's access checked them
    request: dict[str, Any]        # the request's own fields
    state: ActionState
    answer: Any = None             # done: what the owner did, as JSON
    error_code: str | None = None  # refused: the typed error (muxd/errors.py's code)
    error_message: str | None = None
    error_detail: dict[str, Any] | None = None
    created_at: float
    answered_at: float | None = None


def channel_of(host: str) -> str:
    """The notification channel of `host`'s daemon."""
    return "muxd_host_" + hashlib.sha256(host.encode()).hexdigest()[:24]


def told(kind: str, key: object) -> str:
    """The payload that tells `kind` (TOLD_…) of the action seq or execution id `key`."""
    return f"{kind}:{key}"


def _action(row: tuple[Any, ...]) -> HostAction:
    fields = dict(zip(_COLUMNS.split(", "), row))
    for name in ("request", "answer", "error_detail"):
        if fields[name] is not None:
            fields[name] = msgspec.json.decode(fields[name])
    return msgspec.convert(fields, HostAction)


def insert_action(c: sqlite3.Connection, kind: ActionKind, host: str, principal: str, request: dict[str, Any], *,
                  pane_id: str | None = None, execution_id: str | None = None) -> int:
    """A pending action for `host` (written as this connection's host's); its seq."""
    row = c.execute(f"INSERT INTO host_actions (kind, host, from_host, pane_id, execution_id, principal, request, "
                    f"state, created_at) VALUES (?, ?, {HOST_SQL}, ?, ?, ?, ?, 'pending', ?) RETURNING seq",
                    (kind, host, pane_id, execution_id, principal, msgspec.json.encode(request).decode(),
                     time.time())).fetchone()
    return int(row[0])


def claim_pending(c: sqlite3.Connection) -> list[HostAction]:
    """This connection's host's pending actions, claimed (each by one claimant only), oldest first."""
    rows = c.execute(f"UPDATE host_actions SET state = 'claimed' WHERE seq IN (SELECT seq FROM host_actions "
                     f"WHERE host = {HOST_SQL} AND state = 'pending' ORDER BY seq FOR UPDATE SKIP LOCKED) "
                     f"RETURNING {_COLUMNS}").fetchall()
    return sorted((_action(row) for row in rows), key=lambda a: a.seq)


def refuse_unfinished(c: sqlite3.Connection, message: str) -> int:
    """At a start: the actions the last run of this host claimed and never answered, refused
    (they may or may not have been applied: none is applied twice); how many."""
    return c.execute(f"UPDATE host_actions SET state = 'refused', error_code = 'interrupted', error_message = ?, "
                     f"answered_at = ? WHERE host = {HOST_SQL} AND state = 'claimed'",
                     (message, time.time())).rowcount


def answer(c: sqlite3.Connection, seq: int, state: Literal["done", "refused"], *, answer: Any = None,
           error: tuple[str, str, dict[str, Any]] | None = None) -> None:
    """Action `seq` answered: done with `answer` (JSON-able), or refused with `error` (code, message, detail)."""
    code, message, detail = error if error is not None else (None, None, None)
    c.execute("UPDATE host_actions SET state = ?, answer = ?, error_code = ?, error_message = ?, error_detail = ?, "
              "answered_at = ? WHERE seq = ?",
              (state, None if answer is None else msgspec.json.encode(answer).decode(), code, message,
               None if detail is None else msgspec.json.encode(detail).decode(), time.time(), seq))


def forget_answered(c: sqlite3.Connection, before: float) -> int:
    """Forget this connection's host's actions answered (or taken back) before `before`; how many."""
    return c.execute(f"DELETE FROM host_actions WHERE host = {HOST_SQL} AND state IN ('done', 'refused', 'withdrawn') "
                     "AND answered_at < ?", (before,)).rowcount


def withdraw(c: sqlite3.Connection, seq: int) -> bool:
    """Take back action `seq` if nobody claimed it yet; whether it was."""
    return c.execute("UPDATE host_actions SET state = 'withdrawn', answered_at = ? WHERE seq = ? AND state = 'pending'",
                     (time.time(), seq)).rowcount == 1


def load_action(c: sqlite3.Connection, seq: int) -> HostAction | None:
    row = c.execute(f"SELECT {_COLUMNS} FROM host_actions WHERE seq = ?", (seq,)).fetchone()
    return _action(row) if row is not None else None


def sent_as(c: sqlite3.Connection, execution_id: str) -> HostAction | None:
    """The send action that allocated `execution_id`, if one did."""
    row = c.execute(f"SELECT {_COLUMNS} FROM host_actions WHERE execution_id = ? AND kind = 'send' ORDER BY seq "
                    "LIMIT 1", (execution_id,)).fetchone()
    return _action(row) if row is not None else None


def execution_host(c: sqlite3.Connection, execution_id: str) -> str | None:
    """The host whose daemon runs (or ran) `execution_id`, by its row in the history."""
    row = c.execute("SELECT host FROM executions WHERE id = ?", (execution_id,)).fetchone()
    return str(row[0]) if row is not None else None


def sent_unended(c: sqlite3.Connection, limit: int) -> list[tuple[str, str]]:
    """(host, execution id) of the prompts this connection's host sent to other hosts that are not
    known to have ended (taken, not refused nor taken back, and no ended row in the history),
    newest first, at most `limit`."""
    return [(str(host), str(execution_id)) for host, execution_id in c.execute(
        f"SELECT host, execution_id FROM host_actions AS a WHERE from_host = {HOST_SQL} AND kind = 'send' "
        "AND state IN ('pending', 'claimed', 'done') AND NOT EXISTS (SELECT 1 FROM executions "
        f"WHERE id = a.execution_id AND {ENDED_ROWS}) ORDER BY seq DESC LIMIT ?", (limit,)).fetchall()]
