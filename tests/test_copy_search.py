"""Finding text in copy mode: order from the cursor, wrapping, smart case, cell columns."""

import pytest

from muxd.daemon.client_side import copy_search
from muxd.daemon.client_side.copy_mode import SEARCH_DOWN, SEARCH_UP, STAY, CopyMode, PaneGeometry
from muxd.daemon.client_side.copy_search import find


def rows_of(rows):
    """rows_text over a dict of running row number -> text."""
    return lambda first, last: [rows.get(number, "") for number in range(first, last + 1)]


ROWS = {10: "make test", 11: "FAILED test_a", 12: "漢字 failed x", 13: "ok", 14: "make test again"}


@pytest.mark.parametrize("needle, start, forward, found", [
    ("make", (10, 0), True, (14, 0)),     # the next one, not the one under the cursor
    ("make", (14, 0), True, (10, 0)),     # past the last row: wraps to the top
    ("make", (10, 0), False, (14, 0)),    # before the first row: wraps to the bottom
    ("test", (14, 9), False, (14, 5)),    # up: the nearest before the cursor, on its row
    ("test", (14, 5), False, (11, 7)),
    ("failed", (10, 0), True, (11, 0)),   # lower case matches any case
    ("FAILED", (11, 0), True, (11, 0)),   # with capitals, only that case: itself, after wrapping
    ("failed", (11, 0), True, (12, 5)),   # after two wide characters: cell column 5
    ("nowhere", (10, 0), True, None),
    ("", (10, 0), True, None),
])
def test_find(needle, start, forward, found):
    assert find(rows_of(ROWS), needle, start, forward=forward, first=10, last=14) == found


def test_find_reads_rows_a_chunk_at_a_time_nearest_first(monkeypatch):
    monkeypatch.setattr(copy_search, "SEARCH_CHUNK_ROWS", 3)
    rows = {n: f"row {n}" for n in range(100)}
    rows[2] = rows[97] = "needle"
    asked = []

    def rows_text(first, last):
        asked.append((first, last))
        return rows_of(rows)(first, last)

    assert find(rows_text, "needle", (50, 0), forward=True, first=0, last=99) == (97, 0)
    assert asked[0] == (50, 52) and asked[-1] == (95, 97)
    asked.clear()
    assert find(rows_text, "needle", (50, 0), forward=False, first=0, last=99) == (2, 0)
    assert asked[0] == (48, 50) and asked[-1] == (0, 2)


def test_copy_mode_search_and_repeat():
    pane = PaneGeometry(top=12, history=2, lines=3, columns=20, rows_text=rows_of(ROWS))
    copy = CopyMode(cursor=(14, 0))
    assert copy.key(b"/", pane) == SEARCH_DOWN and copy.key(b"?", pane) == SEARCH_UP
    assert copy.search("test", True, pane) and copy.cursor == (14, 5) and copy.offset == 0
    assert copy.key(b"n", pane) == STAY and copy.cursor == (10, 5) and copy.offset == 2  # wrapped; the view follows
    assert copy.key(b"n", pane) == STAY and copy.cursor == (11, 7)
    assert copy.key(b"N", pane) == STAY and copy.cursor == (10, 5)
    assert copy.key(b"n", pane) == STAY and copy.cursor == (11, 7)  # N kept the direction
    assert not copy.search("absent", False, pane) and copy.cursor == (11, 7)
