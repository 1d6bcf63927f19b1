"""The native row reader (muxd/emulator/ghostty_rows.py): a libghostty-vt pane's visible rows,
read a row per call, are the cells the terminal holds (read one by one as the reference), and
the style runs they carry let the painter write exactly what it writes for plain rows."""

from __future__ import annotations

import random

import pytest

from muxd.attach import FramePainter, PaneView, StatusLine, compose
from muxd.attach.frame import Frame
from muxd.emulator.backend import new_emulator
from muxd.emulator.cell import BLANK, Cell, StyledRow
from muxd.emulator.ghostty_format import ACTIVE

E = "\x1b"
# Pieces of output covering what a row can hold: styled runs and the gaps between them, colours
# of each kind, erasing in a colour, wide characters, combining marks, insert/delete, DECALN.
PIECES = [f"{E}[41mRED{E}[0m", f"{E}[5C", "xyz", "\r\n", f"{E}[38;5;3mab", f"{E}[38;5;200mcd", f"{E}[0m",
          " \u4e2d", f"{E}[44m{E}[K", "e\u0301", f"{E}[1;3;4;7m", f"{E}[38;2;1;2;3m", f"{E}[48;2;9;8;7m{E}[K",
          f"{E}[2J", f"{E}[H", f"{E}[10;5H", "\U0001F600", f"{E}[4@", f"{E}[3P", f"{E}[X", f"{E}[2m{E}[8m{E}[53m",
          f"{E}[9m{E}[5m", "plain text here ", f"{E}[0K", f"{E}[?1049h", f"{E}[?1049l", f"{E}#8",
          "\u00e9\u0308\u0327", f"{E}[100;30m", f"{E}[96m", f"{E}[48;5;236m{E}[2K"]


def cells_one_by_one(em, y: int) -> tuple[Cell, ...]:
    """Row `y` read a cell at a time through the grid (the reader's reference)."""
    got = em._grid.read_cells(ACTIVE, y, em.columns, styles=True, full=True)
    assert got is not None
    return tuple(BLANK if (text, style) == (" ", BLANK[1:]) else Cell(text, *style) for text, style in got[0])


def random_screens(seed: int, count: int):
    rng = random.Random(seed)
    for _ in range(count):
        em = new_emulator(rng.choice([10, 21, 33]), rng.choice([3, 6]), backend="ghostty")
        for _ in range(12):
            em.feed("".join(rng.choice(PIECES) for _ in range(rng.randint(1, 6))).encode())
            yield em


def test_rows_read_natively_are_the_cells_the_terminal_holds() -> None:
    for em in random_screens(1, 120):
        for y in range(em.lines):
            assert em.row_cells(y) == cells_one_by_one(em, y), (y, em.capture(escapes=True))


def test_a_native_row_says_every_place_its_style_changes() -> None:
    checked = 0
    for em in random_screens(2, 120):
        for y in range(em.lines):
            row = em.row_cells(y)
            if type(row) is not StyledRow:
                continue
            checked += 1
            starts = set(row.style_starts)
            assert 0 in starts and max(starts) < len(row)
            changes = {x for x in range(1, len(row)) if row[x][1:] != row[x - 1][1:]}
            assert changes <= starts
    assert checked > 100


def test_a_row_erased_in_a_colour_with_nothing_written_keeps_the_colour() -> None:
    em = new_emulator(10, 3, backend="ghostty")
    em.feed(f"{E}[44m{E}[K".encode())
    assert {cell.bg for cell in em.row_cells(0)} == {"blue"}


def test_a_row_read_before_the_screen_changes_again_is_read_again_after() -> None:
    em = new_emulator(10, 3, backend="ghostty")
    em.feed(b"one")
    assert em.row_cells(0)[:3] == tuple(map(Cell, "one"))
    em.feed(b"\rtwo")
    assert em.row_cells(0)[:3] == tuple(map(Cell, "two"))


@pytest.mark.parametrize("columns, lines", [(80, 24), (37, 9)])
def test_the_painter_writes_the_same_for_native_rows_as_for_plain_ones(columns: int, lines: int) -> None:
    rng = random.Random(columns)
    em = new_emulator(columns, lines - 1, backend="ghostty")
    views = [PaneView(em, 0, 0, columns, lines - 1, active=True)]
    status = StatusLine("s", ())
    native, plain = FramePainter(), FramePainter()
    styled = 0
    for frame_number in range(80):
        em.feed("".join(rng.choice(PIECES) for _ in range(rng.randint(1, 8))).encode())
        em.feed(f"{E}[{rng.randint(1, lines)};1H{E}[38;5;{frame_number % 256}m{'#' * rng.randint(0, columns)}".encode())
        frame = compose(columns, lines, views, status)
        # The pane's rows as cells (compose gives rows the formatter writes as VtRows: their
        # painting is tested in test_ghostty_vt_rows.py).
        frame = Frame(frame.columns, frame.lines, (*em.rows_cells(list(range(lines - 1))), *frame.rows[lines - 1:]),
                      frame.cursor, frame.cursor_visible, frame.modes)
        styled += sum(type(row) is StyledRow for row in frame.rows)
        as_plain = Frame(frame.columns, frame.lines, tuple(tuple(row) for row in frame.rows), frame.cursor,
                         frame.cursor_visible, frame.modes)
        assert native.paint(frame) == plain.paint(as_plain)
    assert styled > 0


def test_a_plain_row_reads_as_the_tuple_of_its_cells() -> None:
    em = new_emulator(12, 3, backend="ghostty")
    em.feed(f"ab{E}[31mcd{E}[0m ef".encode())
    row = em.row_cells(0)
    assert type(row) is StyledRow and row.styles is not None  # held as text and runs
    cells = cells_one_by_one(em, 0)
    assert row == cells and cells == row and not row != cells and hash(row) == hash(cells)
    assert len(row) == 12 and row[2] == Cell("c", fg="red") and row[-1] == BLANK and row[-12] == Cell("a")
    assert row[1:4] == cells[1:4] and tuple(row) == cells and list(row) == list(cells)
    assert (BLANK,) + row == (BLANK, *cells) and row + (BLANK,) == (*cells, BLANK)
    assert row != cells[:-1] + (Cell("x"),)
    with pytest.raises(IndexError):
        row[12]


def test_painting_plain_rows_makes_no_cells() -> None:
    em = new_emulator(20, 4, backend="ghostty")
    views = [PaneView(em, 0, 0, 20, 4, active=True)]
    painter = FramePainter()
    for colour in (31, 32):
        em.feed((f"{E}[H{E}[{colour}m" + "\r\n".join(f"row {y} {colour}" for y in range(4))).encode())
        frame = compose(20, 5, views, StatusLine("s", ()))
        assert painter.paint(frame)
    assert all(row._cells is None for row in frame.rows[:4])
