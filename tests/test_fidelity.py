"""Screen fidelity: muxd's `capture-pane -p` must equal tmux 3.3a's for the same program.

Every case runs one program at 80x24 in a tmux server and in a muxd server (one of each
per module, one session per case): real programs (ls, vim, less, man, bash, seq, clear, a
curses program, a cursor-position query), or `cat` of a byte sequence aimed at one terminal
feature. Both are driven with the same keys; once both screens have settled on the expected
state the captures are compared with trailing blanks dropped. Cases marked `styles` also compare colours and attributes cell by cell, read from
`capture-pane -e` (the escape spelling may differ from tmux's; the styles may not).
Captures show what a person sees: tmux's DEC line-drawing cells are read as their glyphs
(see `as_seen`), where its `capture-pane -p` prints their ASCII codes.
"""

from __future__ import annotations

import difflib
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from fidelity_data.captures import as_seen, styled_lines, without_escapes
from muxd.testing.patience import stretched
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import WaitTimeout, wait_until

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is the reference")

COLUMNS, LINES = 80, 24
DATA_DIR = Path(__file__).parent / "fidelity_data"
# Both servers run each program with exactly this environment, whatever they add themselves.
PROGRAM_ENV = ("PATH=/usr/local/bin:/usr/bin:/bin", "TERM=xterm-256color", "LANG=C.UTF-8")
KEEP_PANE = "exec sleep 86400"  # keeps a finished program's pane (and its screen) alive
STABLE_POLLS = 3  # identical captures in a row before a screen counts as settled
POLL_INTERVAL_S = 0.05
SETTLE_TIMEOUT_S = 15.0
# Once tmux has settled, muxd gets this long to reach the same state before we compare anyway.
MUXD_GRACE_S = 4.0
TMUX_TIMEOUT_S = 10.0


# ------------------------------------------------------------------ the cases

@dataclass(frozen=True)
class Step:
    """Keys to send, then what the settled screen must show (`marker`) and no longer show."""

    keys: tuple[str, ...] = ()
    marker: str = ""
    absent: str = ""

    def reached(self, screen: str) -> bool:
        return self.marker in screen and not (self.absent and self.absent in screen)


@dataclass(frozen=True)
class Case:
    """One program, how to drive it, and which captures of it to compare."""

    name: str
    argv: tuple[str, ...]  # run in the work directory under PROGRAM_ENV
    steps: tuple[Step, ...]
    env: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()  # capture-pane flags of the compared capture
    styles: bool = False  # also compare cell styles from `capture-pane -e`
    also: tuple[tuple[str, ...], ...] = ()  # more capture-pane flag sets compared once settled


def shown(name: str, *parts: str | bytes) -> tuple[str, ...]:
    """argv that prints sequences/<name>.N.bin in order, waiting for a key between parts."""
    files = [f"sequences/{name}.{i}.bin" for i in range(len(parts))]
    script = "; read _; ".join(f"cat {f}" for f in files)
    return ("sh", "-c", f"stty -echo; {script}; {KEEP_PANE}")


E = "\x1b"


def alternate_screen(mode: int) -> tuple[str, str]:
    """Main screen text, the alternate screen `mode` entered and drawn on; then left, and AFTER.

    Where AFTER lands shows whether leaving restored the cursor as well as the screen.
    """
    return (f"main 1\nmain 2\nmain 3{E}[10;20Hcursor here{E}[10;20H{E}[?{mode}h"
            f"{E}[5;5Halt screen text{E}[20;1Halt ready", f"{E}[?{mode}lAFTER")


