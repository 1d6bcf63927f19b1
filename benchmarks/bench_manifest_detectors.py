"""What a detector run from an agent manifest costs per look, against the Python detector it
replaced, on the same screens: opencode's manifest (muxd/detectors/manifests/opencode.toml)
against opencode.py as it was before issue 32, or with `--agent kilo` Kilo's (kilo.toml)
against kilo.py and the opencode_fork.py it built on (both read from git, PYTHON_DETECTORS).

    .venv/bin/python benchmarks/bench_manifest_detectors.py [--agent opencode|kilo] [--looks 20000]

A look is what the runner does per frame: `identify` then `detect`. opencode's screens: idle,
busy, asking for a permission and typing a draft, each under 30 rows of conversation, at
100 columns; Kilo's: its real screens at 100x30 (tests/detector_data/cline_kilo/kilo): home,
busy, streaming an answer, asking, a command at work, done and retrying. Three cases: the same frame again (rows the memos have seen), one row new (a
clock ticking on the status row: most of a busy pane's looks) and every row new (a number in
every row changes each look: no memo helps); the ticking row is the last non-blank one. Printed:
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
# Each agent's Python detector in git: (commit, its module's path and class, the modules it
# imports from muxd that are gone, loaded first under their own names).
PYTHON_DETECTORS = {
    "opencode": ("d966995", "muxd/detectors/opencode.py", "OpencodeDetector", ()),
    "kilo": ("47a5f13", "muxd/detectors/kilo.py", "KiloDetector", ("muxd/detectors/opencode_fork.py",)),
}
KILO_FRAMES = Path(__file__).resolve().parents[1] / "tests" / "detector_data" / "cline_kilo" / "kilo"
KILO_SCREENS = {"idle": "idle_100x30_01", "busy": "think_100x30_05", "streaming": "gen_100x30_06",
                "asking": "ask_100x30_08", "tool": "tool_100x30_09", "done": "done_100x30_11",
                "retrying": "error_100x30_12"}
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


def _module_from_git(commit: str, path: str, name: str) -> object:
    source = subprocess.run(["git", "-C", str(ROOT), "show", f"{commit}:{path}"],
                            capture_output=True, text=True, check=True).stdout
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
        fh.write(source)
    spec = importlib.util.spec_from_file_location(name, fh.name)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def python_detector(agent: str) -> object:
    """The agent's Python detector from git (the one its manifest replaced)."""
    commit, path, cls, needs = PYTHON_DETECTORS[agent]
    for need in needs:
        _module_from_git(commit, need, need.removesuffix(".py").replace("/", "."))
    return getattr(_module_from_git(commit, path, f"python_{agent}"), cls)()


def screens(agent: str) -> dict[str, list[str]]:
    if agent == "opencode":
        return SCREENS
    return {name: (KILO_FRAMES / f"kilo_{stem}.txt").read_text(encoding="utf-8").split("\n")
            for name, stem in KILO_SCREENS.items()}


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
    """`looks` copies of `rows` whose last non-blank row differs in each (a clock ticking on the
    status row)."""
    last = max(index for index, row in enumerate(rows) if row.strip())
    return [rows[:last] + [f"{rows[last]} {look}s"] + rows[last + 1:] for look in range(looks)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agent", choices=sorted(PYTHON_DETECTORS), default="opencode")
    parser.add_argument("--looks", type=int, default=20000)
    args = parser.parse_args()
    manifest = next(d for d in load_manifests(PACKAGED_MANIFEST_DIR)[0] if d.name == args.agent)
    python = python_detector(args.agent)
    agent_screens = screens(args.agent)
    for name, rows in agent_screens.items():  # both read every screen the same way
        screen = ScreenContext(lines=rows, columns=COLUMNS)
        a, b = manifest.detect(screen, None), python.detect(screen, None)  # type: ignore[attr-defined]
        assert (a.state, a.rule, a.tool, a.model, a.input_text, a.tokens, a.description) == (
            b.state, b.rule, b.tool, b.model, b.input_text, b.tokens, b.description), name
        assert manifest.identify(screen) >= 0.5 and python.identify(screen) >= 0.5, name  # type: ignore[attr-defined]
    print(f"{'screen':<10} {'case':<10} {'manifest us':>12} {'python us':>10} {'ratio':>6}")
    for name, rows in agent_screens.items():
        for case, frames in (("same", [rows]), ("one-new", ticking(rows, min(args.looks, 4000))),
                             ("all-new", fresh(rows, min(args.looks, 4000)))):
            looks = args.looks if case == "same" else len(frames)
            ours, theirs = looks_us(manifest, frames, looks), looks_us(python, frames, looks)
            print(f"{name:<10} {case:<10} {ours:>12.1f} {theirs:>10.1f} {ours / theirs:>6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
