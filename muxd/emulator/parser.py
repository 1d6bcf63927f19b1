"""Turning decoded text into screen events: a regex tokenizer with pyte's state machine behind it.

pyte's parser is a generator fed one character at a time (~27 % of pyte's time on TUI output).
`FastParser` matches whole tokens (text runs, complete CSI/OSC/ESC sequences, C0 controls)
with one regex and dispatches them exactly as `ExtendedStream` (pyte's `Stream` plus the CSI
functions and control strings tmux has) would; anything unusual (C1 introducers,
intermediates, controls inside CSI, CAN/SUB) is handed to that state machine until it is
back in its ground state, so behaviour stays the same byte for byte. An escape sequence cut
by the end of a feed is held back until the next one.
"""

from __future__ import annotations

import functools
import logging
import re
from typing import Any, Callable

import pyte
from pyte.streams import Stream

from .csi_params import PARAMS_MEMO, parse_csi_params
from .sgr import apply_sgr

log = logging.getLogger(__name__)

# An unterminated sequence held across feeds beyond this many characters is given to pyte's
# state machine instead (a never-terminated OSC must not grow memory without bound).
PENDING_SEQUENCE_MAX_CHARS = 4096

_TEXT, _CSI_FINAL, _CONTROL, _OSC_BODY, _ESC_FINAL, _CHARSET, _SHARP, _OTHER_CHARSET, _IGNORED = (
    1, 4, 5, 7, 8, 9, 10, 11, 12,
)
_CSI_EXTENDED = 15
_OSC_CUT = 17
_TOKEN = re.compile(
    r"([^\x00\x07-\x0f\x1b\x7f\x9b\x9d]+)"  # 1 text: exactly pyte's Stream._text_pattern
    r"|\x1b\[(\??)([0-9;]*)([@-~])"  # 2-4 CSI: private flag, parameters, final
    r"|([\x07-\x0f])"  # 5 BEL BS HT LF VT FF CR SO SI
    r"|\x1b\]([^RP\x07\x1b\x9c])([^\x07\x1b\x9c]*)(?:\x07|\x9c|\x1b\\)"  # 6-7 OSC code, body
    r"|\x1b([^\[\]#%()])"  # 8 two-character escape (DECSC, RI, RIS, ...)
    r"|\x1b[()]([\s\S])"  # 9 G0/G1 charset designation
    r"|\x1b#([\s\S])"  # 10 DEC "sharp" sequences
    r"|\x1b%([\s\S])"  # 11 select other charset: a no-op for text input
    r"|([\x00\x7f])"  # 12 NUL, DEL
    # 13-15 CSI that pyte's parser would break on: a <=> prefix (kitty keyboard, XTVERSION,
    # secondary DA), ':' sub-parameters (SGR 38:2::r:g:b, 4:3), or intermediate bytes.
    r"|\x1b\[([<=>?]?)([0-9;:]*[0-9;]*)[ -/]*([@-~])"
    # 16-17 OSC cut short by an escape other than ST: it ends there and the escape starts the
    # next sequence, as in tmux and ghostty (pyte would swallow the output after it).
    r"|\x1b\]([^RP\x07\x1b\x9c])([^\x07\x1b\x9c]*)(?=\x1b[^\\])"
)
# The start of a sequence above that the end of the input cut short.
_PARTIAL = re.compile(
    r"\x1b(?:\[\??[0-9;]*|\](?:[^RP\x07\x1b\x9c][^\x07\x1b\x9c]*\x1b?)?|[()#%])?\Z"
)

_COLOUR_SELECTORS = ("38", "48", "58")


def colon_sgr_to_semicolons(params: str) -> str:
    """SGR parameters with ':' sub-parameters in the ';' form the SGR code understands.

    `38:2::R:G:B` / `38:2:R:G:B` -> `38;2;R;G;B`, `38:5:N` -> `38;5;N`, `4:N` (curly and other
    underline styles) -> `4` or `24`; underline colour (58) is dropped, as tmux cannot show it."""
    out: list[str] = []
    for param in params.split(";"):
        if ":" not in param:
            out.append(param)
            continue
        parts = param.split(":")
        head = parts[0]
        if head in _COLOUR_SELECTORS and len(parts) >= 3:
            if head == "58":
                continue
            if parts[1] == "2" and len(parts) >= 5:
                out += [head, "2", *parts[-3:]]
            elif parts[1] == "5":
                out += [head, "5", parts[2]]
        elif head == "4":
            out.append("24" if parts[1] == "0" else "4")
        else:
            out.append(head)
    return ";".join(p or "0" for p in out) if out else "0"


