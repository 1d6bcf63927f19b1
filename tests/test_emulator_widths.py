"""The native emulator's path without pyte or wcwidth: printable ASCII measured without asking
wcwidth, the SGR colour names kept in muxd's own table, pyte loaded only for its emulator."""

from __future__ import annotations

import os
import subprocess
import sys

from pyte import graphics
from wcwidth import wcwidth

from muxd.emulator.sgr import BG_NAMED, FG_NAMED
from muxd.emulator.widths import CHAR_WIDTHS, char_width

_LOADED_AFTER_A_PANE = """
import sys
from muxd.emulator.backend import new_emulator, running_backend
emulator = new_emulator(20, 5)
emulator.feed("$ ls\\r\\n\\x1b[31mred\\x1b[0m 中文 é\\r\\n".encode())
emulator.capture(0, escapes=True)
print(running_backend(), "pyte" in sys.modules, "wcwidth" in sys.modules)
"""


def test_printable_ascii_is_one_cell_as_wcwidth_says() -> None:
    for code in range(0x20, 0x7F):
        assert CHAR_WIDTHS[chr(code)] == wcwidth(chr(code)) == 1
    assert char_width("中") == CHAR_WIDTHS["中"] == 2 and CHAR_WIDTHS["\u0301"] == 0


def test_the_colour_names_are_pytes() -> None:
    assert FG_NAMED == {**graphics.FG_ANSI, **graphics.FG_AIXTERM}
    assert BG_NAMED == {**graphics.BG_ANSI, **graphics.BG_AIXTERM}


def _loaded(backend: str) -> list[str]:
    env = {**os.environ, "MUXD_EMULATOR": backend}
    out = subprocess.run([sys.executable, "-c", _LOADED_AFTER_A_PANE], env=env, capture_output=True, text=True,
                         check=True, timeout=120)
    return out.stdout.split()


def test_a_native_pane_never_loads_pyte() -> None:
    assert _loaded("ghostty") == ["ghostty", "False", "False"]
    assert _loaded("pyte") == ["pyte", "True", "True"]
