"""The attach renderer: compose a client screen from panes, paint it, and read it back.

The oracle is a round trip: programs' bytes go into pane emulators, the frame is composed
and painted, and the painted bytes go into a FRESH emulator of the client's size (and, for a
few cases, into a real tmux pane): that screen must equal the frame cell for cell (character
and every attribute), and hold what a person would expect to see where they would expect it.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Iterator

import pytest

from muxd.attach import (
    Frame,
    FramePainter,
    PaneView,
    StatusLine,
    WindowTab,
    compose,
    enter_terminal_bytes,
    leave_terminal_bytes,
)
from muxd.emulator import Emulator
from muxd.emulator.backend import new_emulator
from muxd.emulator.cell import BLANK, Cell
from muxd.testing.patience import stretched
from muxd.testing.wait import wait_until

E = "\x1b"


# -- helpers ----------------------------------------------------------------------------


def client_screen(columns: int, lines: int, *paints: bytes) -> Emulator:
    """A fresh client terminal that received `paints`."""
    client = Emulator(columns, lines)
    for data in paints:
        client.feed(data)
    return client


def screen_rows(emulator: Emulator) -> list[tuple[Cell, ...]]:
    return [emulator.row_cells(y) for y in range(emulator.lines)]


def assert_shows(client: Emulator, frame: Frame) -> None:
    """The client terminal shows exactly `frame`: every cell, and the cursor."""
    for y, (got, want) in enumerate(zip(screen_rows(client), frame.rows)):
        assert got == want, f"row {y}: {''.join(c.data for c in got)!r} != {''.join(c.data for c in want)!r}"
    if frame.cursor_visible:
        assert client.cursor == frame.cursor
    assert client.cursor_visible == frame.cursor_visible


def text(frame: Frame, y: int) -> str:
    return frame.text_rows()[y]


def pane(columns: int, lines: int, data: bytes = b"") -> Emulator:
    emulator = Emulator(columns, lines)
    emulator.feed(data)
    return emulator


def two_by_one_layout(left: Emulator, right: Emulator, bottom: Emulator) -> list[PaneView]:
    """tmux's `split -h` then `split -v` on an 80x23 window: left|right over bottom."""
    return [
        PaneView(left, 0, 0, 40, 11, active=True),
        PaneView(right, 41, 0, 39, 11),
        PaneView(bottom, 0, 12, 80, 11),
    ]


STATUS = StatusLine(
    "main",
    (WindowTab(0, "bash", active=False, last=True), WindowTab(1, "claude", active=True)),
    right="claude · Thinking 12s · 4.8k tok",
)


# -- layout, borders, status ------------------------------------------------------------


def test_panes_borders_and_status_round_trip() -> None:
    left = pane(40, 11, b"left pane\r\n$ ")
    right = pane(39, 11, b"right pane")
    bottom = pane(80, 11, b"bottom pane")
    frame = compose(80, 24, two_by_one_layout(left, right, bottom), STATUS)
    client = client_screen(80, 24, enter_terminal_bytes(), FramePainter().paint(frame))
    assert_shows(client, frame)
    shown = client.display_lines()
    assert shown[0].startswith("left pane")
    assert shown[0][41:] == "right pane"
    assert shown[12] == "bottom pane"
    # The vertical border between left and right, ending in a junction on the horizontal one.
    assert all(row[40] == "│" for row in shown[:11])
    assert shown[11] == "─" * 40 + "┴" + "─" * 39
    # Border cells touching the active (left) pane are green, the others default.
    cells = screen_rows(client)
    assert cells[5][40].fg == "green"
    assert cells[11][0].fg == "green" and cells[11][40].fg == "green"
    assert cells[11][41].fg == "default"  # next to the right and bottom panes only
    assert cells[11][60].fg == "default"
    # Status line: black on green, session, window list (active '*', last '-'), right part.
    assert shown[23].startswith("[main] 0:bash- 1:claude*")
    assert shown[23].endswith("claude · Thinking 12s · 4.8k tok")
    assert (cells[23][3].fg, cells[23][3].bg) == ("black", "green")
    # The cursor is the active pane's.
    assert client.cursor == frame.cursor == (2, 1)