# CSI functions tmux has and pyte lacks: scroll up/down (SU, SD), repeat character (REP),
# HPA as "`" (pyte has it as "'"), tab forward/back (CHT, CBT), SCOSC/SCORC.
EXTRA_CSI = {
    "S": "scroll_up",
    "T": "scroll_down",
    "b": "repeat_last_character",
    "`": "cursor_to_column",
    "I": "cursor_forward_tab",
    "Z": "cursor_back_tab",
    "s": "save_cursor",
    "u": "restore_cursor",
}
# DCS, SOS, PM and APC open a string that is swallowed up to ST (ESC \), as in tmux.
STRING_ESCAPES = {"P": "start_string", "X": "start_string", "^": "start_string", "_": "start_string",
                  "\\": "end_string"}
# DECKPAM / DECKPNM: recorded as private mode 66 (DECNKM) so an attached client can mirror it.
KEYPAD_ESCAPES = {"=": "keypad_application", ">": "keypad_numeric"}


# An OSC body longer than this is cut to it (FastParser keeps at least as much pending).
OSC_BODY_MAX_CHARS = PENDING_SEQUENCE_MAX_CHARS - 4
_IN_ESCAPE, _IN_CODE, _IN_BODY, _IN_BODY_ESCAPE = "escape", "code", "body", "body-escape"


def _next_osc_state(state: str | None, char: str, at_ground: bool) -> str | None:
    """Where pyte's parser is in an OSC after `char`: ESC ] (or C1 OSC), its code (R and P,
    the palette, take no body), the body, an ESC in the body; None outside one."""
    if state is None:
        if at_ground and char == "\x1b":
            return _IN_ESCAPE
        return _IN_CODE if at_ground and char == "\x9d" else None
    if state == _IN_ESCAPE:
        return _IN_CODE if char == "]" else None
    if state == _IN_CODE:
        return None if char in "RP" else _IN_BODY
    if state == _IN_BODY:
        return _IN_BODY_ESCAPE if char == "\x1b" else None if char in "\x07\x9c" else _IN_BODY
    return None  # ESC \\ ended it


class ExtendedStream(Stream):
    """pyte's `Stream` with EXTRA_CSI, where a parser error skips a character instead of raising."""

    csi = {**Stream.csi, **EXTRA_CSI}
    escape = {**Stream.escape, **STRING_ESCAPES, **KEYPAD_ESCAPES}
    events = (
        Stream.events
        | frozenset(EXTRA_CSI.values())
        | frozenset(STRING_ESCAPES.values())
        | frozenset(KEYPAD_ESCAPES.values())
    )

    def __init__(self, screen: pyte.Screen | None = None) -> None:
        super().__init__(screen)
        # In pyte's `Stream` this flag only makes it drop charset designations and SO/SI,
        # which xterm and tmux honour in UTF-8 too (ncurses draws its boxes with them).
        self.use_utf8 = False
        # Where pyte's parser is in an OSC (_next_osc_state), to end one as tmux does.
        self._osc: str | None = None
        self._osc_chars = 0
        self._at_ground = True

    def _send_to_parser(self, data: str) -> bool | None:
        osc = self._osc
        if osc == _IN_BODY_ESCAPE and data != "\\":
            # An escape other than ST cuts the OSC short, as in tmux: ST ends it there, and the
            # escape starts the next sequence (pyte would take both into the OSC and go on).
            self._osc = None
            self._send("\\")
            self._send_to_parser("\x1b")
            return self._send_to_parser(data)
        if osc == _IN_BODY and data not in "\x07\x1b\x9c":
            self._osc_chars += 1
            if self._osc_chars > OSC_BODY_MAX_CHARS:
                return None  # the body past its bound is dropped (the fast path keeps as much)
        at_ground = self._at_ground
        result = self._send(data)
        self._at_ground = bool(result)
        self._osc = _next_osc_state(osc, data, at_ground)
        if self._osc == _IN_CODE:
            self._osc_chars = 0
        return result

    def _send(self, data: str) -> bool | None:
        try:
            assert self._parser is not None
            return self._parser.send(data)
        except Exception:
            log.debug("pyte parser error on %r; parser reset", data, exc_info=True)
            self._initialize_parser()
            self._osc = None
            return True


