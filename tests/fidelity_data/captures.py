"""Reading `capture-pane -e` output as a person sees it: line drawing as glyphs, styles by cell.

Used by tests/test_fidelity.py for both tmux's captures and muxd's.
"""

from __future__ import annotations

import re

from muxd.emulator.charsets import LINE_DRAWING

_SGR = re.compile(r"\x1b\[([0-9;:]*)m")
_OTHER_ESCAPE = re.compile(r"\x1b(?:\[[0-9;:?<=>]*[ -/]*[@-~]|[()][0-9A-Za-z]|[^\[()])|[\x0e\x0f]")
_FLAGS = {1: "bold", 2: "dim", 3: "italic", 4: "underline", 5: "blink", 7: "reverse", 8: "hidden",
          9: "strike", 21: "underline", 53: "overline"}
_FLAGS_OFF = {22: ("bold", "dim"), 23: ("italic",), 24: ("underline",), 25: ("blink",), 27: ("reverse",),
              28: ("hidden",), 29: ("strike",), 55: ("overline",)}
_CUBE = (0, 95, 135, 175, 215, 255)


def _palette(index: int) -> str:
    """A 256-colour index as compared: 0-15 stay indexes (themes change them), the rest are RGB."""
    if index < 16:
        return str(index)
    if index < 232:
        index -= 16
        return f"#{_CUBE[index // 36]:02x}{_CUBE[index // 6 % 6]:02x}{_CUBE[index % 6]:02x}"
    grey = 8 + 10 * (index - 232)
    return f"#{grey:02x}{grey:02x}{grey:02x}"


def _extended_colour(params: list[str]) -> str:
    """The colour given after a 38/48/58: `5;N` (palette) or `2;R;G;B`."""
    if params[:1] == ["5"] and len(params) >= 2:
        return _palette(int(params[1] or 0))
    if params[:1] == ["2"] and len(params) >= 4:
        r, g, b = (int(p or 0) for p in params[1:4])
        return f"#{r:02x}{g:02x}{b:02x}"
    return "?"


def apply_sgr(style: dict[str, str], text: str) -> None:
    """Update `style` (attribute -> value) by the parameters of one SGR sequence."""
    params = text.split(";") if text else ["0"]
    i = 0
    while i < len(params):
        sub = params[i].split(":")  # colon sub-parameters stay inside one parameter
        code = int(sub[0] or 0)
        i += 1
        if code == 0:
            style.clear()
        elif code == 4 and len(sub) > 1:
            if sub[1] in ("", "0"):
                style.pop("underline", None)
            else:
                style["underline"] = "on"
        elif code in _FLAGS:
            style[_FLAGS[code]] = "on"
        elif code in _FLAGS_OFF:
            for flag in _FLAGS_OFF[code]:
                style.pop(flag, None)
        elif 30 <= code <= 37 or 90 <= code <= 97:
            style["fg"] = str(code - 30 if code < 90 else code - 82)
        elif 40 <= code <= 47 or 100 <= code <= 107:
            style["bg"] = str(code - 40 if code < 100 else code - 92)
        elif code in (38, 48, 58):
            if len(sub) > 1:
                colour = _extended_colour(sub[1:2] + sub[-3:] if sub[1] == "2" else sub[1:])
            else:
                colour = _extended_colour(params[i:])
                i += 2 if params[i:i + 1] == ["5"] else 4
            style[{38: "fg", 48: "bg", 58: "ul"}[code]] = colour
        elif code in (39, 49, 59):
            style.pop({39: "fg", 49: "bg", 59: "ul"}[code], None)


# tmux 3.3a keeps a line-drawing cell as its ASCII code with a flag; `capture-pane -e` puts
# SO before a run of such cells and SI after it, across line ends.
_CAPTURE_PIECE = re.compile(r"[\x0e\x0f]|\x1b(?:\[[0-9;:?<=>]*[ -/]*[@-~]|[()][0-9A-Za-z]|[^\[()])?|[^\x0e\x0f\x1b]+")


def without_escapes(capture: str) -> str:
    """An `-e` capture as `-p` alone prints it."""
    return _OTHER_ESCAPE.sub("", _SGR.sub("", capture))


def as_seen(capture: str) -> str:
    """tmux's `capture-pane -e` text with its line-drawing cells as the glyphs a terminal shows."""
    pieces: list[str] = []
    drawing = False
    for piece in _CAPTURE_PIECE.findall(capture):
        if piece in ("\x0e", "\x0f"):
            drawing = piece == "\x0e"
        elif drawing and not piece.startswith("\x1b"):
            pieces.append(piece.translate(LINE_DRAWING))
        else:
            pieces.append(piece)
    return "".join(pieces)


def styled_lines(capture: str) -> list[str]:
    """An `-e` capture as one line of styled runs per screen line, e.g. `[bold fg=4]bin[]`.

    The spelling of the escapes is gone: only what each cell looks like is left.
    """
    style: dict[str, str] = {}
    rendered: list[str] = []
    for line in capture.split("\n"):
        cells: list[tuple[str, str]] = []
        pos = 0
        for match in _SGR.finditer(line):
            cells += [(c, _style_key(style, c)) for c in _OTHER_ESCAPE.sub("", line[pos:match.start()])]
            apply_sgr(style, match.group(1))
            pos = match.end()
        cells += [(c, _style_key(style, c)) for c in _OTHER_ESCAPE.sub("", line[pos:])]
        while cells and cells[-1][0] == " ":  # trailing blanks aside, whatever their colour
            cells.pop()
        runs: list[str] = []
        current: str | None = None
        for char, key in cells:
            if key != current:
                runs.append(f"[{key}]")
                current = key
            runs.append(char)
        rendered.append("".join(runs).removeprefix("[]"))
    while rendered and not rendered[-1]:
        rendered.pop()
    return rendered


# What a blank cell shows of its style: the foreground side of it only when reversed.
_BLANK_VISIBLE = frozenset({"bg", "reverse", "underline", "strike", "overline", "ul"})


def _style_key(style: dict[str, str], char: str) -> str:
    shown = style.items() if char != " " or "reverse" in style else (
        (k, v) for k, v in style.items() if k in _BLANK_VISIBLE)
    return " ".join(k if v == "on" else f"{k}={v}" for k, v in sorted(shown))
