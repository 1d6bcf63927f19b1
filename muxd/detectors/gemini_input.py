"""Gemini CLI's input box: the rule above it, the ` > ` composer row, the draft typed there,
and the model its footer shows under `/model`."""

from __future__ import annotations

import re
from collections.abc import Sequence

from muxd.detectors._lazy_re import lazy_compile
from muxd.detectors._text import LineMemo, join_input_rows

# Rows between the input box rule and the composer (hints such as "Shift+Tab to accept edits").
RULE_TO_COMPOSER_ROWS_MAX = 3
_RULE = lazy_compile(r"^\s*[─━]{20,}\s*$")
COMPOSER = lazy_compile(r"^\s?(?:[│┃]\s*)?(?:[>!*]|\(r:\))\s")
_SINGLE_LINE_FOOTER = lazy_compile(r"\bno sandbox\s{2,}(?P<model>[A-Za-z][\w.\-]*)")

# What Gemini shows (grey) in an empty input box, by its mode (shell, vim, voice).
_PLACEHOLDER_TEXT = lazy_compile(r"^(?:Type your message or .+|Type your shell command|Press 'Esc' for NORMAL mode\."
                               r"|Press 'i' for INSERT mode\.)$")
# Rows of a draft under the ` > ` row (Gemini's input viewport is 10 rows high).
DRAFT_ROWS_MAX = 10
# Columns of the input box that hold no text: padding, border and the ` > ` (its FRAME_OVERHEAD).
INPUT_FRAME_COLUMNS = 6


def input_rule(lines: Sequence[str]) -> int | None:
    """Row of the rule above the composer (` > ` a few rows below it), searching upward."""
    is_rule, is_composer = _RULES, COMPOSERS
    for row in range(len(lines) - 1, -1, -1):
        if not is_rule[lines[row]]:
            continue
        below = 0
        for index in range(row + 1, len(lines)):
            line = lines[index]
            if line.strip():
                if is_composer[line]:
                    return row
                below += 1
                if below == RULE_TO_COMPOSER_ROWS_MAX:
                    break
    return None


def bottom_rule(lines: Sequence[str]) -> int:
    """Row of a rule among the last few rows (an input box still being drawn), else the end."""
    seen = 0
    for row in range(len(lines) - 1, -1, -1):
        line = lines[row]
        if line.strip():
            if _RULES[line]:
                return row
            seen += 1
            if seen > RULE_TO_COMPOSER_ROWS_MAX:
                break
    return len(lines)


def draft(lines: Sequence[str], composer: int, columns: int) -> str | None:
    """The text typed in the input box: the ` > ` row and the rows under it indented as far,
    up to the blank row above the footer; None when empty or showing a placeholder."""
    match = COMPOSER.match(lines[composer])
    margin = " " * match.end() if match else ""
    rows = [lines[composer][len(margin):]]
    for line in lines[composer + 1:composer + 1 + DRAFT_ROWS_MAX]:
        if not line.startswith(margin) or not line.strip():
            break
        rows.append(line[len(margin):])
    text = join_input_rows(rows, columns - INPUT_FRAME_COLUMNS)
    return None if text is None or _PLACEHOLDER_TEXT.match(text) else text


def footer_model(lines: Sequence[str], rule_row: int | None) -> str | None:
    """The value under `/model` in the footer below the composer."""
    if rule_row is None:
        return None
    for row in range(rule_row + 1, len(lines)):
        header = lines[row]
        column = header.find("/model")
        if column < 0:
            match = _SINGLE_LINE_FOOTER.search(header)
            if match:
                return match.group("model")
            continue
        values = next((lines[index] for index in range(row + 1, len(lines)) if lines[index].strip()), "")
        best: tuple[int, str] | None = None
        for field in re.finditer(r"\S+(?: \S+)*", values):
            overlap = min(field.end(), column + len("/model")) - max(field.start(), column)
            if overlap > 0 and (best is None or overlap > best[0]):
                best = (overlap, field.group())
        return best[1] if best else None
    return None


# Per-line answers by line text: the input box is looked for on every look.
_RULES = LineMemo(lambda line: bool(_RULE.match(line)))
COMPOSERS = LineMemo(lambda line: bool(COMPOSER.match(line)))
