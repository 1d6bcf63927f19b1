"""The opaque `cursor` of read_pane: where a caller's last read ended, so the next gets only new lines.

A cursor records the pane, how many lines (scrollback + screen, trailing blank rows cut)
the pane had, and short hashes of the last two of them (the anchor). The next read finds
the anchor again:
- at the same place: the lines after it are new;
- the last line changed but the one before did not (a prompt that got typed on): that
  line is returned again, with the ones after it;
- earlier (the oldest scrollback was dropped to stay within its byte cap): found by
  searching back for the anchor;
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

from muxd.errors import BadRequest

CURSOR_VERSION = 1
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


def make_cursor(pane_id: str, lines: list[str]) -> str:
    """An opaque cursor marking the end of `lines` (a full capture of `pane_id`)."""
    count = len(lines)
    state = {"v": CURSOR_VERSION, "p": pane_id, "n": count,
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


def lines_since(cursor: str, pane_id: str, lines: list[str]) -> Since:
    """The part of `lines` (a full capture of `pane_id`) that `cursor` has not seen."""
    state = _decode(cursor)
    if state.get("p") != pane_id:
        raise BadRequest(f"cursor belongs to pane {state.get('p')}, not {pane_id}", field="cursor")
    count, last, before = state["n"], state.get("a"), state.get("b")
    assert isinstance(count, int)
    if count == 0:
        return Since(lines, redrawn=False)

    def anchored(i: int) -> bool:  # does the anchor's last line sit at index i?
        return (0 <= i < len(lines) and _digest(lines[i]) == last
                and (i == 0 and before == "" or i > 0 and _digest(lines[i - 1]) == before))

    if anchored(count - 1):
        return Since(lines[count:], redrawn=False)
    if count == 1 and lines or count >= 2 and count - 2 < len(lines) and _digest(lines[count - 2]) == before:
        return Since(lines[count - 1:], redrawn=False, repeated_last_line=True)
    for i in range(min(count - 2, len(lines) - 1), max(-1, count - 2 - ANCHOR_SEARCH_MAX_LINES), -1):
        if anchored(i):
            return Since(lines[i + 1:], redrawn=False)
    return Since([], redrawn=True)
