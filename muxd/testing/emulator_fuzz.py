"""The emulator fuzzer: fuzz cases fed to one backend through muxd's own feed path.

`fuzz_backend(FuzzPlan(backend, seed, mb, ...))` runs cases (emulator_fuzz_cases.py) in a
child process (`python -m muxd.testing.emulator_fuzz`), so that a native crash or a hang is
seen and reported with the seed, case, step and piece instead of killing the caller. In the child each case
gets an emulator from `new_emulator` (as a pane does) and lives through its steps: pieces
fed, the daemon's reads checked (emulator_fuzz_checks.py), resizes. A defect is an exception
escaping a method, an error the emulator logged (it swallows them and stops emulating), its
`failed` flag, a broken invariant, a crash or a hang; a case stops at its first defect.
Used by tests/test_emulator_fuzz.py and benchmarks/fuzz_emulator.py.
"""

from __future__ import annotations

import faulthandler
import json
import logging
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from muxd.emulator.backend import new_emulator

from .emulator_fuzz_cases import FuzzCase, RealOutput, clamp_size, make_case
from .emulator_fuzz_checks import READ_CHECKS, Broken, Expect

BACKEND_CLASSES = {"pyte": "Emulator", "ghostty": "GhosttyEmulator"}
DEFECTS_SHOWN_MAX = 20
STDERR_SHOWN_LINES = 12
PIECE_TIMED_MIN_BYTES = 4096  # smaller pieces are timed too coarsely to compare
PROGRESS_RECORD_BYTES = 64    # the child overwrites one record in place with where it is
_EMULATOR_LOGGERS = ("muxd.emulator",)


@dataclass
class Defect:
    kind: str        # exception | logged | failed | invariant | crash | hang | child
    case: int        # -1: not inside a case
    step: int        # index into the case's steps
    piece: int       # pieces fed before the step
    offset: int      # bytes of the case fed before the step
    what: str        # the step
    message: str

    @property
    def signature(self) -> str:
        """What broke, without where: the invariant's name, an exception's last line."""
        if self.kind == "invariant":
            return self.message.split("]", 1)[0] + "]"
        lines = self.message.strip().splitlines()
        return f"{self.kind}: {(lines[-1] if self.kind == 'exception' else lines[0])[:100]}" if lines else self.kind


@dataclass
class BackendReport:
    backend: str
    seed: int
    cases: int = 0
    bytes_fed: int = 0
    bytes_by_kind: dict[str, int] = field(default_factory=dict)
    feed_seconds: float = 0.0   # inside feed() only
    feed_seconds_by_kind: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0        # the whole run: feeds, reads, resizes, making cases
    reads: int = 0
    resizes: int = 0
    reply_bytes: int = 0
    peak_rss_kib: int = 0
    defects: list[Defect] = field(default_factory=list)  # the first DEFECTS_SHOWN_MAX
    defect_count: int = 0
    by_signature: dict[str, int] = field(default_factory=dict)  # defects counted by what broke
    known: dict[str, int] = field(default_factory=dict)  # allowed invariants broken, by name
    # The slowest feed per byte among pieces of PIECE_TIMED_MIN_BYTES or more: output a pane
    # would emulate that slowly (case, step, bytes, seconds).
    slowest_piece: tuple[int, int, int, float] = (-1, -1, 0, 0.0)

    def add_defect(self, defect: Defect) -> None:
        self.defect_count += 1
        signature = defect.signature
        self.by_signature[signature] = self.by_signature.get(signature, 0) + 1
        if len(self.defects) < DEFECTS_SHOWN_MAX:
            self.defects.append(defect)

    def timed(self, case: int, step: int, size: int, seconds: float) -> None:
        _, _, slowest_size, slowest_seconds = self.slowest_piece
        if size >= PIECE_TIMED_MIN_BYTES and (not slowest_size or seconds * slowest_size > slowest_seconds * size):
            self.slowest_piece = (case, step, size, seconds)

    @property
    def mb_per_s(self) -> float:
        return self.bytes_fed / 1e6 / self.seconds if self.seconds > 0 else 0.0

    @property
    def feed_mb_per_s(self) -> float:
        return self.bytes_fed / 1e6 / self.feed_seconds if self.feed_seconds > 0 else 0.0


