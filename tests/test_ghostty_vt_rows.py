"""Rows drawn from libghostty-vt's formatter (muxd/emulator/ghostty_vt_rows.py, vt_row.py): a
row it gives as text draws exactly the cells the terminal holds, a row it cannot draw
faithfully is left to the cell reader, and a client painted from such rows shows what a client
painted from cells shows."""

from __future__ import annotations

import random

import pytest

from muxd.attach import FramePainter, PaneView, StatusLine, compose
from muxd.attach.frame import Frame
from muxd.attach.split_row import SplitRow
from muxd.emulator.backend import new_emulator
from muxd.emulator.vt_row import VtRow

from test_ghostty_rows import PIECES, cells_one_by_one, random_screens

E = "\x1b"


def test_every_row_given_as_text_draws_the_cells_the_terminal_holds() -> None:
    drawn = fallen_back = 0
    for em in random_screens(29, 300):
        ys = list(range(em.lines))
        for y, row in zip(ys, em.vt_rows(ys)):
            if row is None:
                fallen_back += 1
                continue
            drawn += 1
            assert row.cells == cells_one_by_one(em, y), (row, em.capture(escapes=True))
    assert drawn > 200 and fallen_back > 50  # both kinds met


@pytest.mark.parametrize("output, why", [
    (f"{E}[41mab{E}[0m{E}[3Cz", "a gap after a styled run: the formatter would write it red"),
    ("e\u0301", "a combining mark"),
    ("\u4e2d", "a wide character"),
    (f"{E}[44m{E}[K", "a row erased in a colour, nothing written (the formatter leaves it out)"),
    ("a\u0085b", "a C1 control"),
])
def test_a_row_the_formatter_would_draw_otherwise_is_read_as_cells(output: str, why: str) -> None:
    em = new_emulator(12, 2, backend="ghostty")
    em.feed(output.encode())
    assert em.vt_rows([0, 1]) == [None, VtRow("", 0, 12)], why


def test_sgr_muxd_keeps_no_record_of_is_not_sent() -> None:
    em = new_emulator(12, 2, backend="ghostty")
    em.feed(f"{E}[4:3m{E}[58;5;3mcurly{E}[0m {E}[38;5;1mred".encode())
    row = em.vt_rows([0])[0]
    assert row is not None
    assert "58" not in row.vt and "4:3" not in row.vt and "38;5;1m" not in row.vt
    assert row.cells == em.row_cells(0)


def client_screen(painted: list[bytes], columns: int, lines: int) -> tuple[list[object], tuple[int, int]]:
    """What a terminal shows after the painter's bytes: its rows' cells and its cursor."""
    client = new_emulator(columns, lines, backend="ghostty")
    for data in painted:
        client.feed(data)
    return [client.row_cells(y) for y in range(lines)], client.cursor


class TwoClients:
    """A client painted from frames as compose makes them, and one painted from the same
    frames' rows as plain cell tuples: each frame, both terminals must show the same."""

    def __init__(self) -> None:
        self.from_text, self.from_cells = FramePainter(), FramePainter()
        self.painted_text: list[bytes] = []
        self.painted_cells: list[bytes] = []

    def paint(self, frame: Frame) -> None:
        as_cells = Frame(frame.columns, frame.lines, tuple(tuple(row) for row in frame.rows), frame.cursor,
                         frame.cursor_visible, frame.modes)
        self.painted_text.append(self.from_text.paint(frame))
        self.painted_cells.append(self.from_cells.paint(as_cells))
        assert (client_screen(self.painted_text, frame.columns, frame.lines)
                == client_screen(self.painted_cells, frame.columns, frame.lines))


@pytest.mark.parametrize("columns, lines", [(80, 24), (37, 9)])
def test_a_client_painted_from_vt_rows_shows_what_one_painted_from_cells_shows(columns: int, lines: int) -> None:
    rng = random.Random(columns + 1)
    em = new_emulator(columns, lines - 1, backend="ghostty")
    views = [PaneView(em, 0, 0, columns, lines - 1, active=True)]
    status = StatusLine("s", ())
    clients = TwoClients()
    vt_rows = 0
    for frame_number in range(80):
        em.feed("".join(rng.choice(PIECES) for _ in range(rng.randint(1, 8))).encode())
        em.feed(f"{E}[{rng.randint(1, lines)};1H{E}[38;5;{frame_number % 256}m{'#' * rng.randint(0, columns)}".encode())
        frame = compose(columns, lines, views, status)
        vt_rows += sum(type(row) is VtRow for row in frame.rows)
        clients.paint(frame)
    assert vt_rows > 0


def test_panes_side_by_side_are_painted_from_their_text_as_from_their_cells() -> None:
    """Two panes split left and right (and a third below, narrower than the client): rows of the
    layout holding VT rows are SplitRows, painted piece by piece, each pane row erased to its
    own right edge only (ECH), the border and the other pane left as they are."""
    rng = random.Random(7)
    columns, lines = 61, 14
    left = new_emulator(30, 8, backend="ghostty")
    right = new_emulator(30, 8, backend="ghostty")
    below = new_emulator(40, 4, backend="ghostty")
    views = [PaneView(left, 0, 0, 30, 8, active=True), PaneView(right, 31, 0, 30, 8),
             PaneView(below, 0, 9, 40, 4)]
    status = StatusLine("s", ())
    clients = TwoClients()
    split_rows = 0
    for frame_number in range(120):
        emulator = rng.choice([left, right, below])
        emulator.feed("".join(rng.choice(PIECES) for _ in range(rng.randint(1, 6))).encode())
        emulator.feed(f"{E}[{rng.randint(1, emulator.lines)};1H{E}[48;5;{frame_number % 256}m"
                      f"{'#' * rng.randint(0, emulator.columns)}{E}[0m{E}[K".encode())
        frame = compose(columns, lines, views, status, window_size=(61, 13))
        split_rows += sum(type(row) is SplitRow for row in frame.rows)
        clients.paint(frame)
    assert split_rows > 0