def test_junctions_for_four_panes() -> None:
    panes = [
        PaneView(pane(40, 11), 0, 0, 40, 11),
        PaneView(pane(39, 11), 41, 0, 39, 11),
        PaneView(pane(40, 12), 0, 12, 40, 12),
        PaneView(pane(39, 12), 41, 12, 39, 12, active=True),
    ]
    frame = compose(80, 24, panes, None)
    client = client_screen(80, 24, FramePainter().paint(frame))
    assert_shows(client, frame)
    shown = client.display_lines()
    assert shown[11] == "─" * 40 + "┼" + "─" * 39
    assert shown[5][40] == "│" and shown[20][40] == "│"
    # Only the border around the bottom-right pane is green.
    cells = screen_rows(client)
    assert cells[20][40].fg == "green" and cells[11][60].fg == "green"
    assert cells[5][40].fg == "default" and cells[11][10].fg == "default"


def test_tee_junctions() -> None:
    # left | (top-right over bottom-right): ├ where the right-hand split meets the divider.
    panes = [
        PaneView(pane(40, 24), 0, 0, 40, 24, active=True),
        PaneView(pane(39, 11), 41, 0, 39, 11),
        PaneView(pane(39, 12), 41, 12, 39, 12),
    ]
    shown = compose(80, 24, panes, None).text_rows()
    assert shown[11][40:] == "├" + "─" * 39
    panes = [
        PaneView(pane(80, 11), 0, 0, 80, 11),
        PaneView(pane(40, 12), 0, 12, 40, 12),
        PaneView(pane(39, 12), 41, 12, 39, 12),
    ]
    shown = compose(80, 24, panes, None).text_rows()
    assert shown[11] == "─" * 40 + "┬" + "─" * 39


def test_area_outside_a_smaller_window_is_dotted() -> None:
    emulator = pane(60, 20, b"small window")
    frame = compose(80, 24, [PaneView(emulator, 0, 0, 60, 20, active=True)], STATUS)
    shown = frame.text_rows()
    assert shown[0] == "small window".ljust(60) + "·" * 20
    assert shown[22] == "·" * 80
    assert shown[23].startswith("[main]")


def test_status_message_replaces_the_line_and_can_hold_the_cursor() -> None:
    emulator = pane(80, 23, b"$ ")
    status = StatusLine("main", (WindowTab(0, "bash", True),), message="kill-pane %3? (y/n)", message_cursor=19)
    frame = compose(80, 24, [PaneView(emulator, 0, 0, 80, 23, active=True)], status)
    client = client_screen(80, 24, FramePainter().paint(frame))
    assert_shows(client, frame)
    assert client.display_lines()[23] == "kill-pane %3? (y/n)"
    assert screen_rows(client)[23][0].bg == "brown"
    assert client.cursor == (19, 23)


def test_long_status_right_side_is_cut_not_the_window_list() -> None:
    status = StatusLine("s", (WindowTab(0, "bash", True),), right="x" * 100)
    frame = compose(40, 5, [PaneView(pane(40, 4), 0, 0, 40, 4, active=True)], status)
    assert text(frame, 4).startswith("[s] 0:bash* x")
    assert len(frame.rows[4]) == 40


def test_dead_pane_message() -> None:
    emulator = pane(80, 23, b"output\r\n")
    view = PaneView(emulator, 0, 0, 80, 23, active=True, dead_message="Pane is dead (status 1)")
    frame = compose(80, 24, [view], STATUS)
    client = client_screen(80, 24, FramePainter().paint(frame))
    assert_shows(client, frame)
    assert client.display_lines()[22] == "Pane is dead (status 1)"
    assert client.display_lines()[0] == "output"


# -- colours, attributes, wide characters ------------------------------------------------

