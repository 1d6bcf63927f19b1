"""tmux key names to the bytes a terminal would send (xterm conventions, as TERM says).

`keys_to_bytes(["echo hi", "Enter"])` follows `tmux send-keys`: an argument that is a key
name (`Enter`, `C-c`, `M-x`, `F5`, `S-Up`, `KP5`…) becomes that key; anything else is typed as
text. Given the pane's DEC private modes, cursor keys and the keypad are encoded as a terminal
would in them: application cursor keys (DECCKM, `CSI ? 1 h`: `Up` is `ESC O A`) and the
application keypad (DECKPAM, `ESC =`: `KP5` is `ESC O u`), which is what `smkx` asks for.
"""

from __future__ import annotations

import re

from muxd.errors import BadRequest

_ESC = "\x1b"

NAMED_KEYS: dict[str, str] = {
    "enter": "\r", "escape": _ESC, "esc": _ESC, "tab": "\t", "btab": _ESC + "[Z",
    "bspace": "\x7f", "space": " ",
    "up": _ESC + "[A", "down": _ESC + "[B", "right": _ESC + "[C", "left": _ESC + "[D",
    "home": _ESC + "[H", "end": _ESC + "[F",
    "ic": _ESC + "[2~", "insert": _ESC + "[2~", "dc": _ESC + "[3~", "delete": _ESC + "[3~",
    "pageup": _ESC + "[5~", "ppage": _ESC + "[5~", "pgup": _ESC + "[5~",
    "pagedown": _ESC + "[6~", "npage": _ESC + "[6~", "pgdn": _ESC + "[6~",
    "f1": _ESC + "OP", "f2": _ESC + "OQ", "f3": _ESC + "OR", "f4": _ESC + "OS",
    "f5": _ESC + "[15~", "f6": _ESC + "[17~", "f7": _ESC + "[18~", "f8": _ESC + "[19~",
    "f9": _ESC + "[20~", "f10": _ESC + "[21~", "f11": _ESC + "[23~", "f12": _ESC + "[24~",
}

CURSOR_KEYS_MODE = 1      # DECCKM
APPLICATION_KEYPAD_MODE = 66  # DECNKM, also set by DECKPAM (ESC =)

# Unmodified cursor keys in application mode: SS3 and the final byte (xterm's, as the panes'
# TERM=xterm-256color describes: khome=\EOH, kend=\EOF). tmux, whose own TERM says
# khome=\E[1~, sends Home and End unchanged.
_APPLICATION_CURSOR = {"up": "A", "down": "B", "right": "C", "left": "D", "home": "H", "end": "F"}
# tmux's keypad names: (numeric keypad text, application keypad SS3 final byte), as tmux sends them.
KEYPAD_KEYS: dict[str, tuple[str, str]] = {
    "kp/": ("/", "o"), "kp*": ("*", "j"), "kp-": ("-", "m"), "kp+": ("+", "k"), "kp.": (".", "n"),
    "kpenter": ("\n", "M"), **{f"kp{n}": (str(n), "pqrstuvwxy"[n]) for n in range(10)},
}

# Keys whose modified form is CSI 1;<mod> <final> (arrows, Home, End) or CSI <n>;<mod> ~.
_CSI_FINAL = {"up": "A", "down": "B", "right": "C", "left": "D", "home": "H", "end": "F"}
_CSI_TILDE = {"ic": 2, "insert": 2, "dc": 3, "delete": 3, "pageup": 5, "ppage": 5, "pgup": 5,
              "pagedown": 6, "npage": 6, "pgdn": 6, "f5": 15, "f6": 17, "f7": 18, "f8": 19,
              "f9": 20, "f10": 21, "f11": 23, "f12": 24}
_MODIFIER = re.compile(r"^((?:[CMS]-)+)(.+)$", re.IGNORECASE)
_CONTROL_SPECIAL = {"@": 0, " ": 0, "space": 0, "[": 27, "\\": 28, "]": 29, "^": 30, "_": 31,
                    "?": 127}


def _control(char: str) -> str | None:
    lowered = char.lower()
    if lowered in _CONTROL_SPECIAL:
        return chr(_CONTROL_SPECIAL[lowered])
    if len(char) == 1 and "a" <= lowered <= "z":
        return chr(ord(lowered) - ord("a") + 1)
    return None


def key_name_to_text(name: str, modes: frozenset[int] = frozenset()) -> str | None:
    """The text a key name stands for in a pane with these DEC private `modes` (see module
    doc), or None when `name` is not a key name."""
    lowered = name.lower()
    if lowered in _APPLICATION_CURSOR and CURSOR_KEYS_MODE in modes:
        return f"{_ESC}O{_APPLICATION_CURSOR[lowered]}"
    if lowered in KEYPAD_KEYS:
        numeric, final = KEYPAD_KEYS[lowered]
        return f"{_ESC}O{final}" if APPLICATION_KEYPAD_MODE in modes else numeric
    if lowered in NAMED_KEYS:
        return NAMED_KEYS[lowered]
    if len(name) == 2 and name[0] == "^":
        return _control(name[1])
    match = _MODIFIER.match(name)
    if not match:
        return None
    mods = {m[0].upper() for m in match.group(1).split("-") if m}
    base = match.group(2)
    lowered_base = base.lower()
    # xterm's modifier parameter: 1 + shift(1) + alt(2) + ctrl(4)
    param = 1 + ("S" in mods) + 2 * ("M" in mods) + 4 * ("C" in mods)
    if lowered_base in _CSI_FINAL:
        return f"{_ESC}[1;{param}{_CSI_FINAL[lowered_base]}"
    if lowered_base in _CSI_TILDE:
        return f"{_ESC}[{_CSI_TILDE[lowered_base]};{param}~"
    if lowered_base in NAMED_KEYS:
        text = NAMED_KEYS[lowered_base]
    elif len(base) == 1:
        text = base
    else:
        return None
    if "S" in mods and len(text) == 1 and text.isalpha():
        text = text.upper()
    if "C" in mods:
        controlled = _control("space" if lowered_base == "space" else text)
        if controlled is None:
            return None
        text = controlled
    if "M" in mods:
        text = _ESC + text
    return text


def keys_to_bytes(keys: list[str], *, literal: bool = False, hex_bytes: bool = False,
                  modes: frozenset[int] = frozenset()) -> bytes:
    """What `send-keys` writes for these arguments into a pane with DEC private `modes`."""
    if hex_bytes:
        out = bytearray()
        for item in keys:
            for token in item.split():
                try:
                    value = int(token, 16)
                except ValueError:
                    raise BadRequest(f"invalid hex byte {token!r}") from None
                if not 0 <= value <= 0xFF:
                    raise BadRequest(f"hex value {token!r} is not a byte")
                out.append(value)
        return bytes(out)
    parts: list[str] = []
    for item in keys:
        text = None if literal else key_name_to_text(item, modes)
        parts.append(item if text is None else text)
    return "".join(parts).encode("utf-8", "surrogateescape")