# Byte sequences written by `shown` cases: each is also the reproducer of its case.
SEQUENCES: dict[str, tuple[str | bytes, ...]] = {
    "long_lines": (
        "A" * 200 + "\n" + "B" * 80 + "\n" + "C" * 80 + "D\n" + "E" * 80 + "\rF\n"
        + "G" * 85 + "\b\bH\n" + f"{E}[?7l" + "I" * 90 + f"{E}[?7h\n"
        # Edits while a wrap is pending (the cursor sits past the last column).
        + "J" * 80 + f"{E}[KK\r\n" + "L" * 80 + f"{E}[1@M\r\n" + "N" * 80 + f"{E}[1PO\r\n"
        + "P" * 80 + f"{E}[1CQ\r\n" + "wrapped done\n",),
    "scroll_region": (
        f"{E}[2J{E}[H" + "\n".join(f"row {n:02d}" for n in range(1, 25))
        + f"{E}[5;15r{E}[15;1H\nregion A\nregion B\nregion C"
        + f"{E}[5;1H{E}Mreverse index{E}[8;1H{E}[2Linserted 2{E}[10;1H{E}[1Mdeleted 1"
        + f"{E}[r{E}[24;1Hregion done",),
    "csi_editing": (
        f"{E}[2J{E}[H"
        + f"0123456789abcdefghij{E}[1;5H{E}[3@\r\n"
        + f"0123456789abcdefghij{E}[2;5H{E}[3P\r\n"
        + f"0123456789abcdefghij{E}[3;5H{E}[3X\r\n"
        + f"0123456789abcdefghij{E}[4;10H{E}[K\r\n"
        + f"0123456789abcdefghij{E}[5;10H{E}[1K\r\n"
        + f"0123456789abcdefghij{E}[6;10H{E}[2KX\r\n"
        + f"abcdef\r{E}[4hXY{E}[4l\r\n"
        + "a\tb\tc\td\r\n"
        + f"{E}[3g{E}[10;5H{E}H{E}[10;15H{E}H{E}[10;1Hx\ty\tz\tw{E}[11;20H{E}[0g\r\n"
        + f"{E}[13;1Hrow13{E}[2Aup2{E}[5Cright5{E}[3Bdown3{E}[10Dleft10{E}[20Gcol20{E}[16drow16"
        + f"{E}7{E}[18;30Hsaved{E}8restored"
        + f"{E}[20;1Hline20 keep{E}[21;1Hline21 cut here{E}[22;1Hline22 gone{E}[21;12H{E}[J"
        + f"{E}[23;1Hediting done",),
    # Kept apart from the cases above so that one missing feature does not hide the others.
    "scroll_up_down": (
        "\r\n".join(f"row {n:02d}" for n in range(1, 25)) + f"{E}[2S{E}[23;1Hscreen up 2"
        f"{E}[5;15r{E}[2S{E}[14;1Hregion up 2{E}[3T{E}[5;1Hregion down 3{E}[r{E}[24;1Hscroll done",),
    "backspace_at_margin": ("H" * 80 + "\bI\r\nbackspace done\n",),
    "no_autowrap_wide": (f"{E}[?7l" + "x" * 78 + f"中文{E}[?7h\r\n" + f"{E}[?7l" + "ab中" * 30
                         + f"{E}[?7h\r\nno-wrap done\n",),
    "origin_mode": (f"{E}[5;10r{E}[?6h{E}[1;1Horigin top{E}[20;1Hclamped to bottom{E}[?6l{E}[r"
                    f"{E}[22;1Horigin done",),
    "cursor_outside_region": (
        f"{E}[5;10r{E}[7;1Hin{E}[20Aup{E}[12;1Hout{E}[20Bdown{E}[20;1Hbelow{E}[20Aupfar{E}[r"
        f"{E}[22;1Houtside done",),
    "cursor_addressing": (
        f"{E}[2;3Hx{E}[99;99Hcorner{E}[0;0Hhome{E}[5dvpa{E}[30`hpa{E}[7;1Ha\tb{E}[2Zd"
        f"{E}[9;1Haddressing done",),
    "save_restore_cursor": (
        f"line1{E}[10;20H{E}[s{E}[1;1Hmoved{E}[uback{E}7{E}[3;1H{E}[?1049h{E}[2;2Halt{E}[?1049l{E}8R"
        f"{E}[12;1Hsave done",),
    "string_sequences": (
        f"a{E}]0;title\x07b{E}]8;;http://x{E}\\link{E}]8;;{E}\\c{E}Pqdcs{E}\\d{E}_apc{E}\\e"
        f"{E}^pm{E}\\f{E}Xsos{E}\\g\r\nstrings done\n",),
    "invalid_utf8": (b"bad \xff\xfe utf8 \xe4\xb8 cut\r\nover \xc0\xaf long\r\ninvalid done\n",),
    "repeat_char": (f"Z{E}[5b repeated\r\n-{E}[79b\r\nrepeat done\n",),
    "sgr_dim": (f"{E}[2mdim{E}[0m {E}[1;2mbold dim{E}[22m normal\n{E}[2;31mdim red{E}[0m\ndim done\n",),
    "sgr_attributes": (
        f"{E}[1mbold{E}[0m {E}[3mitalic{E}[0m {E}[4munder{E}[0m "
        f"{E}[5mblink{E}[0m {E}[7mreverse{E}[0m {E}[9mstrike{E}[0m\n"
        f"{E}[31mred{E}[32mgreen{E}[33myellow{E}[34mblue{E}[35mmagenta{E}[36mcyan{E}[37mwhite{E}[0m\n"
        f"{E}[91mbright{E}[0m {E}[41mbgred{E}[0m {E}[101mbgbright{E}[0m\n"
        f"{E}[38;5;208morange256{E}[0m {E}[48;5;27mbg256{E}[0m {E}[38;5;3mlow256{E}[0m\n"
        f"{E}[38;2;10;20;30mtruecolor{E}[0m {E}[48;2;200;100;50mtruebg{E}[0m\n"
        f"{E}[1;31mbold red{E}[22m not bold{E}[39m default{E}[0m\n"
        f"{E}[44m bg spaces   {E}[0m|\n"
        f"{E}[42m{E}[K{E}[0m\n"
        "styles done\n",),
    "dec_graphics": (
        f"{E}(0lqqwqqk\r\nx  x  x\r\ntqqnqqu\r\nmqqvqqj{E}(B lqk in ASCII\r\n"
        f"{E})0\x0eaf`~\x0f g1 shifted\r\n"
        f"{E}(0{''.join(map(chr, range(0x5F, 0x7F)))}{E}(B whole set\r\n"
        f"{E}(0q{E}[5b{E}(B repeated\r\n"
        # DECSC keeps the designations and the shift; DECRC brings them back.
        f"{E}(0{E}7{E}(B{E}[30Cascii after save{E}8lqk{E}(B saved G0\r\n"
        f"\x0e{E}7\x0f{E}[30Cascii after save{E}8lqk\x0f saved shift\r\n"
        "graphics done\r\n",),
    # An OSC cut short by an escape ends there; the output before it was its body.
    "osc_cut_short": (f"before\r\n{E}]0;title\r\nhidden\r\n{E}[1mshown{E}[0m\r\nosc cut done\r\n",),
    # DECALN fills with default-style E's, resets the margins and homes the cursor; the pen stays.
    "alignment_test": (
        f"{E}[31mred{E}[5;10r{E}[7;3H{E}#8X{E}[10;1H\nbelow{E}[0m{E}[12;1Halignment done",),
    # DECSTBM homes the cursor, whatever its parameters (and from a pending wrap).
    "region_homes_cursor": (
        f"{E}[5;5Hbefore{E}[3;8rA{E}[10;10H{E}[r{E}[1BB{E}[12;12H{E}[;r{E}[2BC{E}[15;1H" + "w" * 80
        + f"{E}[r{E}[3BD{E}[16;1H{E}[5r{E}[4BE{E}[16;1H{E}[;9r{E}[5BF{E}[r{E}[20;1Hregion home done",),
    "wide_chars": (
        "CJK: 中文字符 한국어 日本語\nemoji: 😀🎉🚀 end\nmixed: a中b😀c\n"
        "fullwidth: ＡＢＣ１２３\nwide done\n",),
    "wide_at_margin": (
        "x" * 79 + "中tail\n" + "y" * 78 + "中tail\n" + "z" * 79 + "😀\n"
        + f"{E}[10;80H字{E}[12;1Hmargin done\n",),
    "wide_overwrite": (
        f"中文字\r\na中文字{E}[2;3Hb\r\n中文字{E}[3;4Hc\r\n中文字{E}[4;3H{E}[1P\r\n"
        f"中文字{E}[5;2H{E}[1@\r\noverwrite done\n",),
    # Only the right half of a wide character in column 1 is overwritten: tmux keeps the
    # character there (unlike anywhere else on the line, and unlike xterm).
    "wide_half_at_column_1": (f"中文{E}[1;2Hc\r\nhalf done\n",),
    "combining": ("cafe\u0301 a\u0308b n\u0303o x\u0323\u0307y\n" + "k" * 79 + "e\u0301\ncombining done\n",),
    **{f"alt_{mode}": alternate_screen(mode) for mode in (1049, 1047, 47)},
}