STYLED = (
    f"{E}[31mred{E}[0m {E}[92mbright{E}[0m {E}[38;5;196mp196{E}[48;5;21mbg21{E}[0m "
    f"{E}[38;2;1;2;3mtrue{E}[48;2;250;128;7mbg{E}[0m\r\n"
    f"{E}[1mbold{E}[0m {E}[2mdim{E}[0m {E}[3mital{E}[0m {E}[4munder{E}[0m {E}[5mblink{E}[0m "
    f"{E}[7mrev{E}[0m {E}[9mstrike{E}[0m {E}[1;2;3;4;38;5;82mall{E}[22mless{E}[0m\r\n"
    f"{E}[44m{E}[Kblue background row{E}[0m\r\n"
).encode()


def test_colours_and_attributes_round_trip() -> None:
    emulator = pane(80, 23, STYLED)
    frame = compose(80, 24, [PaneView(emulator, 0, 0, 80, 23, active=True)], STATUS)
    client = client_screen(80, 24, FramePainter().paint(frame))
    assert_shows(client, frame)
    cells = screen_rows(client)
    assert cells[0][0].fg == "red"
    assert cells[0][4].fg == "brightgreen"
    assert cells[0][11].fg == "196" and cells[0][15].bg == "21"
    assert cells[0][20].fg == "010203" and cells[0][24].bg == "fa8007"
    row = cells[1]
    assert row[0].bold and row[5].dim and row[9].italics and row[14].underscore
    assert row[20].blink and row[26].reverse and row[30].strikethrough
    assert row[37].bold and row[37].dim and row[37].fg == "82"
    assert not row[40].bold and not row[40].dim and row[40].italics
    assert all(cell.bg == "blue" for cell in cells[2])
    # The pane's own capture (what tmux would capture) matches the client's, escapes included.
    assert client.capture(0, 2, escapes=True) == emulator.capture(0, 2, escapes=True)


def test_wide_characters_round_trip_and_are_cut_at_pane_edges() -> None:
    # A 10-column rectangle showing a wider emulator: the 中 in columns 9-10 is cut by the edge.
    emulator = pane(20, 5, "abcdefghi中文xyz\r\n中文字".encode())
    right = pane(9, 5, "中文字\r\nabc".encode())
    panes = [PaneView(emulator, 0, 0, 10, 5, active=True), PaneView(right, 11, 0, 9, 5)]
    frame = compose(20, 5, panes, None)
    client = client_screen(20, 5, FramePainter().paint(frame))
    assert_shows(client, frame)
    shown = client.display_lines()
    assert shown[0] == "abcdefghi │中文字"
    assert shown[1] == "中文字    │abc"
    # A wide character keeps its right half next to it, never painted alone.
    row = screen_rows(client)[1]
    assert [cell.data for cell in row[:6]] == ["中", "", "文", "", "字", ""]


def test_wide_character_overwritten_half_round_trip() -> None:
    emulator = pane(20, 3, "中文字".encode())
    view = [PaneView(emulator, 0, 0, 20, 3, active=True)]
    painter = FramePainter()
    client = client_screen(20, 3, painter.paint(compose(20, 3, view, None)))
    emulator.feed(f"{E}[1;2Hx{E}[1;5Hy".encode())  # right half of 中, left half of 字
    frame = compose(20, 3, view, None)
    client.feed(painter.paint(frame))
    assert_shows(client, frame)
    assert client.display_lines()[0] == " x文y"


# -- copy mode ----------------------------------------------------------------------------


