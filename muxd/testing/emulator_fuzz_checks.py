"""The daemon's reads of an emulator, each checked against what every backend promises.

`READ_CHECKS[name](emulator, expect, *args)` does one read the way the daemon does it
(detection, capture-pane, attach, list-panes) and raises `Broken` when the answer breaks an
invariant: the screen has `lines` rows of plain text, the cursor is on the screen, `capture`
prints one line per row of `span()`, its escaped form is its plain form plus SGR, changed rows
are real rows and a second look finds none, running counts never go back. Each invariant has
a name (`Broken.invariant`), so a run can set known divergences apart (`allowed`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .emulator_fuzz_cases import clamp_size


class Broken(AssertionError):
    """An emulator's answer broke the invariant named `invariant`."""

    def __init__(self, invariant: str, message: str) -> None:
        super().__init__(message)
        self.invariant = invariant


@dataclass
class Expect:
    """What the fuzzer knows an emulator must show: its size, and running values seen so far."""

    columns: int
    lines: int
    scrollback_bytes: int
    version: int = -1        # the last changed_rows version
    rows_scrolled: int = 0
    bell_count: int = 0

    def resized(self, columns: int, lines: int) -> None:
        self.columns, self.lines = clamp_size(columns, lines)


# Characters no screen text may hold: C0 controls (the newline only between lines), DEL and C1.
# A program that writes them moves the cursor; one that lands in a cell would reach whoever
# prints a capture as a live control sequence.
_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]")
_SGR = re.compile("\x1b\\[[0-9;:]*m")


def check(condition: object, invariant: str, message: str) -> None:
    if not condition:
        raise Broken(invariant, message)


def difference(a: str, b: str) -> str:
    """Where `a` and `b` first differ, shown with escapes (the difference is often invisible)."""
    at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return f"at character {at}: {ascii(a[max(0, at - 20):at + 40])} vs {ascii(b[max(0, at - 20):at + 40])}"


def _plain_text(text: str, what: str) -> None:
    found = _CONTROL.search(text)
    if found is not None:  # named by the character, so that one can be set apart (--allow)
        raise Broken(f"control-character-U+{ord(found.group()):04X}",
                     f"{what} holds control character {ascii(found.group())}: {ascii(text[:200])}")


def _size(emulator: Any, expect: Expect) -> None:
    check((emulator.columns, emulator.lines) == (expect.columns, expect.lines), "size",
          f"size {emulator.columns}x{emulator.lines}, expected {expect.columns}x{expect.lines}")


def display_lines(emulator: Any, expect: Expect) -> None:
    _size(emulator, expect)
    shown = emulator.display_lines()
    check(isinstance(shown, list) and len(shown) == expect.lines, "display-lines",
          f"display_lines() gave {len(shown)} rows on a {expect.lines}-line screen")
    for y, line in enumerate(shown):
        check(isinstance(line, str) and line == line.rstrip(" "), "display-lines",
              f"display_lines()[{y}] is not a str without trailing spaces: {line!r}")
    for y, line in enumerate(shown):
        _plain_text(line, f"display_lines()[{y}]")


def changed_rows(emulator: Any, expect: Expect, since: str) -> None:
    asked = -1 if since == "all" else expect.version
    version, rows = emulator.changed_rows(asked)
    check(version >= expect.version, "changed-rows", f"changed_rows version went back: {expect.version} -> {version}")
    check(rows == sorted(set(rows)) and all(0 <= y < expect.lines for y in rows), "changed-rows",
          f"changed_rows({asked}) gave rows outside 0..{expect.lines - 1} or out of order: {rows[:20]}")
    if asked == -1:
        check(rows == list(range(expect.lines)), "changed-rows",
              f"changed_rows(-1) gave {len(rows)} of {expect.lines} rows")
    again, rows_again = emulator.changed_rows(version)
    check(again == version and not rows_again, "changed-rows",
          f"changed_rows({version}) right after found rows {rows_again[:20]} (version {again})")
    expect.version = version


def _rows_in_span(emulator: Any, expect: Expect, start: int | None, end: int | None) -> int:
    first, last = emulator.span(start, end)
    history = emulator.history_size
    check(-history <= first <= last <= expect.lines - 1, "span",
          f"span({start}, {end}) = ({first}, {last}) outside -{history}..{expect.lines - 1}")
    return last - first + 1


def span(emulator: Any, expect: Expect, start: int | None, end: int | None) -> None:
    _rows_in_span(emulator, expect, start, end)


