"""Select Graphic Rendition: applying SGR parameters to cell attributes, and emitting them back.

Colours are kept as strings: pyte's names ("red", "brightred", "default") for the 16 ANSI
colours, a decimal palette index ("196") for `38;5;N`, and six hex digits ("0102ff") for
`38;2;R;G;B`. (pyte turns palette indices into hex, which would make `capture(escapes=True)`
unable to tell `38;5;N` from truecolour the way tmux does.)
"""

from __future__ import annotations

from .cell import DEFAULT_STYLE, Cell, Style

# Memoised transitions (attrs, params) -> attrs: output floods repeat a handful of SGRs.
SGR_MEMO_MAX_ENTRIES = 4096
# Distinct styles shared between rows (flyweight); cleared when a rainbow floods it.
STYLE_TABLE_MAX_ENTRIES = 65536

SGR_RESET = "\x1b[0m"

_SGR_MEMO: dict[tuple[Cell, tuple[int, ...]], Cell] = {}
_STYLE_TABLE: dict[Style, Style] = {DEFAULT_STYLE: DEFAULT_STYLE}

# SGR code -> (Cell field, value).
_FLAG_CODES: dict[int, tuple[tuple[str, bool], ...]] = {
    1: (("bold", True),),
    2: (("dim", True),),
    3: (("italics", True),),
    4: (("underscore", True),),
    5: (("blink", True),),
    7: (("reverse", True),),
    8: (("hidden", True),),
    9: (("strikethrough", True),),
    53: (("overline", True),),
    22: (("bold", False), ("dim", False)),
    23: (("italics", False),),
    24: (("underscore", False),),
    25: (("blink", False),),
    27: (("reverse", False),),
    28: (("hidden", False),),
    29: (("strikethrough", False),),
    55: (("overline", False),),
}
# Style index -> (code to set, code to clear), for emitting; bold and dim share 22.
_EMIT_FLAGS = {3: (3, 23), 4: (4, 24), 5: (9, 29), 6: (7, 27), 7: (5, 25), 9: (8, 28), 10: (53, 55)}
_BOLD, _DIM = 2, 8  # indexes in Style (Cell[1:])
_COLOUR_NAMES = ("black", "red", "green", "brown", "blue", "magenta", "cyan", "white")
# SGR colour code -> name, as pyte.graphics has them (FG_ANSI, FG_AIXTERM, BG_...): the names the
# pyte emulator's cells hold, background 105's typo included. Our own copy, so the native
# emulator never imports pyte (~25 ms and several MiB at a daemon's start).
FG_NAMED = {30 + n: name for n, name in enumerate(_COLOUR_NAMES)} | {39: "default"} | {
    90 + n: "bright" + name for n, name in enumerate(_COLOUR_NAMES)}
BG_NAMED = {code + 10: name for code, name in FG_NAMED.items()} | {105: "bfightmagenta"}
_FG_CODE = {name: code for code, name in FG_NAMED.items()}
# pyte names background 105 "bfightmagenta" (a typo it keeps); a backend that spells it
# right must not get "48;5;brightmagenta" back.
_BG_CODE = {name: code for code, name in BG_NAMED.items()} | {"brightmagenta": 105}
_EXTENDED_FG, _EXTENDED_BG = 38, 48
_MAX_COLOUR_COMPONENT = 255


def intern_style(style: Style) -> Style:
    """Return the shared instance of `style`, so equal styles cost one object."""
    shared = _STYLE_TABLE.get(style)
    if shared is None:
        if len(_STYLE_TABLE) >= STYLE_TABLE_MAX_ENTRIES:
            _STYLE_TABLE.clear()
        _STYLE_TABLE[style] = shared = style
    return shared


def apply_sgr(attrs: Cell, params: tuple[int, ...], default: Cell) -> Cell:
    """Return the cursor attributes after one SGR sequence with `params` (memoised)."""
    key = (attrs, params)
    result = _SGR_MEMO.get(key)
    if result is None:
        result = _apply_sgr_uncached(attrs, params, default)
        if len(_SGR_MEMO) >= SGR_MEMO_MAX_ENTRIES:
            _SGR_MEMO.clear()
        _SGR_MEMO[key] = result
    return result


def _apply_sgr_uncached(attrs: Cell, params: tuple[int, ...], default: Cell) -> Cell:
    if not params or params == (0,):
        return default
    replace: dict[str, object] = {}
    pending = list(reversed(params))
    while pending:
        code = pending.pop()
        if code == 0:
            replace.update(default._asdict())
        elif code in FG_NAMED:
            replace["fg"] = FG_NAMED[code]
        elif code in BG_NAMED:
            replace["bg"] = BG_NAMED[code]
        elif code in _FLAG_CODES:
            replace.update(_FLAG_CODES[code])
        elif code in (_EXTENDED_FG, _EXTENDED_BG):
            colour = _take_extended_colour(pending)
            if colour is not None:
                replace["fg" if code == _EXTENDED_FG else "bg"] = colour
    return attrs._replace(**replace) if replace else attrs


def _take_extended_colour(pending: list[int]) -> str | None:
    """Consume `5;N` or `2;R;G;B` from `pending` (reversed params); None if malformed."""
    if not pending:
        return None
    kind = pending.pop()
    if kind == 5:
        if not pending:
            return None
        index = pending.pop()
        return str(index) if index <= _MAX_COLOUR_COMPONENT else None
    if kind == 2:
        rgb = [pending.pop() for _ in range(min(3, len(pending)))]
        if len(rgb) < 3 or max(rgb) > _MAX_COLOUR_COMPONENT:
            return None
        return "{:02x}{:02x}{:02x}".format(*rgb)
    return None


def _colour_code(colour: str, named: dict[str, int], extended: int) -> str:
    code = named.get(colour)
    if code is not None:
        return str(code)
    if len(colour) == 6:  # rrggbb
        red, green, blue = (int(colour[i : i + 2], 16) for i in (0, 2, 4))
        return f"{extended};2;{red};{green};{blue}"
    return f"{extended};5;{colour}"


def sgr_transition(old: Style, new: Style) -> str:
    """Return the escape sequence that changes the terminal from `old` to `new` ("" if equal)."""
    if old == new:
        return ""
    codes: list[str] = []
    if (old[_BOLD] and not new[_BOLD]) or (old[_DIM] and not new[_DIM]):
        codes.append("22")  # clears both bold and dim: set again whichever stays
        old = old[:_BOLD] + (False,) + old[_BOLD + 1 : _DIM] + (False,) + old[_DIM + 1 :]  # type: ignore[assignment]
    if new[_BOLD] and not old[_BOLD]:
        codes.append("1")
    if new[_DIM] and not old[_DIM]:
        codes.append("2")
    for index, (on, off) in _EMIT_FLAGS.items():
        if old[index] != new[index]:
            codes.append(str(on if new[index] else off))
    if old[0] != new[0]:
        codes.append(_colour_code(new[0], _FG_CODE, _EXTENDED_FG))
    if old[1] != new[1]:
        codes.append(_colour_code(new[1], _BG_CODE, _EXTENDED_BG))
    return "\x1b[" + ";".join(codes) + "m"
