"""Human and machine output of the CLI. rich is imported only when a table is drawn."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from muxd.protocol.messages import PaneInfo

# The pane table's columns: heading and how to show the PaneInfo field(s) behind it.
PANE_COLUMNS: list[tuple[str, Callable[[PaneInfo], str]]] = [
    ("SESSION", lambda p: p.session),
    ("WINDOW", lambda p: f"{p.window}:{p.window_name}"),
    ("PANE", lambda p: f"{p.id}" + ("*" if p.active else "")),
    ("NAME", lambda p: p.name or ""),
    ("COMMAND", lambda p: " ".join(p.command)),
    ("PID", lambda p: "" if p.pid is None else str(p.pid)),
    ("STATUS", lambda p: p.status if p.exit_code is None else f"{p.status} ({p.exit_code})"),
    ("SIZE", lambda p: f"{p.width}x{p.height}"),
    ("CWD", lambda p: p.cwd or ""),
    ("TITLE", lambda p: p.title),
]


def print_json(value: Any) -> None:
    sys.stdout.write(msgspec.json.format(msgspec.json.encode(value), indent=2).decode() + "\n")


def print_table(headings: Sequence[str], rows: Sequence[Sequence[str]], *, title: str | None = None) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, box=None, header_style="bold", pad_edge=False)
    for heading in headings:
        table.add_column(heading, overflow="fold")
    for row in rows:
        table.add_row(*row)
    Console(soft_wrap=False).print(table)


def print_panes(panes: Sequence[PaneInfo]) -> None:
    if not panes:
        print("no panes")
        return
    print_table([h for h, _ in PANE_COLUMNS], [[show(p) for _, show in PANE_COLUMNS] for p in panes])


def age(created_at: float) -> str:
    seconds = max(0, int(time.time() - created_at))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"
