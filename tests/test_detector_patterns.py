"""The detectors' patterns are compiled at their first use (detectors/_lazy_re.py): every one is a
valid pattern, a stand-in reads as the pattern re.compile makes, and looking the detectors up (a
pane's first look) compiles almost none of them."""

import copy
import re
import subprocess
import sys

from muxd.detectors import _lazy_re
from muxd.detectors._lazy_re import LazyPattern, lazy_compile
from muxd.detectors.registry import BUILTIN_DETECTORS, load_detectors
from muxd.testing.patience import stretched


def test_every_pattern_of_the_builtin_detectors_compiles():
    load_detectors()
    made = list(_lazy_re.MADE)
    assert len(made) > 100  # the built-in detectors' patterns are all stand-ins
    for pattern in made:
        assert isinstance(pattern.pattern, (str, bytes))  # compiles it: a bad one raises re.error here
        assert re.compile(pattern.pattern, pattern.flags).pattern == pattern.pattern


def test_a_stand_in_reads_as_the_compiled_pattern():
    lazy = lazy_compile(r"(?P<word>\w+) (\d+)", re.IGNORECASE)
    real = re.compile(r"(?P<word>\w+) (\d+)", re.IGNORECASE)
    text = "Cost 12 and TOKENS 300"
    assert lazy.search(text).group("word") == real.search(text).group("word") == "Cost"
    assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in real.finditer(text)]
    assert lazy.sub("x", text) == real.sub("x", text) and lazy.match("cost 1") is not None
    assert (lazy.pattern, lazy.flags, lazy.groups, lazy.groupindex) == (real.pattern, real.flags, 2, {"word": 1})
    assert copy.deepcopy(lazy).search(text) is not None
    assert lazy_compile(rb"\x1b\[(\d+)m").search(b"\x1b[31m").group(1) == b"31"


def test_a_bad_pattern_fails_at_its_first_use():
    bad = LazyPattern("(unclosed")
    try:
        bad.search("x")
    except re.error:
        return
    raise AssertionError("a bad pattern compiled")


def test_looking_the_detectors_up_compiles_almost_none_of_their_patterns():
    script = """
from muxd.detectors import _lazy_re
from muxd.detectors.registry import load_detectors
load_detectors()
print(len(_lazy_re.MADE), sum("search" in vars(p) for p in _lazy_re.MADE))
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                         timeout=stretched(60))
    made, compiled = map(int, out.stdout.split())
    assert len(BUILTIN_DETECTORS) > 1 and made > 100
    assert compiled <= made // 20  # the few a module reads at its import (a .pattern joined into another)