def shown_case(name: str, *steps: Step, styles: bool = False,
               also: tuple[tuple[str, ...], ...] = ()) -> Case:
    return Case(name, shown(name, *SEQUENCES[name]), steps, styles=styles, also=also)


CASES: list[Case] = [
    Case("ls_color", ("sh", "-c", f"ls --color=always -F lsdir; ls --color=always -l --time-style=+%F lsdir;"
                                  f" echo ls done; {KEEP_PANE}"),
         (Step(marker="ls done"),), styles=True),
    Case("vim_edit", ("vim", "-u", "NONE", "-N", "-n", "--cmd", "set ttimeout ttimeoutlen=20", "notes.txt"),
         (Step(marker='"notes.txt"'),
          Step(("G", "o", "appended by the test", "Escape"), marker="appended by the test",
               absent="-- INSERT --"),
          Step(("g", "g", "d", "d", ":set number", "Enter"), marker="  1 line 02"),
          Step(("1", "5", "G", "c", "w", "CHANGED", "Escape"), marker="CHANGED", absent="-- INSERT --"))),
    Case("vim_windows", ("vim", "-u", "NONE", "-N", "-n", "--cmd", "set ttimeout ttimeoutlen=20", "notes.txt"),
         (Step(marker='"notes.txt"'),
          Step((":split long.txt", "Enter"), marker='"long.txt"'),
          Step((":vsplit sample.py", "Enter"), marker='"sample.py"'),
          Step(("C-e", "C-e", "C-e", "C-w", "j", "1", "0", "C-e"), marker="line 14"),
          Step((":set ruler", "Enter"), marker="11,1"))),
    Case("vim_syntax", ("vim", "-u", "NONE", "-N", "-n", "--cmd", "set ttimeout ttimeoutlen=20",
                        "-c", "syntax on", "sample.py"),
         (Step(marker='"sample.py"'),), styles=True),
    Case("less_pages", ("less", "long.txt"),
         (Step(marker="line 001"),
          Step(("Space",), marker="line 046"),
          Step(("/line 150", "Enter"), marker="line 172"),
          Step(("G",), marker="(END)"))),
    Case("man_page", ("man", "ls"),
         (Step(marker="ls - list directory contents"),
          Step(("Space",), marker="line 24")), env=("MANWIDTH=80", "MANPAGER=less", "PAGER=less"),
         styles=True),
    Case("curses_panel", ("sh", "-c", f"{sys.executable} {DATA_DIR / 'curses_panel.py'}; {KEEP_PANE}"),
         (Step(marker="stage 1 ready"),
          Step(("x",), marker="stage 2 ready"),
          Step(("x",), marker="stage 3 ready"),
          Step(("x",), marker="stage 4")),
         env=("NCURSES_NO_UTF8_ACS=1",), styles=True),  # box lines as UTF-8
    # The same screens with box lines in DEC line drawing (ncurses' smacs under xterm-256color).
    Case("curses_panel_acs", ("sh", "-c", f"{sys.executable} {DATA_DIR / 'curses_panel.py'}; {KEEP_PANE}"),
         (Step(marker="stage 1 ready"),
          Step(("x",), marker="stage 2 ready"),
          Step(("x",), marker="stage 3 ready"),
          Step(("x",), marker="stage 4")), styles=True),
    Case("cursor_report", ("sh", "-c", f"{sys.executable} {DATA_DIR / 'cursor_report.py'}; {KEEP_PANE}"),
         (Step(marker="report done"),)),
    Case("bash_readline", ("bash", "--norc", "--noprofile", "-i"),
         (Step(marker="$"),
          Step(("echo hello world", "Enter"), marker="\nhello world"),
          Step(("echo abcdef", "C-b", "C-b", "XY", "Enter"), marker="\nabcdXYef"),
          Step(("echo " + "w" * 100, "Enter"), marker="\n" + "w" * 80),
          Step(("ls lsd", "Tab", "Enter"), marker="script.sh"),
          Step(("C-l",), absent="hello world")),
         env=("PS1=$ ", "HOME=/nonexistent")),
    Case("seq_scrollback", ("sh", "-c", f"seq 1 5000; {KEEP_PANE}"),
         (Step(marker="5000"),), flags=("-S", "-200")),
    Case("clear_scrollback", ("sh", "-c", f"seq 1 300; clear; echo cleared; {KEEP_PANE}"),
         (Step(marker="cleared"),), flags=("-S", "-50")),
    shown_case("long_lines", Step(marker="wrapped done"), also=(("-J",),)),
    shown_case("scroll_region", Step(marker="region done")),
    shown_case("csi_editing", Step(marker="editing done")),
    shown_case("sgr_attributes", Step(marker="styles done"), styles=True),
    shown_case("scroll_up_down", Step(marker="scroll done")),
    shown_case("repeat_char", Step(marker="repeat done")),
    shown_case("backspace_at_margin", Step(marker="backspace done")),
    shown_case("no_autowrap_wide", Step(marker="no-wrap done")),
    shown_case("origin_mode", Step(marker="origin done")),
    shown_case("cursor_outside_region", Step(marker="outside done")),
    shown_case("cursor_addressing", Step(marker="addressing done")),
    shown_case("save_restore_cursor", Step(marker="save done")),
    shown_case("string_sequences", Step(marker="strings done")),
    shown_case("invalid_utf8", Step(marker="invalid done")),
    shown_case("sgr_dim", Step(marker="dim done"), styles=True),
    shown_case("dec_graphics", Step(marker="graphics done")),
    shown_case("region_homes_cursor", Step(marker="region home done")),
    shown_case("alignment_test", Step(marker="alignment done"), styles=True),
    shown_case("osc_cut_short", Step(marker="osc cut done"), styles=True),
    shown_case("wide_chars", Step(marker="wide done")),
    shown_case("wide_at_margin", Step(marker="margin done")),
    shown_case("wide_overwrite", Step(marker="overwrite done")),
    shown_case("combining", Step(marker="combining done")),
    shown_case("wide_half_at_column_1", Step(marker="half done")),
    *(shown_case(name, Step(marker="alt ready"), Step(("Enter",), marker="AFTER"))
      for name in SEQUENCES if name.startswith("alt_")),
]