class FastParser:
    """Feeds decoded text to a pyte screen, dispatching the same events as pyte's `Stream`."""

    def __init__(self, screen: pyte.Screen) -> None:
        self._screen = screen
        self._fsm = ExtendedStream(screen)  # pyte's state machine, for what the tokenizer leaves
        self._fsm_in_ground = True
        self._pending = ""
        # Handlers without their never-raise wrappers (the loop below catches instead), used
        # unless a control string is open: the wrappers are what swallows events inside one.
        self._raw = _Handlers(screen, raw=True)
        self._guarded = _Handlers(screen, raw=False)

    @property
    def idle(self) -> bool:
        """True when no escape sequence is half-parsed (the next character starts afresh)."""
        return self._fsm_in_ground and not self._pending

    def feed(self, text: str) -> None:
        """Parse `text` and apply it to the screen. Never raises."""
        if self._pending:
            text, self._pending = self._pending + text, ""
        end = len(text)
        position = 0
        match = _TOKEN.match
        screen = self._screen
        raw, guarded = self._raw, self._guarded
        params_memo = PARAMS_MEMO
        while position < end:
            if not self._fsm_in_ground:
                position = self._feed_state_machine(text, position)
                continue
            token = match(text, position)
            if token is None:
                if _PARTIAL.match(text, position):
                    if end - position <= PENDING_SEQUENCE_MAX_CHARS:
                        self._pending = text[position:]
                        return
                    if text.startswith("\x1b]", position):
                        # An OSC this long stays open (the output after it is its body, as in
                        # tmux) but keeps only its start, and an ESC that may begin its end.
                        tail = "\x1b" if text.endswith("\x1b") else ""
                        self._pending = text[position : position + PENDING_SEQUENCE_MAX_CHARS - 1] + tail
                        return
                position = self._feed_state_machine(text, position)
                continue
            position = token.end()
            kind = token.lastindex
            handlers = guarded if screen.in_string else raw
            try:
                if kind == _TEXT:
                    handlers.draw(token.group(1))
                elif kind == _CSI_FINAL:
                    private, params, final = token.group(2, 3, 4)
                    values = params_memo.get(params) or parse_csi_params(params)
                    if final == "m" and not private and handlers is raw:  # SGR, the commonest
                        cursor = screen.cursor
                        cursor.attrs = apply_sgr(cursor.attrs, values, screen.default_char)
                        continue
                    handler = handlers.csi.get(final)
                    if handler is None:
                        screen.debug()
                    elif private:
                        handler(*values, private=True)
                    else:
                        handler(*values)
                elif kind == _CONTROL:
                    handlers.basic[token.group(5)]()
                elif kind == _OSC_BODY or kind == _OSC_CUT:
                    code, body = token.group(6, 7) if kind == _OSC_BODY else token.group(16, 17)
                    param = body[1:]  # pyte drops the first character (the ";") whatever it is
                    if code in "01":
                        handlers.set_icon_name(param)
                    if code in "02":
                        handlers.set_title(param)
                elif kind == _ESC_FINAL:
                    handlers.escape.get(token.group(8), screen.debug)()
                elif kind == _SHARP:
                    handlers.sharp.get(token.group(10), screen.debug)()
                elif kind == _CHARSET:
                    handlers.define_charset(token.group(9), token.group(0)[1])
                elif kind == _CSI_EXTENDED:
                    self._extended_csi(handlers, *token.group(13, 14, 15))
                # _OTHER_CHARSET and _IGNORED change nothing.
            except Exception:
                screen.hook_errors += 1
                log.debug("event for %r failed", token.group(0), exc_info=True)

    def _extended_csi(self, handlers: Any, prefix: str, params: str, final: str) -> None:
        """CSI forms pyte cannot parse, handled as tmux does: SGR with ':' sub-parameters is
        applied; a secondary device-attributes query is answered; the rest is ignored."""
        screen = self._screen
        if not prefix and final == "m":
            values = parse_csi_params(colon_sgr_to_semicolons(params))
            cursor = screen.cursor
            cursor.attrs = apply_sgr(cursor.attrs, values, screen.default_char)
        elif prefix == ">" and final == "c" and params in ("", "0"):
            # Answered as pyte's own parser answers it (with the primary attributes), so the
            # fast path and plain emulation stay byte-identical; programs accept either.
            handlers.csi["c"]()

    def _feed_state_machine(self, text: str, position: int) -> int:
        """Give characters to pyte's parser until it is back in its ground state."""
        send = self._fsm._send_to_parser  # resets pyte's parser on an error, and ends OSCs as tmux
        end = len(text)
        ground = False
        while position < end:
            ground = bool(send(text[position]))
            position += 1
            if ground:
                break
        self._fsm_in_ground = ground
        return position


class _Handlers:
    """A screen's event handlers by escape table, bound once (raw: without their guards)."""

    def __init__(self, screen: pyte.Screen, raw: bool) -> None:
        def bind(name: str) -> Callable[..., Any]:
            method = getattr(screen, name)
            unguarded = getattr(method, "__wrapped__", None)
            return unguarded.__get__(screen) if raw and unguarded is not None else method

        def table(mapping: dict[str, str]) -> dict[str, Callable[..., Any]]:
            return {key: bind(name) for key, name in mapping.items()}

        self.basic = table(ExtendedStream.basic)
        self.escape = table(ExtendedStream.escape)
        self.sharp = table(ExtendedStream.sharp)
        self.csi = table(ExtendedStream.csi)
        self.set_title = bind("set_title")
        self.set_icon_name = bind("set_icon_name")
        self.define_charset = bind("define_charset")
        self.draw = bind("draw")
        draw_function = getattr(screen, "_draw", None)
        if raw and draw_function is not None:  # skip the screen's draw -> implementation hop
            self.draw = functools.partial(draw_function, screen)
