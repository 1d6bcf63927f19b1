"""The execution history's persistence, behind one small interface (`ExecutionStore`).

SQLite (`sqlite_executions.py`) is the embedded default; a PostgreSQL implementation for
fleets of daemons is to come behind the same methods. Reads never block the event loop and
never wait behind writes; every method may raise `muxd.errors.StoreUnavailable` (a full
disk, a locked or broken database), which callers turn into a clear error on the call
that needed it while panes keep running.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

import msgspec

from muxd.errors import StoreUnavailable
from muxd.executions.record import Execution
from muxd.executions.transcript import Transcript, TranscriptBuffer

if TYPE_CHECKING:
    import asyncio


class Scope(msgspec.Struct, frozen=True):
    """What a principal may see: executions of `pane_keys` (None: every pane) plus those it
    triggered itself (`principal`; `sent_as` on another host's pane)."""

    pane_keys: frozenset[str] | None = None
    principal: str | None = None
    sent_as: str | None = None  # `principal` as other hosts record its sends (store/hosts.sent_from)

    @property
    def principals(self) -> tuple[str, ...]:
        """The names whose executions this scope sees whatever their pane."""
        return tuple(name for name in (self.principal, self.sent_as) if name is not None)

    @property
    def everything(self) -> bool:
        return self.pane_keys is None

    def sees(self, execution: Execution) -> bool:
        """Whether an execution held in memory is this scope's to see, as the store's reads judge a row."""
        return (self.pane_keys is None or execution.pane_key in self.pane_keys
                or (execution.principal is not None and execution.principal in self.principals))


EVERYTHING = Scope()


class ExecutionQuery(msgspec.Struct, frozen=True):
    """Filters shared by every list; None means "any". Newest first (started, else queued)."""

    scope: Scope = EVERYTHING
    agent_name: str | None = None
    pane_key: str | None = None
    status: str | None = None
    statuses: tuple[str, ...] = ()       # any of these (list_active_executions: pending, running)
    triggered_by: str | None = None
    task_id: str | None = None
    trace_id: str | None = None
    host: str | None = None              # the daemon's host that ran it (MUXD_HOST); None: the fleet's
    since: float | None = None           # epoch seconds, inclusive (on started, else queued)
    until: float | None = None           # exclusive
    limit: int = 20
    offset: int = 0


class ErrorPattern(msgspec.Struct, frozen=True, kw_only=True):
    """Failures grouped by stack_hash (seed 003 tasks_last_failed.error_patterns)."""

    stack_hash: str
    count: int
    first_seen: float
    last_seen: float
    error_type: str
    message: str                         # the newest failure's message
    example_id: str
    example_task_id: str | None = None
    example_trace_id: str | None = None


class AgentStats(msgspec.Struct, frozen=True, kw_only=True):
    """One pane's executions of one kind in a window (get_agent_activity_summary, muxd stats):
    an agent's prompts, or the commands run in a pane (muxd run windows, a shell's lines)."""

    agent_name: str
    kind: str = "prompt"                 # record.KINDS
    agent_type: str | None = None        # of its newest execution
    total: int = 0
    successful: int = 0
    failed: int = 0                      # record.FAILED_STATUSES: failed + timeout + interrupted
    cancelled: int = 0
    running: int = 0
    pending: int = 0
    total_cost_usd: float | None = None  # over the executions whose cost is known; None: none is
    cost_known_executions: int = 0       # how many executions that sum covers
    total_tokens: int = 0
    avg_duration_s: float | None = None  # over ended executions with a duration
    last_execution_at: float | None = None
    last_execution_status: str | None = None


class TimeBucket(msgspec.Struct, frozen=True, kw_only=True):
    """One agent's executions of one kind that began in one stretch of time (the web view's charts)."""

    agent_name: str
    kind: str = "prompt"                 # record.KINDS
    start: float                         # epoch seconds; the bucket runs for the timeline's bucket_s
    executions: int = 0
    failures: int = 0                    # record.FAILED_STATUSES
    tokens: int = 0                      # tokens_used summed (the history keeps no input/output split)
    cost_usd: float | None = None        # over the executions whose cost is known; None: none is


class ExecutionStore(Protocol):
    # ---- writes (in submission order; a read after a write sees it)
    async def save(self, execution: Execution, transcript: Transcript | TranscriptBuffer | None = None, *,
                   within: float = 0.0) -> None:
        """Insert or replace by id, with its transcript if given (one transaction); `within`: it
        may wait up to that many seconds for other saves to be written with it."""

    def saving(self, execution: Execution, transcript: Transcript | TranscriptBuffer | None = None, *,
               within: float = 0.0) -> asyncio.Future[None]:
        """`save` as a future of the running loop, done once stored (failed: StoreUnavailable)."""

    async def save_many(self, rows: list[tuple[Execution, Transcript | None]]) -> None:
        """`save` each (execution, transcript) of `rows`, all in one transaction."""

    async def written(self) -> None:
        """Back once every save made so far is written (saves put off too): for a query to see them."""

    def save_soon(self, execution: Execution,
                  on_failed: Callable[[Execution, StoreUnavailable], None] | None = None, *, within: float = 0.0) -> None:
        """Queue `save`; nobody waits. A failure is logged (once per kind a minute) and handed to
        `on_failed` (on the writer thread), never raised. `within`: it may wait up to that many
        seconds for other saves to be written with it in one transaction."""

    async def save_transcript(self, execution_id: str, transcript: Transcript) -> None: ...

    async def interrupt_running(self, now: float) -> int:
        """Executions left pending/running by a daemon that died become `interrupted`; returns how many."""

    async def prune(self, *, older_than: float | None, keep_rows: int | None) -> int:
        """Forget ended executions (and their transcripts) older than `older_than` or beyond the newest `keep_rows`."""

    # ---- reads
    async def get(self, execution_id: str) -> Execution | None: ...

    async def transcript(self, execution_id: str) -> Transcript | None: ...

    async def by_idempotency_key(self, principal: str, pane_key: str, key: str) -> Execution | None:
        """The execution `principal` submitted to `pane_key` with idempotency key `key`."""

    async def list(self, query: ExecutionQuery) -> tuple[list[Execution], int]:
        """The rows of one page and the total that match (ignoring limit/offset)."""

    async def page(self, query: ExecutionQuery) -> list[Execution]:
        """The rows of one page, without the total (nothing is counted: cheaper at a million rows)."""

    async def ids_starting(self, ref: str, limit: int) -> list[str]:
        """Up to `limit` ids that a short id or an id's prefix names (store/short_ids.py), in order."""

    async def short_ids(self, ids: list[str], others: list[str]) -> dict[str, str]:
        """Each id's short id, unique among the stored ids and `others` (store/short_ids.py)."""

    async def by_trace(self, trace_id: str, scope: Scope) -> list[Execution]:
        """Every attempt of a trace, by attempt then start."""

    async def error_patterns(self, query: ExecutionQuery) -> list[ErrorPattern]:
        """Failed executions matching `query` grouped by stack_hash, the most recent pattern first."""

    async def unique_failures(self, query: ExecutionQuery) -> list[Execution]:
        """The newest failure of each stack_hash, newest first (tasks_last_failed unique_errors)."""

    async def stats(self, query: ExecutionQuery) -> list[AgentStats]:
        """Per agent, over the executions matching `query` (its limit/offset ignored)."""

    async def timeline(self, query: ExecutionQuery, bucket_s: int) -> list[TimeBucket]:
        """Per agent, kind and stretch of `bucket_s` seconds from `query.since` (which it needs), the
        executions matching `query` that began then; oldest first, stretches with none left out."""

    def close(self) -> None: ...
