"""Emulating pane output in turns: a time budget per loop turn, shared round robin, on a fake clock."""

from __future__ import annotations

import pytest

from muxd.config import (
    EMULATION_REST_PER_TURN, EMULATION_SLICE_MAX_BYTES, EMULATION_SLICE_MIN_BYTES, EMULATION_SLICE_S,
)
from muxd.daemon.panes.emulation import EmulationTurns, OutputBacklog


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class SlowEmulator:
    """Feeding it costs `seconds_per_byte` of the fake clock; it keeps what it was fed."""

    def __init__(self, clock: FakeClock, seconds_per_byte: float) -> None:
        self.clock = clock
        self.seconds_per_byte = seconds_per_byte
        self.fed = bytearray()
        self.slices: list[int] = []

    def feed(self, data: bytes) -> None:
        self.clock.now += len(data) * self.seconds_per_byte
        self.fed += data
        self.slices.append(len(data))


class FakePane:
    """An OutputSink: a backlog fed to a SlowEmulator, and what each call was given."""

    def __init__(self, clock: FakeClock, size: int, seconds_per_byte: float) -> None:
        self.clock = clock
        self.backlog = OutputBacklog()
        self.backlog.add(bytes(range(256)) * (size // 256))
        self.emulator = SlowEmulator(clock, seconds_per_byte)
        self.calls: list[tuple[float, float]] = []  # (started, finished)

    def emulate_until(self, deadline: float) -> bool:
        started = self.clock()
        self.backlog.feed_until(self.emulator.feed, deadline, self.clock)
        self.calls.append((started, self.clock()))
        return bool(self.backlog)


def held_turns(clock: FakeClock, budget_s: float) -> tuple[EmulationTurns, list]:
    """Turns whose callbacks are collected instead of run: the test plays the event loop."""
    scheduled: list = []
    return EmulationTurns(budget_s=budget_s, clock=clock, call_soon=scheduled.append), scheduled


def test_slices_follow_the_rate_so_slow_output_gets_small_slices() -> None:
    clock = FakeClock()
    slow = SlowEmulator(clock, seconds_per_byte=1 / 200_000)  # 0.2 MB/s: escape-heavy output
    backlog = OutputBacklog()
    backlog.add(b"x" * 100_000)
    backlog.feed_until(slow.feed, deadline=0.05, clock=clock)
    # After the first (guessed) slice, each takes about EMULATION_SLICE_S at the measured rate.
    expected = max(EMULATION_SLICE_MIN_BYTES, int(200_000 * EMULATION_SLICE_S))
    assert all(abs(size - expected) <= expected * 0.1 for size in slow.slices[2:]), slow.slices
    assert len(slow.slices) > 3
    assert clock.now < 0.05 + slow.slices[0] / 200_000  # stopped at the deadline, not at the end
    assert len(backlog) == 100_000 - len(slow.fed)


def test_fast_output_gets_large_slices_and_the_bytes_arrive_in_order() -> None:
    clock = FakeClock()
    fast = SlowEmulator(clock, seconds_per_byte=1 / 500_000_000)
    data = bytes(range(256)) * 4000
    backlog = OutputBacklog()
    backlog.add(data)
    fed = backlog.feed_until(fast.feed, deadline=1.0, clock=clock)
    assert fed == len(data) and bytes(fast.fed) == data and not backlog
    assert max(fast.slices) == EMULATION_SLICE_MAX_BYTES


def test_a_slice_is_fed_even_when_the_deadline_has_passed() -> None:
    clock = FakeClock()
    clock.now = 5.0
    emulator = SlowEmulator(clock, seconds_per_byte=1e-6)
    backlog = OutputBacklog()
    backlog.add(b"y" * 50_000)
    fed = backlog.feed_until(emulator.feed, deadline=1.0, clock=clock)
    assert emulator.slices == [fed] and fed > 0
    assert len(backlog) == 50_000 - fed


def test_a_turn_keeps_to_its_budget_and_the_rest_waits_for_the_next_turn() -> None:
    clock = FakeClock()
    turns, scheduled = held_turns(clock, budget_s=0.002)
    pane = FakePane(clock, size=200_000, seconds_per_byte=1 / 300_000)  # ~0.67 s of work
    turns.wake(pane)
    assert len(scheduled) == 1  # a turn is asked for, nothing emulated yet
    assert not pane.emulator.fed
    turn_lengths = []
    while scheduled:
        started = clock.now
        scheduled.pop(0)()
        turn_lengths.append(clock.now - started)
        assert len(scheduled) <= 1  # one turn at a time
    assert bytes(pane.emulator.fed) == bytes(range(256)) * (200_000 // 256)
    assert len(turn_lengths) > 100
    # A turn overruns its budget by at most one slice (~EMULATION_SLICE_S at the learned rate).
    assert max(turn_lengths[2:]) <= 0.002 + 2 * EMULATION_SLICE_S, max(turn_lengths)
    assert pane not in turns


def test_panes_flooding_together_share_every_turn() -> None:
    clock = FakeClock()
    turns, scheduled = held_turns(clock, budget_s=0.004)
    panes = [FakePane(clock, size=100_000, seconds_per_byte=1 / rate) for rate in (200_000, 400_000, 5_000_000)]
    for pane in panes:
        turns.wake(pane)
    for _ in range(5):
        scheduled.pop(0)()
    # Every turn served every pane, each in its own share of the turn (no pane took it all).
    for pane in panes:
        assert len(pane.calls) == 5
    slow, medium, _ = panes
    assert len(slow.emulator.fed) > 0 and len(medium.emulator.fed) > len(slow.emulator.fed)
    for started, finished in slow.calls[1:]:
        assert finished - started <= 0.004 / 3 + 2 * EMULATION_SLICE_S


def test_a_forgotten_pane_gets_no_more_turns() -> None:
    clock = FakeClock()
    turns, scheduled = held_turns(clock, budget_s=0.002)
    gone, staying = FakePane(clock, 50_000, 1e-5), FakePane(clock, 50_000, 1e-5)
    turns.wake(gone)
    turns.wake(staying)
    turns.forget(gone)
    scheduled.pop(0)()
    assert not gone.calls and staying.calls
    assert gone not in turns


class ByTurnsEmulator(SlowEmulator):
    """Slices cost by turns `seconds_per_byte` and 50 times less: a flood whose rows are by
    turns skipped and copied into the scrollback."""

    def feed(self, data: bytes) -> None:
        cheap = len(self.slices) % 2
        self.clock.now += len(data) * self.seconds_per_byte / (50 if cheap else 1)
        self.fed += data
        self.slices.append(len(data))


def test_slices_follow_the_mean_cost_when_cheap_and_dear_slices_alternate() -> None:
    clock = FakeClock()
    emulator = ByTurnsEmulator(clock, seconds_per_byte=1 / 1_000_000)
    backlog = OutputBacklog()
    backlog.add(b"x" * 400_000)
    backlog.feed_until(emulator.feed, deadline=0.2, clock=clock)
    # Throughput over the same bytes: ~1.96 MB/s, so a 1 ms slice is ~2 KB. An average of the
    # slices' rates (1 and 50 MB/s) would make them 17-32 KB, a dear one lasting 17-32 ms.
    dear = [size for i, size in enumerate(emulator.slices) if i % 2 == 0][3:]
    assert dear and max(dear) <= 4 * int(1_960_000 * EMULATION_SLICE_S), emulator.slices
    assert max(size * emulator.seconds_per_byte for size in dear) <= 4 * EMULATION_SLICE_S


class Drawn:
    """Plays the attached clients: which panes are attended, and the order things happened in."""

    def __init__(self, attended: set[FakePane], log: list[str]) -> None:
        self.attended, self.log = attended, log

    def is_attended(self, sink: object) -> bool:
        return sink in self.attended

    def draw(self, sink: object) -> None:
        self.log.append(f"drawn {sink.name}")  # type: ignore[attr-defined]


class NamedPane(FakePane):
    def __init__(self, name: str, log: list[str], *args: float) -> None:
        super().__init__(*args)  # type: ignore[arg-type]
        self.name, self.log = name, log

    def emulate_until(self, deadline: float) -> bool:
        left = super().emulate_until(deadline)
        self.log.append(f"emulated {self.name}{' (more left)' if left else ''}")
        return left


def timed_turns(clock: FakeClock, **kwargs: float) -> tuple[EmulationTurns, list, list[tuple[float, object]]]:
    """Turns whose callbacks are collected: those for as soon as the loop polled, and those
    for later with their delays."""
    soon: list = []
    later: list[tuple[float, object]] = []
    turns = EmulationTurns(clock=clock, call_soon=soon.append,
                           call_later=lambda delay, turn: later.append((delay, turn)), **kwargs)
    return turns, soon, later


def attended_turns(clock: FakeClock, attended: set, log: list[str]) -> tuple[EmulationTurns, list]:
    turns, scheduled = held_turns(clock, budget_s=0.001)
    drawn = Drawn(attended, log)
    turns.attended, turns.after_attended = drawn.is_attended, drawn.draw
    return turns, scheduled


def test_the_attended_pane_is_emulated_in_full_and_drawn_as_soon_as_its_output_is_read() -> None:
    clock, log = FakeClock(), []
    flood = NamedPane("flood", log, clock, 400_000, 1 / 2_000_000)
    typed = NamedPane("typed", log, clock, 2_560, 1 / 2_000_000)  # an echo, a prompt redrawn
    turns, scheduled = attended_turns(clock, {typed}, log)
    turns.wake(flood)
    scheduled.pop(0)()  # the flood has the loop to itself for a turn
    log.clear()
    turns.wake(typed)  # read while the flood waits for its next turn
    assert log == ["emulated typed", "drawn typed"]
    assert not typed.backlog and bytes(typed.emulator.fed) == bytes(range(256)) * 10
    assert typed not in turns
    scheduled.pop(0)()
    assert log[2:] == ["emulated flood (more left)"]


def test_a_pane_attended_while_its_output_waits_goes_first_in_the_next_turn() -> None:
    clock, log = FakeClock(), []
    attended: set[FakePane] = set()
    flood = NamedPane("flood", log, clock, 400_000, 1 / 2_000_000)
    late = NamedPane("late", log, clock, 2_560, 1 / 2_000_000)
    turns, scheduled = attended_turns(clock, attended, log)
    turns.wake(flood)
    turns.wake(late)
    attended.add(late)  # a client switched to it, or keys were typed into it
    scheduled.pop(0)()
    assert log == ["emulated late", "drawn late", "emulated flood (more left)"]


def test_an_attended_pane_gets_its_whole_output_at_once_beyond_the_turn_budget() -> None:
    clock, log = FakeClock(), []
    typed = NamedPane("typed", log, clock, 8_192, 1 / 1_000_000)  # ~8 ms: a full-screen redraw
    turns, scheduled = attended_turns(clock, {typed}, log)
    turns.wake(typed)
    assert not typed.backlog and log == ["emulated typed", "drawn typed"]
    assert not scheduled  # nothing left for a turn


def test_an_attended_pane_that_floods_takes_its_turns_with_the_others() -> None:
    clock, log = FakeClock(), []
    noisy = NamedPane("noisy", log, clock, 400_000, 1 / 1_000_000)  # 0.4 s of output
    other = NamedPane("other", log, clock, 400_000, 1 / 1_000_000)
    turns, scheduled = attended_turns(clock, {noisy}, log)
    turns.wake(other)
    turns.wake(noisy)
    # First, until its attended budget ran out; from then on a share of each turn each, round
    # robin, no more priority (nor drawing) for it.
    assert log == ["emulated noisy (more left)", "drawn noisy"]
    for _ in range(20):
        scheduled.pop(0)()
    assert log[2:] == ["emulated other (more left)", "emulated noisy (more left)"] * 20
    turns.wake(noisy)  # more output read: still flooding, so no priority
    assert len(log) == 42
    noisy.backlog.clear()
    scheduled.pop(0)()  # its backlog empty, it is attended again the next time it has output
    noisy.backlog.add(b"echo")
    log.clear()
    turns.wake(noisy)
    assert log == ["emulated noisy", "drawn noisy"], log


def test_panes_nobody_attends_share_turns_as_before() -> None:
    clock, log = FakeClock(), []
    first = NamedPane("first", log, clock, 100_000, 1 / 1_000_000)
    second = NamedPane("second", log, clock, 100_000, 1 / 1_000_000)
    turns, scheduled = attended_turns(clock, set(), log)
    turns.wake(first)
    turns.wake(second)
    scheduled.pop(0)()
    assert log == ["emulated first (more left)", "emulated second (more left)"]


def test_while_someone_waits_turns_leave_the_loop_idle_for_a_share_of_their_length() -> None:
    clock = FakeClock()
    turns, soon, later = timed_turns(clock, budget_s=0.002)
    typing = [False]
    turns.someone_waits = lambda: typing[0]
    flood = FakePane(clock, 400_000, 1 / 1_000_000)
    turns.wake(flood)
    assert len(soon) == 1 and not later  # nobody types: the next turn as soon as the loop polled
    typing[0] = True
    started = clock.now
    soon.pop()()
    ran = clock.now - started
    assert not soon and len(later) == 1
    delay, turn = later.pop()
    assert ran >= 0.002 and delay >= ran * EMULATION_REST_PER_TURN > 0  # the loop idles after a turn
    typing[0] = False
    turn()  # the rest is over: the turn goes behind what the loop queued meanwhile (a key)
    assert len(soon) == 1 and not later and len(flood.calls) == 1
    soon.pop()()
    assert len(flood.calls) == 2 and len(soon) == 1 and not later


def test_input_to_a_pane_holds_the_turns_until_its_answer_is_read() -> None:
    clock, log = FakeClock(), []
    turns, soon, later = timed_turns(clock, budget_s=0.001, answer_hold_s=0.003)
    drawn = Drawn(set(), log)
    turns.attended, turns.after_attended = drawn.is_attended, drawn.draw
    flood = NamedPane("flood", log, clock, 400_000, 1 / 1_000_000)
    typed = NamedPane("typed", log, clock, 0, 1 / 1_000_000)
    turns.wake(flood)
    turns.await_answer(typed)  # a key went to its program
    soon.pop()()
    assert log == [] and later[0][0] == pytest.approx(0.003)  # no bulk: the turn waits for the echo
    clock.now += 0.0005
    typed.backlog.add(b"x")
    drawn.attended.add(typed)  # typed into just now
    turns.wake(typed)
    assert log == ["emulated typed", "drawn typed"]
    later.pop()[1]()
    soon.pop()()
    assert log[2:] == ["emulated flood (more left)"]  # the answer came: the turns go on
    # No answer at all (a key the program does not echo): the turns go on once the hold is over.
    clock.now += 0.1
    turns.await_answer(typed)
    soon.pop()()
    delay, turn = later.pop()
    assert delay == pytest.approx(0.003) and len(log) == 3
    clock.now += 0.004
    turn()
    soon.pop()()
    assert log[3:] == ["emulated flood (more left)"]
    # Input without end does not hold the turns all the time: a hold only every few holds' time.
    turns.await_answer(typed)
    soon.pop()()
    assert not later and log[4:] == ["emulated flood (more left)"]


def test_a_turn_due_while_keys_wait_unread_lets_the_loop_read_them_first_once() -> None:
    clock, log = FakeClock(), []
    turns, soon, later = timed_turns(clock, budget_s=0.001)
    keys = [True]
    turns.keys_waiting = lambda: keys[0]
    flood = NamedPane("flood", log, clock, 400_000, 1 / 1_000_000)
    turns.wake(flood)
    soon.pop()()
    assert log == [] and later[0][0] == 0  # put off past the next poll, which reads the keys
    later.pop()[1]()
    soon.pop()()
    # Keys still unread (a connection that does not read them): the turn goes all the same,
    # each turn put off by one poll at most.
    assert log == ["emulated flood (more left)"]
    keys[0] = False
    soon.pop()()
    assert later == [] and len(log) == 2
