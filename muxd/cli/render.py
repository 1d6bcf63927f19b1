"""Human and machine output of the CLI. rich is imported only for a table plain_table declines."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence

from muxd.cli.colour import NEED_STYLES, STATE_STYLES, styled
from muxd.cli.plain_table import COLUMN_GAP, PIPED_TABLE_WIDTH, cell_width, table_lines, table_width, write_table
from muxd.terminal_text import visible
from muxd.units import duration, tokens  # the CLI's commands take them from here too

TYPE_CHECKING = False  # typing (~2 ms to import) only for the type checker: see cli/table.py
if TYPE_CHECKING:
    from typing import Any

    from muxd.protocol.pane_messages import PaneInfo


def state_for(p: PaneInfo) -> str:
    since = p.agent.activity.since
    return "" if since is None or p.agent.agent_type is None else duration(time.time() - since)


def pane_status(p: PaneInfo) -> str:
    """The STATUS cell: `running`, `exited (1)`, and `, screen frozen` once the emulator failed."""
    status = p.status if p.exit_code is None else f"{p.status} ({p.exit_code})"
    return status + ", screen frozen" if p.emulator_failed else status


def pane_command(p: PaneInfo) -> str:
    """The COMMAND cell: the program, after the tmux pane it runs in for a pane adopted from tmux."""
    command = " ".join(p.command)
    return command if p.source == "muxd" else f"[{p.source}] {command}"


# The pane table's columns: heading and how to show the PaneInfo field(s) behind it.
PANE_COLUMNS: list[tuple[str, Callable[[PaneInfo], str]]] = [
    ("SESSION", lambda p: p.session),
    ("WINDOW", lambda p: f"{p.window}:{p.window_name}"),
    ("PANE", lambda p: f"{p.id}" + ("*" if p.active else "")),
    ("NAME", lambda p: p.name or ""),
    ("COMMAND", pane_command),
    ("PID", lambda p: "" if p.pid is None else str(p.pid)),
    ("STATUS", pane_status),
    ("AGENT", lambda p: p.agent.agent_type or ""),
    ("STATE", lambda p: p.agent.activity.state if p.agent.agent_type else ""),
    ("FOR", state_for),
    ("DOING", lambda p: p.agent.activity.description or ""),
    ("TOKENS", lambda p: tokens(p.agent.session.tokens_used)),
    ("SIZE", lambda p: f"{p.width}x{p.height}"),
    ("CWD", lambda p: p.cwd or ""),
]


def print_json(value: Any) -> None:
    import msgspec

    sys.stdout.write(msgspec.json.format(msgspec.json.encode(value), indent=2).decode() + "\n")


def print_json_line(value: Any) -> None:
    """`value` as one line of JSON (a stream of records, as `replay --json` prints)."""
    import msgspec

    sys.stdout.write(msgspec.json.encode(value).decode() + "\n")


def print_line(text: str) -> None:
    """One line of text that holds anything from a pane or a client: control characters and
    bidirectional overrides are shown as escapes, never sent to the terminal."""
    print(visible(text))


def print_table(headings: Sequence[str], rows: Sequence[Sequence[str]], *, title: str | None = None,
                styles: Sequence[Sequence[str]] | None = None) -> None:
    """`styles`: an SGR style for each cell ("" for none), given only when colour is wanted (cli/colour.py)."""
    # Control characters (a name holding ESC ] 52 would write the reader's clipboard) are shown as escapes.
    cells = [[visible(cell) for cell in row] for row in rows]
    if title is None and write_table(headings, cells, styles):
        return
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table(title=title, box=None, header_style="bold", pad_edge=False)
    for heading in headings:
        table.add_column(heading, overflow="fold")
    for at, row in enumerate(cells):  # plain Text: a name like "[link=…]" is not rich markup
        table.add_row(*(Text.from_ansi(styled(cell, styles[at][n])) if styles and styles[at][n] else Text(cell)
                        for n, cell in enumerate(row)))
    width = None if sys.stdout.isatty() else PIPED_TABLE_WIDTH
    Console(soft_wrap=False, width=width, force_terminal=True if styles else None,
            no_color=False if styles else None).print(table)


FIELD_INDENT_CHARS = 2  # a field's value under its name, on a terminal too narrow for both


def print_fields(rows: Sequence[Sequence[str]]) -> None:
    """One record as FIELD VALUE rows (those with a value). On a terminal too narrow for them side
    by side, each field's value goes under its name, indented, wrapped at spaces only: an id is
    never split across lines (a UUID fits in 40 columns)."""
    rows = [(label, value) for label, value in rows if value]
    width = table_width()
    shown = [(label, visible(value)) for label, value in rows]
    if not sys.stdout.isatty() or table_lines(["FIELD", "VALUE"], shown, width) is not None:
        print_table(["FIELD", "VALUE"], rows)
        return
    import textwrap

    for label, value in shown:
        print(label)
        for line in value.splitlines() or [""]:
            for part in textwrap.wrap(line, max(width - FIELD_INDENT_CHARS, 1), break_on_hyphens=False) or [""]:
                print(" " * FIELD_INDENT_CHARS + part)



# On a terminal too narrow for every column (80 columns, a split), `ls` takes these steps in turn
# until the table fits: drop a column, or cut a column's cells (with an ellipsis). What is left
# tells the panes apart and what their agents do.
PANE_TABLE_FITTING = (
    ("drop", "CWD"), ("drop", "PID"), ("drop", "SIZE"), ("drop", "TOKENS"), ("drop", "FOR"), ("drop", "NAME"),
    ("cut", "DOING"), ("cut", "COMMAND"), ("drop", "COMMAND"), ("drop", "WINDOW"), ("drop", "AGENT"),
)
CUT_CELL_MIN = 12  # characters a cut cell keeps, ellipsis included


def print_panes(panes: Sequence[PaneInfo], *, color: bool = False, hosts: Sequence[str] | None = None) -> None:
    """The pane table (`color`: its STATE and STATUS cells styled, cli/colour.py); `hosts`: a
    HOST column first, one cell per pane (`muxd ls --all-hosts`)."""
    if not panes:
        print("no panes")
        return
    headings = [h for h, _ in PANE_COLUMNS]
    rows = [[visible(show(p)) for _, show in PANE_COLUMNS] for p in panes]
    if hosts is not None:
        headings, rows = ["HOST", *headings], [[visible(host), *row] for host, row in zip(hosts, rows)]
    if sys.stdout.isatty():  # piped output stays complete, for scripts and greps
        headings, rows = fit_table(headings, rows, table_width())
    styles = [[cell_style(heading, p) for heading in headings] for p in panes] if color else None
    print_table(headings, rows, styles=styles)


def cell_style(heading: str, p: PaneInfo) -> str:
    """The SGR style of a pane's cell: its agent's state by what it needs; a failed pane red."""
    if heading == "STATE" and p.agent.agent_type:
        return STATE_STYLES.get(p.agent.activity.state, "")
    if heading == "STATUS" and (p.emulator_failed or p.exit_code not in (None, 0)):
        return NEED_STYLES["failed"]
    return ""


def fit_table(headings: Sequence[str], rows: Sequence[Sequence[str]], width: int,
              steps: Sequence[tuple[str, str]] = PANE_TABLE_FITTING) -> tuple[list[str], list[list[str]]]:
    """A table within `width` columns: columns empty in every row go, then `steps` (by default
    the pane table's, PANE_TABLE_FITTING) are taken until it fits (rich folds what still does not).
    A column cut before a later step dropped another gets back the room that one left."""
    fitted, cells = list(headings), [list(row) for row in rows]
    whole: dict[str, list[str]] = {}  # a cut column's cells before the cut

    def drop(heading: str) -> None:
        at = fitted.index(heading)
        del fitted[at]
        for row in cells:
            del row[at]

    def excess() -> int:
        widths = [max(map(cell_width, column)) for column in zip(fitted, *cells)]
        return sum(widths) + len(COLUMN_GAP) * (len(widths) - 1) - width

    for at in reversed(range(len(fitted))):
        if not any(row[at] for row in cells):
            drop(fitted[at])
    for step, heading in steps:
        if excess() <= 0:
            break
        if heading not in fitted:
            continue
        if step == "drop":
            drop(heading)
            continue
        at = fitted.index(heading)
        whole.setdefault(heading, [row[at] for row in cells])
        keep = max(CUT_CELL_MIN, len(heading), max(cell_width(row[at]) for row in cells) - excess())
        for row in cells:
            row[at] = one_line(row[at], keep)
    for heading, cut in whole.items():  # in the order cut: the first cut is the first to grow back
        if heading in fitted and excess() < 0:
            at = fitted.index(heading)
            keep = max(cell_width(row[at]) for row in cells) - excess()
            for row, text in zip(cells, cut):
                row[at] = one_line(text, keep)
    return fitted, cells


def print_fitted(headings: Sequence[str], rows: Sequence[Sequence[str]], steps: Sequence[tuple[str, str]], *,
                 title: str | None = None) -> None:
    """print_table, on a terminal first fitted to its width by `steps` (fit_table); piped, whole."""
    if sys.stdout.isatty():
        cells = [[visible(cell) for cell in row] for row in rows]
        headings, rows = fit_table(headings, cells, table_width(), steps)
    print_table(headings, rows, title=title)


def one_line(text: str | None, width: int) -> str:
    """`text` on one line, cut to `width` characters (the last one an ellipsis) for a table cell."""
    line = (text or "").replace("\n", " ")
    return line if len(line) <= width else line[:width - 1] + "…"


def age(created_at: float) -> str:
    return duration(time.time() - created_at)
