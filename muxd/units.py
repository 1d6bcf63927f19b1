"""Durations, token counts and usage limits in the few characters a table cell or a one-line summary gives
them, as agents print them. Shared by the CLI's tables (cli/render.py) and the MCP summary
tools, so both say the same thing the same way."""

from __future__ import annotations


def tokens(count: int | None) -> str:
    """4800 -> '4.8k', as agents print them."""
    if count is None:
        return ""
    if count >= 1_000_000:
        return f"{count / 1_000_000:.1f}M"
    if count >= 1000:
        return f"{count / 1000:.1f}k"
    return str(count)


def duration(seconds: float) -> str:
    """The largest whole unit: 59 -> '59s', 3700 -> '1h' (negative counts as 0)."""
    seconds = max(0, int(seconds))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def limit_text(resets_at: float | None, now: float) -> str:
    """A usage limit in a few words: 'usage limit · resets 21:35 (in 2h)', or 'usage limit' when
    the agent did not say when it resets. Local time; the day too when it is not within a day."""
    import time

    if resets_at is None:
        return "usage limit"
    shape = "%H:%M" if resets_at - now < 86400 else "%b %d %H:%M"
    return f"usage limit · resets {time.strftime(shape, time.localtime(resets_at))} (in {duration(resets_at - now)})"
