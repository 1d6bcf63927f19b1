"""Emulating pane output in turns of the event loop, so that no pane holds the loop.

Escape-heavy output (short coloured rows, progress bars redrawn with CR + erase-line) emulates
at well under 1 MB/s, so emulating a whole 256 KiB read at once would stall every other pane
and client for up to a second. Instead a pane keeps what it read in an `OutputBacklog` and
`EmulationTurns` gives the panes with a backlog a shared time budget per loop turn, in slices,
round robin; the rest waits for the next turn, after the loop has served I/O. A pane whose
backlog grows past its cap stops reading its PTY (daemon/panes/pane.py): the program then blocks.

A pane a person is at (`attended`: typed into, or shown as an attached client's active pane)
has its output emulated in full as soon as it is read, and its clients are drawn right after
(`after_attended`), in the same callback, ahead of every turn (which serves it first too if it
became attended while waiting): an echo never waits behind a neighbour's flood. One that
still has output left after EMULATION_ATTENDED_BUDGET_S floods itself, and takes its turns with
the others until its backlog is empty.

While someone waits (`someone_waits`: keys typed into an attached client, a request read just
now), the loop idles after each turn for about as long as the turn ran: the steps of a request
or a key then run between two turns, and a daemon that sleeps in its poll part of the time is
woken by the kernel at once, where one always busy waits behind the machine's other busy
processes. A flood then goes at about half its speed. A turn due when that rest ends goes
behind what the loop read meanwhile (a key), not ahead of it; and once input went to a pane's
program (`await_answer`), turns hold off until its output is read, for a few ms at most: the key
is written, its echo read and drawn with no bulk turn in between. A turn due while an attached
terminal's keys wait unread in its socket waits for the loop to read them first. While keys are
typed (`someone_typing`), a pane nobody attends also pauses its reading after each read
(`paces_reads`, daemon/panes/pane.py): its program sleeps on its full PTY instead of competing
with the loop for the machine.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

from muxd.config import (
    EMULATION_ANSWER_HOLD_S, EMULATION_ANSWER_HOLDS_APART, EMULATION_ATTENDED_BUDGET_S, EMULATION_RATE_GUESS_BYTES_PER_S, EMULATION_REST_MIN_S, EMULATION_REST_PER_TURN,
    EMULATION_SLICE_MAX_BYTES, EMULATION_SLICE_MIN_BYTES, EMULATION_SLICE_S, EMULATION_TURN_BUDGET_S,
)

Clock = Callable[[], float]

# What a backlog's rate estimate keeps of the slices before the newest: it follows a change of
# content within a few slices, and spans enough of them to take in the dear ones (a drain).
_RATE_MEMORY = 0.75
# The guess counts as this much time of measured output, so the first slices move it quickly.
_GUESS_WEIGHT_S = EMULATION_SLICE_S


class OutputBacklog:
    """Bytes read from a pane's PTY and not yet emulated, handed out in slices sized by the
    rate this pane's output has been emulating (a slice of slow output is small)."""

    def __init__(self) -> None:
        self._data = bytearray()  # deleting from the front of a bytearray is cheap
        # Bytes emulated and the time they took, both fading by _RATE_MEMORY a slice.
        self._bytes = EMULATION_RATE_GUESS_BYTES_PER_S * _GUESS_WEIGHT_S
        self._seconds = _GUESS_WEIGHT_S

    @property
    def rate_bytes_per_s(self) -> float:
        return self._bytes / self._seconds

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
        # The rate is bytes over time, not an average of the slices' rates: output whose slices
        # are by turns cheap (rows skipped) and dear (history copied) goes at its mean cost, and
        # an average of rates, pulled up by the cheap slices, made slices several times too long.
        self._bytes = self._bytes * _RATE_MEMORY + size
        self._seconds = self._seconds * _RATE_MEMORY + seconds


class OutputSink(Protocol):
    def emulate_until(self, deadline: float) -> bool:
        """Emulate waiting output until `deadline` (by the turns' clock); True if some is left."""


def _nobody(sink: OutputSink) -> bool:
    return False


def _nothing(sink: OutputSink) -> None:
    pass


def _no_one_waits() -> bool:
    return False


def _no_keys() -> bool:
    return False


