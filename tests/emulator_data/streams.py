"""Deterministic terminal output for the emulator tests: floods, TUI redraws, random mixes."""

from __future__ import annotations

import random

E = "\x1b"
WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu".split()
WIDE = ["中", "文", "字", "😀", "🎉", "한", "ｱ", "Ａ"]
COMBINING = ["e\u0301", "a\u0308", "n\u0303", "\u200d", "\ufe0f"]
SGRS = [
    f"{E}[0m", f"{E}[m", f"{E}[1m", f"{E}[2m", f"{E}[22m", f"{E}[31m", f"{E}[1;32m", f"{E}[4;35;42m",
    f"{E}[38;5;208m", f"{E}[48;5;27m", f"{E}[38;2;10;20;30m", f"{E}[7m", f"{E}[27m", f"{E}[9;3m",
    f"{E}[39;49m", f"{E}[0;1;5m", f"{E}[38;5;300m", f"{E}[38;2;1m", f"{E}[;1m", f"{E}[01;34m",
]


def words(rng: random.Random, width: int) -> str:
    out = []
    while sum(map(len, out)) + len(out) < width:
        out.append(rng.choice(WORDS))
    return " ".join(out)[:width]


def plain_flood(rng: random.Random, lines: int, max_width: int = 200) -> bytes:
    return "".join(words(rng, rng.choice([0, rng.randint(0, max_width)])) + "\r\n" for _ in range(lines)).encode()


def coloured_flood(rng: random.Random, lines: int, max_width: int = 200) -> bytes:
    out = []
    for _ in range(lines):
        parts = []
        for _ in range(rng.randint(0, 5)):
            parts.append(rng.choice(SGRS) if rng.random() < 0.6 else "")
            parts.append(words(rng, rng.randint(0, max_width // 3)))
        out.append("".join(parts) + (rng.choice(SGRS) if rng.random() < 0.2 else "") + "\r\n")
    return "".join(out).encode()


def wide_flood(rng: random.Random, lines: int) -> bytes:
    out = []
    for _ in range(lines):
        line = []
        for _ in range(rng.randint(0, 60)):
            roll = rng.random()
            line.append(rng.choice(WIDE) if roll < 0.4 else rng.choice(COMBINING) if roll < 0.5 else rng.choice("abc xyz"))
        out.append("".join(line) + "\r\n")
    return "".join(out).encode()


def tui_frames(rng: random.Random, frames: int, columns: int = 80, lines: int = 24) -> bytes:
    out = []
    spinner = "✻✽✶✳✢·"
    for frame in range(frames):
        for _ in range(rng.randint(1, 6)):
            out.append(f"{E}[{rng.randint(1, lines)};{rng.randint(1, columns)}H{E}[{rng.choice('012')}K")
            out.append(rng.choice(SGRS) + words(rng, rng.randint(0, columns)))
        out.append(f"{E}[{lines - 2};1H\r{E}[K{spinner[frame % 6]} Working… ({frame}s){E}[0m")
        if rng.random() < 0.2:
            out.append(f"{E}[{rng.randint(1, lines)};1H{E}[{rng.choice('012')}J")
        if rng.random() < 0.2:
            out.append(f"{E}[{lines};1H\r\n{words(rng, 30)}\r\n")
    return "".join(out).encode()


def random_stream(rng: random.Random, pieces: int) -> bytes:
    """A mix of everything: text, floods, controls, sequences (valid, odd and broken), bad UTF-8."""
    out: list[bytes] = []
    for _ in range(pieces):
        roll = rng.randrange(26)
        if roll == 0:
            out.append(plain_flood(rng, rng.randint(1, 40)))
        elif roll == 1:
            out.append(coloured_flood(rng, rng.randint(1, 40)))
        elif roll == 2:
            out.append(wide_flood(rng, rng.randint(1, 5)))
        elif roll == 3:
            out.append(f"{E}[{rng.randint(0, 30)};{rng.randint(0, 90)}H".encode())
        elif roll == 4:
            out.append(f"{E}[{rng.choice(['', '0', '1', '2', '3'])}{rng.choice('JK')}".encode())
        elif roll == 5:
            out.append(f"{E}[?{rng.choice([1049, 1047, 47])}{rng.choice('hl')}".encode())
        elif roll == 6:
            out.append(f"{E}]{rng.choice('012')};title {rng.randint(0, 99)}{rng.choice([chr(7), E + chr(92)])}".encode())
        elif roll == 7:
            out.append(rng.choice([b"\x07", b"\x08", b"\t", b"\r", b"\n", b"\r\n", b"\x0b", b"\x00", b"\x7f"]))
        elif roll == 8:
            top = rng.randint(0, 12)
            out.append(f"{E}[{top};{rng.randint(top, 30)}r".encode() if rng.random() < 0.7 else f"{E}[r".encode())
        elif roll == 9:
            out.append(f"{E}[{rng.randint(0, 5)}{rng.choice('@PXLMSTbABCDEFGdaef')}".encode())
        elif roll == 10:
            out.append(rng.choice([f"{E}7", f"{E}8", f"{E}M", f"{E}D", f"{E}E", f"{E}H", f"{E}[g", f"{E}[3g", f"{E}c"]).encode())
        elif roll == 11:
            out.append(f"{E}[{rng.choice(['?', ''])}{rng.choice([4, 7, 20, 6, 5, 25, 2004, 3])}{rng.choice('hl')}".encode())
        elif roll == 12:
            out.append(rng.choice([b"\xe4\xb8", b"\xff", b"\xc3(", b"\xe2\x82", b"\x9b", b"\xc2\x9b1m", b"\xc2\x9d0;t\x07"]))
        elif roll == 13:
            out.append(rng.choice([f"{E}[?5H", f"{E}[1;2;3;4;5H", f"{E}[²m", f"{E}[>c", f"{E}[6n", f"{E}[5n", f"{E}[c",
                                   f"{E}[1$p", f"{E}[2\x08J", f"{E}[1\x18m", f"{E}]R", f"{E}]P1", f"{E}(0", f"{E}#8",
                                   f"{E}%G", f"{E}[38:5:1m", f"{E}[<0;1;1M", f"{E}]0;a{E}xb\x07", f"{E}{E}[1m"]).encode())
        elif roll == 14:
            out.append(rng.choice(SGRS).encode())
        elif roll == 15:
            out.append("".join(rng.choice(WIDE + COMBINING + ["x"]) for _ in range(rng.randint(1, 9))).encode())
        elif roll == 16:
            out.append(tui_frames(rng, 1))
        elif roll == 17:
            out.append(f"{E}[{rng.randint(1, 9)}{rng.choice('ST')}".encode())
        else:
            out.append(words(rng, rng.randint(0, 120)).encode())
    return b"".join(out)
