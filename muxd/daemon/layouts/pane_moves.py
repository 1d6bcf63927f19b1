"""Panes changing places, as tmux's swap-pane, join-pane and break-pane: the programs keep
running, only their cells, windows and sizes change (they get SIGWINCH)."""

from __future__ import annotations

import os

from muxd.daemon.layouts import full as layout_full
from muxd.daemon.panes.names import program_name
from muxd.daemon.panes.pane import Pane
from muxd.daemon.panes.registry import Registry, Session, Window, window_of
from muxd.errors import BadRequest, Conflict


def swap(source: Pane, target: Pane, *, detached: bool = False) -> None:
    """`source` and `target` trade cells (and windows); without `detached` the target pane stays
    the active one, wherever it went (tmux's swap-pane)."""
    if source is target:
        return
    src_w, dst_w = window_of(source), window_of(target)
    assert src_w.layout is not None and dst_w.layout is not None
    src_w.zoomed = dst_w.zoomed = False
    src_at, dst_at = src_w.panes.index(source), dst_w.panes.index(target)
    src_w.panes[src_at], dst_w.panes[dst_at] = target, source
    if src_w is dst_w:
        src_w.layout.swap(source, target)
    else:
        src_w.layout.replace(source, target)
        dst_w.layout.replace(target, source)
        source.window, target.window = dst_w, src_w
    src_active, dst_active = src_w.active_pane, dst_w.active_pane
    if not detached:
        if src_w is dst_w:
            src_w.active_pane = target
        else:
            src_w.active_pane, dst_w.active_pane = target, source
    else:  # the active pane's place stays active
        if src_active is source:
            src_w.active_pane = target
        if dst_active is target:
            dst_w.active_pane = source
    src_w.apply_layout()
    dst_w.apply_layout()


def neighbour_in_order(pane: Pane, step: int) -> Pane:
    """The pane before (step -1) or after (+1) `pane` in its window's order, wrapping (-U / -D)."""
    panes = window_of(pane).panes
    return panes[(panes.index(pane) + step) % len(panes)]


class _Placeholder:
    """Holds the new cell of a joined pane while the pane leaves its old one."""


def join(registry: Registry, source: Pane, target: Pane, horizontal: bool, *, size: int | None = None,
         before: bool = False, full: bool = False, detached: bool = False) -> None:
    """Move `source` into a split of `target`'s cell (tmux's join-pane: split first, then close
    the source's cell); a window left without panes goes."""
    if source is target:
        raise BadRequest("source and target panes must be different")
    src_w, dst_w = window_of(source), window_of(target)
    assert src_w.layout is not None and dst_w.layout is not None
    src_w.zoomed = dst_w.zoomed = False
    placeholder = _Placeholder()
    if full:  # raises before anything moved
        layout_full.split_full(dst_w.layout, placeholder, horizontal, size, before)
    else:
        dst_w.layout.split(target, placeholder, horizontal, size, before)
    src_w.forget(source)
    if src_w.panes:
        src_w.layout.remove(source)
    dst_w.layout.replace(placeholder, source)
    dst_w.layout.remember()
    source.window = dst_w
    dst_w.panes.insert(dst_w.panes.index(target) + (0 if before else 1), source)
    if not detached:
        dst_w.active_pane = source
        dst_w.session.active_window = dst_w
    if src_w.panes:
        src_w.apply_layout()
    else:
        registry.drop_window(src_w)
    dst_w.apply_layout()


def break_out(registry: Registry, pane: Pane, session: Session, *, index: int | None = None,
              name: str | None = None, detached: bool = False) -> Window:
    """`pane` becomes the only pane of a new window of `session` (tmux's break-pane); a pane that
    is already alone moves with its window."""
    source = window_of(pane)
    if index is not None and any(w.index == index for w in session.windows if w is not source):
        raise Conflict(f"index in use: {index}", index=index)
    if len(source.panes) == 1:
        _move_window(registry, source, session, index, detached)
        if name:
            registry.rename_window(source, name)
        return source
    assert source.layout is not None
    columns, lines = source.layout.columns, source.layout.lines
    window = registry.new_window(session, name or _program_of(pane), index, select=not detached)
    source.remove(pane)
    pane.resize(columns, lines)
    window.add(pane)
    return window


def _move_window(registry: Registry, window: Window, session: Session, index: int | None,
                 detached: bool) -> None:
    """tmux links the window at a free index of `session` and unlinks it from where it was."""
    new_index = session.next_window_index() if index is None else index
    if window.session is session:
        window.index = new_index
        session.windows.sort(key=lambda w: w.index)
        if not detached:
            window.session.active_window = window
        return
    registry.drop_window(window)
    registry.link_window(window, session, new_index, select=not detached)


def _program_of(pane: Pane) -> str:
    return program_name(pane.foreground_name() or os.path.basename(pane.command[0] if pane.command else "")) or "-"
