"""Prefix keys that rearrange the active window, as tmux binds them: Space (next-layout),
{ and } (swap-pane -U / -D) and ! (break-pane). Called by daemon/client_side/prefix_actions.py."""

from __future__ import annotations

from muxd.daemon.layouts import pane_moves
from muxd.daemon.layouts import sets as layout_sets
from muxd.daemon.panes.registry import Registry, Session


def run(registry: Registry, session: Session, action: str) -> None:
    """Do `action` (a Binding.argument of prefix_keys.py) to the session's active window and pane."""
    window = session.active_window
    pane = window.active_pane if window is not None else None
    if window is None or pane is None:
        return
    if action == "next_layout":
        window.select_layout((window.last_layout + 1) % len(layout_sets.LAYOUTS))
    elif action in ("swap_up", "swap_down"):
        pane_moves.swap(pane_moves.neighbour_in_order(pane, -1 if action == "swap_up" else 1), pane)
    elif action == "break_pane":
        pane_moves.break_out(registry, pane, session)
