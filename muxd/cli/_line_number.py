"""capture-pane's -S and -E: a line number, or `-` for the far end; for the CLI command and the
tmux shim's fast path alike (tmux_fast_path.py), which must not import the CLI's modules."""

from __future__ import annotations

from muxd.errors import BadRequest


def line_number(value: str | None, flag: str, dash: int | None) -> int | None:
    """`value` of option `flag` as a line number (None: not given; `-`: `dash`); BadRequest otherwise."""
    if value is None:
        return None
    if value == "-":
        return dash
    try:
        return int(value)
    except ValueError:
        raise BadRequest(f"{flag} wants a line number or '-', got {value!r}") from None