# Cases where muxd differs from tmux today, with the smallest input that shows it. Strict, so
# the case fails (XPASS) the moment a fix lands and the entry must go.
KNOWN_DIFFERENCES: dict[str, str] = {}  # case name -> why muxd differs from tmux (strict xfail)


def write_inputs(root: Path) -> None:
    """The files the cases' programs open, made fresh for the module."""
    (root / "sequences").mkdir()
    for name, parts in SEQUENCES.items():
        for i, part in enumerate(parts):
            (root / "sequences" / f"{name}.{i}.bin").write_bytes(
                part if isinstance(part, bytes) else part.encode())
    lsdir = root / "lsdir"
    (lsdir / "subdir").mkdir(parents=True)
    for name in ("plain.txt", "notes.md", "archive.tar.gz", "image.png", "with space.txt"):
        (lsdir / name).write_text("x\n")
    (lsdir / "script.sh").write_text("#!/bin/sh\n")
    (lsdir / "script.sh").chmod(0o755)
    (lsdir / "link").symlink_to("plain.txt")
    (lsdir / "broken").symlink_to("missing")
    os.mkfifo(lsdir / "fifo")
    (root / "notes.txt").write_text("".join(f"line {n:02d}: some words to edit here\n" for n in range(1, 31)))
    (root / "long.txt").write_text("".join(f"line {n:03d} " + "lorem ipsum " * (n % 6) + "\n"
                                           for n in range(1, 201)))
    (root / "sample.py").write_text(
        '"""A module docstring."""\n\nimport os\n\n\ndef greet(name: str) -> str:\n'
        '    # say hello\n    if name:\n        return f"hello {name}"\n    return str(42)\n')