def test_copy_mode_shows_scrollback_with_position_indicator() -> None:
    emulator = pane(40, 10, "".join(f"line {n}\r\n" for n in range(100)).encode())
    history = emulator.history_size
    assert history == 91
    view = PaneView(emulator, 0, 0, 40, 10, active=True, scroll_offset=5)
    frame = compose(40, 11, [view], StatusLine("s"))
    client = client_screen(40, 11, FramePainter().paint(frame))
    assert_shows(client, frame)
    shown = client.display_lines()
    # 5 rows back: the top row is history row 91-5 = 86, i.e. "line 86".
    assert shown[0].startswith("line 86")
    assert shown[0].endswith("[5/91]")
    assert shown[9] == "line 95"
    cells = screen_rows(client)
    assert (cells[0][39].fg, cells[0][39].bg) == ("black", "brown")
    assert not frame.cursor_visible
    # Scrolled past the oldest row: clamped to the history size.
    frame = compose(40, 11, [PaneView(emulator, 0, 0, 40, 10, active=True, scroll_offset=500)], None)
    assert text(frame, 0).startswith("line 0 ") and text(frame, 0).rstrip().endswith("[91/91]")
    # Copy mode on the live screen (just entered): the indicator is there already, as in tmux.
    frame = compose(40, 11, [PaneView(emulator, 0, 0, 40, 10, active=True, position_shown=True)], None)
    assert text(frame, 0).startswith("line 91") and text(frame, 0).rstrip().endswith("[0/91]")
    frame = compose(40, 11, [PaneView(emulator, 0, 0, 40, 10, active=True)], None)
    assert "[0/91]" not in text(frame, 0)  # not in copy mode: no indicator


# -- incremental painting ------------------------------------------------------------------


def test_unchanged_frame_paints_nothing_and_one_cell_paints_a_few_bytes() -> None:
    left, right, bottom = pane(40, 11, b"$ "), pane(39, 11, b"x"), pane(80, 11, b"y")
    panes = two_by_one_layout(left, right, bottom)
    painter = FramePainter()
    first = painter.paint(compose(80, 24, panes, STATUS))
    assert len(first) > 100
    assert painter.paint(compose(80, 24, panes, STATUS)) == b""
    left.feed(b"a")
    one = painter.paint(compose(80, 24, panes, STATUS))
    assert b"a" in one and len(one) <= 30, one
    bottom.feed(b"\x1b[5;10H\x1b[31mZ")
    frame = compose(80, 24, panes, STATUS)
    elsewhere = painter.paint(frame)
    assert len(elsewhere) <= 45, elsewhere
    assert_shows(client_screen(80, 24, first, one, elsewhere), frame)


STEPS: list[tuple[str, bytes]] = [
    ("type", b"$ echo hello\r\nhello\r\n$ "),
    ("one row", b"\x1b[3;1H\x1b[32mgreen row\x1b[0m"),
    ("scroll", b"".join(b"scroll %d\r\n" % n for n in range(30))),
    ("clear", b"\x1b[H\x1b[2J$ "),
    ("alternate screen", b"\x1b[?1049h\x1b[H\x1b[44m\x1b[2J" + "TUI 中文".encode() + b"\x1b[10;5H\x1b[1mstatus"),
    ("partial tui update", b"\x1b[10;5Hstat\x1b[7mUS\x1b[0m\x1b[2;1H\x1b[K"),
    ("leave alternate", b"\x1b[0m\x1b[?1049l"),
    ("erase tail", b"\x1b[1;3H\x1b[K"),
    ("hide cursor", b"\x1b[?25l\x1b[5;5Hhidden"),
    ("show cursor", b"\x1b[?25h"),
]


def test_incremental_paints_equal_a_full_paint() -> None:
    active = pane(40, 11)
    right = pane(39, 11, b"static right")
    bottom = pane(80, 11)
    panes = two_by_one_layout(active, right, bottom)
    painter = FramePainter()
    client = client_screen(80, 24, enter_terminal_bytes(), painter.paint(compose(80, 24, panes, STATUS)))
    for name, data in STEPS:
        active.feed(data)
        bottom.feed(data)
        frame = compose(80, 24, panes, STATUS)
        client.feed(painter.paint(frame))
        assert_shows(client, frame)
        full = client_screen(80, 24, FramePainter().paint(frame))
        assert screen_rows(full) == screen_rows(client), name


