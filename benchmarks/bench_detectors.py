"""Detector accuracy over the labelled corpus of real agent screens (../shared/corpus/real).

    .venv/bin/python benchmarks/bench_detectors.py [--corpus DIR] [--agent claude] [--verbose]

Every labelled capture goes through exactly what `muxd detect FILE` does (replayed into a
120-column screen, detectors and runner; screen signatures only: a capture carries no
process information).
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

from muxd.detectors.registry import load_detectors
from muxd.detectors.replay import detect_saved_screen, read_recording, replay
from muxd.detectors.state import AgentState

DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "real"
CAPTURE_COLUMNS = 120
CAPTURE_LINES = 40
FIELDS = ("description", "elapsed_s", "tokens", "model", "tool", "confirmation")


def detect_file(path: Path, detectors: list) -> AgentState:
    """The file through exactly what `muxd detect FILE` does: emulator, detectors, runner."""
    return detect_saved_screen(path.read_bytes(), detectors, columns=CAPTURE_COLUMNS)


def field_value(state: AgentState, name: str) -> str:
    value = {
        "description": state.activity.description,
        "elapsed_s": state.activity.elapsed_s,
        "tokens": state.session.tokens_used,
        "model": state.session.model,
        "tool": state.tool,
        "confirmation": state.confirmation.prompt if state.confirmation else None,
    }[name]
    return "" if value is None else str(value)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--agent", help="only this agent's captures")
    parser.add_argument("--verbose", "-v", action="store_true", help="print every mismatch")
    parser.add_argument("--ansi", action="store_true", help="use the captures with colour escapes (.ansi)")
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
        path = args.corpus / row["file"]
        detection = detect_file(path.with_suffix(".ansi") if args.ansi else path, detectors)
        expected_state = row["state"]
        counts = per_agent[row["agent"]]
        counts["total"] += 1
        counts["agent"] += detection.agent_type == row["agent"]
        state = detection.activity.state
        ok = state == expected_state
        counts["state"] += ok
        if not ok:
            rule = detection.evidence.rule if detection.evidence else "?"
            mismatches.append(f"{row['file']}: state {state} (rule {rule}) "
                              f"expected {expected_state}  [{row['note']}]")
        if expected_state == "AwaitingConfirmation" or state == "AwaitingConfirmation":
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
    for log in sorted(args.corpus.glob("*/*_raw.bin")) if not args.agent else []:
        timeline = list(replay(read_recording(log, columns=CAPTURE_COLUMNS, lines=CAPTURE_LINES), detectors))
        states = Counter(state.activity.state for _, state in timeline)
        final = timeline[-1][1] if timeline else None
        print(f"replay {log.name}: {len(timeline)} published states "
              f"({', '.join(f'{k} {v}' for k, v in states.most_common())}); "
              f"agent {final.agent_type if final else None}; tools {final.recent_tools if final else []}")
    if args.verbose:
        print("\n".join(mismatches))
    elif mismatches:
        print(f"{len(mismatches)} mismatches (--verbose lists them)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