# ------------------------------------------------------------------ the two terminals

class Tmux:
    """A tmux 3.3a server of our own (private socket name, no config file)."""

    def __init__(self) -> None:
        self.name = f"muxd-fidelity-{uuid.uuid4().hex[:8]}"
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("TMUX")}

    def run(self, *args: str) -> str:
        result = subprocess.run(["tmux", "-L", self.name, "-f", "/dev/null", *args], env=self.env,
                                capture_output=True, text=True, timeout=stretched(TMUX_TIMEOUT_S))
        if result.returncode != 0:
            raise AssertionError(f"tmux {' '.join(args)} failed: {result.stderr}")
        return result.stdout

    def start(self) -> None:
        # A session that outlives the cases keeps the server (and the options set here) up.
        self.run("new-session", "-d", "-s", "keep", "-x", str(COLUMNS), "-y", str(LINES), "sleep 86400",
                 ";", "set", "-g", "status", "off", ";", "set", "-g", "default-terminal", "xterm-256color",
                 ";", "set", "-g", "history-limit", "10000", ";", "set", "-g", "remain-on-exit", "on")

    def new_session(self, session: str, argv: list[str], cwd: Path) -> None:
        self.run("new-session", "-d", "-s", session, "-x", str(COLUMNS), "-y", str(LINES), "-c", str(cwd),
                 "--", *argv)

    def send(self, session: str, keys: tuple[str, ...]) -> None:
        self.run("send-keys", "-t", session, *keys)

    def capture(self, session: str, *flags: str) -> str:
        """`capture-pane -p` with `flags`, line drawing shown as drawn (see `as_seen`)."""
        seen = as_seen(self.run("capture-pane", "-p", "-e", "-t", session, *flags))
        return seen if "-e" in flags else without_escapes(seen)

    def kill_session(self, session: str) -> None:
        self.run("kill-session", "-t", session)

    def stop(self) -> None:
        subprocess.run(["tmux", "-L", self.name, "kill-server"], env=self.env, capture_output=True,
                       timeout=stretched(TMUX_TIMEOUT_S))


