"""Figures as text for the daemon benchmarks: numbers, ratios and aligned tables."""

from __future__ import annotations


def fmt(value: float | None, unit: str = "", digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}{unit}"


def ratio(a: float | None, b: float | None) -> str:
    """a ÷ b as "1.3x"; "-" when either is missing or b is 0 (e.g. no clock tick measured)."""
    return "-" if a is None or b is None or b <= 0 else f"{a / b:.2f}x"


def print_table(headers: list[str], rows: list[list[str]]) -> None:
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(headers)]
    for line in [headers, *rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip())
