"""The emulator against tmux 3.3a itself: same bytes in, same `capture-pane -p [-J] -S -` out.

Each case's bytes are `cat` by a tmux pane (raw tty, so no CR is added) and fed to an
`Emulator`; captures are compared with trailing blanks dropped (tmux does not keep the blanks
that pyte's erase writes). Skipped without tmux.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from itertools import islice
from pathlib import Path

import pytest

from muxd.testing.patience import stretched
from muxd.testing.wait import wait_until

from emulator_data import streams
from muxd.emulator import Emulator
from muxd.emulator.backend import new_emulator
from muxd.testing.floods import bold_rows

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is the reference")

COLUMNS, LINES = 80, 24
HISTORY_LINES = 2000
SETTLE_TIMEOUT_S = 10.0
E = "\x1b"
_rng = random.Random(42)


def tabbed_utf8_flood(rng: random.Random, lines: int) -> bytes:
    """Source-like lines: indentation and inner tabs, one-cell UTF-8, CJK, SGR; some wrap."""
    pieces = ["\t", "\t\t", "é", "—", "─│", "✓", "●", "…", "中文", f"{E}[1;32m", f"{E}[0m"]
    out = []
    for _ in range(lines):
        parts = [rng.choice(["", "\t", "\t\t"])]
        for _ in range(rng.randint(0, 12)):
            parts.append(rng.choice(pieces) if rng.random() < 0.4 else streams.words(rng, rng.randint(1, 25)))
        out.append("".join(parts) + "\r\n")
    return "".join(out).encode()


CASES: dict[str, bytes] = {
    "plain_flood": streams.plain_flood(_rng, 600),
    "coloured_flood": streams.coloured_flood(_rng, 600),
    "wrapped_flood": streams.plain_flood(_rng, 80, max_width=700),
    "wide_flood": streams.wide_flood(_rng, 80).replace("\u200d".encode(), b"").replace("\ufe0f".encode(), b""),
    "flood_then_tui": streams.plain_flood(_rng, 100)
    + f"{E}[?1049h{E}[H{E}[2Jalt{E}[5;5Hbox{E}[?1049l{E}[10;1H{E}[Kpartial{E}[20;3H{E}[1J".encode()
    + streams.plain_flood(_rng, 30),
    "scroll_region_history": (
        "\r\n".join(f"row {n:02d}" for n in range(1, 25))
        + f"{E}[3;20r{E}[20;1H" + "".join(f"\r\nregion {n}" for n in range(30)) + f"{E}[r{E}[24;1Hdone"
    ).encode(),
    "wide_edges": ("x" * 79 + "中tail\r\n" + "y" * 78 + "中\r\n" + "中文字" + f"{E}[3;3Hb\r\n" + "e\u0301\r\n").encode(),
    "tui_frames": streams.tui_frames(_rng, 40),
    "tabs_at_the_edges": (
        "x" * 80 + "\tB\r\n" + "y" * 79 + "\tC\r\n" + "z" * 72 + "\tD\r\n" + "\t" * 11 + "E\r\n"
        + "中" * 40 + "\tF\r\n" + "ab\t\u0301c\r\n" + "w" * 78 + "中\tG\r\n"
    ).encode(),
    "tabbed_utf8_flood": tabbed_utf8_flood(_rng, 600),
    # grep --color: every match cleared to the end of the line (the native skipper takes these)
    "grep_colour_flood": "".join(islice(bold_rows(), 600)).replace("\n", "\r\n").encode(),
    "resets_and_tabs": f"a\tb\tc{E}[3g\r\nx\ty{E}c after reset\r\n{E}[?7l" .encode() + b"z" * 100 + b"\r\nend\r\n",
}


class Tmux:
    def __init__(self) -> None:
        self.base = ["tmux", "-L", f"muxd-emu-{uuid.uuid4().hex[:8]}", "-f", "/dev/null"]

    def run(self, *args: str) -> str:
        return subprocess.run([*self.base, *args], check=True, capture_output=True, text=True, timeout=stretched(10)).stdout


@pytest.fixture(scope="module")
def tmux_captures(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, tuple[str, str]]]:
    root = tmp_path_factory.mktemp("emulator_tmux")
    tmux = Tmux()
    tmux.run("new-session", "-d", "-s", "keep", "-x", str(COLUMNS), "-y", str(LINES), "sleep 600",
             ";", "set", "-g", "status", "off", ";", "set", "-g", "history-limit", str(HISTORY_LINES))
    try:
        for name, data in CASES.items():
            path = Path(root, f"{name}.bin")
            path.write_bytes(data)
            tmux.run("new-session", "-d", "-s", name, "-x", str(COLUMNS), "-y", str(LINES),
                     f"stty raw -echo; cat {path}; echo -n; sleep 600")
        # Each pane's `cat` is done once `sleep` is in front: then its screen is final.
        wait_until(lambda: all(tmux.run("display", "-p", "-t", name, "#{pane_current_command}").strip()
                               == "sleep" for name in CASES), timeout=SETTLE_TIMEOUT_S,
                   message="tmux panes finished")
        captures = {
            name: (tmux.run("capture-pane", "-p", "-S", "-", "-t", name),
                   tmux.run("capture-pane", "-p", "-J", "-S", "-", "-t", name))
            for name in CASES
        }
        yield captures
    finally:
        subprocess.run([*tmux.base, "kill-server"], capture_output=True)


def normalise(capture: str) -> str:
    lines = [line.rstrip() for line in capture.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


# Cases the ghostty backend does not match tmux on (known differences of libghostty-vt):
GHOSTTY_PYTE_ONLY = {
    # tmux moves the top row of any scroll region into history; ghostty only a region at the top
    "scroll_region_history",
    # ghostty keeps a row's soft-wrap flag when the row below is erased (tmux clears it): -J differs
    "tui_frames",
    # a combining mark after a tab is dropped; tabs before a wide character that wraps leave
    # blank cells that -J keeps (tmux writes no cells for a tab)
    "tabs_at_the_edges",
    "tabbed_utf8_flood",
}
BACKEND_CASES = [(name, fast) for name in CASES for fast in (True, False)] + [
    (name, "ghostty") for name in CASES if name not in GHOSTTY_PYTE_ONLY]


@pytest.mark.parametrize(("name", "fast"), BACKEND_CASES,
                         ids=[f"{name}-{ {True: 'fast', False: 'plain'}.get(fast, fast)}" for name, fast in BACKEND_CASES])
def test_capture_matches_tmux(name: str, fast: bool | str, tmux_captures: dict[str, tuple[str, str]]) -> None:
    if fast == "ghostty":
        emulator = new_emulator(COLUMNS, LINES, scrollback_bytes=10**9, backend="ghostty")
    else:
        emulator = Emulator(COLUMNS, LINES, scrollback_bytes=10**9, fast_paths=bool(fast))
    data = CASES[name]
    for offset in range(0, len(data), 4096):
        emulator.feed(data[offset : offset + 4096])
    expected, expected_joined = tmux_captures[name]
    assert normalise(emulator.capture(-(10**9))) == normalise(expected)
    assert normalise(emulator.capture(-(10**9), join_wrapped=True)) == normalise(expected_joined)
