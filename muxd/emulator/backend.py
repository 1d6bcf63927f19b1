"""`new_emulator`: the one place a pane's emulator backend is chosen.

MUXD_EMULATOR selects it: "ghostty" (the default: `GhosttyEmulator`, libghostty-vt through
pyghostty, Ghostty's native terminal core) or "pyte" (`Emulator`, pure Python). When the
native library cannot be loaded on a platform the pyte emulator is used instead, logged once.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Any, Callable, Union

from muxd.config import DEFAULT_SCROLLBACK_BYTES

if TYPE_CHECKING:
    from .emulator import Emulator

log = logging.getLogger(__name__)

BACKEND_ENV = "MUXD_EMULATOR"
DEFAULT_BACKEND = "ghostty"
BACKENDS = ("pyte", "ghostty")

_ghostty_class: object = None  # None: not tried yet; False: failed to load (logged)


def _load_ghostty() -> type | None:
    global _ghostty_class
    if _ghostty_class is None:
        try:
            from .ghostty_backend import GhosttyEmulator
        except Exception as exc:  # ImportError, or OSError from loading the shared library
            log.warning("the native emulator libghostty-vt (pyghostty) cannot load (%s): "
                        "using the pyte emulator", exc)
            _ghostty_class = False
        else:
            _ghostty_class = GhosttyEmulator
    return _ghostty_class or None


def backend_name(name: str | None = None) -> str:
    """The backend `name` (or $MUXD_EMULATOR) asks for; unknown names give the default."""
    name = (name if name is not None else os.environ.get(BACKEND_ENV, "")).strip().lower()
    if name and name not in BACKENDS:
        log.warning("unknown %s=%r: using %s", BACKEND_ENV, name, DEFAULT_BACKEND)
        return DEFAULT_BACKEND
    return name or DEFAULT_BACKEND


def running_backend(name: str | None = None) -> str:
    """The backend `new_emulator` gives for `name` (or $MUXD_EMULATOR): after the fallback."""
    if backend_name(name) == "ghostty" and _load_ghostty() is not None:
        return "ghostty"
    return "pyte"


def new_emulator(
    columns: int = 80,
    lines: int = 24,
    scrollback_bytes: int = DEFAULT_SCROLLBACK_BYTES,
    reply: Callable[[bytes], None] | None = None,
    *,
    backend: str | None = None,
) -> "Union[Emulator, object]":
    """A pane's emulator on the chosen backend (see module docstring)."""
    if backend_name(backend) == "ghostty":
        cls = _load_ghostty()
        if cls is not None:
            return cls(columns=columns, lines=lines, scrollback_bytes=scrollback_bytes, reply=reply)
    from .emulator import Emulator  # pyte's: only when chosen or the native core cannot load

    return Emulator(columns=columns, lines=lines, scrollback_bytes=scrollback_bytes, reply=reply)


# Output that takes every path of first use: a flood of tabbed, coloured ASCII lines (skipped
# on either backend), then a screen of styled and wide text, a clear and the alternate screen.
_WARM_UP_OUTPUT = (b"".join(b"\t%d\x1b[1;32m ok \x1b[0m\tdone\r\n" % n for n in range(400)),
                   b"\x1b[2J\x1b[H\x1b[31mred\x1b[0m \xe4\xb8\xad\r\n\x1b[?1049h\x1b[5;5Hx\x1b[?1049l")


def warm_up_steps() -> list[Callable[[], None]]:
    """Emulation's one-time costs (the layout tables, regexes, and for the native core the C
    types cffi parses at first use) as steps of a few ms each, for a daemon that has just
    started to take between its requests rather than pay them inside the first flood. A step
    never raises: a failure is logged and the steps after it do nothing."""
    from .line_layout import table_steps

    emulator: list[Any] = []

    def feed(output: bytes) -> Callable[[], None]:
        return lambda: emulator[0].feed(output)

    steps: list[Callable[[], object]] = [
        *table_steps(),
        lambda: emulator.append(new_emulator(80, 24)),
        *(feed(output) for output in _WARM_UP_OUTPUT),
        lambda: emulator[0].capture(-(10**6), escapes=True),
        lambda: (emulator[0].display_lines(), emulator[0].row_cells(0)),
    ]
    failed: list[bool] = []  # after a failure the steps left do nothing: one log line

    def guarded(step: Callable[[], object]) -> Callable[[], None]:
        def run() -> None:
            if failed:
                return
            try:
                step()
            except Exception:
                failed.append(True)
                log.exception("warming up the emulator failed (the first pane pays its one-time costs)")
        return run

    return [guarded(step) for step in steps]


def warm_up() -> None:
    """Pay emulation's one-time costs now (warm_up_steps, all at once), e.g. in a test or a
    benchmark, not in the first output that needs them. Never raises."""
    for step in warm_up_steps():
        step()
