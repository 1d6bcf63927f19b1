"""Issue 29 goal 5b, in process: what a turn's end costs the daemon's loop on the libghostty
backend, per call. `text_lines` (the turn's rows, execution_finish.turn_rows) against the
capture it stands for (`capture(start, join_wrapped=True).split`) and display_lines (the rows
the detector has read: the floor); `extract_answer` on those rows against one pass that
strips each row (what any reader of the rows does first: the floor). Screens: the fake
Claude Code's after a turn of its own (80x24, as bench_history_daemon drives it), the real
Claude/Codex recordings' last screens (benchmarks/data/agents) and two answers fixtures of
real Claude screens (tests/answers_data: extract_answer only)."""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from muxd.emulator.backend import new_emulator
from muxd.executions.answers import extract_answer
from muxd.testing.fake_agents._terminal import FRAME_INTERVAL_S, Terminal
from muxd.testing.fake_agents.claude import THINK_S, FakeClaude

HERE = Path(__file__).resolve().parent
RECORDINGS = HERE / "data" / "agents"
ANSWERS = HERE.parent / "tests" / "answers_data"
FAKE_COLUMNS, FAKE_LINES = 80, 24
FAKE_TURN_S = 8.0   # bench_history_daemon's default turn
FAKE_PROMPT = "think"  # bench_history_daemon's prompt
FAKE_TURNS = 4  # its conversation is then as long as the fake keeps


class _ScreenTerminal(Terminal):
    """The fake agent's terminal as an emulator: its frames drawn at once, not on the clock."""

    def __init__(self, emulator) -> None:
        self.emulator = emulator

    def _size(self) -> tuple[int, int]:
        return FAKE_COLUMNS, FAKE_LINES

    def write(self, text: str) -> None:
        self.emulator.feed(text.encode())

    def tick(self, seconds: float, step: Callable[[int, float], None]) -> None:
        frames = int(FAKE_TURN_S / FRAME_INTERVAL_S * seconds / THINK_S)
        for number in range(frames):
            step(number, number * FRAME_INTERVAL_S)
            self.emulator.display_lines()  # the detector reads each frame


def fake_claude():
    """The fake Claude Code drawing on an emulator, back at its prompt after FAKE_TURNS turns, as
    a daemon's pane shows it (the same rows: checked against one once)."""
    emulator = new_emulator(FAKE_COLUMNS, FAKE_LINES, backend="ghostty")
    agent = FakeClaude(_ScreenTerminal(emulator))
    agent.start()
    for _ in range(FAKE_TURNS):
        agent.think(FAKE_PROMPT)
    return agent, emulator


def fake_claude_screen():
    return fake_claude()[1]


def between_frames_us(agent: FakeClaude, emulator, call: Callable[[], object], number: int) -> float:
    """The median time of `call`, each made after the agent drew a spinner frame and its prompt
    again and the detector read them, as a daemon's loop meets a turn's end (caches cold)."""
    samples = []
    frame = agent.banner() + agent.conversation + ["", "✻ Gusting… (8s · ↓ 99 tokens)", ""] + agent.prompt_box("esc")
    for _ in range(number):
        agent.terminal.draw(frame)
        emulator.display_lines()
        agent.idle()
        emulator.display_lines()
        started = time.perf_counter()
        call()
        samples.append((time.perf_counter() - started) * 1e6)
    return statistics.median(samples)


def recorded_screen(name: str):
    with gzip.open(RECORDINGS / f"{name}.cast.gz", "rt") as lines:
        header = json.loads(next(lines))
        emulator = new_emulator(header["width"], header["height"], scrollback_bytes=1 << 20, backend="ghostty")
        for line in lines:
            if line.strip():
                emulator.feed(json.loads(line)[2].encode())
    return emulator


def per_call_us(call: Callable[[], object], repeats: int, number: int) -> float:
    """The median of `repeats` timings of `number` calls, in microseconds a call."""
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        for _ in range(number):
            call()
        samples.append((time.perf_counter() - started) / number * 1e6)
    return statistics.median(samples)


def line(label: str, us: float, floor: float, floor_label: str) -> str:
    return f"  {label:<34} {us:8.1f} us   {floor_label} {floor:7.1f} us   ({us / floor:5.2f}x)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--number", type=int, default=300)
    args = parser.parse_args()
    timed = lambda call: per_call_us(call, args.repeats, args.number)  # noqa: E731
    agent, emulator = fake_claude()
    rows = emulator.text_lines(0)
    print("fake claude 80x24, each call after a frame drawn and read (median of single calls)")
    read = between_frames_us(agent, emulator, lambda: emulator.text_lines(0), args.number)
    captured = between_frames_us(agent, emulator, lambda: emulator.capture(0, join_wrapped=True).split("\n"),
                                 args.number)
    print(line("text_lines (turn_rows)", read, captured, "capture"))
    answered = between_frames_us(agent, emulator, lambda: extract_answer("claude", rows, FAKE_PROMPT), args.number)
    stripped = between_frames_us(agent, emulator, lambda: [row.rstrip() for row in rows], args.number)
    print(line("extract_answer", answered, stripped, "rstrip pass"))
    screens = [("fake claude 80x24", emulator, "claude", FAKE_PROMPT)]
    screens += [(f"{name} recording", recorded_screen(name), name, None) for name in ("claude", "codex")]
    for label, emulator, agent, message in screens:
        start = 0
        emulator.display_lines()  # the detector has read the final screen
        rows = emulator.text_lines(start)
        assert rows == emulator.capture(start, join_wrapped=True).split("\n")
        capture = timed(lambda: emulator.capture(start, join_wrapped=True).split("\n"))
        floor = timed(emulator.display_lines)
        print(f"{label} ({emulator.columns}x{emulator.lines}, answer {extract_answer(agent, rows, message)!r:.40})")
        print(line("text_lines (turn_rows)", timed(lambda: emulator.text_lines(start)), floor, "display_lines"))
        print(line("capture(join_wrapped).split", capture, floor, "display_lines"))
        stripped = timed(lambda: [row.rstrip() for row in rows])
        print(line("extract_answer", timed(lambda: extract_answer(agent, rows, message)), stripped, "rstrip pass"))
    for name, message in (("corpus_claude_autotool_25", "please use bash to make a dir"),
                          ("claude_classic_120x40_markdown", "show some markdown")):
        rows = (ANSWERS / f"{name}.txt").read_text().splitlines()
        stripped = timed(lambda: [row.rstrip() for row in rows])
        print(f"{name} ({len(rows)} rows)")
        print(line("extract_answer", timed(lambda: extract_answer("claude", rows, message)), stripped, "rstrip pass"))


if __name__ == "__main__":
    main()
