"""Executions the history database would not take yet (full, locked, read-only): kept in memory,
written again with backoff until stored, found meanwhile by lookups, and written (or named as
lost) when the daemon stops. "Acknowledge only what is stored" for executions: one that ran is
never forgotten because its row could not be written at that moment.

Bounded (EXECUTION_BACKLOG_MAX_COUNT records, EXECUTION_BACKLOG_TRANSCRIPT_MAX_BYTES of
transcripts): past it the oldest record is dropped, logged with its id and counted, and its id
is remembered so a lookup says it was lost instead of not_found.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator

import msgspec

from muxd.config import (
    EXECUTION_BACKLOG_MAX_COUNT, EXECUTION_BACKLOG_RETRY_FIRST_S, EXECUTION_BACKLOG_RETRY_MAX_S,
    EXECUTION_BACKLOG_TRANSCRIPT_MAX_BYTES, EXECUTION_BACKLOG_WRITE_BATCH,
)
from muxd.errors import StoreUnavailable
from muxd.executions.record import ENDED_STATUSES, Execution
from muxd.executions.transcript import Transcript
from muxd.store.execution_store import ExecutionStore

log = logging.getLogger(__name__)


class Unwritten(msgspec.Struct):
    execution: Execution
    transcript: Transcript | None = None


class ExecutionBacklog:
    """`keep()` what a write failed to store; a retry task writes it again until the store takes
    it. `newest(id)` gives the in-memory record of an execution still pending or running (its
    later saves supersede the one that failed), None once it ended."""

    def __init__(self, store: ExecutionStore, newest: Callable[[str], Execution | None], *,
                 max_count: int = EXECUTION_BACKLOG_MAX_COUNT,
                 transcript_max_bytes: int = EXECUTION_BACKLOG_TRANSCRIPT_MAX_BYTES) -> None:
        self.store = store
        self.newest = newest
        self.max_count = max_count
        self.transcript_max_bytes = transcript_max_bytes
        self.reason = ""                         # the last failure, one line
        self.dropped = 0                         # records dropped past the bound, in this daemon's life
        self._entries: dict[str, Unwritten] = {}  # oldest first
        self._lost: dict[str, Execution] = {}    # dropped ones, without their text (bounded the same)
        self._transcript_bytes = 0
        self._retry: asyncio.Task[None] | None = None
        self._kicked = asyncio.Event()

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, execution_id: str) -> bool:
        return execution_id in self._entries

    def __iter__(self) -> Iterator[Execution]:
        return (entry.execution for entry in self._entries.values())

    def get(self, execution_id: str) -> Execution | None:
        entry = self._entries.get(execution_id)
        return entry.execution if entry is not None else None

    def transcript(self, execution_id: str) -> Transcript | None:
        entry = self._entries.get(execution_id)
        return entry.transcript if entry is not None else None

    def lost(self, execution_id: str) -> Execution | None:
        """The record (without its text) of an execution dropped past the bound, if remembered."""
        return self._lost.get(execution_id)

    # ------------------------------------------------------------ keeping

    def keep(self, execution: Execution, transcript: Transcript | None, failure: StoreUnavailable) -> None:
        """`execution` (with `transcript`) could not be written: hold it and write it again later."""
        self.reason = failure.message
        earlier = self._entries.pop(execution.id, None)
        if earlier is not None:
            if earlier.execution.status in ENDED_STATUSES and execution.status not in ENDED_STATUSES:
                self._entries[execution.id] = earlier  # a late report of an older save: the end stays
                return
            transcript = transcript or earlier.transcript
            self._forget_transcript(earlier)
        if transcript is not None and self._transcript_bytes + len(transcript.data) > self.transcript_max_bytes:
            log.error("history: the transcript of %s is dropped: unwritten transcripts hold %d bytes already",
                      execution.id, self._transcript_bytes)
            transcript = None
            execution = msgspec.structs.replace(execution, transcript_bytes=0, transcript_truncated=True)
        if not self._entries:
            log.error("history: %s: executions wait in memory and are written again until it takes them",
                      failure.message)
        self._entries[execution.id] = Unwritten(execution, transcript)
        self._transcript_bytes += len(transcript.data) if transcript is not None else 0
        while len(self._entries) > self.max_count:
            self._drop_oldest()
        self._start_retrying()

    def written(self, execution_id: str) -> None:
        """A later write stored `execution_id`: nothing of it is left to write."""
        entry = self._entries.pop(execution_id, None)
        if entry is not None:
            self._forget_transcript(entry)
        self.retry_now()  # the store takes writes again

    def retry_now(self) -> None:
        """The store may take writes again (its connection was made again): no backoff to wait out."""
        if self._entries:
            self._kicked.set()

    def _forget_transcript(self, entry: Unwritten) -> None:
        self._transcript_bytes -= len(entry.transcript.data) if entry.transcript is not None else 0

    def _drop_oldest(self) -> None:
        execution_id = next(iter(self._entries))
        entry = self._entries.pop(execution_id)
        self._forget_transcript(entry)
        e = entry.execution
        if e.status not in ENDED_STATUSES:
            return  # still pending or running, so still in memory: its next save (or its end) writes it
        self.dropped += 1
        log.error("history: %s (%s, agent %s) is lost, never written: more than %d executions wait to be "
                  "written (%s)", e.id, e.status, e.agent_name, self.max_count, self.reason)
        self._lost[e.id] = Execution(id=e.id, pane_id=e.pane_id, pane_key=e.pane_key, agent_name=e.agent_name,
                                     status=e.status, principal=e.principal, host=e.host)
        while len(self._lost) > self.max_count:
            self._lost.pop(next(iter(self._lost)))

    # ------------------------------------------------------------ writing

    def _start_retrying(self) -> None:
        if self._retry is None or self._retry.done():
            self._retry = asyncio.get_running_loop().create_task(self._retry_until_written())

    async def _retry_until_written(self) -> None:
        delay = EXECUTION_BACKLOG_RETRY_FIRST_S
        while self._entries:
            self._kicked.clear()
            try:
                await asyncio.wait_for(self._kicked.wait(), delay)
            except asyncio.TimeoutError:
                pass
            written = 0
            try:
                while self._entries:
                    written += await self._write_batch()
            except StoreUnavailable as exc:
                self.reason = exc.message
                delay = min(delay * 2, EXECUTION_BACKLOG_RETRY_MAX_S)
            if written:
                log.info("history: %d execution(s) held in memory written", written)

    async def _write_batch(self) -> int:
        """Write the oldest batch (raises StoreUnavailable); what was written leaves the backlog.
        Returns how many were written."""
        batch: list[tuple[Execution, Transcript | None]] = []
        for execution_id, entry in list(self._entries.items()):
            if len(batch) == EXECUTION_BACKLOG_WRITE_BATCH:
                break
            execution = entry.execution
            if execution.status not in ENDED_STATUSES:
                # Still pending or running: write it as it is now; once it ended its final save
                # (stored, or kept here in its place) speaks for it.
                current = self.newest(execution_id)
                if current is None:
                    self._entries.pop(execution_id)
                    continue
                execution = current
            batch.append((execution, entry.transcript))
        if not batch:
            return 0
        await self.store.save_many(batch)
        for execution, _ in batch:
            entry = self._entries.get(execution.id)
            # An entry replaced while the batch was written (it ended meanwhile) waits for the next one.
            if entry is not None and (entry.execution is execution or entry.execution.status not in ENDED_STATUSES):
                self.written(execution.id)
        return len(batch)

    async def close(self, interrupted: list[Execution]) -> None:
        """The daemon stops: write what waits, with `interrupted` (what still ran), in one last try;
        log plainly each execution that could not be written."""
        if self._retry is not None:
            self._retry.cancel()
        stopped = {e.id for e in interrupted}  # an active entry's end is in `interrupted`
        rows = [(e.execution, e.transcript) for e in self._entries.values() if e.execution.id not in stopped]
        rows += [(e, None) for e in interrupted]
        done = 0
        try:
            while done < len(rows):
                await self.store.save_many(rows[done:done + EXECUTION_BACKLOG_WRITE_BATCH])
                done += EXECUTION_BACKLOG_WRITE_BATCH
        except StoreUnavailable as exc:
            self.reason = exc.message
            log.error("history: %d execution(s) could not be written before the daemon stopped and are lost: %s",
                      len(rows) - done, self.reason)
            for e, _ in rows[done:]:
                log.error("history: lost %s (%s, agent %s, pane %s): %s", e.id, e.status, e.agent_name, e.pane_id,
                          (e.message or "").split("\n", 1)[0][:200])
        self._entries.clear()