def random_output(rng: random.Random, columns: int, lines: int) -> bytes:
    """A burst of what TUIs write: moves, colours, wide and combining characters, erases,
    scrolls, insert/delete, alternate screen."""
    out: list[str] = []
    for _ in range(rng.randint(1, 12)):
        kind = rng.random()
        if kind < 0.3:
            out.append(f"{E}[{rng.randint(1, lines)};{rng.randint(1, columns)}H")
        elif kind < 0.5:
            out.append(rng.choice([f"{E}[0m", f"{E}[1;31m", f"{E}[38;5;{rng.randint(0, 255)}m",
                                   f"{E}[48;2;{rng.randint(0, 255)};9;200m", f"{E}[7m", f"{E}[2;3;4;9m",
                                   f"{E}[22;23m", f"{E}[44m"]))
        elif kind < 0.8:
            out.append("".join(rng.choice("abc xyz中文字é\u0301-|") for _ in range(rng.randint(1, 30))))
        else:
            out.append(rng.choice([f"{E}[K", f"{E}[1K", f"{E}[2K", f"{E}[J", f"{E}[2J", "\r\n" * 3,
                                   f"{E}[2@", f"{E}[3P", f"{E}[2L", f"{E}[M", f"{E}[3X", f"{E}[?1049h",
                                   f"{E}[?1049l", f"{E}[?25l", f"{E}[?25h", f"{E}M"]))
    return "".join(out).encode()


@pytest.mark.parametrize("seed", range(6))
def test_random_tui_output_incremental_paints(seed: int) -> None:
    rng = random.Random(seed)
    panes_emulators = [pane(40, 11), pane(39, 11), pane(80, 11)]
    panes = two_by_one_layout(*panes_emulators)
    painter = FramePainter()
    client = client_screen(80, 24, painter.paint(compose(80, 24, panes, STATUS)))
    for step in range(60):
        emulator = rng.choice(panes_emulators)
        emulator.feed(random_output(rng, emulator.columns, emulator.lines))
        if step % 20 == 19:  # the active pane changes now and then
            active = rng.randrange(3)
            panes = [PaneView(p.emulator, p.x, p.y, p.columns, p.lines, active=i == active) for i, p in enumerate(panes)]
        frame = compose(80, 24, panes, STATUS)
        client.feed(painter.paint(frame))
        assert_shows(client, frame)


@pytest.mark.parametrize("seed", range(4))
def test_full_width_pane_restyled_in_runs_paints_incrementally(seed: int) -> None:
    """A single full-width pane: its rows reach the painter as read (with their style runs),
    and colour runs and text change in some stretches of a row and not others."""
    rng = random.Random(seed)
    emulator = new_emulator(80, 23)  # the daemon's backend: libghostty's rows carry their runs
    panes = [PaneView(emulator, 0, 0, 80, 23, active=True)]
    painter = FramePainter()
    client = client_screen(80, 24, painter.paint(compose(80, 24, panes, STATUS)))
    for _ in range(80):
        out = []
        for _ in range(rng.randint(1, 6)):
            out.append(f"{E}[{rng.randint(1, 23)};{rng.randint(1, 80)}H")
            out.append(rng.choice([f"{E}[0m", f"{E}[1;31m", f"{E}[38;5;{rng.randint(0, 255)}m", f"{E}[7m", ""]))
            out.append("".join(rng.choice("ab xy-") for _ in range(rng.randint(1, 40))))
        emulator.feed("".join(out).encode())
        frame = compose(80, 24, panes, STATUS)
        client.feed(painter.paint(frame))
        assert_shows(client, frame)


def test_resize_and_invalidate_repaint_everything() -> None:
    emulator = pane(80, 23, b"before resize")
    painter = FramePainter()
    client = client_screen(80, 24, painter.paint(compose(80, 24, [PaneView(emulator, 0, 0, 80, 23, True)], STATUS)))
    # The client shrinks: new size, so the painter repaints from scratch.
    emulator.resize(60, 19)
    emulator.feed(b"\r\nafter")
    frame = compose(60, 20, [PaneView(emulator, 0, 0, 60, 19, True)], STATUS)
    client = client_screen(60, 20, painter.paint(frame))  # a fresh terminal of the new size
    assert_shows(client, frame)
    # C-l: the terminal was scribbled on; invalidate gives a full repaint that fixes it.
    client.feed(b"\x1b[2J\x1b[Hgarbage")
    painter.invalidate()
    client.feed(painter.paint(frame))
    assert_shows(client, frame)