class Muxd:
    """The same operations through the real `muxd` command line."""

    def __init__(self, server: MuxdTestServer) -> None:
        self.server = server

    def new_session(self, session: str, argv: list[str], cwd: Path) -> None:
        self.server.cli("new-session", "-d", "-s", session, "-x", str(COLUMNS), "-y", str(LINES),
                        "-c", str(cwd), "--", *argv, check=True)

    def send(self, session: str, keys: tuple[str, ...]) -> None:
        self.server.cli("send-keys", "-t", session, *keys, check=True)

    def capture(self, session: str, *flags: str) -> str:
        result = self.server.cli("capture-pane", "-p", "-t", session, *flags)
        # A failed capture is shown in the diff like any other wrong screen.
        return result.stdout if result.returncode == 0 else f"<capture-pane failed: {result.stderr.strip()}>"

    def kill_session(self, session: str) -> None:
        self.server.cli("kill-session", "-t", session)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fidelity")
    write_inputs(root)
    return root


@pytest.fixture(scope="module")
def tmux() -> Iterator[Tmux]:
    server = Tmux()
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def muxd() -> Iterator[Muxd]:
    """A muxd server whose panes run the pyte backend (the ghostty one has its own fixture)."""
    server = MuxdTestServer(env={"MUXD_EMULATOR": "pyte"}).start()
    try:
        yield Muxd(server)
    finally:
        server.stop()


@pytest.fixture(scope="module")
def muxd_ghostty() -> Iterator[Muxd]:
    """A muxd server whose panes run the libghostty-vt backend (MUXD_EMULATOR=ghostty)."""
    server = MuxdTestServer(env={"MUXD_EMULATOR": "ghostty"}).start()
    try:
        yield Muxd(server)
    finally:
        server.stop()


# ------------------------------------------------------------------ comparing screens

