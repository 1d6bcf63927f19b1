"""The detector contract: a `Detector` reads a `ScreenContext` and returns a `Detection`.

Detectors are pure: no I/O, no clocks of their own, no state beyond what `prev` carries.
Third-party detectors implement the same Protocol and register through the
`muxd.detectors` entry-point group (see registry.py). A detector whose agent keeps its resting
screen for a while after Enter sets `submit_uptake_s` (seconds; see submit_uptake.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from muxd.detectors.state import AgentState, Detection


@dataclass(frozen=True)
class ScreenContext:
    """One frame of a pane, as a detector sees it."""

    lines: Sequence[str]                  # visible rows, plain text, trailing blanks stripped
    columns: int = 80
    cursor: tuple[int, int] = (0, 0)      # (x, y)
    title: str = ""
    process_name: str | None = None       # foreground process name (comm)
    process_argv: Sequence[str] = ()      # foreground process argv
    exited: bool = False                  # the pane's program has exited
    exit_code: int | None = None
    now: float = 0.0                      # wall-clock seconds
    alternate_screen: bool = False
    rows: Sequence[object] = field(default=(), repr=False)  # muxd.emulator Rows (text + styles), if wanted
    # The last bytes typed into the pane from outside (keys, send-keys, a paste); b"" where not
    # known (a replayed log). Some frames are the same after Enter and after Ctrl-C.
    last_input: bytes = b""
    input_at: float | None = None         # wall-clock seconds last_input was sent (None: not known)

    def non_empty(self) -> list[tuple[int, str]]:
        """(row index, text) of every non-blank row, top to bottom."""
        return [(y, line) for y, line in enumerate(self.lines) if line.strip()]

    def last_lines(self, count: int) -> list[str]:
        """The last `count` non-blank rows, top to bottom."""
        return [line for _, line in self.non_empty()[-count:]]


@runtime_checkable
class Detector(Protocol):
    name: str

    def identify(self, ctx: ScreenContext) -> float:
        """Confidence 0..1 that this detector's agent runs in the pane (process first, screen second)."""
        ...

    def detect(self, ctx: ScreenContext, prev: AgentState | None) -> Detection:
        """Read the frame. Must not raise on any screen; the runner isolates those that do."""
        ...