def test_switching_layouts_and_active_pane() -> None:
    left, right, bottom = pane(40, 11, b"L"), pane(39, 11, b"R"), pane(80, 11, b"B")
    painter = FramePainter()
    client = client_screen(80, 24, painter.paint(compose(80, 24, two_by_one_layout(left, right, bottom), STATUS)))
    zoomed = compose(80, 24, [PaneView(bottom, 0, 0, 80, 23, active=True)], STATUS)
    client.feed(painter.paint(zoomed))
    assert_shows(client, zoomed)
    panes = [PaneView(left, 0, 0, 40, 11), PaneView(right, 41, 0, 39, 11, active=True), PaneView(bottom, 0, 12, 80, 11)]
    frame = compose(80, 24, panes, STATUS)
    client.feed(painter.paint(frame))
    assert_shows(client, frame)
    assert screen_rows(client)[5][40].fg == "green" and screen_rows(client)[11][10].fg == "default"


# -- modes and terminal set-up ---------------------------------------------------------------


def test_active_pane_modes_are_mirrored_only_when_they_change() -> None:
    emulator = pane(80, 23)
    view = [PaneView(emulator, 0, 0, 80, 23, active=True)]
    painter = FramePainter()
    client = client_screen(80, 24, enter_terminal_bytes(), painter.paint(compose(80, 24, view, None)))
    assert {1002, 1006} <= client.private_modes  # buttons, wheel and drags (selections)
    emulator.feed(b"\x1b[?1h\x1b=\x1b[?2004h\x1b[?1003h\x1b[?1006h")
    frame = compose(80, 24, view, None)
    assert {1, 66, 2004, 1003, 1006} <= frame.modes
    data = painter.paint(frame)
    client.feed(data)
    assert {1, 66, 2004, 1003, 1006} <= client.private_modes
    assert painter.paint(compose(80, 24, view, None)) == b""  # nothing re-sent
    emulator.feed(b"\x1b[?1l\x1b>\x1b[?2004l\x1b[?1003l")
    client.feed(painter.paint(compose(80, 24, view, None)))
    modes = client.private_modes
    assert not modes & {1, 66, 2004, 1003}
    assert {1002, 1006} <= modes  # our own mouse reporting stays on
    client.feed(leave_terminal_bytes())
    assert not client.private_modes & {1, 66, 2004, 1000, 1002, 1003, 1006, 1049}
    assert client.cursor_visible and not client.alternate_screen


# -- a real terminal: tmux ---------------------------------------------------------------------


@pytest.fixture()
def tmux() -> Iterator[list[str]]:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is the reference terminal")
    base = ["tmux", "-L", f"muxd-render-{uuid.uuid4().hex[:8]}", "-f", "/dev/null"]
    try:
        yield base
    finally:
        subprocess.run([*base, "kill-server"], capture_output=True)


def tmux_run(base: list[str], *args: str) -> str:
    return subprocess.run([*base, *args], check=True, capture_output=True, text=True, timeout=stretched(10)).stdout