class EmulationTurns:
    """The panes with output waiting, served round robin, `budget_s` of `clock` per loop turn,
    after the attended ones (see module docstring).

    `call_soon` schedules the next turn (the running loop's by default): a callback scheduled
    from a callback runs only after the loop has polled I/O again, so requests and other
    panes' reads get in between two turns. `attended` says whether a person is at a pane
    (`watched`: one is shown it; a pane then reads at about its viewer's frame rate);
    `after_attended` is called once an attended pane's output is emulated (to draw it);
    `someone_waits` whether keys or requests came just now (turns are then paced);
    `someone_typing` whether keys did (the panes nobody attends then pause their reading);
    `keys_waiting` whether an attached terminal's keys wait unread (a turn then lets them in first).
    """

    def __init__(self, *, budget_s: float = EMULATION_TURN_BUDGET_S, clock: Clock = time.perf_counter,
                 call_soon: Callable[[Callable[[], None]], object] | None = None,
                 call_later: Callable[[float, Callable[[], None]], object] | None = None,
                 attended_budget_s: float = EMULATION_ATTENDED_BUDGET_S,
                 answer_hold_s: float = EMULATION_ANSWER_HOLD_S) -> None:
        self.budget_s = budget_s
        self.answer_hold_s = answer_hold_s
        self.attended_budget_s = attended_budget_s
        self.clock = clock
        # Given the daemon's panes, the sinks it wakes (hence Any: each asks what a Pane knows).
        self.attended: Callable[[Any], bool] = _nobody
        self.watched: Callable[[Any], bool] = _nobody  # shown as an attached client's active pane
        self.after_attended: Callable[[Any], None] = _nothing
        self.someone_waits: Callable[[], bool] = _no_one_waits
        self.someone_typing: Callable[[], bool] = _no_one_waits
        self.keys_waiting: Callable[[], bool] = _no_keys
        self._call_soon = call_soon
        self._call_later = call_later
        self._waiting: deque[OutputSink] = deque()
        self._flooding: set[OutputSink] = set()  # attended, but too much output to go first
        self._armed = False
        self._last_turn_s = 0.0  # how long the last turn's bulk ran
        self._answer_from: OutputSink | None = None  # input went to its program: its output is awaited
        self._held_at = -float("inf")  # clock() when the last hold began
        self._let_keys_in = False  # this turn was put off once already for keys not yet read

    def __contains__(self, sink: OutputSink) -> bool:
        return sink in self._waiting

    def await_answer(self, sink: OutputSink) -> None:
        """Input just went to `sink`'s program: hold the bulk turns off until its output comes
        (at most `answer_hold_s`; not again within a few holds' time)."""
        now = self.clock()
        if now - self._held_at >= self.answer_hold_s * EMULATION_ANSWER_HOLDS_APART:
            self._answer_from, self._held_at = sink, now

    def _held_s(self) -> float:
        """How much longer turns hold off for an answer (0: they go)."""
        if self._answer_from is None:
            return 0.0
        left = self._held_at + self.answer_hold_s - self.clock()
        if left <= 0:
            self._answer_from = None
        return max(left, 0.0)

    def paces_reads(self, sink: OutputSink) -> bool:
        """Whether `sink`, which just read output, pauses its reading (daemon/panes/pane.py):
        someone types into an attached client, and not into it nor watching it."""
        return self.someone_typing() and not self.attended(sink)

    def wake(self, sink: OutputSink) -> None:
        """`sink` has output waiting: emulate and draw it now if it is attended, else (or if
        it floods) give it a share of the coming turns."""
        if sink is self._answer_from:
            self._answer_from = None  # the answer came: the turns go on
        if sink not in self._waiting:
            self._waiting.append(sink)
        if sink not in self._flooding and self.attended(sink):
            self._serve(sink)  # in the callback that read it: no loop turn in between
        self._arm()

    def forget(self, sink: OutputSink) -> None:
        if sink in self._waiting:
            self._waiting.remove(sink)
        self._flooding.discard(sink)
        if sink is self._answer_from:
            self._answer_from = None

    def _arm(self) -> None:
        if not self._armed and self._waiting:
            self._armed = True
            if self.someone_waits():
                # While someone waits (keys typed, a request), turns leave the loop idle for a
                # while: the daemon then sleeps in its poll half the time, so the kernel
                # wakes it at once for a key or a request (a process always busy waits behind
                # the machine's other busy ones), and a request's steps run between two turns.
                self._turn_after(max(self._last_turn_s * EMULATION_REST_PER_TURN, EMULATION_REST_MIN_S))
                return
            self._turn_soon()

    def _turn_after(self, delay: float) -> None:
        call_later = self._call_later or asyncio.get_running_loop().call_later
        call_later(delay, self._turn_soon)

    def _turn_soon(self) -> None:
        """The next turn, after the callbacks the loop has queued: a timer ending a rest fires
        after the poll that read a key, and the key's step must go first."""
        call_soon = self._call_soon or asyncio.get_running_loop().call_soon
        call_soon(self._turn)

    def _turn(self) -> None:
        held = self._held_s()
        if held > 0:  # input went out just now: its answer goes before any bulk
            self._turn_after(held)
            return
        if not self._let_keys_in and self.keys_waiting():
            # Keys came as this turn was due: put it off past the loop's next poll (a timer
            # fires after it), which reads them, so that they go first. Once: a connection
            # that does not read its keys (a paste into a full pane) holds no flood back.
            self._let_keys_in = True
            self._turn_after(0.0)
            return
        self._let_keys_in = False
        self._armed = False
        self._serve_attended()
        started = self.clock()
        turn_end = started + self.budget_s
        # Those waiting now share this turn; each may use what the ones before it left over.
        serving = len(self._waiting)
        for remaining in range(serving, 0, -1):
            if not self._waiting:
                break
            sink = self._waiting.popleft()
            now = self.clock()
            share_end = now + max(0.0, turn_end - now) / remaining
            if not sink.emulate_until(share_end):
                self._flooding.discard(sink)
            elif sink not in self._waiting:
                self._waiting.append(sink)
        self._last_turn_s = self.clock() - started
        self._arm()

    def _serve_attended(self) -> None:
        """Emulate the attended panes' output in full and have it drawn, before any bulk."""
        for sink in [s for s in self._waiting if s not in self._flooding and self.attended(s)]:
            if sink in self._waiting:  # (not forgotten meanwhile: an exit announced while drawing)
                self._serve(sink)

    def _serve(self, sink: OutputSink) -> None:
        self._waiting.remove(sink)
        if sink.emulate_until(self.clock() + self.attended_budget_s):
            self._flooding.add(sink)  # more than a person's worth: its turns with the others
            self._waiting.append(sink)
        self.after_attended(sink)
