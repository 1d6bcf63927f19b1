"""Detector accuracy over the labelled corpus of real agent screens (../shared/corpus/real).

    .venv/bin/python benchmarks/bench_detectors.py [--corpus DIR] [--agent claude] [--verbose]

Every labelled capture is read as a 120-column screen and run through the detectors exactly
as the daemon would (screen signatures only: a capture carries no process information).
Prints state accuracy overall and per agent, precision/recall of AwaitingConfirmation, and
how often description, elapsed time, tokens, model, tool and confirmation prompt match.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

from muxd.detectors.base import ScreenContext
from muxd.detectors.registry import choose, load_detectors, shell_detector
from muxd.detectors.state import Detection

DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "real"
CAPTURE_COLUMNS = 120
FIELDS = ("description", "elapsed_s", "tokens", "model", "tool", "confirmation")


def detect_file(path: Path, detectors: list) -> tuple[str | None, Detection]:
    lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    ctx = ScreenContext(lines=[line.rstrip() for line in lines], columns=CAPTURE_COLUMNS, now=time.time())
    detector, _ = choose(detectors, ctx)
    chosen = detector or shell_detector()
    return getattr(detector, "name", None), chosen.detect(ctx, None)


def field_value(detection: Detection, name: str) -> str:
    value = {
        "description": detection.description,
        "elapsed_s": detection.elapsed_s,
        "tokens": detection.tokens,
        "model": detection.model,
        "tool": detection.tool,
        "confirmation": detection.confirmation.prompt if detection.confirmation else None,
    }[name]
    return "" if value is None else str(value)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--agent", help="only this agent's captures")
    parser.add_argument("--verbose", "-v", action="store_true", help="print every mismatch")
    args = parser.parse_args(argv)
    labels_path = args.corpus / "labels.tsv"
    if not labels_path.exists():
        print(f"no labelled corpus at {args.corpus} (it lives in ../shared beside the repo)")
        return 1
    detectors = load_detectors()
    with labels_path.open(encoding="utf-8") as fh:
        rows = [r for r in csv.DictReader(fh, delimiter="\t") if not args.agent or r["agent"] == args.agent]

    per_agent: dict[str, Counter[str]] = defaultdict(Counter)
    fields: dict[str, Counter[str]] = defaultdict(Counter)
    confirm = Counter()
    mismatches: list[str] = []
    started = time.process_time()
    for row in rows:
        agent, detection = detect_file(args.corpus / row["file"], detectors)
        expected_state = row["state"]
        counts = per_agent[row["agent"]]
        counts["total"] += 1
        counts["agent"] += agent == row["agent"]
        ok = detection.state == expected_state
        counts["state"] += ok
        if not ok:
            mismatches.append(f"{row['file']}: state {detection.state} (rule {detection.rule}) "
                              f"expected {expected_state}  [{row['note']}]")
        if expected_state == "AwaitingConfirmation" or detection.state == "AwaitingConfirmation":
            confirm["tp" if ok and expected_state == "AwaitingConfirmation" else
                    "fn" if expected_state == "AwaitingConfirmation" else "fp"] += 1
        for name in FIELDS:
            want = row[name]
            got = field_value(detection, name)
            if name == "model" and want and ";" in want:
                want = want.split(";")[0]
            if want or got:
                fields[name]["total"] += 1
                if got == want:
                    fields[name]["exact"] += 1
                elif ok:
                    mismatches.append(f"{row['file']}: {name} {got!r} expected {want!r}")
    cpu = time.process_time() - started

    print(f"corpus: {args.corpus} ({len(rows)} labelled captures)")
    print(f"{'agent':8} {'captures':>8} {'agent id':>9} {'state acc':>10}")
    total = Counter()
    for name in sorted(per_agent):
        c = per_agent[name]
        total.update(c)
        print(f"{name:8} {c['total']:8} {c['agent'] / c['total']:9.1%} {c['state'] / c['total']:10.1%}")
    print(f"{'all':8} {total['total']:8} {total['agent'] / max(1, total['total']):9.1%} "
          f"{total['state'] / max(1, total['total']):10.1%}")
    tp, fp, fn = confirm["tp"], confirm["fp"], confirm["fn"]
    print(f"AwaitingConfirmation: precision {tp / max(1, tp + fp):.1%}  recall {tp / max(1, tp + fn):.1%} "
          f"(tp {tp}, fp {fp}, fn {fn})")
    for name in FIELDS:
        c = fields[name]
        if c["total"]:
            print(f"field {name:13} exact {c['exact'] / c['total']:6.1%} of {c['total']}")
    print(f"detection CPU: {cpu * 1000 / max(1, len(rows)):.2f} ms per screen")
    if args.verbose:
        print("\n".join(mismatches))
    elif mismatches:
        print(f"{len(mismatches)} mismatches (--verbose lists them)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
