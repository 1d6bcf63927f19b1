"""Hostile terminal output for the emulator fuzzer: what bytes a fuzz case feeds.

Four kinds, each a pure function of a `random.Random` (so a seed gives the same bytes on
every run): `random_bytes`; `escape_soup`, random bytes biased to escape-sequence fragments
(CSI with huge parameters, unterminated OSC/DCS/APC strings, SGR with colons, charset
designations, scroll margins, alternate-screen toggles, wide/combining/invalid UTF-8, queries);
`mutate_bytes`, real output with bytes flipped, inserted and deleted; `mutate_sequences`, real
output cut into escape sequences and lines that are shuffled, duplicated and dropped.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable

ESC = b"\x1b"
CSI = b"\x1b["
# String terminators, and their absence or odd forms: a string left open swallows what
# follows (a DCS up to ST in tmux and pyte), so those are rare enough for the rest to be seen.
TERMINATORS = (b"\x07", b"\x1b\\")
ODD_TERMINATORS = (b"", b"\x1b", b"\x9c", b"\xc2\x9c", b"\x18", b"\x1a")
ODD_TERMINATOR_CHANCE = 0.1
WIDE = "中文字😀🎉한ｱＡ🇫🇷".encode()
COMBINING = ("e\u0301", "a\u0308\u0323", "\u200d", "\ufe0f", "👩\u200d💻", "\u0301\u0301\u0301",
             "🏳️\u200d🌈")
# Invalid UTF-8: lone continuation, overlong, surrogate, past U+10FFFF, truncated, 0xFE/0xFF.
BAD_UTF8 = (b"\x80", b"\xbf\xbf", b"\xc0\xaf", b"\xe0\x80\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80",
            b"\xe4\xb8", b"\xf0\x9f\x98", b"\xfe", b"\xff", b"\xc2", b"\xf8\x88\x80\x80\x80")
# 8-bit C1 controls, raw and UTF-8 encoded (CSI, OSC, DCS, ST, NEL, IND, RI, SS2).
C1 = (b"\x9b", b"\x9d", b"\x90", b"\x9c", b"\x85", b"\xc2\x9b", b"\xc2\x9d", b"\xc2\x90", b"\xc2\x85",
      b"\xc2\x84", b"\xc2\x8d", b"\xc2\x8e")
DEC_MODES = (1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 25, 45, 47, 66, 67, 69, 80, 95, 1000, 1001, 1002, 1003, 1004,
             1005, 1006, 1007, 1015, 1016, 1034, 1036, 1047, 1048, 1049, 2004, 2026, 2027, 2031, 8452)
CSI_FINALS = b"@ABCDEFGHIJKLMPSTXZ^`abcdefghijlmnpqrstuvwxz{|}~"
OSC_NUMBERS = (0, 1, 2, 4, 7, 8, 9, 10, 11, 12, 22, 52, 104, 110, 111, 112, 133, 633, 777, 1337, 3008)
SIMPLE_ESCAPES = (b"7", b"8", b"c", b"D", b"E", b"M", b"H", b"=", b">", b"Z", b"\\", b"n", b"o", b"N", b"O",
                  b"#8", b"#3", b"#4", b"#5", b"#6", b" F", b" G", b"%G", b"%@", b"6", b"9", b"l", b"m")
QUERIES = (b"\x1b[6n", b"\x1b[?6n", b"\x1b[5n", b"\x1b[c", b"\x1b[>c", b"\x1b[=c", b"\x1b[>q", b"\x1b[?u",
           b"\x1b[?2026$p", b"\x1b[4$p", b"\x1b[18t", b"\x1b[14t", b"\x1b[16t", b"\x1b]10;?\x07",
           b"\x1b]11;?\x1b\\", b"\x1b]4;1;?\x07", b"\x1bP$qm\x1b\\", b"\x1bP$qr\x1b\\", b"\x1bP+q544e\x1b\\",
           b"\x1b[?996n", b"\x1b[x")
WORDS = (b"error", b"ok", b"Thinking", b"\xe2\x8f\xba Bash(ls)", b"> ", b"\xe2\x94\x80" * 20, b"$ ", b"tokens")
C0 = bytes(range(0x20)) + b"\x7f"


def random_bytes(rng: random.Random, size: int) -> bytes:
    """Uniformly random bytes."""
    return rng.randbytes(size)


# ------------------------------------------------------------------ escape soup

def _number(rng: random.Random) -> bytes:
    roll = rng.random()
    if roll < 0.15:
        return b""
    if roll < 0.6:
        return str(rng.randint(0, 12)).encode()
    if roll < 0.8:
        return str(rng.randint(0, 1100)).encode()
    if roll < 0.93:
        return str(rng.choice((65535, 65536, 2**31 - 1, 2**31, 2**32, 2**63, 10**12))).encode()
    return b"9" * rng.randint(20, 300)  # far past any integer type


def _params(rng: random.Random) -> bytes:
    count = rng.choice((0, 1, 1, 2, 3, rng.randint(4, 40)))
    out = bytearray()
    for index in range(count):
        if index:
            out += b":" if rng.random() < 0.1 else b";"
        out += _number(rng)
    return bytes(out)


def _csi(rng: random.Random) -> bytes:
    prefix = rng.choice((b"", b"", b"", b"?", b">", b"=", b"<"))
    intermediate = rng.choice((b"",) * 8 + (b" ", b"!", b"$", b"'", b"\"", b"*", b"#"))
    final = bytes([rng.choice(CSI_FINALS) if rng.random() < 0.9 else rng.randint(0x40, 0x7E)])
    return CSI + prefix + _params(rng) + intermediate + final


def _sgr(rng: random.Random) -> bytes:
    forms = (
        lambda: b"38:2::%d:%d:%d" % (rng.randint(0, 300), rng.randint(0, 255), rng.randint(0, 255)),
        lambda: b"38;2;%d;%d;%d" % (rng.randint(0, 255), rng.randint(0, 999), rng.randint(0, 255)),
        lambda: b"48:5:%d" % rng.randint(0, 300),
        lambda: b"38;5;%s" % _number(rng),
        lambda: b"4:%d" % rng.randint(0, 6),
        lambda: b"58:2:%d:%d:%d" % (rng.randint(0, 255), rng.randint(0, 255), rng.randint(0, 255)),
        lambda: b"38;2",
        lambda: b"48:2:",
        lambda: str(rng.randint(0, 109)).encode(),
        lambda: _params(rng),
    )
    parts = [rng.choice(forms)() for _ in range(rng.randint(1, 4))]
    return CSI + b";".join(parts) + b"m"


def _string(rng: random.Random, introducer: bytes) -> bytes:
    """An OSC/DCS/APC/PM/SOS string, sometimes huge, often unterminated or wrongly ended."""
    if introducer == b"]":
        head = b"%d;" % rng.choice(OSC_NUMBERS) if rng.random() < 0.85 else _params(rng) + b";"
    else:
        head = rng.choice((b"", b"q", b"$q", b"+q", b"1$r", b"Gf=32,a=T;", b"0;1;2q#0;2;0;0;0", b"tmux;"))
    # Mostly short; a long one now and then (a huge one would make a soup mostly string body).
    roll = rng.random()
    size = rng.randint(0, 64) if roll < 0.9 else rng.randint(64, 4096) if roll < 0.998 else rng.randint(4096, 100_000)
    body = rng.randbytes(size) if rng.random() < 0.3 else bytes(rng.choice(b"abcxyz;:/=.0123456789")
                                                                 for _ in range(min(size, 2048))) * (size // 2048 + 1)
    odd = rng.random() < ODD_TERMINATOR_CHANCE
    proper = TERMINATORS if introducer == b"]" else TERMINATORS[1:]  # BEL ends only an OSC
    return ESC + introducer + head + body[:size] + rng.choice(ODD_TERMINATORS + TERMINATORS if odd else proper)


def _text(rng: random.Random) -> bytes:
    roll = rng.random()
    if roll < 0.35:
        return b" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 12)))
    if roll < 0.55:
        return rng.choice(WIDE.decode()).encode() * rng.randint(1, 30)
    if roll < 0.7:
        return "".join(rng.choice(COMBINING) for _ in range(rng.randint(1, 8))).encode()
    if roll < 0.8:
        return b"".join(rng.choice(BAD_UTF8) for _ in range(rng.randint(1, 6)))
    if roll < 0.9:
        return bytes(rng.choice(C0) for _ in range(rng.randint(1, 6)))
    return rng.choice(C1)


def _margins(rng: random.Random) -> bytes:
    if rng.random() < 0.3:  # left/right margins only act with DECLRMM (mode 69) set
        return b"\x1b[?69h" + CSI + _number(rng) + b";" + _number(rng) + b"s"
    return CSI + _number(rng) + b";" + _number(rng) + b"r"


def _mode(rng: random.Random) -> bytes:
    modes = b";".join(str(rng.choice(DEC_MODES)).encode() for _ in range(rng.randint(1, 3)))
    return CSI + rng.choice((b"?", b"?", b"")) + modes + rng.choice((b"h", b"l", b"$p", b"s", b"r"))


def _alternate_screen(rng: random.Random) -> bytes:
    return CSI + b"?" + str(rng.choice((47, 1047, 1049))).encode() + rng.choice((b"h", b"l"))


def _charset(rng: random.Random) -> bytes:
    if rng.random() < 0.3:
        return rng.choice((b"\x0e", b"\x0f"))  # SO / SI
    return ESC + bytes([rng.choice(b"()*+-./")]) + bytes([rng.choice(b"0AB<>UK4C5RQKYE6Z7=%\"")])


def _edge_move(rng: random.Random) -> bytes:
    """A jump to a screen edge, then something wide or repeated that must be clipped there."""
    where = rng.choice((b"\x1b[999;999H", b"\x1b[1;999H", b"\x1b[999;1H", b"\x1b[999C", b"\x1b[H"))
    return where + rng.choice((WIDE[:3], WIDE[12:16], b"x\x1b[%sb" % _number(rng), b"\t\t\t", b"\x08\x08",
                               b"\x1b[%s@" % _number(rng), b"\x1b[%sP" % _number(rng)))


# (maker, weight). A lone ST now and then ends a string left open, as programs' next output would.
_SOUP: tuple[tuple[Callable[[random.Random], bytes], int], ...] = (
    (_csi, 30), (_sgr, 12), (_text, 25), (lambda rng: _string(rng, b"]"), 5),
    (lambda rng: _string(rng, bytes([rng.choice(b"P_^X")])), 1), (lambda rng: b"\x1b\\", 1),
    (_margins, 4), (_mode, 5), (_alternate_screen, 2), (_charset, 3),
    (lambda rng: ESC + rng.choice(SIMPLE_ESCAPES), 4), (_edge_move, 3), (lambda rng: rng.choice(QUERIES), 2),
    (lambda rng: b"\r\n", 6), (lambda rng: rng.randbytes(rng.randint(1, 8)), 2),
)
_SOUP_MAKERS = [maker for maker, _ in _SOUP]
_SOUP_WEIGHTS = [weight for _, weight in _SOUP]


def soup_token(rng: random.Random) -> bytes:
    """One escape-sequence fragment, text run or control."""
    return rng.choices(_SOUP_MAKERS, _SOUP_WEIGHTS)[0](rng)


def escape_soup(rng: random.Random, size: int) -> bytes:
    """About `size` bytes of soup tokens (cut at `size`: the last token may end mid-sequence)."""
    out = bytearray()
    while len(out) < size:
        out += soup_token(rng)
    return bytes(out[:size])


# ------------------------------------------------------------------ mutating real output

def _window(rng: random.Random, data: bytes, size: int) -> bytes:
    if len(data) <= size:
        return data
    start = rng.randrange(len(data) - size)
    return data[start:start + size]


def mutate_bytes(rng: random.Random, data: bytes, size: int) -> bytes:
    """A `size`-byte window of `data` with about one byte in 200 flipped, inserted or deleted."""
    out = bytearray(_window(rng, data, size))
    for _ in range(max(1, len(out) // 200)):
        if not out:
            out += rng.randbytes(8)
        at = rng.randrange(len(out))
        roll = rng.random()
        if roll < 0.3:
            out[at] ^= 1 << rng.randrange(8)
        elif roll < 0.45:
            out[at] = rng.choice((0x1B, 0x9B, 0x07, 0x00, 0xFF, 0x80, 0x3B, 0x3A))
        elif roll < 0.7:
            out[at:at] = rng.randbytes(rng.randint(1, 16)) if rng.random() < 0.5 else soup_token(rng)
        elif roll < 0.9:
            del out[at:at + rng.randint(1, 64)]
        else:
            out[at:at] = out[at:at + rng.randint(1, 256)]  # a stretch repeated
    return bytes(out)


# An escape sequence (CSI, a string, another escape), a line, a run of text, or a lone ESC:
# every byte of the input falls in exactly one token.
_TOKEN = re.compile(rb"""
    \x1b\[[0-?]*[ -/]*[@-~]
  | \x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?
  | \x1b[P_^X][^\x1b]*(?:\x1b\\)?
  | \x1b[ -/]*[0-~]
  | [^\x1b\n]*\n
  | [^\x1b\n]+
  | \x1b
""", re.X | re.S)


def tokens(data: bytes) -> list[bytes]:
    """`data` cut into escape sequences and lines (joined again, they give `data`)."""
    return _TOKEN.findall(data)


def mutate_sequences(rng: random.Random, pool: list[bytes], size: int) -> bytes:
    """About `size` bytes from a run of `pool` (tokens of real output) with whole sequences and
    lines shuffled, duplicated, dropped, cut short, and spliced from elsewhere in the pool."""
    count = max(1, min(len(pool), size // 24))
    start = rng.randrange(max(1, len(pool) - count))
    run = pool[start:start + count]
    for _ in range(max(1, len(run) // 20)):
        at = rng.randrange(len(run))
        span = rng.randint(1, 12)
        roll = rng.random()
        if roll < 0.25:
            piece = run[at:at + span]
            rng.shuffle(piece)
            run[at:at + span] = piece
        elif roll < 0.45:
            run[at:at] = run[at:at + span] * rng.randint(1, 6)
        elif roll < 0.65:
            del run[at:at + span]
        elif roll < 0.8:
            other = rng.randrange(len(pool))
            run[at:at] = pool[other:other + span]
        elif roll < 0.9:
            run[at] = run[at][:rng.randrange(len(run[at]) + 1)]  # a sequence cut short
        else:
            run.insert(at, soup_token(rng))
        if not run:
            run = [soup_token(rng)]
    return b"".join(run)[:max(size, 1) * 2]
