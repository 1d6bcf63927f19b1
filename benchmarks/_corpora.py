"""Terminal-output corpora for the daemon benchmark, each ending in a unique marker line.

Three kinds of output a multiplexer floods with: `plain` text (logs, source), `colour` text
(`ls --color`, compiler and test-runner output with 16/256-colour SGR) and `tui` redraws
(absolute cursor moves, erase-line, a spinner rewritten with CR, a status bar, scrolling
inside a region and of the whole screen). The same name and size always give the same bytes:
every choice comes from a `random.Random` seeded with a string, which Python hashes the same
way on every run and version. A fourth, `real`, is the byte logs of real agent CLIs (Claude
Code, Codex, Gemini CLI, Aider) from ../shared/corpus, each repeated to a size: one corpus a log.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

CORPUS_NAMES = ("plain", "colour", "tui")
REAL = "real"
EMPTY = "empty"  # the marker line alone: what a run costs whatever it prints
# The TUI corpus addresses rows and columns absolutely, so it is written for this pane size.
COLUMNS = 80
LINES = 24
# The real logs were recorded in panes of this size; replayed in any other they draw differently.
REAL_COLUMNS = 120
REAL_LINES = 40
REAL_CORPUS_DIR = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "real"
SEED = "muxd-bench-1"
WRITE_CHUNK_BYTES = 1024 * 1024

ESC = "\x1b"
CSI = ESC + "["
RESET = CSI + "0m"
ERASE_LINE = CSI + "K"


@dataclass(frozen=True)
class Corpus:
    name: str
    path: Path
    size_bytes: int
    sha256: str
    marker: str  # the corpus's last line, found nowhere else in it
    columns: int = COLUMNS  # the pane it is written for
    lines: int = LINES


def end_marker(name: str) -> str:
    return f"MUXD-BENCH-END {name} {SEED}"


def write_corpus(name: str, directory: Path, target_bytes: int) -> Corpus:
    """Write corpus `name` of about `target_bytes` (whole lines or frames, then the marker) into `directory`."""
    rng = random.Random(f"{SEED}-{name}")
    pieces = _GENERATORS[name](rng)
    marker = end_marker(name)
    path = directory / f"{name}.bin"
    digest = hashlib.sha256()
    written = 0
    with path.open("wb") as fh:
        while written < target_bytes:
            chunk = "".join(_take_chars(pieces, min(WRITE_CHUNK_BYTES, target_bytes - written))).encode()
            fh.write(chunk)
            digest.update(chunk)
            written += len(chunk)
        tail = (_tui_ending() if name == "tui" else "") + marker + "\n"
        data = tail.encode()
        fh.write(data)
        digest.update(data)
        written += len(data)
    return Corpus(name=name, path=path, size_bytes=written, sha256=digest.hexdigest(), marker=marker)


def real_logs(corpus_dir: Path = REAL_CORPUS_DIR) -> list[Path]:
    """The raw byte logs of the real agent sessions (`<agent>/<agent>_raw.bin`); none if the corpus is absent."""
    return sorted(corpus_dir.glob("*/*_raw.bin"))


def write_real_corpus(log: Path, directory: Path, target_bytes: int) -> Corpus:
    """`log` repeated whole until about `target_bytes` (at least once), then the marker on a line of its own."""
    name = f"{REAL}-{log.parent.name}"
    data = log.read_bytes()
    copies = max(1, round(target_bytes / len(data)))
    marker = end_marker(name)
    # The logs end at a shell prompt: the marker goes on the next line, in the default style.
    tail = f"{RESET}\n{marker}\n".encode()
    path = directory / f"{name}.bin"
    digest = hashlib.sha256()
    with path.open("wb") as fh:
        for chunk in [data] * copies + [tail]:
            fh.write(chunk)
            digest.update(chunk)
    return Corpus(name=name, path=path, size_bytes=len(data) * copies + len(tail), sha256=digest.hexdigest(),
                  marker=marker, columns=REAL_COLUMNS, lines=REAL_LINES)


def _take_chars(pieces: Iterator[str], at_least: int) -> Iterator[str]:
    taken = 0
    while taken < at_least:
        piece = next(pieces)
        taken += len(piece)  # characters, not bytes: the TUI's few non-ASCII glyphs only overshoot
        yield piece


# ------------------------------------------------------------------ shared text material

_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _vocabulary(rng: random.Random, size: int = 3000) -> list[str]:
    words = ["".join(rng.choice(_LETTERS) for _ in range(rng.randint(1, 11))) for _ in range(size)]
    words += ["the", "a", "of", "to", "in", "is", "error", "warning", "ok", "self", "return", "None",
              "0x7f3a", "42", "3.14159", "(x)", "[i]", "{}", "=>", "==", "--", "#", "/usr/lib", "--help"]
    return words


def _text_pool(rng: random.Random, words: list[str], chars: int = 1 << 20) -> str:
    """One long run of words and punctuation; lines are slices of it (fast and varied)."""
    parts: list[str] = []
    total = 0
    while total < chars:
        word = rng.choice(words)
        sep = rng.choices((" ", ", ", ". ", ": ", " = ", "; ", "  "), weights=(70, 8, 6, 4, 4, 3, 5))[0]
        parts.append(word + sep)
        total += len(word) + len(sep)
    return "".join(parts)


def _line_length(rng: random.Random) -> int:
    """Mostly shorter than the pane; one in six wraps once, one in twenty-five wraps several times."""
    roll = rng.random()
    if roll < 0.08:
        return 0
    if roll < 0.80:
        return rng.randint(5, COLUMNS - 1)
    if roll < 0.96:
        return rng.randint(COLUMNS, 2 * COLUMNS)
    return rng.randint(2 * COLUMNS, 5 * COLUMNS)


# ------------------------------------------------------------------ plain

def _plain(rng: random.Random) -> Iterator[str]:
    pool = _text_pool(rng, _vocabulary(rng))
    limit = len(pool) - 6 * COLUMNS
    while True:
        lines: list[str] = []
        for _ in range(512):
            length = _line_length(rng)
            start = rng.randrange(limit)
            text = pool[start:start + length].strip()
            if rng.random() < 0.15:  # source-code indentation
                text = "\t" * rng.randint(1, 3) + text
            elif rng.random() < 0.05:
                text = f"{rng.randint(1, 99999):>6}  {text}"
            lines.append(text + "\n")
        yield "".join(lines)


# ------------------------------------------------------------------ colour

_LS_STYLES = ("01;34", "01;32", "01;36", "00", "01;31", "40;33;01", "01;35", "30;42", "37;41")


def _sgr(params: str) -> str:
    return f"{CSI}{params}m"


def _colour(rng: random.Random) -> Iterator[str]:
    words = _vocabulary(rng)
    pool = _text_pool(rng, words)
    limit = len(pool) - 6 * COLUMNS

    def text(length: int) -> str:
        start = rng.randrange(limit)
        return pool[start:start + length].strip()

    def ls_line() -> str:
        entries = []
        for _ in range(rng.randint(2, 7)):
            name = rng.choice(words) + rng.choice(("", "", ".py", ".c", ".tar.gz", "/", ".sh"))
            entries.append(_sgr("0") + _sgr(rng.choice(_LS_STYLES)) + name + RESET + " " * rng.randint(1, 6))
        return "".join(entries)

    def compiler_line() -> str:
        level, style = rng.choice((("error", "1;31"), ("warning", "1;35"), ("note", "1;36")))
        where = f"src/{rng.choice(words)}/{rng.choice(words)}.c:{rng.randint(1, 3000)}:{rng.randint(1, 80)}: "
        return (_sgr("1") + where + RESET + _sgr(style) + level + ": " + RESET
                + text(rng.randint(10, 120)) + " [" + _sgr("1") + "-W" + rng.choice(words) + RESET + "]")

    def palette_line() -> str:
        parts = []
        for _ in range(rng.randint(2, 10)):
            kind = rng.random()
            if kind < 0.4:
                params = f"38;5;{rng.randrange(256)}"
            elif kind < 0.6:
                params = f"48;5;{rng.randrange(256)};38;5;{rng.randrange(256)}"
            elif kind < 0.85:
                params = str(rng.choice((30, 31, 32, 33, 34, 35, 36, 37, 90, 91, 92, 93, 94, 95, 96, 97)))
            else:
                params = f"{rng.choice((1, 2, 3, 4, 7))};{rng.randint(40, 47)}"
            parts.append(_sgr(params) + text(rng.randint(2, 25)) + rng.choice((RESET, _sgr("39;49"), _sgr("22;39"))))
            parts.append(" ")
        return "".join(parts) + RESET

    def test_line() -> str:
        verdict = rng.choices((_sgr("32") + "PASSED", _sgr("31") + "FAILED", _sgr("33") + "SKIPPED"),
                              weights=(85, 5, 10))[0]
        return (f"tests/test_{rng.choice(words)}.py::test_{rng.choice(words)}_{rng.choice(words)} "
                + verdict + RESET + f" {_sgr('2')}[{rng.randint(0, 100):3d}%]{RESET}")

    makers: list[Callable[[], str]] = [ls_line, compiler_line, palette_line, test_line]
    while True:
        lines: list[str] = []
        for _ in range(256):
            roll = rng.random()
            if roll < 0.15:
                line = text(_line_length(rng))  # uncoloured lines between the coloured ones
            else:
                line = rng.choices(makers, weights=(30, 25, 25, 20))[0]()
            lines.append(line + "\n")
        yield "".join(lines)


# ------------------------------------------------------------------ tui

_SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
LOG_TOP, LOG_BOTTOM = 2, LINES - 5       # rows 2..19: a scrolling log inside a scroll region
SPINNER_ROW, PROGRESS_ROW, STATUS_ROW = LINES - 3, LINES - 2, LINES


def _cup(row: int, column: int = 1) -> str:
    return f"{CSI}{row};{column}H"


def _tui(rng: random.Random) -> Iterator[str]:
    words = _vocabulary(rng)
    pool = _text_pool(rng, words)
    limit = len(pool) - 2 * COLUMNS
    frame = 0

    def text(length: int) -> str:
        start = rng.randrange(limit)
        return pool[start:start + length]

    def log_line() -> str:
        style = rng.choice(("0", "1", "2", "32", "33", "31", "36", "38;5;244", "38;5;117"))
        return _sgr(style) + text(rng.randint(10, COLUMNS - 2)).rstrip() + RESET + ERASE_LINE

    def full_redraw() -> str:
        out = [CSI + "?25l", RESET, CSI + "H", CSI + "2J",
               _cup(1) + _sgr("1;44;37") + f" bench-tui  frame {frame:<8}".ljust(COLUMNS) + RESET]
        for row in range(LOG_TOP, LOG_BOTTOM + 1):
            out.append(_cup(row) + log_line())
        out.append(_cup(LOG_BOTTOM + 1) + "─" * COLUMNS)
        return "".join(out)

    def status_bar() -> str:
        left = f" NORMAL  {rng.choice(words)}.py  [+] "
        right = f" {rng.randint(1, 9999)}:{rng.randint(1, 200)}  {frame % 100:2d}% "
        return (_cup(STATUS_ROW) + _sgr("7") + left + " " * (COLUMNS - len(left) - len(right)) + right
                + RESET)

    while True:
        out: list[str] = []
        if frame % 600 == 0:
            out.append(full_redraw())
        roll = rng.random()
        if roll < 0.55:  # new lines at the bottom of the log region, which scrolls
            out.append(f"{CSI}{LOG_TOP};{LOG_BOTTOM}r")
            for _ in range(rng.randint(1, 3)):
                out.append(_cup(LOG_BOTTOM) + "\n" + log_line())
            out.append(CSI + "r")
        elif roll < 0.70:  # a list view repainted row by row
            for row in range(LOG_TOP, LOG_BOTTOM + 1):
                out.append(_cup(row) + log_line())
        elif roll < 0.78:  # insert/delete lines in the middle of the log, like an editor
            row = rng.randint(LOG_TOP, LOG_BOTTOM - 3)
            out.append(f"{CSI}{LOG_TOP};{LOG_BOTTOM}r" + _cup(row) + f"{CSI}{rng.randint(1, 3)}"
                       + rng.choice("LM") + log_line() + CSI + "r")
        elif roll < 0.82:  # scroll the log back down with reverse index
            out.append(f"{CSI}{LOG_TOP};{LOG_BOTTOM}r" + _cup(LOG_TOP) + ESC + "M" + log_line() + CSI + "r")
        elif roll < 0.84:  # the whole screen scrolls: output printed below the UI
            out.append(_cup(LINES) + RESET + "\n" + text(rng.randint(0, COLUMNS - 1)).rstrip() + "\n")
        # the spinner line, rewritten in place several times per frame
        out.append(_cup(SPINNER_ROW))
        for tick in range(rng.randint(2, 6)):
            glyph = _SPINNER[(frame + tick) % len(_SPINNER)]
            out.append(f"\r{_sgr('38;5;208')}{glyph}{RESET} {rng.choice(words).capitalize()}… "
                       f"({frame // 10}s · ↓ {rng.randint(1, 90)}.{rng.randint(0, 9)}k tokens · esc to interrupt)"
                       + ERASE_LINE)
        if frame % 3 == 0:
            done = frame % 41
            out.append(_cup(PROGRESS_ROW) + "[" + _sgr("32") + "#" * done + RESET + "-" * (40 - done)
                       + f"] {done * 100 // 40:3d}%" + ERASE_LINE)
        if frame % 5 == 0:
            out.append(status_bar())
        out.append(_cup(SPINNER_ROW, 3))  # park the cursor where a prompt would be
        frame += 1
        yield "".join(out)


def _tui_ending() -> str:
    """Leave the UI the way a TUI exits: region and attributes reset, cursor shown, below the UI."""
    return CSI + "r" + RESET + CSI + "?25h" + _cup(LINES) + "\n"


_GENERATORS: dict[str, Callable[[random.Random], Iterator[str]]] = {
    EMPTY: lambda rng: iter(()),  # never drawn from: write_corpus asks for 0 bytes
    "plain": _plain,
    "colour": _colour,
    "tui": _tui,
}


def write_full_rows(directory: Path, count: int, *, columns: int = COLUMNS, width: int | None = None,
                    colour: bool = False) -> tuple[Path, str]:
    """`count` distinct numbered lines of `width` characters (default: the full `columns`), for measuring
    scrollback memory; `colour` paints every word in one of 256 colours. Returns the file and its last
    line as a plain capture shows it."""
    width = columns if width is None else min(width, columns)
    rng = random.Random(f"{SEED}-rows")
    pool = _text_pool(rng, _vocabulary(rng), chars=1 << 18)
    lines, texts = [], []
    for number in range(1, count + 1):
        head = f"row {number:06d} "
        start = rng.randrange(len(pool) - width)
        body = pool[start:start + width - len(head)].replace(" ", "_")  # no trailing space to trim
        texts.append(head + body)
        if colour:  # a colour run every few characters, as syntax highlighting or `ls --color` paint
            cuts = sorted(rng.sample(range(1, len(body)), k=min(len(body) - 1, width // 8)))
            runs = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)])]
            body = "".join(_sgr(f"38;5;{rng.randrange(256)}") + run for run in runs) + RESET
        lines.append(head + body)
    path = directory / f"rows-{columns}-{width}{'-colour' if colour else ''}.txt"
    path.write_text("\n".join(lines) + "\n")
    return path, texts[-1]
