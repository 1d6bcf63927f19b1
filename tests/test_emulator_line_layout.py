"""line_layout's three descriptions of a flood line agree with each other and with the screen.

`lay_out_line` (cells, for rendering), `row_text_bytes` and `narrow_line_width` (sizes,
for the scrollback cap) are separate code for speed; here they are checked against each
other on many random lines, and `lay_out_line` against a real screen.
"""

from __future__ import annotations

import random

import pytest

from emulator_data import streams
from muxd.emulator import Emulator
from muxd.emulator.cell import BLANK
from muxd.emulator.rows import text_bytes
from muxd.emulator.line_layout import (
    SGR_SAMPLE_CHARS,
    SGR_SEQUENCE,
    block_geometry,
    lay_out_line,
    line_rows,
    narrow_line_width,
    next_tab_column,
    row_text_bytes,
    rows_for_width,
    strip_sgr,
)

PIECES = ["\t", "\t\t", "é", "─│", "✓", "中", "😀", "e\u0301", "\u0301", "\u200d", "\ufe0f", "ab", "xyz "]


def random_line(rng: random.Random, narrow_only: bool = False) -> str:
    pieces = ["\t", "é", "─", "abc", "x"] if narrow_only else PIECES
    parts = [rng.choice(pieces) if rng.random() < 0.5 else streams.words(rng, rng.randint(1, 40))
             for _ in range(rng.randint(0, 14))]
    indent = "\t" * rng.choice([0, 0, 1, 2, 3, 12])
    return indent + "".join(parts)


def test_default_tab_stops_every_eight_columns_and_none_past_the_last() -> None:
    assert [next_tab_column(x, 20) for x in (0, 7, 8, 15, 16, 18, 19, 20)] == [8, 8, 16, 16, 19, 19, 19, 20]


@pytest.mark.parametrize("columns", [2, 3, 8, 9, 30, 80])
def test_sizes_agree_with_the_rendered_rows(columns: int) -> None:
    rng = random.Random(columns)
    for _ in range(400):
        line = random_line(rng)
        rendered = [text_bytes(row.text) for row in lay_out_line(line, BLANK, columns, BLANK)[0]]
        assert row_text_bytes(line, columns) == rendered, repr(line)
        assert line_rows(line, columns) == len(rendered)
        narrow = random_line(rng, narrow_only=True)
        rendered = [len(row.text) for row in lay_out_line(narrow, BLANK, columns, BLANK)[0]]
        width = narrow_line_width(narrow, columns)
        assert rows_for_width(width, columns) == len(rendered)
        assert width == sum(rendered) and rendered[:-1] == [columns] * (len(rendered) - 1), repr(narrow)


def test_block_geometry_lists_only_irregular_lines() -> None:
    text = "plain\r\n\tindented\r\nwide 中\r\né─\r\n" + "y" * 85 + "\t\r\n" + "é" * 85 + "\r\n"
    geometry = block_geometry(text, has_sgr=False, columns=80)
    assert geometry.widths[:2] + geometry.widths[3:] == [5, 16, 2, 85, 85]
    # Wide characters, and UTF-8 text over several rows: each row's size in bytes.
    assert geometry.irregular == {2: (5 + 3,), 5: (80 * 2, 5 * 2)}
    assert geometry.text_sizes == [5, 16, 8, 2 + 3, 85, 170]
    assert geometry.row_counts(80) == [1, 1, 1, 1, 2, 2]


@pytest.mark.parametrize("columns", [9, 30])
def test_lay_out_line_matches_a_screen(columns: int) -> None:
    rng = random.Random(columns + 100)
    for _ in range(60):
        line = "".join(rng.choice(streams.SGRS) if rng.random() < 0.2 else random_line(rng) for _ in range(3))
        rows, _attrs = lay_out_line(line, BLANK, columns, BLANK)
        emulator = Emulator(columns, len(rows) + 1, fast_paths=False)
        emulator.feed(line.encode())
        assert emulator.rows(0, len(rows) - 1) == rows, repr(line)


def test_the_odd_character_class_built_in_blocks_is_the_whole_scan() -> None:
    """table_steps scans the BMP block by block: runs across a block's end are joined, so the
    class is the one a single scan gives, and each regex matches exactly the odd characters."""
    from muxd.emulator import line_layout
    from muxd.emulator.widths import char_width

    for step in line_layout.table_steps():
        step()
    odd = [code for code in range(0xA0, 0x10000) if char_width(chr(code)) != 1]
    runs: list[list[int]] = []
    for code in odd:
        if runs and runs[-1][1] == code - 1:
            runs[-1][1] = code
        else:
            runs.append([code, code])
    runs.append([0x10000, 0x10FFFF])
    assert line_layout._odd_char_class() == "".join(f"\\U{a:08x}-\\U{b:08x}" for a, b in runs)
    matched = [code for code in range(0xA0, 0x10000) if line_layout._odd_char().match(chr(code))]
    assert matched == odd


@pytest.mark.parametrize("seed", range(30))
def test_strip_sgr_removes_what_the_regex_removes(seed: int) -> None:
    """strip_sgr replaces the SGR kinds it sees first: kinds met only later, many kinds, and
    sequences whose parameters look like others' (`1` and `01;31`) still come out as the
    regex takes them out."""
    rng = random.Random(seed)
    kinds = [f"\x1b[{params}m" for params in ("", "0", "1", "01;31", "31", "1;31", "38;5;200", "4", "48;2;1;2;3")]
    kinds += [f"\x1b[{n}m" for n in range(rng.choice([0, 20]))]  # sometimes more kinds than strip_sgr replaces
    pieces = ["word", " ", "m", "[1", ";", "31", "é", "中", "\r\n"]
    text = "".join(rng.choice(kinds[: rng.randint(1, len(kinds))]) if rng.random() < 0.3 else rng.choice(pieces)
                   for _ in range(rng.randint(0, 3 * SGR_SAMPLE_CHARS)))
    late = rng.choice(kinds) + "late" + rng.choice(kinds)  # a kind past the sample, maybe
    text = text + late if rng.random() < 0.5 else text
    assert strip_sgr(text) == SGR_SEQUENCE.sub("", text)
