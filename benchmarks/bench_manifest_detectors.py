"""What a detector run from an agent manifest costs per look, against the Python detector it
replaced: opencode's manifest (muxd/detectors/manifests/opencode.toml) against opencode.py as
it was before issue 32 (read from git, commit PYTHON_OPENCODE_COMMIT), on the same screens.

    .venv/bin/python benchmarks/bench_manifest_detectors.py [--looks 20000]

A look is what the runner does per frame: `identify` then `detect`. Screens: opencode idle,
busy, asking for a permission and typing a draft, each under 30 rows of conversation, at
100 columns. Three cases: the same frame again (rows the memos have seen), one row new (a
clock ticking on the status row: most of a busy pane's looks) and every row new (a number in
every row changes each look: no memo helps). Printed:
microseconds a look, median of 5 rounds, for each, and the manifest/Python ratio; the runner's
budget is 50 ms a look.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from muxd.detectors.base import ScreenContext
from muxd.detectors.registry import PACKAGED_MANIFEST_DIR, load_manifests

ROOT = Path(__file__).resolve().parents[1]
PYTHON_OPENCODE_COMMIT = "d966995"  # the last commit with muxd/detectors/opencode.py
ROUNDS = 5
COLUMNS = 100
CONVERSATION = [f"  Some earlier answer text, row {n}, with words the rules never look for." for n in range(30)]
INPUT = ['┃  Ask anything... "What is the tech stack of this project?"', "┃",
         "┃  Build  Big Pickle  OpenCode Zen"]
SCREENS = {
    "idle": CONVERSATION + INPUT + ["       12,345 (5%) · $0.02                      tab agents  ctrl+p commands"],
    "busy": CONVERSATION + INPUT + [" ⠋ esc interrupt                                   tab agents  ctrl+p commands"],
    "asking": CONVERSATION + ["△ Permission required", "  # Shell command", "  $ rm -rf build", "",
                              "  Allow once   Allow always   Reject", "  ⇆ select  enter confirm"],
    "draft": CONVERSATION + ["┃  add a --verbose flag", "┃", "┃  Build  Big Pickle  OpenCode Zen",
                             "                                                  tab agents  ctrl+p commands"],
}


def python_opencode() -> object:
    """OpencodeDetector from git (the Python detector the manifest replaced)."""
    source = subprocess.run(["git", "-C", str(ROOT), "show", f"{PYTHON_OPENCODE_COMMIT}:muxd/detectors/opencode.py"],
                            capture_output=True, text=True, check=True).stdout
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
        fh.write(source)
    spec = importlib.util.spec_from_file_location("python_opencode", fh.name)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.OpencodeDetector()


def looks_us(detector: object, frames: list[list[str]], looks: int) -> float:
    """Median microseconds of one identify + detect over `looks` looks cycling through `frames`."""
    contexts = [ScreenContext(lines=rows, columns=COLUMNS) for rows in frames]
    rounds = []
    for _ in range(ROUNDS):
        started = time.perf_counter()
        for index in range(looks):
            ctx = contexts[index % len(contexts)]
            detector.identify(ctx)  # type: ignore[attr-defined]
            detector.detect(ctx, None)  # type: ignore[attr-defined]
        rounds.append((time.perf_counter() - started) / looks * 1e6)
    return statistics.median(rounds)


def fresh(rows: list[str], looks: int) -> list[list[str]]:
    """`looks` copies of `rows` whose every row differs from every other copy's (a look number in it)."""
    return [[f"{row} {look}" if row.strip() else row for row in rows] for look in range(looks)]


def ticking(rows: list[str], looks: int) -> list[list[str]]:
    """`looks` copies of `rows` whose last row differs in each (a clock ticking on the status row)."""
    return [rows[:-1] + [f"{rows[-1]} {look}s"] for look in range(looks)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--looks", type=int, default=20000)
    args = parser.parse_args()
    manifest = next(d for d in load_manifests(PACKAGED_MANIFEST_DIR)[0] if d.name == "opencode")
    python = python_opencode()
    for name, rows in SCREENS.items():  # both read every screen the same way
        screen = ScreenContext(lines=rows, columns=COLUMNS)
        a, b = manifest.detect(screen, None), python.detect(screen, None)  # type: ignore[attr-defined]
        assert (a.state, a.rule, a.tool, a.model, a.input_text) == (b.state, b.rule, b.tool, b.model,
                                                                    b.input_text), name
    print(f"{'screen':<8} {'case':<10} {'manifest us':>12} {'python us':>10} {'ratio':>6}")
    for name, rows in SCREENS.items():
        for case, frames in (("same", [rows]), ("one-new", ticking(rows, min(args.looks, 4000))),
                             ("all-new", fresh(rows, min(args.looks, 4000)))):
            looks = args.looks if case == "same" else len(frames)
            ours, theirs = looks_us(manifest, frames, looks), looks_us(python, frames, looks)
            print(f"{name:<8} {case:<10} {ours:>12.1f} {theirs:>10.1f} {ours / theirs:>6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
