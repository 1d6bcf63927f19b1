"""Requests that rearrange panes: select-layout, swap-pane, break-pane, join-pane, respawn-pane
(tmux's names and flags). Part of the unions in messages.py; replies are Ok or PaneReply.
"""

from __future__ import annotations

from muxd.protocol.fields import Name, Size, Target
from muxd.protocol.pane_messages import Spawn, _Message


class SelectLayout(_Message, tag="select-layout"):
    id: int
    target: Target | None = None  # a pane: its window, and the split -E spreads
    layout: Name | None = None    # a layout name or an unambiguous start; None: the last again
    next: bool = False            # -n: the next layout in tmux's order
    previous: bool = False        # -p
    spread: bool = False          # -E: spread the panes around the target evenly


class SwapPane(_Message, tag="swap-pane"):
    id: int
    target: Target | None = None  # -t: the destination pane
    source: Target | None = None  # -s: default the current pane
    up: bool = False              # -U: swap the target with the pane before it
    down: bool = False            # -D: ... after it
    detached: bool = False        # -d: the active pane stays where it was


class BreakPane(_Message, tag="break-pane"):
    id: int
    target: Target | None = None  # -s: the pane to break out
    session: Target | None = None  # -t: the session (or window) to put the new window in
    name: Name | None = None      # -n: the new window's name
    detached: bool = False        # -d: the new window does not become the current one


class JoinPane(_Message, tag="join-pane"):
    id: int
    target: Target | None = None  # -t: the pane to split for it
    source: Target | None = None  # -s: the pane to move (default the current pane)
    horizontal: bool = False      # -h: side by side; default stacked
    before: bool = False          # -b: left of (above) the target
    size: Size | None = None      # -l: cells or "N%" of the target pane
    detached: bool = False        # -d: the target window's active pane stays active


class RespawnPane(_Message, tag="respawn-pane"):
    id: int
    target: Target | None = None
    kill: bool = False            # -k: end a program still running first
    spawn: Spawn = Spawn()        # command (empty: the pane's own again), cwd, env
