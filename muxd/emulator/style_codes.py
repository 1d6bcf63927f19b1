"""Styles as 64-bit integers, so packed scrollback holds no `Style` object per distinct style.

A `Style` tuple with a truecolour costs ~200 bytes; output with a colour for every character
(lolcat, gradients) has a distinct one per cell. A code is the foreground and background
colours (25 bits each) and the nine flags, and turns back into the shared (interned) Style.
"""

from __future__ import annotations

from functools import lru_cache

from .cell import Style
from .sgr import BG_NAMED, FG_NAMED, intern_style

# Colour codes: a pyte colour name, a palette index ("196"), or a truecolour ("0a1b2c").
_NAMED_COLOURS = ("default", *sorted({*FG_NAMED.values(), *BG_NAMED.values()} - {"default"}))
_NAMED_CODES = {name: code for code, name in enumerate(_NAMED_COLOURS)}
_PALETTE_BASE = 1 << 8
_PALETTE_COLOURS = 256
_TRUE_COLOUR = 1 << 24
_COLOUR_BITS = 25
_FLAGS = 9  # Style fields after the two colours
_COLOUR_MASK = (1 << _COLOUR_BITS) - 1
STYLE_CODE_CACHE_ENTRIES = 4096


def _colour_code(colour: str) -> int | None:
    named = _NAMED_CODES.get(colour)
    if named is not None:
        return named
    if not colour.isascii() or not colour.isalnum():
        return None
    if len(colour) == 6:
        return _TRUE_COLOUR | int(colour, 16)
    if colour.isdigit() and int(colour) < _PALETTE_COLOURS:
        return _PALETTE_BASE + int(colour)
    return None


def _colour(code: int) -> str:
    if code & _TRUE_COLOUR:
        return f"{code & ~_TRUE_COLOUR:06x}"
    if code >= _PALETTE_BASE:
        return str(code - _PALETTE_BASE)
    return _NAMED_COLOURS[code]


@lru_cache(maxsize=STYLE_CODE_CACHE_ENTRIES)
def style_code(style: Style) -> int | None:
    """The code of `style`, or None if it has a colour the codes cannot hold."""
    foreground, background = _colour_code(style[0]), _colour_code(style[1])
    if foreground is None or background is None or len(style) != 2 + _FLAGS:
        return None
    flags = sum(1 << bit for bit, flag in enumerate(style[2:]) if flag)
    code = (foreground << (_COLOUR_BITS + _FLAGS)) | (background << _FLAGS) | flags
    return code if style_from_code(code) == style else None


@lru_cache(maxsize=STYLE_CODE_CACHE_ENTRIES)
def style_from_code(code: int) -> Style:
    """The shared Style whose code is `code`."""
    flags = tuple(bool(code >> bit & 1) for bit in range(_FLAGS))
    colours = (_colour(code >> (_COLOUR_BITS + _FLAGS)), _colour(code >> _FLAGS & _COLOUR_MASK))
    return intern_style(colours + flags)  # type: ignore[arg-type]
