"""Offline detection: a saved screen or a recording through the emulator and the detectors.

Used by `muxd detect` (one frame) and `muxd replay` (a timeline of published states), by
the benchmarks, and by tests. Time is the recording's, not the wall clock's.
"""

from __future__ import annotations


import gzip
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from muxd.detectors.base import Detector, ScreenContext
from muxd.detectors.runner import DetectionSchedule, DetectorRunner
from muxd.detectors.state import AgentState
from muxd.emulator import Emulator
from muxd.emulator.backend import new_emulator
from muxd.errors import BadRequest

# A raw byte log has no timing: replay it at the rate an agent TUI writes while it works.
RAW_REPLAY_BYTES_PER_S = 2048
# A program draws a frame with one write and the daemon reads it whole, so a raw log is cut
# where a frame begins: a synchronized update, the cursor hidden for drawing, the cursor sent
# home, the screen cleared, Ink erasing its last frame's rows (the first ESC[2K ESC[1A of a
# run), or a line redrawn from its start (a carriage return and text: Aider's spinner). Cut at
# a fixed size instead, looks land inside full redraws and read half of two frames: rows
# repeated (a tool counted twice) or a dialog never seen whole.
_FRAME_START = re.compile(
    rb"(?=\x1b\[\?2026h|\x1b\[\?25l|\x1b\[H|\x1b\[2J)|(?<!\x1b\[1A)(?=\x1b\[2K\x1b\[1A)"
    rb"|(?<=\r)(?=[^\r\n\x1b])")
_CONTROLS_ONLY = re.compile(rb"(?:\x1b\[[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e])*")  # CSI sequences
RAW_REPLAY_MAX_READ_BYTES = 4096  # a longer frame arrives in pieces of this size, as PTY reads do
FINAL_LOOKS = 3


def screen_bytes(data: bytes) -> bytes:
    """A plain-text capture has bare line feeds; a terminal needs CR LF to start each line."""
    if b"\r" in data:
        return data
    return data.replace(b"\n", b"\r\n")


def plain_size(data: bytes) -> tuple[int, int]:
    """Columns and rows that hold a plain-text capture without wrapping or scrolling."""
    text = data.decode("utf-8", "replace")
    lines = (text[:-1] if text.endswith("\n") else text).split("\n")
    return max(80, max((len(line) for line in lines), default=0)), max(1, len(lines))


def frame_context(emulator: Emulator, now: float, *, exited: bool = False) -> ScreenContext:
    return ScreenContext(lines=emulator.display_lines(), columns=emulator.columns,
                         cursor=emulator.cursor, title=emulator.title, now=now, exited=exited,
                         alternate_screen=emulator.alternate_screen)


def only(detectors: Sequence[Detector], agent: str | None) -> list[Detector]:
    if agent is None:
        return list(detectors)
    chosen = [d for d in detectors if d.name == agent]
    if not chosen:
        raise BadRequest(f"no detector named {agent!r}; known: {', '.join(d.name for d in detectors)}")
    return [_Always(chosen[0])]


class _Always:
    """A detector forced by the user (`--agent`): it identifies every frame."""

    def __init__(self, inner: Detector) -> None:
        self.inner = inner
        self.name = inner.name

    def identify(self, ctx: ScreenContext) -> float:
        return 1.0

    def detect(self, ctx: ScreenContext, prev: AgentState | None):  # type: ignore[no-untyped-def]
        return self.inner.detect(ctx, prev)


def detect_saved_screen(data: bytes, detectors: Sequence[Detector], *, columns: int | None = None,
                        lines: int | None = None, pane_id: str = "",
                        cursor: tuple[int, int] | None = None, now: float = 0.0,
                        exited: bool = False) -> AgentState:
    """The AgentState of one saved screen: plain capture, capture with escapes, or raw bytes;
    `cursor` (x, y): where the pane's cursor was, which a capture does not keep; `now` (epoch
    seconds): when it was on screen, for what it says of times ("resets 3pm"); `exited`: the
    pane's program had exited (its last screen: only then does a detector's Exited stand)."""
    plain = b"\x1b" not in data
    # A capture (`capture-pane -p`, no carriage returns) does not keep the cursor: unless told
    # where it was, it is put home, where ScreenContext's is when unknown, not left after the
    # capture's last row, where no program had it.
    captured = b"\r" not in data
    if plain:
        width, height = plain_size(data)
        columns, lines = columns or width, max(lines or 0, height)
    if b"\r" not in data:
        # A capture's final line feed ends its last row; fed to a terminal it would scroll the
        # screen by one and lose the top row.
        data = screen_bytes(data[:-1] if data.endswith(b"\n") else data)
    emulator = new_emulator(columns=columns or 120, lines=lines or 40)
    emulator.feed(data)
    if cursor is not None or captured:
        x, y = cursor or (0, 0)
        emulator.feed(b"\x1b[%d;%dH" % (y + 1, x + 1))
    runner = DetectorRunner(pane_id, detectors, clock=lambda: now)
    ctx = frame_context(emulator, now)
    runner.run(replace(ctx, exited=True) if exited else ctx, settled=True)
    return runner.state


