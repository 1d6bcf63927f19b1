"""Rendering for attached clients: compose a client's screen from panes, paint the difference."""

from __future__ import annotations

from .compose import PaneView, StatusLine, WindowTab, compose
from .frame import Frame
from .paint import FramePainter, enter_terminal_bytes, leave_terminal_bytes

__all__ = [
    "Frame",
    "FramePainter",
    "PaneView",
    "StatusLine",
    "WindowTab",
    "compose",
    "enter_terminal_bytes",
    "leave_terminal_bytes",
]
