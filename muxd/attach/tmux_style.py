"""tmux's style strings (`bg=colour235,fg=colour136,bold`) as a cell Style: status-style and
message-style. Pure; `parse_style` raises ValueError with tmux's words for a bad one.

Understood: `fg=` and `bg=` with a colour (black red green yellow blue magenta cyan white,
their `bright` forms, `colour0`…`colour255`, `#rrggbb`, `default`, `terminal`), the
attributes (bold dim underscore blink reverse hidden italics strikethrough overline) and
their `no` forms, `none` (no attributes) and `default` (the base style). What tmux uses for
layout only (`align=`, `fill=`, `list=`, `range=`, `push-default`…) is taken and ignored.
Colours are kept as the emulator keeps them (emulator/sgr.py): pyte's names, a palette index,
six hex digits.
"""

from __future__ import annotations

import functools
import re

from muxd.emulator.cell import Style

_ATTRIBUTES = {"bold": 2, "italics": 3, "underscore": 4, "strikethrough": 5, "reverse": 6, "blink": 7,
               "dim": 8, "hidden": 9, "overline": 10}  # index in Style (Cell[1:])
_ALIASES = {"bright": "bold", "italic": "italics", "underline": "underscore", "strike": "strikethrough"}
_NAMED = {"black": "black", "red": "red", "green": "green", "yellow": "brown", "blue": "blue",
          "magenta": "magenta", "cyan": "cyan", "white": "white"}
_IGNORED = re.compile(r"(?:align|fill|list|range|width|push-default|pop-default|nolist|norange|noalign)\b")
_PALETTE = re.compile(r"colou?r(\d{1,3})")


def colour(name: str) -> str:
    """A tmux colour as the emulator keeps it; ValueError if it is none."""
    name = name.lower()
    if name in ("default", "terminal"):
        return "default"
    if name in _NAMED:
        return _NAMED[name]
    if name.startswith("bright") and name[6:] in _NAMED:
        return "bright" + _NAMED[name[6:]]
    palette = _PALETTE.fullmatch(name)
    if palette and int(palette.group(1)) <= 255:
        return palette.group(1)
    if re.fullmatch(r"#[0-9a-f]{6}", name):
        return name[1:]
    raise ValueError(name)


@functools.lru_cache(maxsize=64)
def parse_style(text: str, base: Style) -> Style:
    """`text` applied over `base` (`default` goes back to it); ValueError("invalid style: …")."""
    fields = list(base)
    for word in filter(None, re.split(r"[,\s]+", text.strip())):
        lowered = word.lower()
        try:
            if lowered.startswith(("fg=", "bg=")):
                fields[0 if lowered[0] == "f" else 1] = colour(lowered[3:])
            elif lowered == "default":
                fields = list(base)
            elif lowered == "none":
                fields[2:] = [False] * (len(fields) - 2)
            elif _IGNORED.match(lowered):
                continue
            else:
                on = not lowered.startswith("no")
                name = _ALIASES.get(lowered if on else lowered[2:], lowered if on else lowered[2:])
                fields[_ATTRIBUTES[name]] = on
        except (KeyError, ValueError):
            raise ValueError(f"invalid style: {text}") from None
    return tuple(fields)  # type: ignore[return-value]