@dataclass(frozen=True)
class Recording:
    columns: int
    lines: int
    events: list[tuple[float, bytes]]  # (seconds from start, output)
    resizes: list[tuple[float, int, int]] = field(default_factory=list)  # (seconds, columns, lines)


GZIP_MAGIC = b"\x1f\x8b"


def read_recording(path: Path, *, columns: int | None = None, lines: int | None = None,
                   data: bytes | None = None) -> Recording:
    """An asciicast v2 or v3 file, or a raw byte log (then --cols/--rows give its size);
    `data`: its bytes, already read (`path` then only names it in errors)."""
    data = path.read_bytes() if data is None else data
    if data[:2] == GZIP_MAGIC:  # recordings are stored gzipped (benchmarks/data/agents)
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise BadRequest(f"{path}: broken gzip data: {exc}") from None
    first = data.split(b"\n", 1)[0].strip()
    if first.startswith(b"{"):
        try:
            header = json.loads(first)
        except ValueError:
            header = None
        if isinstance(header, dict) and header.get("version") in (2, 3):
            return _asciicast(data, header, columns, lines)
    return Recording(columns or 120, lines or 40, raw_events(data))


def raw_events(data: bytes) -> list[tuple[float, bytes]]:
    """A raw byte log as output events: one per frame (see _FRAME_START), paced by size."""
    cuts = [match.start() for match in _FRAME_START.finditer(data)] + [len(data)]
    events: list[tuple[float, bytes]] = []
    start = 0
    for cut in cuts:
        if cut < len(data) and _CONTROLS_ONLY.fullmatch(data, start, cut):
            continue  # a frame opens with several of these: cut before the first only
        while start < cut:
            end = min(cut, start + RAW_REPLAY_MAX_READ_BYTES)
            events.append((start / RAW_REPLAY_BYTES_PER_S, data[start:end]))
            start = end
    return events


def _asciicast(data: bytes, header: dict, columns: int | None, lines: int | None) -> Recording:
    version = header["version"]
    term = header.get("term", {}) if version == 3 else header
    width = columns or int(term.get("cols", term.get("width", 80)))
    height = lines or int(term.get("rows", term.get("height", 24)))
    events: list[tuple[float, bytes]] = []
    resizes: list[tuple[float, int, int]] = []
    clock = 0.0
    for raw in data.split(b"\n")[1:]:
        raw = raw.strip()
        if not raw or raw.startswith(b"#"):
            continue
        try:
            when, kind, payload = json.loads(raw)[:3]
        except (ValueError, TypeError):
            raise BadRequest(f"not an asciicast event line: {raw[:60]!r}") from None
        clock = clock + float(when) if version == 3 else float(when)
        if kind == "o":
            events.append((clock, str(payload).encode("utf-8", "surrogateescape")))
        elif kind == "r":
            resizes.append((clock, *_size(payload)))
    return Recording(width, height, events, resizes)


def _size(payload: object) -> tuple[int, int]:
    """An "r" event's "COLSxROWS" as (columns, lines)."""
    columns, sep, lines = str(payload).partition("x")
    if not sep or not columns.isdigit() or not lines.isdigit() or not int(columns) or not int(lines):
        raise BadRequest(f"not an asciicast resize (COLSxROWS): {str(payload)[:40]!r}")
    return int(columns), int(lines)


def replay(recording: Recording, detectors: Sequence[Detector], *, pane_id: str = "replay",
           until: float | None = None, emulator: Emulator | None = None,
           ) -> Iterator[tuple[float, AgentState]]:
    """Feed the recording at its own pace; yield (time, state) at every published change.

    Detection runs as in the daemon (DetectionSchedule), on the recording's clock. `until`
    stops at that moment: the output written and the looks due by then, no later ones. Pass
    `emulator` to read the screen afterwards."""
    emulator = emulator or new_emulator(columns=recording.columns, lines=recording.lines)
    clock = [0.0]
    runner = DetectorRunner(pane_id, detectors, clock=lambda: clock[0])
    schedule = DetectionSchedule()

    def run_at(moment: float) -> Iterable[tuple[float, AgentState]]:
        clock[0] = moment
        before = runner.state
        changed = runner.run(frame_context(emulator, moment))
        schedule.ran(moment, changed=runner.significant(before, changed) or runner.pending)
        if changed is not None:
            yield moment, changed
        if runner.pending:
            schedule.again(moment)

    resizes = iter(recording.resizes)
    resize = next(resizes, None)
    for when, payload in recording.events:
        if until is not None and when > until:
            break
        while schedule.due is not None and schedule.due <= when:
            yield from run_at(schedule.due)
        while resize is not None and resize[0] <= when:  # the terminal took its new size before this output
            emulator.resize(resize[1], resize[2])
            resize = next(resizes, None)
        emulator.feed(payload)
        schedule.output(when)
    while resize is not None and (until is None or resize[0] <= until):  # resized after its last output
        emulator.resize(resize[1], resize[2])
        resize = next(resizes, None)
    if until is not None:
        while schedule.due is not None and schedule.due <= until:
            yield from run_at(schedule.due)
        return
    for _ in range(FINAL_LOOKS):  # the last frame, and its confirming second look
        if schedule.due is None:
            break
        yield from run_at(schedule.due)
