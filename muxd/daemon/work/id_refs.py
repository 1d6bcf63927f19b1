"""What an id someone typed names: a whole id, a short id as the CLI's tables show it, or an
id's prefix (store/short_ids.py). One match is that id; several are a one-line error naming
them, as git says it of a short hash; none leaves the word as typed, for the caller's NotFound."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

from muxd.errors import BadRequest
from muxd.executions.record import Execution
from muxd.store.execution_store import ExecutionStore, Scope
from muxd.store.short_ids import EXECUTION_IDS, TASK_IDS, ids_starting, typed_key

AMBIGUOUS_NAMED = 4       # candidates an ambiguity error names
CANDIDATES_READ = 32      # ids read per typed prefix, before those out of the caller's scope go


T = TypeVar("T")


class TaskDatabase(Protocol):
    """The task queue's database (daemon/work/tasks.py)."""

    async def call(self, job: Callable[[sqlite3.Connection], T], doing: str) -> T: ...


class ExecutionRecords(Protocol):
    """What resolving an execution id needs of the daemon's executions (daemon/work/executions.py)."""

    async def record(self, execution_id: str) -> Execution | None: ...

    def unwritten(self, scope: Scope) -> list[Execution]: ...


def only_one(what: str, ref: str, found: Sequence[str], field: str) -> str | None:
    """The one id of `found`; None if none; BadRequest naming a few if several."""
    if len(found) > 1:
        named = ", ".join(found[:AMBIGUOUS_NAMED]) + (f" and {len(found) - AMBIGUOUS_NAMED} more"
                                                      if len(found) > AMBIGUOUS_NAMED else "")
        raise BadRequest(f"{what} {ref} is ambiguous: {named}", field=field, candidates=list(found))
    return found[0] if found else None


async def execution_id(executions: ExecutionRecords, store: ExecutionStore, ref: str, scope: Scope,
                       field: str = "execution_id") -> str:
    """The execution id `ref` names among those `scope` may see (the ones it may not see are not
    counted, so they neither make a prefix ambiguous nor leak); `ref` itself if none."""
    typed = typed_key(EXECUTION_IDS, ref)
    if typed is None:
        return ref
    start = typed[1]
    unwritten = {e.id: e for e in executions.unwritten(scope)
                 if (EXECUTION_IDS.key_of(e.id) if typed[0] == "key" else e.id).startswith(start)}
    if typed[0] == "id" and start in unwritten:
        # A whole id held in memory (running, or waiting to be written) prefixes no other id: the
        # store is not asked, so it is found while the database cannot be reached (issue 30).
        return start
    stored = await store.ids_starting(ref, CANDIDATES_READ)
    seen = [i for i in stored if i in unwritten or await _visible(executions, i, scope)]
    return only_one("execution", ref.strip(), sorted({*seen, *unwritten}), field) or ref


async def _visible(executions: ExecutionRecords, execution_id: str, scope: Scope) -> bool:
    if scope.everything:
        return True
    found = await executions.record(execution_id)
    return found is not None and scope.sees(found)


async def task_id(tasks: TaskDatabase, ref: str) -> str | None:
    """The task id that `ref`, a prefix of one as `muxd task ls` shows, names; None if none does."""
    found = await tasks.call(lambda c: ids_starting(c, TASK_IDS, ref, limit=CANDIDATES_READ), "finding a task")
    return only_one("task", ref.strip(), found, "task_id")