def normalise(capture: str) -> str:
    """A capture with each line's trailing blanks and the trailing empty lines dropped."""
    lines = [line.rstrip() for line in capture.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def settle(tmux: Tmux, muxd: Muxd, session: str, step: Step, flags: tuple[str, ...]) -> tuple[str, str]:
    """Both captures once each shows the step's state and has stopped changing.

    tmux must get there (else the case itself is broken); muxd gets MUXD_GRACE_S more, after
    which its settled screen is returned anyway so the comparison can show the difference.
    """
    seen: dict[str, list[str]] = {"tmux": [], "muxd": []}
    tmux_settled_at: list[float] = []

    def settled(side: str) -> bool:
        recent = seen[side][-STABLE_POLLS:]
        return len(recent) == STABLE_POLLS and len(set(recent)) == 1

    def both_settled() -> bool:
        if not tmux_settled_at:
            seen["tmux"].append(normalise(tmux.capture(session, *flags)))
        seen["muxd"].append(normalise(muxd.capture(session, *flags)))
        if not tmux_settled_at and settled("tmux") and step.reached(seen["tmux"][-1]):
            tmux_settled_at.append(time.monotonic())
        if not tmux_settled_at:
            return False
        if settled("muxd") and step.reached(seen["muxd"][-1]):
            return True
        return time.monotonic() - tmux_settled_at[0] > MUXD_GRACE_S and settled("muxd")

    try:
        wait_until(both_settled, timeout=SETTLE_TIMEOUT_S, interval=POLL_INTERVAL_S,
                   message=f"{session}: screens settled on {step}")
    except WaitTimeout as exc:
        if not tmux_settled_at:
            raise AssertionError(f"tmux never showed {step} for {session}:\n{seen['tmux'][-1]}") from exc
    return seen["tmux"][-1], seen["muxd"][-1]


def diff(expected: str, actual: str, what: str) -> str:
    lines = difflib.unified_diff(expected.split("\n"), actual.split("\n"), fromfile=f"tmux {what}",
                                 tofile=f"muxd {what}", lineterm="", n=2)
    return "\n".join(lines)


# ------------------------------------------------------------------ the test

def _params() -> list[object]:
    return [pytest.param(case, id=case.name, marks=[pytest.mark.xfail(strict=True, reason=KNOWN_DIFFERENCES[
        case.name])] if case.name in KNOWN_DIFFERENCES else []) for case in CASES]


@pytest.mark.parametrize("case", _params())
def test_screen_matches_tmux(case: Case, tmux: Tmux, muxd: Muxd, workdir: Path) -> None:
    compare(case, tmux, muxd, workdir)


# Cases the ghostty backend does not match tmux on yet (they run on the pyte backend only).
GHOSTTY_PYTE_ONLY: dict[str, str] = {
    "backspace_at_margin": "BS after the last column: ghostty clears the pending wrap first, tmux does not",
    "long_lines": "rows written at the last column with a pending wrap: ghostty's autowrap differs",
    "save_restore_cursor": "DECSC/DECRC (or the reply case it includes) leaves the cursor elsewhere",
    "wide_overwrite": "overwriting halves of wide characters: ghostty blanks differently from tmux",
    "wide_half_at_column_1": "tmux 3.3a's quirk keeps a wide character whose right half is overwritten",
}


def _ghostty_params() -> list[object]:
    return [pytest.param(case, id=case.name) for case in CASES
            if case.name not in KNOWN_DIFFERENCES and case.name not in GHOSTTY_PYTE_ONLY]


@pytest.mark.parametrize("case", _ghostty_params())
def test_screen_matches_tmux_on_ghostty(case: Case, tmux: Tmux, muxd_ghostty: Muxd, workdir: Path) -> None:
    compare(case, tmux, muxd_ghostty, workdir, session=f"fidg-{case.name}")


def compare(case: Case, tmux: Tmux, muxd: Muxd, workdir: Path, session: str = "") -> None:
    session = session or f"fid-{case.name}"
    argv = ["env", "-i", *PROGRAM_ENV, f"HOME={workdir}", *case.env, *case.argv]
    tmux.new_session(session, argv, workdir)
    muxd.new_session(session, argv, workdir)
    mismatches: list[str] = []
    try:
        for number, step in enumerate(case.steps, 1):
            if step.keys:
                tmux.send(session, step.keys)
                muxd.send(session, step.keys)
            where = f"step {number} (keys {list(step.keys)})" if step.keys else f"step {number} (start)"
            expected, actual = settle(tmux, muxd, session, step, case.flags)
            if expected != actual:
                mismatches.append(f"{where}, capture-pane -p {' '.join(case.flags)}:\n"
                                  + diff(expected, actual, "-p"))
            for flags in case.also:
                expected, actual = (normalise(side.capture(session, *flags)) for side in (tmux, muxd))
                if expected != actual:
                    mismatches.append(f"{where}, capture-pane -p {' '.join(flags)}:\n"
                                      + diff(expected, actual, " ".join(flags)))
            if case.styles:
                expected_styles, actual_styles = (styled_lines(side.capture(session, "-e"))
                                                  for side in (tmux, muxd))
                if expected_styles != actual_styles:
                    mismatches.append(f"{where}, styles from capture-pane -e:\n" + diff(
                        "\n".join(expected_styles), "\n".join(actual_styles), "-e"))
    finally:
        tmux.kill_session(session)
        muxd.kill_session(session)
    if mismatches:
        pytest.fail(f"{case.name}: muxd's screen differs from tmux's\n\n" + "\n\n".join(mismatches),
                    pytrace=False)
