"""The line of a TOML file that holds a key, for errors that name `file:line`.

tomllib gives a line for a syntax error only; a manifest's schema errors are found in the
parsed data, by key path (`("rules", 2, "pattern")`: the third `[[rules]]` table's `pattern`).
This reads the text again for the headers and `key =` lines along that path, the way people
write TOML (tables, arrays of tables, keys one a line). A key inside an inline table or a
multi-line array gives the line of the key that holds it; nothing found gives line 1.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

KeyPath = Sequence["str | int"]

_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\[\]]+?)\s*\]\]?\s*(?:#.*)?$")
_KEY = re.compile(r"""^\s*(?:"([^"]+)"|'([^']+)'|([A-Za-z0-9_-]+))\s*=""")


def _header_path(dotted: str) -> tuple[str, ...]:
    return tuple(part.strip().strip("\"'") for part in dotted.split("."))


def line_of(text: str, path: KeyPath) -> int:
    """The 1-based line where `path` is written in `text` (the deepest part of it found)."""
    wanted = tuple(path)
    counts: dict[tuple[str, ...], int] = {}
    section: tuple[str | int, ...] = ()
    best_line, best_depth = 1, 0
    for number, line in enumerate(text.splitlines(), 1):
        header = _HEADER.match(line)
        if header:
            name = _header_path(header.group(2))
            if header.group(1) == "[[":
                index = counts.get(name, 0)
                counts[name] = index + 1
                section = (*name, index)
            else:
                section = name
            if wanted[:len(section)] == section and len(section) > best_depth:
                best_line, best_depth = number, len(section)
            continue
        key = _KEY.match(line)
        if key is None or wanted[:len(section)] != section or len(wanted) <= len(section):
            continue
        name = key.group(1) or key.group(2) or key.group(3)
        dotted = _header_path(name) if key.group(3) is None else (name,)
        depth = len(section) + len(dotted)
        if wanted[len(section):depth] == dotted and depth > best_depth:
            best_line, best_depth = number, depth
            if len(wanted) > depth and isinstance(wanted[depth], int):
                best_line = _element_line(text.splitlines(), number, wanted[depth])
    return best_line


def _element_line(lines: list[str], number: int, index: int) -> int:
    """The line of element `index` of the array whose key is on line `number`, where the array
    spans lines with an element a line (`[` ending its key's line); else `number`."""
    if not lines[number - 1].split("#", 1)[0].rstrip().endswith("["):
        return number
    elements = 0
    for offset, line in enumerate(lines[number:], number + 1):
        stripped = line.strip()
        if stripped.startswith("]"):
            break
        if stripped and not stripped.startswith("#"):
            if elements == index:
                return offset
            elements += 1
    return number