class _LogCatcher(logging.Handler):
    """Warnings and errors the emulator logs: it swallows its own exceptions and logs them."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            text += " | " + "".join(traceback.format_exception(*record.exc_info)[-3:]).strip()
        self.records.append(text)


class _Progress:
    """Where the run is, written in place into a file a crash leaves behind."""

    def __init__(self, path: str | None) -> None:
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600) if path else None

    def at(self, case: int, step: int, piece: int, offset: int) -> None:
        if self._fd is not None:
            record = f"{case} {step} {piece} {offset}".encode().ljust(PROGRESS_RECORD_BYTES)
            os.pwrite(self._fd, record, 0)


def _step_text(step: Any) -> str:
    return f"{step.op}{tuple(step.args)!r}" if step.op != "feed" else f"feed bytes [{step.args[0]}:{step.args[1]}]"


def run_case(case: FuzzCase, backend: str, report: BackendReport, progress: _Progress, catcher: _LogCatcher,
             allowed: frozenset[str] = frozenset()) -> None:
    """Live through `case` on `backend`, adding what it fed, read and broke to `report`. A broken
    invariant named in `allowed` is counted in `report.known` and the case goes on."""
    replies: list[int] = []

    def reply(data: bytes) -> None:
        if not isinstance(data, bytes):
            raise Broken("types", f"reply got {type(data).__name__}, not bytes")
        replies.append(len(data))

    offset = pieces = 0
    feed_seconds = 0.0
    try:
        progress.at(case.number, -1, 0, 0)
        emulator = new_emulator(case.columns, case.lines, case.scrollback_bytes, reply, backend=backend)
    except Exception as exc:  # noqa: BLE001
        report.add_defect(Defect("exception", case.number, -1, 0, 0, "new_emulator", _tail(exc)))
        emulator = None
    if emulator is not None and type(emulator).__name__ != BACKEND_CLASSES[backend]:
        report.add_defect(Defect("child", case.number, -1, 0, 0, "new_emulator",
                                 f"new_emulator(backend={backend!r}) gave {type(emulator).__name__}: unavailable"))
        emulator = None
    expect = Expect(*clamp_size(case.columns, case.lines), case.scrollback_bytes)
    for index, step in enumerate(case.steps if emulator is not None else ()):
        progress.at(case.number, index, pieces, offset)
        defect = None
        try:
            if step.op == "feed":
                took = _feed(emulator, case.data[step.args[0]:step.args[1]])
                feed_seconds += took
                report.timed(case.number, index, step.args[1] - step.args[0], took)
                offset = step.args[1]
                pieces += 1
            elif step.op == "resize":
                emulator.resize(*step.args)
                expect.resized(*step.args)
                report.resizes += 1
            else:
                report.reads += 1
                READ_CHECKS[step.op](emulator, expect, *step.args)
        except Broken as broken:
            if broken.invariant in allowed:
                report.known[broken.invariant] = report.known.get(broken.invariant, 0) + 1
            else:
                defect = ("invariant", f"[{broken.invariant}] {broken}")
        except Exception as exc:  # noqa: BLE001 - every exception escaping a method is the finding
            defect = ("exception", _tail(exc))
        if defect is None and catcher.records:
            defect = ("logged", catcher.records[0])
        if defect is None and getattr(emulator, "failed", False):
            defect = ("failed", "the emulator set failed = True")
        if defect is not None:  # a broken emulator breaks on: the first finding is the one to fix
            report.add_defect(Defect(defect[0], case.number, index, pieces, offset, _step_text(step), defect[1]))
            break
    catcher.records.clear()
    report.cases += 1
    report.bytes_fed += offset
    report.bytes_by_kind[case.kind] = report.bytes_by_kind.get(case.kind, 0) + offset
    report.feed_seconds_by_kind[case.kind] = report.feed_seconds_by_kind.get(case.kind, 0.0) + feed_seconds
    report.feed_seconds += feed_seconds
    report.reply_bytes += sum(replies)


def _feed(emulator: Any, piece: bytes) -> float:
    """Feed `piece` as a pane's emulation turn does; return the seconds it took."""
    started = time.perf_counter()
    emulator.feed(piece)
    return time.perf_counter() - started


def _tail(exc: BaseException) -> str:
    return "".join(traceback.format_exception(exc)[-4:]).strip()


