"""The bottom of a Codex CLI screen: the `›` composer row (the last one with only footer
rows under it), the draft typed in it, and the footer under it (the model, the context left)."""

from __future__ import annotations

from collections.abc import Sequence

from muxd.detectors._agent_cli import is_option
from muxd.detectors._lazy_re import lazy_compile
from muxd.detectors._text import LineMemo, join_input_rows

# Rows below the composer: footer lines, a popup; and the rest of a draft of several lines.
FOOTER_ROWS_MAX = 6
DRAFT_ROWS_MAX = 8
COMPOSER_INDENT = "  "  # the rows of a draft after the `› ` row
# What Codex shows (dimmed) in an empty composer; earlier versions picked one of the examples.
_PLACEHOLDER = lazy_compile(
    r"^(?:Ask Codex to do anything|Ask a follow-up question|Explain this codebase|Summarize recent commits"
    r"|Implement \{feature\}|Find and fix a bug in @filename|Write tests for @filename"
    r"|Improve documentation in @filename|Run /review on my current changes|Use /skills to list available skills)$")
COMPOSER = lazy_compile(r"^›(?: (?P<text>.*))?$")
_FOOTER = lazy_compile(r"^\s{2,}\S")
POPUP_ROW = lazy_compile(r"^[› ] [/@]\S+\s{2,}\S")
_CONTEXT_LEFT = lazy_compile(r"(?P<pct>\d{1,3})% context left")
_MODEL_TOKEN = lazy_compile(r"^(?=[\w.\-:/]*[A-Za-z])(?=[\w.\-:/]*[\d-])[A-Za-z][\w.\-:/]*$")


def composer_row(lines: Sequence[str]) -> int | None:
    """Row of the `›` composer: the last `›` row with only footer-like rows below it."""
    below = 0
    kinds = _COMPOSER_KINDS
    for row in range(len(lines) - 1, -1, -1):
        kind = kinds[lines[row]]
        if kind == "blank":
            continue
        if kind == "composer":
            return row
        if kind != "below":
            return None
        below += 1
        if below > FOOTER_ROWS_MAX + DRAFT_ROWS_MAX:
            return None
    return None


def _composer_kind(line: str) -> str:
    """What a row is to composer_row: "blank", "composer", "below" (a footer or popup row) or "other"."""
    if not line.strip():
        return "blank"
    if COMPOSER.match(line) and not is_option(line) and not POPUP_ROW.match(line):
        return "composer"
    return "below" if _FOOTER.match(line) or POPUP_ROW.match(line) else "other"


def draft(lines: Sequence[str], composer: int, columns: int) -> str | None:
    """The text typed in the composer: its `› ` row and the indented rows under it, up to the
    blank row above the footer; None when it is empty or shows its placeholder."""
    rows = [COMPOSER.match(lines[composer]).group("text") or ""]  # type: ignore[union-attr]
    for line in lines[composer + 1:composer + 1 + DRAFT_ROWS_MAX]:
        if not line.strip() or POPUP_ROW.match(line):
            break
        rows.append(line.removeprefix(COMPOSER_INDENT))
    text = join_input_rows(rows, columns - len(COMPOSER_INDENT))
    return None if text is None or _PLACEHOLDER.match(text) else text


def footer(lines: Sequence[str], composer: int | None) -> tuple[str | None, float | None]:
    """(model, context left %) from the footer under the composer."""
    if composer is None:
        return None, None
    model: str | None = None
    context_left: float | None = None
    footers = _FOOTER_ROWS
    for line in lines[composer + 1:]:
        row_model, row_left = footers[line]
        if context_left is None:
            context_left = row_left
        if model is None:
            model = row_model
    return model, context_left


def _footer_row(line: str) -> tuple[str | None, float | None]:
    """(the model, the context left %) one footer row shows (Nones for a row that is not footer)."""
    if not line.strip() or not _FOOTER.match(line):
        return None, None
    first_segment = line.strip().split(" · ")[0].strip()
    match = _CONTEXT_LEFT.search(line)
    first = first_segment.split()
    model = None
    if first and _MODEL_TOKEN.match(first[0]) and "used" not in first_segment and "left" not in first_segment:
        model = first[0]
    return model, float(match.group("pct")) if match else None


# By row text: the rows around the composer are read on every look.
_COMPOSER_KINDS = LineMemo(_composer_kind)
_FOOTER_ROWS = LineMemo(_footer_row)
