"""The emulator fuzzer at length: both backends fed hostile output through muxd's feed path.

    .venv/bin/python benchmarks/fuzz_emulator.py                       # 50 MB a backend, seed 1
    .venv/bin/python benchmarks/fuzz_emulator.py --backend ghostty --seconds 600 --seed 7
    .venv/bin/python benchmarks/fuzz_emulator.py --backend ghostty --seed 7 --case 12 --save /tmp/repro

Each backend runs in a child process (muxd/testing/emulator_fuzz.py), so a native crash or a
hang is reported with the seed, case, step and piece instead of ending the run. Cases are
random bytes, escape-sequence soup, and the real agent logs of ../shared/corpus/real mutated
byte-wise and sequence-wise (benchmarks/data/agents recordings when the corpus is absent),
fed in random-sized pieces between the daemon's reads and resizes. Prints per backend the MB
fed (by kind, with feed MB/s), MB/s overall and inside feed(), reads, resizes, reply bytes,
peak RSS, divergences set apart with --allow, and every defect with the command that runs
its case again. Exit status 1 on any defect.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from muxd.config import EMULATION_SLICE_MIN_BYTES
from muxd.testing.emulator_fuzz import BackendReport, FuzzPlan, fuzz_backend
from muxd.testing.emulator_fuzz_cases import RealOutput, make_case

REPO = Path(__file__).resolve().parent.parent
REAL_LOGS = sorted((REPO.parent / "shared" / "corpus" / "real").glob("*/*_raw.bin"))
RECORDINGS = sorted((REPO / "benchmarks" / "data" / "agents").glob("*.cast.gz"))
DEFAULT_MB = 50.0  # a backend: 100 MB in all with both
# A child that has not reported by then is hung: the slowest backend (pyte, on 2x1000 panes)
# feeds ~0.5 MB/s with the reads in between.
SECONDS_PER_MB_LIMIT = 10.0
CHILD_SLACK_S = 120.0
MESSAGE_LINE_MAX_CHARS = 300


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backend", choices=("pyte", "ghostty", "both"), default="both")
    parser.add_argument("--mb", type=float, default=None, help=f"MB to feed each backend (default {DEFAULT_MB:g})")
    parser.add_argument("--seconds", type=float, default=None, help="feed each backend this long instead")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--case", type=int, default=None, help="run only this case of the seed")
    parser.add_argument("--save", type=Path, default=None, help="with --case: write its bytes and steps here")
    parser.add_argument("--allow", action="append", default=[], metavar="INVARIANT",
                        help="count this invariant's breaking apart instead of as a defect (repeatable)")
    parser.add_argument("--corpus", type=Path, nargs="*", default=None, help="real output to mutate")
    args = parser.parse_args()
    corpus = args.corpus if args.corpus is not None else (REAL_LOGS or RECORDINGS)
    if not REAL_LOGS and args.corpus is None:
        print("../shared/corpus/real is absent: mutating benchmarks/data/agents recordings instead")
    if args.save is not None:
        if args.case is None:
            parser.error("--save needs --case")
        case = make_case(args.seed, args.case, RealOutput.load(corpus))
        data_path, steps_path = case.save(args.save)
        print(f"{case.describe()}\n  bytes: {data_path}\n  steps: {steps_path}")
    mb = args.mb if args.mb is not None or args.seconds is not None or args.case is not None else DEFAULT_MB
    limit = CHILD_SLACK_S + (args.seconds or 0) * 1.5 + (mb or 0) * SECONDS_PER_MB_LIMIT
    backends = ("pyte", "ghostty") if args.backend == "both" else (args.backend,)
    defects = 0
    for backend in backends:
        plan = FuzzPlan(backend, args.seed, mb, args.seconds, tuple(map(str, corpus)), args.case, tuple(args.allow))
        report = fuzz_backend(plan, timeout=limit)
        print_report(report, plan)
        defects += report.defect_count
    return 1 if defects else 0


def print_report(report: BackendReport, plan: FuzzPlan) -> None:
    print(f"\n{report.backend}: seed {report.seed}, {report.cases} cases, {report.bytes_fed / 1e6:.1f} MB fed in "
          f"{report.seconds:.1f} s: {report.mb_per_s:.2f} MB/s with the reads, "
          f"{report.feed_mb_per_s:.2f} MB/s in feed()")
    for kind, fed in sorted(report.bytes_by_kind.items()):
        seconds = report.feed_seconds_by_kind.get(kind, 0.0)
        rate = f"{fed / 1e6 / seconds:.2f} MB/s" if seconds > 0 else "-"
        print(f"  {kind:<18} {fed / 1e6:7.1f} MB  {rate} in feed()")
    print(f"  reads {report.reads}, resizes {report.resizes}, reply bytes {report.reply_bytes}, "
          f"peak RSS {report.peak_rss_kib / 1024:.0f} MiB")
    case, step, size, seconds = report.slowest_piece
    if size:
        slice_ms = EMULATION_SLICE_MIN_BYTES * seconds / size * 1000
        print(f"  slowest feed: {size / 1024 / seconds:.0f} KiB/s, {size} bytes in {seconds * 1000:.0f} ms "
              f"(case {case}, step {step}): the daemon's smallest slice ({EMULATION_SLICE_MIN_BYTES} bytes) "
              f"of that would hold its loop {slice_ms:.0f} ms")
    for invariant, count in sorted(report.known.items()):
        print(f"  allowed, broken {count} times: {invariant}")
    shown = f" (the first {len(report.defects)} below)" if report.defect_count > len(report.defects) else ""
    print(f"  defects: {report.defect_count}{shown}")
    for signature, count in sorted(report.by_signature.items(), key=lambda item: -item[1]):
        print(f"    {count:5d} x {signature}")
    for defect in report.defects:
        again = f"benchmarks/fuzz_emulator.py --backend {report.backend} --seed {report.seed} --case {defect.case}"
        print(f"  - {defect.kind} in case {defect.case}, step {defect.step} ({defect.what}), piece {defect.piece}, "
              f"after {defect.offset} bytes\n    {shorten(defect.message)}\n"
              f"    again: {again}" + "".join(f" --allow {a!r}" for a in plan.allowed) + " [--save DIR]")


def shorten(message: str) -> str:
    lines = [line if len(line) <= MESSAGE_LINE_MAX_CHARS else line[:MESSAGE_LINE_MAX_CHARS] + "…"
             for line in message.splitlines()]
    return "\n    ".join(lines)


if __name__ == "__main__":
    sys.exit(main())
