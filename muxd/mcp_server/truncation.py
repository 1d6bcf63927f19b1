"""Cut a tool result down to a byte budget: arrays lose their tail, long text keeps its end.

The SDK sends a result twice (JSON in a text block, and as structured content), so the size
measured is what both take on the wire, not the bare JSON.
"""

from __future__ import annotations

from typing import Any

import pydantic_core

TRUNCATION_NOTE_BYTES = 200  # room kept for the `truncated` / `original_count` fields


def reply_bytes(result: Any) -> int:
    """Bytes `result` takes in a tools/call reply: the text block (the compact JSON the middleware
    writes there, escaped as a string) plus the structured copy. Serialised in Rust (pydantic_core):
    the stdlib's json, three times over, took most of a page's time."""
    compact = pydantic_core.to_json(result, fallback=str)
    return len(pydantic_core.to_json(compact.decode())) + len(compact)


def _largest_field(result: dict[str, Any], kind: type) -> str | None:
    fields = [(reply_bytes(v), k) for k, v in result.items() if isinstance(v, kind) and v]
    return max(fields)[1] if fields else None


def _fit_list(result: dict[str, Any], key: str, budget: int) -> None:
    items: list[Any] = result[key]
    low, high = 0, len(items)  # the longest prefix that fits lies in [low, high]
    while low < high:
        middle = (low + high + 1) // 2
        result[key] = items[:middle]
        if reply_bytes(result) <= budget:
            low = middle
        else:
            high = middle - 1
    result[key] = items[:low]


def _fit_text(result: dict[str, Any], key: str, budget: int) -> None:
    # Screen text: the newest lines are at the end, so the end is what is kept.
    text: str = result[key]
    low, high = 0, len(text)
    while low < high:
        middle = (low + high + 1) // 2
        result[key] = text[len(text) - middle:]
        if reply_bytes(result) <= budget:
            low = middle
        else:
            high = middle - 1
    result[key] = text[len(text) - low:]


def truncate_to_fit(result: Any, max_bytes: int) -> Any:
    """`result` when it fits in `max_bytes`; else a copy with arrays (then long strings) cut.

    A cut result says `truncated: true` and `original_count` (items of the largest array),
    with `original_counts` per field when several were cut. A result that still cannot fit
    (no arrays or text to cut) becomes a short notice, never an oversized reply.
    """
    if reply_bytes(result) <= max_bytes:
        return result
    if not isinstance(result, dict):
        result = {"result": result}
    cut: dict[str, Any] = dict(result)
    budget = max_bytes - TRUNCATION_NOTE_BYTES
    counts: dict[str, int] = {}
    chars: dict[str, int] = {}
    while reply_bytes(cut) > budget:
        key = _largest_field(cut, list)
        if key is not None and key not in counts:
            counts[key] = len(cut[key])
            _fit_list(cut, key, budget)
            continue
        key = _largest_field(cut, str)
        if key is not None and key not in chars:
            chars[key] = len(cut[key])
            _fit_text(cut, key, budget)
            continue
        return {"truncated": True, "error": f"result too large for {max_bytes} bytes and cannot be cut"}
    cut["truncated"] = True
    if counts:
        cut["original_count"] = max(counts.values())
        if len(counts) > 1:
            cut["original_counts"] = counts
    if chars:
        cut["original_chars"] = chars
    return cut