def test_painted_bytes_in_a_real_tmux_pane(tmux: list[str], tmp_path: Path) -> None:
    left = pane(40, 11, STYLED)
    right = pane(39, 11, "中文 wide\r\n\x1b[38;2;10;200;30mtrue colour\x1b[0m".encode())
    bottom = pane(80, 11, b"bottom\r\n$ ")
    panes = [PaneView(left, 0, 0, 40, 11), PaneView(right, 41, 0, 39, 11), PaneView(bottom, 0, 12, 80, 11, True)]
    painter = FramePainter()
    first = painter.paint(compose(80, 24, panes, STATUS))
    bottom.feed(b"typed")
    right.feed(b"\x1b[1;1H\x1b[31mX")
    frame = compose(80, 24, panes, STATUS)
    stream = enter_terminal_bytes() + first + painter.paint(frame)
    path = tmp_path / "paint.bin"
    path.write_bytes(stream)
    tmux_run(tmux, "new-session", "-d", "-s", "render", "-x", "80", "-y", "24",
             f"stty raw -echo; cat {path}; exec sleep 600", ";", "set", "-g", "status", "off")
    wait_until(lambda: tmux_run(tmux, "display", "-p", "-t", "render", "#{pane_current_command}").strip() == "sleep",
               timeout=10, message="tmux pane painted")
    plain = tmux_run(tmux, "capture-pane", "-p", "-t", "render").split("\n")[:24]
    assert [line.rstrip() for line in plain] == [row.rstrip() for row in frame.text_rows()]
    # Colours as tmux understood them equal what our own emulator makes of the same bytes.
    escaped = tmux_run(tmux, "capture-pane", "-p", "-e", "-t", "render")
    ours = client_screen(80, 24, stream)
    assert_shows(ours, frame)
    # (tmux writes its SGR differently, so compare what the two captures draw, cell by cell.)
    tmux_cells = client_screen(80, 24, escaped.rstrip("\n").replace("\n", "\r\n").encode())
    ours_cells = client_screen(80, 24, ours.capture(escapes=True).rstrip("\n").replace("\n", "\r\n").encode())
    assert screen_rows(tmux_cells) == screen_rows(ours_cells)
    assert screen_rows(tmux_cells)[1][42].fg == "0ac81e"  # true colour survived tmux
    x, y = tmux_run(tmux, "display", "-p", "-t", "render", "#{cursor_x} #{cursor_y}").split()
    assert (int(x), int(y)) == frame.cursor == (7, 13)


def test_blank_is_the_default_cell() -> None:
    # The painter erases with EL in the default style: make sure that is what BLANK means.
    client = client_screen(10, 2, b"\x1b[0mabc\x1b[1G\x1b[K")
    assert client.row_cells(0) == (BLANK,) * 10


@pytest.mark.parametrize(
    "splits",
    [
        ("split-window -h", "split-window -v", "select-pane -t 0"),
        ("split-window -v", "split-window -h", "select-pane -t 2"),
        ("split-window -h", "split-window -v", "split-window -h -t 0", "select-layout tiled", "select-pane -t 3"),
    ],
    ids=["left-and-two-right", "top-and-two-bottom", "four-tiled"],
)
def test_borders_match_tmux_for_the_same_layout(tmux: list[str], splits: tuple[str, ...]) -> None:
    """tmux itself draws the layout (an inner tmux attached inside an outer tmux pane); every
    border cell we compose for the same pane rectangles has tmux's character and colour."""
    inner = ["tmux", "-L", f"muxd-render-inner-{uuid.uuid4().hex[:8]}", "-f", "/dev/null"]
    try:
        tmux_run(inner, "new-session", "-d", "-s", "w", "-n", "main", "-x", "80", "-y", "24", "exec sleep 600")
        for command in splits:
            words = command.split()
            if words[0] == "split-window":
                words.append("exec sleep 600")
            tmux_run(inner, *words)
        tmux_run(tmux, "new-session", "-d", "-s", "outer", "-x", "80", "-y", "24",
                 f"TMUX= {' '.join(inner)} attach -t w", ";", "set", "-g", "status", "off")
        escaped = wait_until(
            lambda: (lambda out: out if "[w]" in out else "")(tmux_run(tmux, "capture-pane", "-p", "-e", "-t", "outer")),
            timeout=10, message="inner tmux drawn")
        # Pane sizes once the outer client (80x24 with the status line) set the window size.
        panes = []
        for line in tmux_run(inner, "list-panes", "-t", "w", "-F",
                             "#{pane_left} #{pane_top} #{pane_width} #{pane_height} #{pane_active}").split("\n"):
            if line:
                x, y, w, h, active = map(int, line.split())
                panes.append(PaneView(Emulator(w, h), x, y, w, h, active=bool(active)))
    finally:
        subprocess.run([*inner, "kill-server"], capture_output=True)
    theirs = screen_rows(client_screen(80, 24, escaped.rstrip("\n").replace("\n", "\r\n").encode()))
    frame = compose(80, 24, panes, StatusLine("w", (WindowTab(0, "main", True),)))
    inside = {(x, y) for p in panes for y in range(p.y, p.y + p.lines) for x in range(p.x, p.x + p.columns)}
    borders = [(x, y) for y in range(23) for x in range(80) if (x, y) not in inside]
    assert len(borders) > 40
    for x, y in borders:
        ours = frame.rows[y][x]
        assert (ours.data, ours.fg) == (theirs[y][x].data, theirs[y][x].fg), (x, y)
    status = "".join(cell.data for cell in theirs[23])
    assert status.startswith(text(frame, 23).rstrip())
    assert (theirs[23][0].fg, theirs[23][0].bg) == (frame.rows[23][0].fg, frame.rows[23][0].bg)


