"""capture-pane on the libghostty-vt backend reads styled visible rows through the native row
reader (a row a call): what it prints is what the cell-by-cell reading printed, on random
screens, in every capture mode."""

from __future__ import annotations

import random

from muxd.emulator.backend import new_emulator

from test_ghostty_rows import PIECES

MODES = [{}, {"escapes": True}, {"join_wrapped": True}, {"escapes": True, "join_wrapped": True}]


def captures(em) -> list[str]:
    return [em.capture(-em.history_size, None, **mode) for mode in MODES]


def test_capture_through_native_rows_prints_what_cell_by_cell_reading_printed() -> None:
    rng = random.Random(29)
    compared = 0
    for _ in range(150):
        native = new_emulator(rng.choice([10, 21, 33]), rng.choice([3, 6]), backend="ghostty")
        one_by_one = new_emulator(native.columns, native.lines, backend="ghostty")
        assert native._row_reader is not None
        one_by_one._row_reader = None  # the reference: every styled row read cell by cell
        for _ in range(8):
            data = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 6))).encode()
            native.feed(data)
            one_by_one.feed(data)
            assert captures(native) == captures(one_by_one), data
            compared += 1
    assert compared == 1200


def test_a_row_after_one_erased_in_a_colour_is_kept_in_rows() -> None:
    em = new_emulator(10, 4, backend="ghostty")
    em.feed(b"top\r\n\x1b[44m\x1b[K\x1b[0m")
    rows = em.rows()
    assert rows[1].text == " " * 10
    assert rows[1].runs[0][1] == "blue" and rows[1].runs[1] == 10
