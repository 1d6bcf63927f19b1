"""What keeps detection cheap must not change what it finds: the emulator's remembered row
texts, the detectors' per-line memos, and the runner's skipped re-publish."""

from __future__ import annotations

import random

from muxd.detectors._text import LineMemo
from muxd.detectors.base import ScreenContext
from muxd.detectors.claude_lines import sightings
from muxd.detectors.codex_tools import tool_sightings
from muxd.detectors.registry import load_detectors
from muxd.detectors.runner import DetectorRunner
from muxd.emulator import Emulator


def fresh_texts(emulator: Emulator) -> list[str]:
    """The visible rows rendered from scratch, as display_lines must give them."""
    return [row.text.rstrip(" ") for row in emulator.rows(0, emulator.lines - 1)]


def test_display_lines_follow_scrolls_redraws_and_edits() -> None:
    emulator = Emulator(columns=40, lines=6)
    steps = [
        b"one\r\ntwo\r\nthree\r\n",
        b"four\r\nfive\r\nsix\r\nseven\r\n",            # scrolls: rows move, texts unchanged
        b"\x1b[3;1H\x1b[2Kthree again",                 # erased and rewritten in place
        b"\x1b[3;1H\x1b[2Kthree again",                 # the same redraw: same text
        b"\x1b[1;1HABCDEF\x1b[1;2H\x1b[2P",            # delete characters: cells shift left
        b"\x1b[1;10Hx\x1b[1;5Hy",                       # written out of column order
        b"\x1b[2;3H\x1b[1@",                            # insert a blank
        b"\x1b[?1049hALT\r\nSCREEN",                     # another buffer
        b"\x1b[?1049l",
        b"\x1b[2J\x1b[Hcleared",
    ]
    for step in steps:
        emulator.feed(step)
        assert emulator.display_lines() == fresh_texts(emulator), step
    emulator.resize(30, 4)
    assert emulator.display_lines() == fresh_texts(emulator)


def test_a_row_whose_cells_moved_columns_is_rendered_again() -> None:
    # The same cells in the same order, at other columns (what shifting cells can leave):
    # the remembered text must not be reused.
    emulator = Emulator(columns=20, lines=3)
    emulator.feed(b"x x")
    assert emulator.display_lines()[0] == "x x"
    row = emulator._screen.buffer[0]
    cell = row.pop(2)
    row[3] = cell
    emulator._screen.dirty.add(0)
    assert emulator.display_lines()[0] == "x  x" == fresh_texts(emulator)[0]


def test_display_lines_match_fresh_rendering_on_random_output() -> None:
    rng = random.Random(7)
    pieces = [b"word ", b"\r\n", b"\x1b[K", b"\x1b[2K", b"\x1b[1;31mred\x1b[0m", b"\x1b[H", b"\x1b[5;3H",
              b"\x1b[3P", b"\x1b[2@", b"\x1b[A", b"\x1bM", b"\x1b[S", b"\x1b[T", b"\xe4\xb8\xad", b"\t|"]
    emulator = Emulator(columns=20, lines=8)
    for step in range(3000):
        emulator.feed(b"".join(rng.choice(pieces) for _ in range(rng.randint(1, 6))))
        if step % 3 == 0:
            assert emulator.display_lines() == fresh_texts(emulator), step


def test_line_memo_parses_once_and_starts_afresh_when_full() -> None:
    calls: list[str] = []
    memo = LineMemo(lambda line: calls.append(line) or line.upper(), limit=3)
    assert [memo[line] for line in ("a", "b", "a", "c")] == ["A", "B", "A", "C"]
    assert calls == ["a", "b", "c"]
    assert memo["d"] == "D" and len(memo) == 1  # full: forgotten, then remembered anew


def test_memoised_sightings_keep_block_positions() -> None:
    # The same text is a tool line only at the head of a block (claude), and an Explored item
    # only under an Explored cell (codex): the memo must not carry one reading to the other.
    head = "  Read 2 files (ctrl+o to expand)"
    assert [s.name for s in sightings([head], live_tail=False)] == ["Read", "Read"]
    assert sightings(["⏺ Some answer", head], live_tail=False) == []
    assert [s.name for s in sightings(["⏺ Bash(ls)", "", head, "", "x"], live_tail=True)] == ["Bash", "Read", "Read"]
    assert sightings(["⏺ Bash(ls)", "", head], live_tail=True)[1:] == []
    item = "  └ Read notes.txt"
    assert [s.signature for s in tool_sightings(["• Explored", item])] == ["Read notes.txt"]
    assert [s.signature for s in tool_sightings(["• Ran ls", item])] == ["Ran ls"]


def test_runner_publishes_each_change_once_and_nothing_for_repeats() -> None:
    detectors = load_detectors()
    clock = [100.0]
    runner = DetectorRunner("%1", detectors, clock=lambda: clock[0])
    box = ["─" * 60, "❯ ", "─" * 60, "  ? for shortcuts"]
    idle = ScreenContext(lines=["⏺ Bash(ls)", "  ⎿  a.txt", ""] + box, columns=60)
    published = []
    for _ in range(4):
        clock[0] += 0.5
        published.append(runner.run(idle))
    assert [p is not None for p in published] == [False, True, False, False]  # debounced, then once
    assert runner.state.activity.state == "Idle" and runner.state.recent_tools == ["Bash"]
    # A new tool in an otherwise identical detection is a change: published, counted once.
    more = ScreenContext(lines=["⏺ Bash(ls)", "  ⎿  a.txt", "", "⏺ Read(b.txt)", "  ⎿  Read 1 line", ""] + box,
                         columns=60)
    clock[0] += 0.5
    changed = runner.run(more)
    assert changed is not None and changed.recent_tools == ["Bash", "Read"]
    clock[0] += 0.5
    assert runner.run(more) is None and runner.state.recent_tools == ["Bash", "Read"]
