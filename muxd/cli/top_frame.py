"""`muxd top`'s screen as lines of text: a title with the count of agents that need you, the
table of agents (top_board.py) fitted to the terminal's width, the selected row highlighted,
and a last line for keys or a message; or a page of text over it (an execution).

Pure and cheap on purpose: top redraws on every burst of events and each second, and rich's
Table costs ~20 ms a frame of 40 rows (2 % of a core at one frame a second, top's whole budget),
so the frame is laid out here, column widths as rich measures cells (plain_table.cell_width),
and styled with a few SGR sequences.
"""

from __future__ import annotations

from collections.abc import Sequence

from muxd.cli.colour import BOLD, BUSY_STYLE, NEED_STYLES, RESET
from muxd.cli.plain_table import COLUMN_GAP, cell_width
from muxd.cli.render import fit_table
from muxd.cli.top_board import BUSY_RANK, HEADINGS, AgentRow, need_counts
from muxd.terminal_text import visible

KEYS_HELP = "↑↓/jk select · Enter go to · y/n answer yes/no · e its execution · q quit"
PAGE_HELP = "↑↓/jk scroll · any other key: back"
# The steps that make the table fit a narrow terminal, in turn (render.fit_table takes them): what
# a person can do without goes first; the question or error is cut before the pane's place goes.
FITTING = (("drop", "EXEC"), ("drop", "COST"), ("drop", "TOKENS"), ("cut", "WHAT"), ("drop", "WHERE"),
           ("drop", "AGENT"), ("drop", "FOR"))
REVERSE = "\x1b[7m"


def frame_lines(rows: Sequence[AgentRow], selected: str | None, width: int, height: int, *,
                message: str | None = None, color: bool = True) -> list[str]:
    """The whole screen, `height` lines of at most `width` columns (`color`: with SGR styles)."""
    counts = need_counts(rows)
    needs = ", ".join(f"{n} {kind}" for kind, n in counts.items())
    title = f"muxd top · {len(rows)} agent{'s' if len(rows) != 1 else ''}" + (f" · {needs}" if needs else
                                                                                " · none needs you")
    lines = [_styled(_cut(title, width), BOLD, color)]
    if not rows:
        lines.append("no agents in any pane")
    else:
        headings, cells = fit_table(HEADINGS, [r.cells for r in rows], width, FITTING)
        body = max(1, height - 3)  # title, headings, last line
        at = next((n for n, r in enumerate(rows) if r.pane_id == selected), 0)
        top = max(0, min(at - body // 2, len(rows) - body))
        table = _lay_out(headings, cells)
        lines.append(_styled(_cut(table[0], width), BOLD, color))
        for n in range(top, min(len(rows), top + body)):
            row = rows[n]
            style = NEED_STYLES.get(row.need, "") or (BUSY_STYLE if row.rank == BUSY_RANK else "")
            text = _cut(table[n + 1], width)
            if n == at and selected is not None:  # a bar across the whole width
                style += REVERSE
                text += " " * (width - cell_width(text))
            lines.append(_styled(text, style, color))
    while len(lines) < height - 1:
        lines.append("")
    lines = lines[:max(0, height - 1)]
    lines.append(_cut(visible(message) if message else KEYS_HELP, width))
    return lines


def page_lines(text: Sequence[str], first: int, width: int, height: int) -> list[str]:
    """A page of `text` from line `first`, and the keys that scroll or leave it."""
    body = [_cut(visible(line), width) for line in text[first:first + height - 1]]
    return body + [""] * (height - 1 - len(body)) + [_cut(PAGE_HELP, width)]


def _lay_out(headings: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(map(cell_width, column)) for column in zip(headings, *rows)]
    return [COLUMN_GAP.join(cell + " " * (w - cell_width(cell)) for cell, w in zip(row, widths)).rstrip()
            for row in (headings, *rows)]


def _cut(text: str, width: int) -> str:
    """`text` in at most `width` columns, an ellipsis ending what was cut."""
    if cell_width(text) <= width:
        return text
    if text.isascii():
        return text[:max(0, width - 1)] + "…"
    kept, used = [], 0
    for char in text:
        used += cell_width(char)
        if used > width - 1:
            break
        kept.append(char)
    return "".join(kept) + "…"


def _styled(text: str, style: str, color: bool) -> str:
    return f"{style}{text}{RESET}" if color and style else text
