"""Record the real agent CLIs at real speed, for the detection benchmarks.

    .venv/bin/python benchmarks/record_agents.py [--out benchmarks/data/agents]

Runs the end-to-end tests of the real CLIs (tests/test_agents_real_*.py: each CLI in a muxd
pane against a scripted fake model server on 127.0.0.1) with MUXD_RECORD_DIR set, so the
daemon writes every pane's output as asciicast v2 with the time of each read. The longest
recording of each CLI is kept as `<agent>.cast.gz`. Needs the CLIs (`bash .ci/install-agents`).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
AGENTS = ("claude", "codex", "gemini", "aider")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "data" / "agents")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="muxd-record-") as directory:
        tests = [str(ROOT / "tests" / f"test_agents_real_{agent}.py") for agent in AGENTS]
        result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests],
                                env={**os.environ, "MUXD_RECORD_DIR": directory}, cwd=ROOT)
        if result.returncode != 0:
            print("some recording sessions failed; keeping what was recorded", file=sys.stderr)
        best: dict[str, Path] = {}
        for cast in Path(directory).glob("*.cast"):
            command = json.loads(cast.read_text(encoding="utf-8").split("\n", 1)[0]).get("command", "")
            agent = next((name for name in AGENTS if name in command.split()[:2]), None)
            if agent and (agent not in best or cast.stat().st_size > best[agent].stat().st_size):
                best[agent] = cast
        args.out.mkdir(parents=True, exist_ok=True)
        for agent, cast in sorted(best.items()):
            target = args.out / f"{agent}.cast.gz"
            target.write_bytes(gzip.compress(cast.read_bytes(), mtime=0))
            print(f"{agent}: {cast.stat().st_size} bytes -> {target}")
    return 0 if len(best) == len(AGENTS) else 1


if __name__ == "__main__":
    sys.exit(main())
