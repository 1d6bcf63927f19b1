"""The opaque `cursor` of read_pane: where a caller's last read ended, so the next gets only new lines.

A cursor records the pane, the running number of the row after the last line read (rows keep
their number as they scroll and as old scrollback is dropped: see Captured.first_row), and
short hashes of the last two lines (the anchor). The next read captures from the anchor on,
not the whole scrollback, and finds the anchor again:
- at the same place: the lines after it are new;
- the last line changed but the one before did not (a prompt that got typed on): that
  line is returned again, with the ones after it;
- earlier (the capture started elsewhere): found by searching back for the anchor;
- nowhere (the screen was cleared or redrawn, e.g. a full-screen TUI repainting): the read
  says `redrawn: true` and returns the screen's last lines, as a read without a cursor.
Limits: a TUI that redraws in place (most agent UIs) gives `redrawn` often, prefer
agent_summary there; two identical adjacent lines repeated further down can fool the
backward search into returning too little.
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass

from muxd.config import MAX_ROW_NUMBER
from muxd.errors import BadRequest

CURSOR_VERSION = 2
CURSOR_MAX_CHARS = 400
ANCHOR_SEARCH_MAX_LINES = 100_000


def _digest(line: str) -> str:
    return hashlib.sha256(line.encode()).hexdigest()[:12]


def content_lines(text: str) -> list[str]:
    """A capture's rows without the blank rows below the last output."""
    rows = text.split("\n")
    while rows and not rows[-1].strip():
        rows.pop()
    return rows


def make_cursor(pane_id: str, lines: list[str], first_row: int = 0) -> str:
    """An opaque cursor marking the end of `lines`, a capture of `pane_id` whose first line is
    row number `first_row`."""
    count = len(lines)
    state = {"v": CURSOR_VERSION, "p": pane_id, "n": first_row + count,
             "a": _digest(lines[-1]) if count else "", "b": _digest(lines[-2]) if count > 1 else ""}
    return base64.urlsafe_b64encode(json.dumps(state, separators=(",", ":")).encode()).decode().rstrip("=")


@dataclass(frozen=True)
class Since:
    """What is new since a cursor: `lines`, or `redrawn` when the anchor was lost."""

    lines: list[str]
    redrawn: bool
    repeated_last_line: bool = False


def _decode(cursor: str) -> dict[str, object]:
    if len(cursor) > CURSOR_MAX_CHARS:
        raise BadRequest("cursor is not one read_pane returned", field="cursor")
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        state = json.loads(raw)
        if not isinstance(state, dict) or state.get("v") != CURSOR_VERSION or not isinstance(state.get("n"), int):
            raise ValueError(state)
    except (ValueError, TypeError) as exc:
        raise BadRequest("cursor is not one read_pane returned", field="cursor") from exc
    return state


def cursor_end(cursor: str, pane_id: str) -> int:
    """The row number where the cursor's read ended (bad_request for a foreign or broken cursor)."""
    state = _decode(cursor)
    if state.get("p") != pane_id:
        raise BadRequest(f"cursor belongs to pane {state.get('p')}, not {pane_id}", field="cursor")
    end = state["n"]
    assert isinstance(end, int)
    if not 0 <= end <= MAX_ROW_NUMBER:
        raise BadRequest("cursor is not one read_pane returned", field="cursor")
    return end


def lines_since(cursor: str, pane_id: str, lines: list[str], first_row: int = 0) -> Since:
    """The part of `lines` (a capture of `pane_id` from row number `first_row` to the end of the
    screen) that `cursor` has not seen."""
    end = cursor_end(cursor, pane_id)
    state = _decode(cursor)
    last, before = state.get("a"), state.get("b")
    count = end - first_row  # where the cursor's read ended, as an index into `lines`
    if last == "":
        return Since(lines[max(0, count):], redrawn=False)

    def anchored(i: int) -> bool:  # does the anchor's last line sit at index i?
        if not (0 <= i < len(lines) and _digest(lines[i]) == last):
            return False
        # A one-line read has no line before its anchor: it must be where it was.
        return i == count - 1 if before == "" else i > 0 and _digest(lines[i - 1]) == before

    if anchored(count - 1):
        return Since(lines[count:], redrawn=False)
    # The last line read changed but the one before it did not: a prompt that got typed on.
    typed_on = (0 <= count - 1 < len(lines) if before == ""
                else 0 <= count - 2 < len(lines) and _digest(lines[count - 2]) == before)
    if typed_on:
        return Since(lines[count - 1:], redrawn=False, repeated_last_line=True)
    for i in range(min(count - 2, len(lines) - 1), max(-1, count - 2 - ANCHOR_SEARCH_MAX_LINES), -1):
        if anchored(i):
            return Since(lines[i + 1:], redrawn=False)
    return Since([], redrawn=True)
