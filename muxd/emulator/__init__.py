"""Sans-IO terminal screens for panes: `Emulator` (pyte-based, fast paths, byte-capped scrollback)
and the native `GhosttyEmulator` (ghostty_backend.py); backend.py chooses between them.

`Emulator` is imported at its first use: the native path never loads pyte."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .emulator import Emulator

__all__ = ["Emulator"]


def __getattr__(name: str) -> object:
    if name == "Emulator":
        from .emulator import Emulator

        return Emulator
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