# -- copy-mode selections ----------------------------------------------------------------------


def test_word_motions_read_cells_of_the_screen_and_the_scrollback() -> None:
    from muxd.attach.selection import cell_text, pane_geometry
    from muxd.daemon.client_side.copy_mode import CopyMode

    emulator = Emulator(columns=12, lines=3)
    emulator.feed("git log\r\n漢字 x-y\r\nabc def\r\nlast".encode())  # "git log" scrolls into the history
    top = emulator.rows_scrolled
    assert cell_text(emulator, top - 1) == "git log" and cell_text(emulator, top) == "漢漢字字 x-y"
    assert cell_text(emulator, top - 2) == "" and cell_text(emulator, top + 3) == ""  # not kept
    copy = CopyMode(cursor=(top - 1, 4))  # on "log", in the history
    stops = []
    for _ in range(5):
        copy.key(b"w", pane_geometry(emulator))
        stops.append(copy.cursor)
    # the wide characters are one word of four cells; the cursor lands on cell columns
    assert stops == [(top, 0), (top, 5), (top, 6), (top, 7), (top + 1, 0)]
    copy.key(b"e", pane_geometry(emulator))
    assert copy.cursor == (top + 1, 2)
    for _ in range(3):
        copy.key(b"b", pane_geometry(emulator))
    assert copy.cursor == (top, 6)


def test_selection_text_follows_wraps_wide_characters_and_scrollback() -> None:
    from muxd.attach.selection import highlight_spans, point_at, selection_text

    emulator = Emulator(columns=10, lines=4)
    # Rows: "abcdefghij" soft-wrapping into "KLM", "漢字 end  " (wide characters, trailing
    # blanks), "last".
    emulator.feed("abcdefghijKLM\r\n漢字 end  \r\nlast".encode())
    top = emulator.rows_scrolled
    whole = ((top, 0), (top + 3, 9))
    assert selection_text(emulator, whole, max_chars=100) == "abcdefghijKLM\n漢字 end\nlast"
    assert selection_text(emulator, ((top, 8), (top + 1, 1)), max_chars=100) == "ijKL"  # no line feed at a wrap
    assert selection_text(emulator, ((top + 2, 0), (top + 2, 5)), max_chars=3) == "漢字 "
    # The selection keeps its rows when they scroll into the history and the view scrolls back.
    emulator.feed(b"\r\nmore")
    assert emulator.rows_scrolled == top + 1
    assert selection_text(emulator, whole, max_chars=100) == "abcdefghijKLM\n漢字 end\nlast"
    assert point_at(emulator, 1, 0, 0) == (top, 0)  # one row back: the view's top row is row `top`
    assert highlight_spans(emulator, ((top, 2), (top + 1, 3)), 1, 4) == ((0, 2, 10), (1, 0, 4))
    assert highlight_spans(emulator, ((top, 2), (top + 1, 3)), 0, 4) == ((0, 0, 4),)  # row `top` is off view
