"""Rendering compact rows as text, the way `tmux capture-pane -p [-e] [-J]` prints them."""

from __future__ import annotations

from typing import Iterable

from .rows import Row
from .cell import DEFAULT_STYLE, Style
from .sgr import SGR_RESET, sgr_transition


def render_rows(rows: Iterable[Row], *, escapes: bool = False, join_wrapped: bool = False) -> str:
    """One line per row (or per soft-wrapped run of rows), each ending in "\\n".

    Trailing spaces are stripped per line, except at a wrap point when joining (they are
    content there). With `escapes`, each line starts from default attributes, SGR sequences
    mark only changes, and a line that ends with non-default attributes gets a reset.
    """
    out: list[str] = []
    pieces: list[str] = []
    style: Style = DEFAULT_STYLE
    open_line = False  # a soft-wrapped line is being joined (its rows may all be empty)
    for row in rows:
        joined = join_wrapped and row.wrapped
        text = row.text if joined else row.text.rstrip(" ")
        if escapes:
            style = _append_styled(pieces, row, len(text), style)
        else:
            pieces.append(text)
        open_line = joined
        if joined:
            continue
        if style != DEFAULT_STYLE:
            pieces.append(SGR_RESET)
            style = DEFAULT_STYLE
        out.append("".join(pieces))
        pieces.clear()
    if open_line:  # the range ended inside a soft-wrapped line
        if style != DEFAULT_STYLE:
            pieces.append(SGR_RESET)
        out.append("".join(pieces))
    return "".join(line + "\n" for line in out)


def _append_styled(pieces: list[str], row: Row, keep: int, style: Style) -> Style:
    """Append the first `keep` characters of `row` with SGR changes; return the final style."""
    text = row.text
    runs = row.runs or (DEFAULT_STYLE, len(text))
    position = 0
    for index in range(0, len(runs), 2):
        if position >= keep:
            break
        run_style, count = runs[index], runs[index + 1]
        segment = text[position : min(position + count, keep)]
        position += count
        if not segment:
            continue
        pieces.append(sgr_transition(style, run_style))
        pieces.append(segment)
        style = run_style
    return style
