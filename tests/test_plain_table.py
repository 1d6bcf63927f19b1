"""Tables written without rich are the bytes rich writes; what they cannot do is left to rich."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from rich.table import Table
from rich.text import Text

from muxd.cli import plain_table
from muxd.cli.plain_table import PIPED_TABLE_WIDTH, table_lines, write_table

HEADINGS = ["SESSION", "PANE", "DOING", "CWD"]
ROWS = {
    "ascii": [["work", "%0*", "", "/home/me"], ["a-much-longer-name", "%12", "Thinking", "/"]],
    "no rows": [],
    "wide and combining": [["日本語", "%1", "✻ Gusting…", "/tmp/café"], ["e\u0301", "%2", "🙂 done", "~"]],
    "escaped controls": [["\\x1b]52;c;", "%3", "\\u202e", ""]],
}


def rich_writes(headings: list[str], rows: list[list[str]], width: int) -> str:
    """What render.print_table asks rich to write, captured."""
    out = io.StringIO()
    table = Table(box=None, header_style="bold", pad_edge=False)
    for heading in headings:
        table.add_column(heading, overflow="fold")
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))
    Console(file=out, soft_wrap=False, width=width).print(table)
    return out.getvalue()


@pytest.mark.parametrize("rows", ROWS.values(), ids=ROWS.keys())
def test_the_lines_are_richs(rows):
    lines = table_lines(HEADINGS, rows, PIPED_TABLE_WIDTH)
    assert lines is not None
    assert "".join(line + "\n" for line in lines) == rich_writes(HEADINGS, rows, PIPED_TABLE_WIDTH)


def test_a_table_wider_than_the_width_is_left_to_rich():
    rows = ROWS["ascii"]
    exact = len(table_lines(HEADINGS, rows, PIPED_TABLE_WIDTH)[0])
    assert table_lines(HEADINGS, rows, exact) is not None
    assert table_lines(HEADINGS, rows, exact - 1) is None


def test_written_to_a_pipe_as_rich_would(capsys, monkeypatch):
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    assert write_table(HEADINGS, ROWS["ascii"])
    assert capsys.readouterr().out == rich_writes(HEADINGS, ROWS["ascii"], PIPED_TABLE_WIDTH)


@pytest.mark.parametrize("variable", ["FORCE_COLOR", "TTY_COMPATIBLE"])
def test_rich_decides_when_told_what_the_terminal_is(capsys, monkeypatch, variable):
    monkeypatch.setenv(variable, "1")
    assert not write_table(HEADINGS, ROWS["ascii"])
    assert capsys.readouterr().out == ""


def test_a_terminal_gets_bold_headings_in_its_width(capsys, monkeypatch):
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setattr(plain_table.sys.stdout, "isatty", lambda: True)
    assert write_table(HEADINGS, ROWS["ascii"])
    first, *rest = capsys.readouterr().out.splitlines()
    assert first.startswith("\x1b[1mSESSION ") and first.endswith("\x1b[0m")
    assert rest == table_lines(HEADINGS, ROWS["ascii"], 200)[1:]
    monkeypatch.setenv("COLUMNS", "20")  # too narrow: rich folds the cells
    assert not write_table(HEADINGS, ROWS["ascii"])
    monkeypatch.setenv("TERM", "dumb")
    monkeypatch.setenv("COLUMNS", "200")
    assert not write_table(HEADINGS, ROWS["ascii"])
