"""`Task`, `TaskEvent` and `Review` <-> rows of the tasks, task_events and task_reviews tables.

A task's columns follow its struct's fields (schema migration 3); the verification contract,
its result, context and output are JSON. `plan` (the name) and `depends_on` are read with the
row, from plans and task_deps.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import msgspec

from muxd.errors import NotFound
from muxd.store.database import is_postgres, lock_clause
from muxd.store.hosts import HOST_SQL
from muxd.tasks.model import Review, Task, TaskEvent, Verification, VerificationResult

# What a task's row is written with; `host` is written by the database (muxd_host()), read after.
COLUMNS: tuple[str, ...] = tuple(name for name in Task.__struct_fields__
                                 if name not in ("plan", "depends_on", "host"))
# What a move may change; the rest is fixed when the task is created.
MUTABLE: tuple[str, ...] = ("state", "verification_result", "context", "output", "external_ref", "claimed_by",
                            "claimed_at", "lease_expires_at", "lease_s", "attempts", "last_error", "feedback",
                            "updated_at", "completed_at")
_JSON = frozenset({"verification", "verification_result", "context", "output"})



def select(index: str | None = None, *, postgres: bool = False) -> str:
    """What every query of tasks reads, from `tasks t`: its columns, its plan's name, its
    dependencies. `index`: the one index to read tasks from (INDEXED BY, see task_store.py;
    PostgreSQL has no such hint and needs none). `postgres`: in PostgreSQL's SQL."""
    deps = "coalesce(json_agg(d.depends_on), '[]')" if postgres else "json_group_array(d.depends_on)"
    hint = f" INDEXED BY {index}" if index and not postgres else ""
    return (f"SELECT {', '.join('t.' + c for c in COLUMNS)}, p.name, "
            f"(SELECT {deps} FROM task_deps d WHERE d.task_id = t.id), t.host "
            f"FROM tasks t{hint} LEFT JOIN plans p ON p.id = t.plan_id")


SELECT = select()
_SELECT_PG = select(postgres=True)


def select_for(c: object, index: str | None = None) -> str:
    """`select(index)` in the SQL of `c`'s database."""
    if not is_postgres(c):
        return SELECT if index is None else select(index)
    return _SELECT_PG
# The host: the daemon that wrote the row (store/hosts.py), on every table of the queue.
INSERT = f"INSERT INTO tasks ({', '.join(COLUMNS)}, host) VALUES ({', '.join('?' * len(COLUMNS))}, {HOST_SQL})"
# The state in the WHERE is the one the move started from: a compare-and-set.
UPDATE = (f"UPDATE tasks SET {', '.join(c + ' = ?' for c in MUTABLE)} WHERE id = ? AND state = ?")

_encoder = msgspec.json.Encoder()
_verification = msgspec.json.Decoder(Verification)
_result = msgspec.json.Decoder(VerificationResult)
_object = msgspec.json.Decoder(dict[str, Any])
_ids = msgspec.json.Decoder(list[str])


def json_text(value: object) -> str:
    return _encoder.encode(value).decode()


def _column(task: Task, name: str) -> Any:
    value = getattr(task, name)
    return json_text(value) if name in _JSON and value is not None else value


def insert_values(task: Task) -> tuple[Any, ...]:
    """The values of INSERT for `task`."""
    return tuple(_column(task, name) for name in COLUMNS)


def update_values(task: Task, from_state: str) -> tuple[Any, ...]:
    """The values of UPDATE writing `task`, guarded on the row still being in `from_state`."""
    return (*(_column(task, name) for name in MUTABLE), task.id, from_state)


def from_row(row: tuple[Any, ...]) -> Task:
    """The `Task` a row of SELECT holds."""
    fields = dict(zip(COLUMNS, row))
    fields["verification"] = _verification.decode(fields["verification"])
    result, output = fields["verification_result"], fields["output"]
    fields["verification_result"] = _result.decode(result) if result is not None else None
    fields["context"] = _object.decode(fields["context"])
    fields["output"] = _object.decode(output) if output is not None else None
    plan, depends_on, host = row[len(COLUMNS):]
    return Task(**fields, plan=plan, depends_on=sorted(_ids.decode(depends_on)), host=host)


def read_task(c: sqlite3.Connection, task_id: str) -> Task:
    """The task `task_id`; NotFound when there is none."""
    # In an immediate transaction on PostgreSQL the row is locked: the transaction moves it.
    row = c.execute(f"{select_for(c)} WHERE t.id = ?{lock_clause(c, 't')}", (task_id,)).fetchone()
    if row is None:
        raise NotFound(f"no task {task_id}", task_id=task_id)
    return from_row(row)


def require_task(c: sqlite3.Connection, task_id: str) -> None:
    """Nothing when the task exists; NotFound otherwise."""
    if c.execute("SELECT 1 FROM tasks WHERE id = ?", (task_id,)).fetchone() is None:
        raise NotFound(f"no task {task_id}", task_id=task_id)


# ---------------------------------------------------------------- events and reviews

def insert_event(c: sqlite3.Connection, event: TaskEvent) -> None:
    c.execute("INSERT INTO task_events (task_id, at, kind, actor, from_state, to_state, detail, host) "
              f"VALUES (?, ?, ?, ?, ?, ?, ?, {HOST_SQL})",
              (event.task_id, event.at, event.kind, event.actor, event.from_state, event.to_state,
               json_text(event.detail) if event.detail else None))


def read_events(c: sqlite3.Connection, task_id: str, limit: int) -> list[TaskEvent]:
    """The task's `limit` latest events, oldest first."""
    rows = c.execute("SELECT seq, at, kind, actor, from_state, to_state, detail, host FROM task_events "
                     "WHERE task_id = ? ORDER BY seq DESC LIMIT ?", (task_id, limit)).fetchall()
    return [TaskEvent(task_id=task_id, seq=seq, at=at, kind=kind, actor=actor, from_state=from_state,
                      to_state=to_state, detail=_object.decode(detail) if detail else {}, host=host)
            for seq, at, kind, actor, from_state, to_state, detail, host in reversed(rows)]


def insert_review(c: sqlite3.Connection, review: Review) -> None:
    c.execute("INSERT INTO task_reviews (task_id, at, reviewer, verdict, comment, blocking, resolved_at, host) "
              f"VALUES (?, ?, ?, ?, ?, ?, ?, {HOST_SQL})",
              (review.task_id, review.at, review.reviewer, review.verdict, review.comment, int(review.blocking),
               review.resolved_at))


def read_reviews(c: sqlite3.Connection, task_id: str) -> list[Review]:
    """Every review of the task, oldest first."""
    return [Review(id=id_, task_id=task_id, at=at, reviewer=reviewer, verdict=verdict, comment=comment,
                   blocking=bool(blocking), resolved_at=resolved_at)
            for id_, at, reviewer, verdict, comment, blocking, resolved_at in c.execute(
                "SELECT id, at, reviewer, verdict, comment, blocking, resolved_at FROM task_reviews "
                "WHERE task_id = ? ORDER BY id", (task_id,))]
