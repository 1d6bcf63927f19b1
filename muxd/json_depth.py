"""How deep a JSON text nests, found without decoding it: a decoder recurses, so text from
outside (an agent's session log line, a hook's payload) is measured before it is decoded."""

from __future__ import annotations

import re

# A JSON string, escapes and all; one left open runs to the end (so a match never fails and
# never backtracks: linear in the text).
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"?', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_OPENING = frozenset(b"[{")


def nests_deeper(data: bytes, depth_max: int) -> bool:
    """Whether the JSON text `data` opens more than `depth_max` arrays or objects inside each
    other. Brackets inside strings do not count; nearly every line has too few to look closer."""
    if data.count(b"[") + data.count(b"{") <= depth_max:
        return False
    depth = 0
    for byte in _JSON_STRING.sub(b"", data).translate(None, _NOT_BRACKETS):
        if byte in _OPENING:
            depth += 1
            if depth > depth_max:
                return True
        else:
            depth -= 1
    return False
