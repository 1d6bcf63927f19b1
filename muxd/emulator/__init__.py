"""Sans-IO terminal screens for panes: `Emulator` (pyte-based, fast paths, byte-capped scrollback)."""

from __future__ import annotations

from .emulator import Emulator

__all__ = ["Emulator"]
