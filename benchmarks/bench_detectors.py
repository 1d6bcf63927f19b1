"""Detector accuracy over the labelled corpus of real agent screens (../shared/corpus/real).

    .venv/bin/python benchmarks/bench_detectors.py [--corpus DIR] [--agent claude] [--verbose]

Every labelled capture goes through exactly what `muxd detect FILE` does (replayed into a
120-column screen, detectors and runner; screen signatures only: a capture carries no
process information). A labels file with `size` and `cursor` columns (tests/detector_data/
issue25) replays each capture at its own size with the cursor where the pane had it.
Prints state accuracy overall and per agent, the idle/busy/asking class accuracy, how often a
busy or asking agent read Idle (false Idle), precision/recall of AwaitingConfirmation, and how
often description, elapsed time, tokens, model, tool, confirmation prompt (and options and
background work, where labelled) match.
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
EXTRA_FIELDS = ("options", "background")  # checked where the labels file has the column
# What a state says to a caller waiting for the agent: done, working, or waiting for a yes.
CLASSES = {"Idle": "idle", "AwaitingInput": "idle", "Thinking": "busy", "Generating": "busy",
           "ToolUse": "busy", "AwaitingConfirmation": "asking"}


def detect_file(path: Path, detectors: list, row: dict[str, str] | None = None) -> AgentState:
    """The file through exactly what `muxd detect FILE` does: emulator, detectors, runner; at
    the row's `size` ("80x24") with its `cursor` ("0,16") when the labels give them."""
    row = row or {}
    columns, lines = (int(n) for n in row["size"].split("x")) if row.get("size") else (CAPTURE_COLUMNS, None)
    cursor = tuple(int(n) for n in row["cursor"].split(",")) if row.get("cursor") else None
    return detect_saved_screen(path.read_bytes(), detectors, columns=columns, lines=lines,
                               cursor=cursor)  # type: ignore[arg-type]


def field_value(state: AgentState, name: str) -> str:
    value = {
        "description": state.activity.description,
        "elapsed_s": state.activity.elapsed_s,
        "tokens": state.session.tokens_used,
        "model": state.session.model,
        "tool": state.tool,
        "confirmation": state.confirmation.prompt if state.confirmation else None,
        "options": " | ".join(state.confirmation.options) if state.confirmation else None,
        "background": getattr(state, "background", 0) or None,
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
    # the fields the labels give somewhere (a corpus may leave some out: no model, no tokens)
    checked = [name for name in FIELDS + EXTRA_FIELDS if any(row.get(name) not in (None, "", "0") for row in rows)]
    started = time.process_time()
    for row in rows:
        path = args.corpus / row["file"]
        ansi = path.with_suffix(".ansi")
        detection = detect_file(ansi if args.ansi and ansi.exists() else path, detectors, row)
        expected_state = row["state"]
        counts = per_agent[row["agent"]]
        counts["total"] += 1
        counts["agent"] += detection.agent_type == row["agent"]
        state = detection.activity.state
        ok = state == expected_state
        counts["state"] += ok
        counts["class"] += CLASSES.get(state, state) == CLASSES.get(expected_state, expected_state)
        counts["false idle"] += state == "Idle" and CLASSES.get(expected_state) in ("busy", "asking")
        if not ok:
            rule = detection.evidence.rule if detection.evidence else "?"
            mismatches.append(f"{row['file']}: state {state} (rule {rule}) "
                              f"expected {expected_state}  [{row['note']}]")
        if expected_state == "AwaitingConfirmation" or state == "AwaitingConfirmation":
            confirm["tp" if ok and expected_state == "AwaitingConfirmation" else
                    "fn" if expected_state == "AwaitingConfirmation" else "fp"] += 1
        for name in checked:
            want = "" if row[name] == "0" and name == "background" else row[name]
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
    print(f"{'agent':8} {'captures':>8} {'agent id':>9} {'state acc':>10} {'class acc':>10} {'false Idle':>10}")
    total = Counter()
    for name in [*sorted(per_agent), "all"]:
        c = total if name == "all" else per_agent[name]
        if name != "all":
            total.update(c)
        n = max(1, c["total"])
        print(f"{name:8} {c['total']:8} {c['agent'] / n:9.1%} {c['state'] / n:10.1%} {c['class'] / n:10.1%} "
              f"{c['false idle']:10}")
    tp, fp, fn = confirm["tp"], confirm["fp"], confirm["fn"]
    print(f"AwaitingConfirmation: precision {tp / max(1, tp + fp):.1%}  recall {tp / max(1, tp + fn):.1%} "
          f"(tp {tp}, fp {fp}, fn {fn})")
    for name in checked:
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