@dataclass(frozen=True)
class FuzzPlan:
    """What one backend's run feeds: cases 0, 1, ... of `seed` until `mb` megabytes are fed or
    `seconds` have passed (or only case `case`), mutating the real output in `corpus`."""

    backend: str
    seed: int = 1
    mb: float | None = None
    seconds: float | None = None
    corpus: tuple[str, ...] = ()
    case: int | None = None
    allowed: tuple[str, ...] = ()  # invariants whose breaking is counted apart, not a defect


def run_backend(plan: FuzzPlan, progress_path: str | None = None) -> BackendReport:
    """Run `plan` in this process."""
    report = BackendReport(plan.backend, plan.seed)
    catcher = _LogCatcher()
    for name in _EMULATOR_LOGGERS:
        logger = logging.getLogger(name)
        logger.addHandler(catcher)
        logger.setLevel(logging.WARNING)
    progress = _Progress(progress_path)
    real = RealOutput.load([Path(p) for p in plan.corpus])
    max_bytes = None if plan.mb is None else plan.mb * 1e6
    started = time.monotonic()
    number = plan.case if plan.case is not None else 0
    while True:
        run_case(make_case(plan.seed, number, real), plan.backend, report, progress, catcher, frozenset(plan.allowed))
        number += 1
        elapsed = time.monotonic() - started
        if plan.case is not None or (max_bytes is not None and report.bytes_fed >= max_bytes) \
                or (plan.seconds is not None and elapsed >= plan.seconds):
            break
    report.seconds = time.monotonic() - started
    report.peak_rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return report


# ------------------------------------------------------------------ the child process

def fuzz_backend(plan: FuzzPlan, timeout: float | None = None) -> BackendReport:
    """Run `plan` in a child process; a crash there, or no report within `timeout` seconds, is
    a defect in the report."""
    with tempfile.TemporaryDirectory(prefix="muxd-fuzz-") as tmp:
        progress = os.path.join(tmp, "progress")
        command = [sys.executable, "-m", "muxd.testing.emulator_fuzz", json.dumps(asdict(plan)), progress]
        started = time.monotonic()
        try:
            child = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as expired:
            return _lost(plan, progress, "hang", f"no report within {timeout:.0f} s", expired.stderr,
                         time.monotonic() - started)
        if child.returncode == 0 and child.stdout.strip():
            data = json.loads(child.stdout.strip().splitlines()[-1])
            return BackendReport(**{**data, "defects": [Defect(**d) for d in data["defects"]]})
        if child.returncode < 0:
            return _lost(plan, progress, "crash", f"killed by {signal.Signals(-child.returncode).name}",
                         child.stderr, time.monotonic() - started)
        return _lost(plan, progress, "child", f"exit status {child.returncode}", child.stderr,
                     time.monotonic() - started)


def _lost(plan: FuzzPlan, progress: str, kind: str, message: str, stderr: str | bytes | None,
          elapsed: float) -> BackendReport:
    """A report for a child that never reported: where it was, and its stderr (for a crash,
    faulthandler's stack; else the end)."""
    case = step = piece = offset = -1
    try:
        case, step, piece, offset = map(int, Path(progress).read_bytes().split())
    except (OSError, ValueError):
        pass
    if isinstance(stderr, bytes):
        stderr = stderr.decode("utf-8", "replace")
    lines = (stderr or "").strip().splitlines()
    # faulthandler's report starts "Fatal Python error" and lists the newest frames first.
    first = next((i for i, line in enumerate(lines) if line.startswith("Fatal Python error")), max(0, len(lines) - 12))
    tail = "\n".join(lines[first:first + STDERR_SHOWN_LINES])
    report = BackendReport(plan.backend, plan.seed, seconds=elapsed,
                           peak_rss_kib=resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    report.add_defect(Defect(kind, case, step, piece, offset, "the step at the offset", f"{message}\n{tail}".strip()))
    return report


def main(argv: list[str]) -> int:
    """The child: `python -m muxd.testing.emulator_fuzz PLAN_JSON PROGRESS_FILE`; the report
    is the last line of its stdout, as JSON."""
    faulthandler.enable()  # a segfault prints the Python stack to stderr, for the parent
    plan = FuzzPlan(**json.loads(argv[0]))
    print(json.dumps(asdict(run_backend(plan, argv[1] if len(argv) > 1 else None))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