def capture(emulator: Any, expect: Expect, start: int | None, end: int | None, escapes: bool,
            join_wrapped: bool) -> None:
    count = _rows_in_span(emulator, expect, start, end)
    text = emulator.capture(start, end, escapes=escapes, join_wrapped=join_wrapped)
    what = f"capture({start}, {end}, escapes={escapes}, join_wrapped={join_wrapped})"
    check(isinstance(text, str) and text.endswith("\n"), "capture-lines",
          f"{what} does not end in a newline: {text[-40:]!r}")
    lines = text.count("\n")
    check(1 <= lines <= count if join_wrapped else lines == count, "capture-lines",
          f"{what} printed {lines} lines for {count} rows")
    if escapes:
        plain = emulator.capture(start, end, join_wrapped=join_wrapped)
        stripped = _SGR.sub("", text)
        check(stripped == plain, "capture-escapes",
              f"{what} without its SGR differs from the plain capture {difference(stripped, plain)}")
    else:
        _plain_text(text.replace("\n", ""), what)


def rows(emulator: Any, expect: Expect, start: int | None, end: int | None) -> None:
    count = _rows_in_span(emulator, expect, start, end)
    got = emulator.rows(start, end)
    check(len(got) == count, "rows", f"rows({start}, {end}) gave {len(got)} rows, span() says {count}")
    for index, row in enumerate(got):
        check(isinstance(row.text, str) and isinstance(row.wrapped, bool), "rows", f"rows()[{index}] is {row!r}")
        runs = row.runs
        if runs:
            counts = runs[1::2]
            check(len(runs) % 2 == 0 and all(isinstance(n, int) and n > 0 for n in counts)
                  and sum(counts) == len(row.text), "rows",
                  f"rows()[{index}] style runs {runs!r} do not cover {row.text!r}")
    for index, row in enumerate(got):
        _plain_text(row.text, f"rows({start}, {end})[{index}]")


def row_cells(emulator: Any, expect: Expect, y: int) -> None:
    cells = emulator.row_cells(y)
    check(len(cells) == expect.columns, "row-cells",
          f"row_cells({y}) gave {len(cells)} cells on a {expect.columns}-column screen")
    check(all(isinstance(cell.data, str) for cell in cells), "row-cells", f"row_cells({y}) holds a non-str")
    for x, cell in enumerate(cells):
        _plain_text(cell.data, f"row_cells({y})[{x}]")


def cursor(emulator: Any, expect: Expect) -> None:
    x, y = emulator.cursor
    check(0 <= x < expect.columns and 0 <= y < expect.lines, "cursor",
          f"cursor ({x}, {y}) off a {expect.columns}x{expect.lines} screen")


def cursor_visible(emulator: Any, expect: Expect) -> None:
    check(isinstance(emulator.cursor_visible, bool), "types", "cursor_visible is not a bool")


def private_modes(emulator: Any, expect: Expect) -> None:
    modes = emulator.private_modes
    check(isinstance(modes, frozenset) and all(isinstance(m, int) and m > 0 for m in modes), "types",
          f"private_modes is {modes!r}")


def title(emulator: Any, expect: Expect) -> None:
    check(isinstance(emulator.title, str), "types", f"title is {type(emulator.title).__name__}")


def alternate_screen(emulator: Any, expect: Expect) -> None:
    check(isinstance(emulator.alternate_screen, bool), "types", "alternate_screen is not a bool")


def history(emulator: Any, expect: Expect) -> None:
    size, scrolled, size_bytes = emulator.history_size, emulator.rows_scrolled, emulator.history_bytes
    check(size >= 0 and size_bytes >= 0, "running-counts", f"history_size {size}, history_bytes {size_bytes}")
    check(scrolled >= expect.rows_scrolled, "running-counts",
          f"rows_scrolled went back: {expect.rows_scrolled} -> {scrolled}")
    expect.rows_scrolled = scrolled


def bell_count(emulator: Any, expect: Expect) -> None:
    count = emulator.bell_count
    check(count >= expect.bell_count, "running-counts", f"bell_count went back: {expect.bell_count} -> {count}")
    expect.bell_count = count


def agreement(emulator: Any, expect: Expect, compared: int) -> None:
    """What detectors read (display_lines) is what capture-pane prints, row for row."""
    shown = emulator.display_lines()[:compared]
    captured = emulator.capture(0, compared - 1).split("\n")[:compared]
    for y, (a, b) in enumerate(zip(shown, captured)):
        check(a == b, "display-agrees-with-capture",
              f"row {y}: display_lines() and capture() differ {difference(a, b)}")


READ_CHECKS: dict[str, Callable[..., None]] = {
    "display_lines": display_lines, "changed_rows": changed_rows, "capture": capture, "rows": rows,
    "span": span, "row_cells": row_cells, "cursor": cursor, "cursor_visible": cursor_visible,
    "private_modes": private_modes, "title": title, "alternate_screen": alternate_screen,
    "history": history, "bell_count": bell_count, "agreement": agreement,
}
