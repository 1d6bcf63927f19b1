"""What both backends' emulators (emulator.Emulator, ghostty_backend.GhosttyEmulator) share:
the size limits and the output a flood skipper keeps back.

Below both, so the native backend does not import the pyte one (nor it the native skipper).
"""

from __future__ import annotations

import logging
from typing import Protocol

from muxd.config import MAX_COLUMNS, MAX_LINES, MIN_COLUMNS, MIN_LINES

log = logging.getLogger(__name__)


def clamp_size(columns: int, lines: int) -> tuple[int, int]:
    return min(max(columns, MIN_COLUMNS), MAX_COLUMNS), min(max(lines, MIN_LINES), MAX_LINES)


class FloodSkipping(Protocol):
    """A backend's flood skipper (flood.FloodSkipper, ghostty_flood.NativeFloodSkipper)."""

    skipped_chars: int

    def flush(self) -> None: ...


class DeferredFloodOutput:
    """What both backends' emulators share about the output a flood skipper keeps back
    (`self._flood`, None without fast paths): every read emulates it first."""

    _flood: FloodSkipping | None
    failed: bool

    def _sync(self) -> None:
        """Bring the screen up to date with deferred flood output (feeding it, so a failure here
        is a failed feed, not an exception in whichever read came first)."""
        if self._flood is not None and not self.failed:
            try:
                self._flood.flush()
            except Exception:
                self.failed = True
                log.exception("%s failed on deferred output", type(self).__name__)

    def flush(self) -> None:
        """Emulate the output a flood left deferred. Every read does this itself; this is for
        callers that account the cost of emulating apart from the cost of reading."""
        self._sync()

    @property
    def skipped_chars(self) -> int:
        """Characters of flood output that never needed emulating (diagnostics)."""
        return self._flood.skipped_chars if self._flood is not None else 0
