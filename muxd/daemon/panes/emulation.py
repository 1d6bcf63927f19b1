"""Emulating pane output in turns of the event loop, so that no pane holds the loop.

Escape-heavy output (short coloured rows, progress bars redrawn with CR + erase-line) emulates
at well under 1 MB/s, so emulating a whole 256 KiB read at once would stall every other pane
and client for up to a second. Instead a pane keeps what it read in an `OutputBacklog` and
`EmulationTurns` gives the panes with a backlog a shared time budget per loop turn, in slices,
round robin; the rest waits for the next turn, after the loop has served I/O. A pane whose
backlog grows past its cap stops reading its PTY (daemon/panes/pane.py): the program then blocks.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable
from typing import Protocol

from muxd.config import (
    EMULATION_RATE_GUESS_BYTES_PER_S, EMULATION_SLICE_MAX_BYTES, EMULATION_SLICE_MIN_BYTES,
    EMULATION_SLICE_S, EMULATION_TURN_BUDGET_S,
)

Clock = Callable[[], float]

# Weight of the newest slice in a backlog's rate estimate: quick to follow a change of content.
_RATE_WEIGHT = 0.5


class OutputBacklog:
    """Bytes read from a pane's PTY and not yet emulated, handed out in slices sized by the
    rate this pane's output has been emulating (a slice of slow output is small)."""

    def __init__(self) -> None:
        self._data = bytearray()  # deleting from the front of a bytearray is cheap
        self.rate_bytes_per_s = float(EMULATION_RATE_GUESS_BYTES_PER_S)

    def __len__(self) -> int:
        return len(self._data)

    def add(self, data: bytes) -> None:
        self._data += data

    def clear(self) -> None:
        self._data.clear()

    def slice_bytes(self) -> int:
        wanted = int(self.rate_bytes_per_s * EMULATION_SLICE_S)
        return min(max(wanted, EMULATION_SLICE_MIN_BYTES), EMULATION_SLICE_MAX_BYTES)

    def feed_until(self, feed: Callable[[bytes], None], deadline: float, clock: Clock) -> int:
        """Feed slices to `feed` until the backlog is empty or `clock()` passes `deadline`
        (at least one slice, so a pane always moves on); return how many bytes went."""
        fed = 0
        while self._data:
            size = self.slice_bytes()
            piece = bytes(self._data[:size])
            del self._data[:size]
            started = clock()
            feed(piece)
            now = clock()
            self._measured(len(piece), now - started)
            fed += len(piece)
            if now >= deadline:
                break
        return fed

    def _measured(self, size: int, seconds: float) -> None:
        if size < EMULATION_SLICE_MIN_BYTES // 2 or seconds <= 0:
            return  # a tail this small (or too quick for the clock) says little about the rate
        rate = size / seconds
        self.rate_bytes_per_s += _RATE_WEIGHT * (rate - self.rate_bytes_per_s)


class OutputSink(Protocol):
    def emulate_until(self, deadline: float) -> bool:
        """Emulate waiting output until `deadline` (by the turns' clock); True if some is left."""


class EmulationTurns:
    """The panes with output waiting, served round robin, `budget_s` of `clock` per loop turn.

    `call_soon` schedules the next turn (the running loop's by default): a callback scheduled
    from a callback runs only after the loop has polled I/O again, so requests and other
    panes' reads get in between two turns.
    """

    def __init__(self, *, budget_s: float = EMULATION_TURN_BUDGET_S, clock: Clock = time.perf_counter,
                 call_soon: Callable[[Callable[[], None]], object] | None = None) -> None:
        self.budget_s = budget_s
        self.clock = clock
        self._call_soon = call_soon
        self._waiting: deque[OutputSink] = deque()
        self._armed = False

    def __contains__(self, sink: OutputSink) -> bool:
        return sink in self._waiting

    def wake(self, sink: OutputSink) -> None:
        """`sink` has output waiting: give it a share of the coming turns."""
        if sink not in self._waiting:
            self._waiting.append(sink)
        self._arm()

    def forget(self, sink: OutputSink) -> None:
        if sink in self._waiting:
            self._waiting.remove(sink)

    def _arm(self) -> None:
        if not self._armed and self._waiting:
            self._armed = True
            call_soon = self._call_soon or asyncio.get_running_loop().call_soon
            call_soon(self._turn)

    def _turn(self) -> None:
        self._armed = False
        turn_end = self.clock() + self.budget_s
        # Those waiting now share this turn; each may use what the ones before it left over.
        serving = len(self._waiting)
        for remaining in range(serving, 0, -1):
            if not self._waiting:
                break
            sink = self._waiting.popleft()
            now = self.clock()
            share_end = now + max(0.0, turn_end - now) / remaining
            if sink.emulate_until(share_end) and sink not in self._waiting:
                self._waiting.append(sink)
        self._arm()
