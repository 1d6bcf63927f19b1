"""Claude Code's usage limit on screen: `limit_shown` reads the limit that ended the current turn.

What Claude Code 2.1.330 draws (tests/detector_data/usage_limits/claude/):

    ❯ hello there
      ⎿  You've hit your 5-hour limit · resets 9:21pm (UTC)          <- a plan's limit

    ● Usage limit reached · set to continue automatically at 9:21pm  <- its own auto-continue
    ──────────────────────────────────
    ❯
    ──────────────────────────────────
      ⚠ Usage limit reached · limit resets 9:21pm                    <- footer, while it waits
        Continuing automatically at 9:21pm · Esc to cancel

or, for an API key's rate limit, `● API Error: Request rejected (429) · Rate limited` as the
turn's last block; for a weekly limit, the same `⎿` row over a "What do you want to do?" dialog.
Once the limit lifts it writes `● Usage limit reset · Continuing automatically` and a new turn
runs: a limit row is believed only as the last thing the turn drew (its own note aside).
"""

from __future__ import annotations

from collections.abc import Sequence

from muxd.detectors._lazy_re import lazy_compile
from muxd.detectors.claude_screen import is_rule
from muxd.detectors.usage_limits import usage_limit
from muxd.detectors.state import UsageLimit

# Non-blank rows looked at above the box (or the dialog) for the limit that ended the turn.
LIMIT_SCAN_ROWS = 6

# `⎿  You've hit your 5-hour limit · resets 9:21pm (UTC)`, `● API Error: Request rejected (429) · …`.
_LIMIT_ROW = lazy_compile(r"^(?:⎿|[●⏺])\s+(?P<text>(?:You['’]ve hit your|API Error\b|Usage limit reached\b).*)$")
# Claude's own note after the limit: `● Usage limit reached · set to continue automatically at 9:21pm`.
_NOTE = lazy_compile(r"^[●⏺]\s+Usage limit reached\b")
_FOOTER = lazy_compile(r"^⚠\s+(?P<text>Usage limit reached\b.*)$")


def limit_shown(lines: Sequence[str], start: int, end: int, footer: Sequence[str], now: float) -> UsageLimit | None:
    """The limit that ended the turn drawn in rows start..end-1 (the turn, up to the prompt box
    or a dialog), with its reset; or the limit Claude's footer says it waits on. None: the turn
    did not end on a limit."""
    waiting = next((match.group("text") for match in map(_FOOTER.match, footer) if match), None)
    note: str | None = None
    seen = 0
    for row in range(end - 1, max(start, 0) - 1, -1):
        line = lines[row].strip()
        if not line or is_rule(lines[row]) or set(line) <= {"▔"}:
            continue
        seen += 1
        if seen > LIMIT_SCAN_ROWS:
            break
        match = _LIMIT_ROW.match(line)
        if match is None:
            if lines[row][:1].isspace() and not line.startswith(("⎿", "❯")):
                continue  # the wrapped rest of a row above
            break
        text = _joined(lines, row, end, match.group("text"))
        if _NOTE.match(line):
            note = note or text
            continue
        return usage_limit(text, now, waiting, note)
    told = waiting or note
    return usage_limit(told, now, waiting, note) if told else None


def _joined(lines: Sequence[str], row: int, end: int, text: str) -> str:
    """`text` with the rows its line wrapped onto (indented, up to a blank row or another block)."""
    parts = [text]
    for line in lines[row + 1:end]:
        stripped = line.strip()
        if not stripped or not line[:1].isspace() or stripped.startswith(("⎿", "●", "⏺", "❯")):
            break
        parts.append(stripped)
    return " ".join(parts)

