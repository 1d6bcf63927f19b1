"""Screen rows as HTML: every character escaped, every style a set of class names.

Both backends render through here, from the compact rows they already give `capture`, so a
pane looks the same in a browser whichever emulator holds it. Styles are classes, never
`style=` attributes: the web view's Content-Security-Policy (style-src 'self') forbids inline
styles, which is also why libghostty-vt's own HTML formatter (it writes `style="color: …"` on
every run) is not used. `palette_css` gives the stylesheet those classes need.

A colour is a class `f<N>` (foreground) or `b<N>` (background) with N a 256-colour palette
index; a truecolour is shown as its nearest palette colour (as tmux does on a 256-colour
terminal). Reverse video swaps the two; a default colour swapped in is `fr` / `br`. The cursor's
cell, when shown, is in a <span class="cu">.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Iterable

from .cell import DEFAULT_STYLE, Style
from .rows import Row
from .widths import CHAR_WIDTHS

# html.escape's replacements: the html package would bring html.entities' tables (~0.3 MiB) into
# every daemon whose panes are emulated, for these five.
_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#x27;"})
_NAMES = ("black", "red", "green", "brown", "blue", "magenta", "cyan", "white")
# pyte's colour names (both spellings of bright magenta's background, see sgr.py) -> index.
_NAMED_INDEX = {name: n for n, name in enumerate(_NAMES)} | {
    "bright" + name: n + 8 for n, name in enumerate(_NAMES)} | {"bfightmagenta": 13}
# xterm's default first 16 colours; 16..255 are its 6x6x6 cube and grey ramp.
_BASE_RGB = (
    (0x00, 0x00, 0x00), (0xcd, 0x00, 0x00), (0x00, 0xcd, 0x00), (0xcd, 0xcd, 0x00),
    (0x00, 0x00, 0xee), (0xcd, 0x00, 0xcd), (0x00, 0xcd, 0xcd), (0xe5, 0xe5, 0xe5),
    (0x7f, 0x7f, 0x7f), (0xff, 0x00, 0x00), (0x00, 0xff, 0x00), (0xff, 0xff, 0x00),
    (0x5c, 0x5c, 0xff), (0xff, 0x00, 0xff), (0x00, 0xff, 0xff), (0xff, 0xff, 0xff),
)
_CUBE_LEVELS = (0x00, 0x5f, 0x87, 0xaf, 0xd7, 0xff)
PALETTE_RGB: tuple[tuple[int, int, int], ...] = _BASE_RGB + tuple(
    (_CUBE_LEVELS[n // 36], _CUBE_LEVELS[n // 6 % 6], _CUBE_LEVELS[n % 6]) for n in range(216)
) + tuple((8 + 10 * n,) * 3 for n in range(24))  # type: ignore[misc]
# Style fields (Cell[1:]) that become a class of their own: bold, italics, underscore,
# strikethrough, dim, hidden, overline. Blink is not shown.
_FLAG_CLASSES = ((2, "bo"), (3, "it"), (4, "ul"), (5, "st"), (8, "dm"), (9, "hd"), (10, "ov"))
_REVERSE = 6
STYLE_CLASS_CACHE_ENTRIES = 4096


def _nearest(red: int, green: int, blue: int) -> int:
    """The palette index (16..255: the 16 base colours follow the user's theme) nearest to RGB."""
    def distance(index: int) -> int:
        r, g, b = PALETTE_RGB[index]
        return (r - red) ** 2 + (g - green) ** 2 + (b - blue) ** 2

    cube = 16 + 36 * _level(red) + 6 * _level(green) + _level(blue)
    grey = 232 + min(max((red + green + blue) // 3 - 3, 0) // 10, 23)
    return min(cube, grey, key=distance)


def _level(component: int) -> int:
    return 0 if component < 48 else 1 if component < 115 else (component - 35) // 40


def palette_index(colour: str) -> int | None:
    """The palette index a cell's colour is shown as; None for the default colour."""
    named = _NAMED_INDEX.get(colour)
    if named is not None:
        return named
    if len(colour) == 6:  # before digits: "000000" is a truecolour, palette indexes are shorter
        try:
            value = int(colour, 16)
        except ValueError:
            return None
        return _nearest(value >> 16, value >> 8 & 0xff, value & 0xff)
    if colour.isdigit() and int(colour) < len(PALETTE_RGB):
        return int(colour)
    return None


@lru_cache(maxsize=STYLE_CLASS_CACHE_ENTRIES)
def style_classes(style: Style) -> str:
    """The class attribute's value for `style` ("" for the default look)."""
    foreground, background = palette_index(style[0]), palette_index(style[1])
    names: list[str] = []
    if style[_REVERSE]:
        names.append("fr" if background is None else f"f{background}")
        names.append("br" if foreground is None else f"b{foreground}")
    else:
        if foreground is not None:
            names.append(f"f{foreground}")
        if background is not None:
            names.append(f"b{background}")
    names.extend(name for index, name in _FLAG_CLASSES if style[index])
    return " ".join(names)


def _char_at(text: str, x: int) -> int:
    """The index in `text` of the character in cell `x` (len(text) + the cells short, past its end).
    A wide character takes two cells, a combining one none."""
    if text.isascii():
        return x
    cells = 0
    for index, char in enumerate(text):
        width = max(CHAR_WIDTHS[char], 0)
        if cells + width > x and width:
            return index
        cells += width
    return len(text) + x - cells


def row_html(row: Row, cursor_x: int | None = None) -> str:
    """One row's characters as escaped text, each styled run in a <span class=…>; with
    `cursor_x`, the character in that cell (a space past the row's end) in a <span class="cu">."""
    text, runs = row.text, row.runs or (DEFAULT_STYLE, len(row.text))
    at = -1
    if cursor_x is not None:
        at = _char_at(text, cursor_x)
        if at >= len(text):  # the cursor stands past the written cells: pad up to it
            text += " " * (at - len(text) + 1)
            runs = (*runs, DEFAULT_STYLE, len(text) - len(row.text))
    pieces: list[str] = []
    position = 0
    for index in range(0, len(runs), 2):
        style, count = runs[index], runs[index + 1]
        end = position + count
        if position <= at < end:
            segment = (text[position:at].translate(_ESCAPES) + '<span class="cu">' + text[at].translate(_ESCAPES)
                       + "</span>" + text[at + 1:end].translate(_ESCAPES))
        else:
            segment = text[position:end].translate(_ESCAPES)
        position = end
        classes = "" if style == DEFAULT_STYLE else style_classes(style)
        pieces.append(f'<span class="{classes}">{segment}</span>' if classes and segment else segment)
    return "".join(pieces)


def rows_html(rows: Iterable[Row], cursor: tuple[int, int] | None = None) -> str:
    """Rows as the inside of a <pre>: one line each, newline-separated; `cursor` (x, index of
    its row among `rows`) marked as `row_html` marks it."""
    x, y = cursor if cursor is not None else (None, -1)
    return "\n".join(row_html(row, x if n == y else None) for n, row in enumerate(rows))


def palette_css() -> str:
    """The stylesheet for `style_classes`' names: the palette and the attributes. The default
    colours are the custom properties --screen-fg and --screen-bg (the page's to set)."""
    rules = [f".f{n}{{color:#{r:02x}{g:02x}{b:02x}}}.b{n}{{background:#{r:02x}{g:02x}{b:02x}}}"
             for n, (r, g, b) in enumerate(PALETTE_RGB)]
    rules += [
        ".fr{color:var(--screen-bg,#000)}.br{background:var(--screen-fg,#ddd)}",
        ".cu{color:var(--screen-bg,#000);background:var(--screen-fg,#ddd)}",
        ".bo{font-weight:bold}.it{font-style:italic}.dm{opacity:.6}.hd{visibility:hidden}",
        ".ul{text-decoration:underline}.st{text-decoration:line-through}.ov{text-decoration:overline}",
        ".ul.st{text-decoration:underline line-through}",
    ]
    return "\n".join(rules) + "\n"
