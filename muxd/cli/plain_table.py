"""CLI tables written without rich, byte for byte as rich writes them, whenever that is simple: the
table fits the width and no environment variable changes how rich sees the terminal.

Importing rich costs ~17 ms, more than the rest of `muxd ls` together. It stays for the tables
this module declines: wider than the terminal (rich folds their cells), with a title, on a
dumb terminal or with FORCE_COLOR / TTY_COMPATIBLE set.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from muxd.cli.colour import BOLD, RESET, styled

PIPED_TABLE_WIDTH = 4096   # piped output is for scripts and greps: never fold it to an imagined 80 columns
TERMINAL_FALLBACK_WIDTH = 80
COLUMN_GAP = "  "          # rich's box=None, pad_edge=False: one space each side of a cell, none at the edges
_RICH_TERMINAL_VARIABLES = ("FORCE_COLOR", "TTY_COMPATIBLE")  # rich's own say on what is a terminal
_DUMB_TERMINALS = ("dumb", "unknown")


def table_width() -> int:
    """The width rich lays a table out in: the terminal's (rich's rules: $COLUMNS, else the size of
    stdin, stdout or stderr, else 80), or PIPED_TABLE_WIDTH when stdout is no terminal."""
    if not sys.stdout.isatty():
        return PIPED_TABLE_WIDTH
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit():
        return int(columns)
    for fd in (0, 1, 2):
        try:
            return os.get_terminal_size(fd).columns or TERMINAL_FALLBACK_WIDTH
        except (ValueError, OSError):
            continue
    return TERMINAL_FALLBACK_WIDTH


def cell_width(text: str) -> int:
    if text.isascii():  # control characters were escaped (terminal_text.visible): one column each
        return len(text)
    from rich.cells import cell_len  # wide and combining characters: measured as rich measures them

    return cell_len(text)


def table_lines(headings: Sequence[str], rows: Sequence[Sequence[str]], width: int,
                styles: Sequence[Sequence[str]] | None = None) -> list[str] | None:
    """The lines of the table (headings first), each cell padded to its column; None if wider than
    `width`. `styles`: an SGR style for each cell of `rows` ("" for none), around the text, not the padding."""
    widths = [[cell_width(cell) for cell in row] for row in (headings, *rows)]
    columns = [max(column) for column in zip(*widths)]
    if sum(columns) + len(COLUMN_GAP) * (len(columns) - 1) > width:
        return None
    plain = [[""] * len(headings)] * (len(rows) + 1)
    cell_styles = [plain[0], *styles] if styles is not None else plain
    return [COLUMN_GAP.join(styled(cell, style) + " " * (column - used)
                            for cell, style, used, column in zip(row, row_styles, row_widths, columns))
            for row, row_styles, row_widths in zip((headings, *rows), cell_styles, widths)]


def write_table(headings: Sequence[str], rows: Sequence[Sequence[str]],
                styles: Sequence[Sequence[str]] | None = None) -> bool:
    """Write the table to stdout as rich would and return True; False (nothing written) when only
    rich knows how. Cells must be safe to print (terminal_text.visible); `styles` as table_lines'."""
    if any(variable in os.environ for variable in _RICH_TERMINAL_VARIABLES):
        return False
    terminal = sys.stdout.isatty()
    if terminal and os.environ.get("TERM", "").lower() in _DUMB_TERMINALS:
        return False
    lines = table_lines(headings, rows, table_width(), styles)
    if lines is None:
        return False
    if terminal:  # rich shows the headings bold
        lines[0] = BOLD + lines[0] + RESET
    sys.stdout.write("".join(line + "\n" for line in lines))
    return True
