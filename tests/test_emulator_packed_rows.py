"""Packed scrollback rows read back exactly as they went in: text, wrap flags, style runs."""

from __future__ import annotations

import pytest

from muxd.emulator.cell import BLANK, DEFAULT_STYLE
from muxd.emulator.packed_rows import PackedRows
from muxd.emulator.rows import Row
from muxd.emulator.sgr import intern_style
from muxd.emulator.style_codes import style_code, style_from_code


def style(**fields: object) -> tuple[object, ...]:
    return intern_style(BLANK._replace(**fields)[1:])  # type: ignore[arg-type]


STYLES = [
    style(bold=True),
    style(fg="red", bg="brightblue", italics=True, underscore=True),
    style(fg="196", bg="0", reverse=True, blink=True),
    style(fg="0a1bff", bg="ffffff", strikethrough=True, dim=True, hidden=True, overline=True),
    style(fg="000000", bg="255", bold=True, dim=True),
]


@pytest.mark.parametrize("shown", STYLES)
def test_style_codes_give_back_the_same_style(shown: tuple[object, ...]) -> None:
    code = style_code(shown)  # type: ignore[arg-type]
    assert code is not None
    assert style_from_code(code) == shown


def test_a_colour_codes_cannot_hold_has_no_code() -> None:
    assert style_code(style(fg="not-a-colour")) is None  # type: ignore[arg-type]


ROWS = [
    Row("", (), False),
    Row("plain", (), True),
    Row("bold", (STYLES[0], 4), False),
    Row("é中😀 mixed", (STYLES[1], 3, DEFAULT_STYLE, 1, STYLES[3], 6), True),
    Row("x" * 300, (STYLES[2], 100, STYLES[4], 200), False),
    Row("e\u0301\u0301", (STYLES[3], 3), False),
]


def test_rows_come_back_as_they_went_in() -> None:
    packed = PackedRows(ROWS)
    assert packed.row_count == len(ROWS)
    assert packed.rows(0, len(ROWS)) == ROWS
    assert packed.rows(2, 4) == ROWS[2:4]
    assert packed.size_bytes == sum(row.size_bytes for row in ROWS)


def test_styles_codes_cannot_hold_are_kept_as_they_are() -> None:
    odd = style(fg="not-a-colour", bold=True)
    rows = [*ROWS, Row("odd", (odd, 3), False)]
    assert PackedRows(rows).rows(0, len(rows)) == rows


def test_eviction_drops_whole_rows_from_the_front() -> None:
    packed = PackedRows(ROWS)
    freed, count = packed.evict(ROWS[0].size_bytes + 1)  # more than one row: two go
    assert (freed, count) == (ROWS[0].size_bytes + ROWS[1].size_bytes, 2)
    assert packed.row_count == len(ROWS) - 2
    assert packed.size_bytes == sum(row.size_bytes for row in ROWS[2:])
    assert packed.rows(0, 2) == ROWS[2:4]
    remaining = packed.size_bytes
    assert packed.evict(10**9) == (remaining, len(ROWS) - 2)
    assert packed.row_count == 0 and packed.size_bytes == 0
