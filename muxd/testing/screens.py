"""Writing small screens in tests: one row per line after a `|` margin."""

from __future__ import annotations

RULE_MARK = "──"


def margin_rows(text: str, rule_columns: int | None = None) -> list[str]:
    """Rows written after a `|` margin, one per line (a line without a margin is a blank row,
    trailing blanks dropped); with `rule_columns`, a row that is just `──` is a full-width rule."""
    rows = []
    for line in text.strip("\n").split("\n"):
        stripped = line.lstrip()
        row = stripped[1:].rstrip() if stripped.startswith("|") else ""
        rows.append("─" * rule_columns if rule_columns and row == RULE_MARK else row)
    return rows
