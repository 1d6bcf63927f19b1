"""The daemon's object model, as in tmux: sessions hold windows, windows hold panes.

Ids are stable and never reused in a daemon's life: `$N` sessions, `@N` windows, `%N` panes.
"""

from __future__ import annotations

import functools
import itertools
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import msgspec

from muxd.daemon.layouts.layout import Cell, Layout
from muxd.daemon.panes.names import check_target_name, check_window_name
from muxd.daemon.panes.options import Options
from muxd.daemon.panes.pane import Pane
from muxd.emulator.rows import ROW_OVERHEAD_BYTES
from muxd.errors import Conflict
from muxd.protocol.messages import PaneInfo, SessionInfo, WindowInfo

if TYPE_CHECKING:
    from muxd.daemon.attention.board import Need
    from muxd.daemon.client_side.key_bindings import KeyBindings


class Window(msgspec.Struct, eq=False):
    number: int
    session: Session
    index: int
    name: str
    panes: list[Pane] = msgspec.field(default_factory=list)
    layout: Layout | None = None  # made with the first pane; see daemon/layouts/layout.py
    zoomed: bool = False          # the active pane fills the window (tmux resize-pane -Z)
    last_layout: int = -1         # the select-layout last chosen (index in layout_sets; -1: none)
    old_layout: str = ""          # the layout before the last select-layout (select-layout -o)
    last_pane: Pane | None = None  # the one active before (C-b ;)
    # tmux's alert flags of the window in its session, in #{window_flags}'s order: # activity,
    # ! bell, ~ silence (set by daemon/attention/alerts.py, cleared as it becomes current).
    alerts: str = ""
    _active_pane: Pane | None = None

    def __repr__(self) -> str:  # not its fields: its session lists it again
        return f"Window({self.id} {self.name!r} of {self.session.id})"

    @property
    def id(self) -> str:
        return f"@{self.number}"

    @property
    def active_pane(self) -> Pane | None:
        return self._active_pane

    @active_pane.setter
    def active_pane(self, pane: Pane | None) -> None:
        """Whoever changes the active pane (keys, mouse, commands) leaves the one before as
        the last pane, as tmux's window_set_active_pane does."""
        previous = self._active_pane
        if pane is not previous and previous is not None and previous in self.panes:
            self.last_pane = previous
        self._active_pane = pane

    def add(self, pane: Pane, *, select: bool = True) -> None:
        pane.window = self
        self.panes.append(pane)
        if select or self.active_pane is None:
            self.active_pane = pane
        if self.layout is None:
            self.layout = Layout(pane, pane.columns, pane.lines)

    def remove(self, pane: Pane) -> None:
        self.forget(pane)
        if self.layout is not None and self.panes and pane in self.layout.panes():
            self.zoomed = False
            self.layout.remove(pane)  # a neighbour takes the space
            self.apply_layout()

    def forget(self, pane: Pane) -> None:
        """`pane` leaves the pane list (not the layout); another pane becomes active if it was."""
        self.panes.remove(pane)
        if self.last_pane is pane or self.last_pane is self.active_pane:
            self.last_pane = None
        if self.active_pane is pane:
            self.active_pane = self.panes[-1] if self.panes else None

    # layout: every change ends in apply_layout, which resizes panes (the programs get SIGWINCH)
    def split(self, target: Pane, pane: Pane, horizontal: bool, *, size: int | None = None,
              before: bool = False, full: bool = False) -> None:
        """`pane` (already added) takes part of `target`'s cell (with `full`, a cell across the
        whole window), and follows it in the pane list as in tmux (pane indexes, swap-pane -U/-D
        and select-layout go by that order; a full-size pane goes first or last)."""
        assert self.layout is not None
        # The layout first: a split with no room raises, and leaves the pane list as it was.
        if full:
            from muxd.daemon.layouts import full as layout_full  # tmux's -f splits: imported at the first

            layout_full.split_full(self.layout, pane, horizontal, size, before)
        else:
            self.layout.split(target, pane, horizontal, size, before)
        self.zoomed = False
        self.panes.remove(pane)
        if full:
            self.panes.insert(0 if before else len(self.panes), pane)
        else:
            self.panes.insert(self.panes.index(target) + (0 if before else 1), pane)
        self.apply_layout()

    def plan_split(self, target: Pane, horizontal: bool, *, size: int | None = None, before: bool = False,
                   full: bool = False) -> tuple[int, int]:
        """(columns, lines) the new pane of such a split gets (BadRequest: no room for it)."""
        assert self.layout is not None
        if not full:
            return self.layout.plan_split(target, horizontal, size, before)[1]
        from muxd.daemon.layouts import full as layout_full

        _, new = layout_full.plan_full_split(self.layout, horizontal, size, before)
        return (new, self.layout.lines) if horizontal else (self.layout.columns, new)

    def resize(self, columns: int, lines: int) -> None:
        if self.layout is not None and (columns, lines) != (self.layout.columns, self.layout.lines):
            self.layout.resize(columns, lines)
            self.apply_layout()

    def toggle_zoom(self) -> None:
        self.zoomed = not self.zoomed and len(self.panes) > 1
        self.apply_layout()

    def select_layout(self, index: int) -> None:
        """One of tmux's predefined layouts (daemon/layouts/sets.py) for the panes in their order."""
        assert self.layout is not None
        self.zoomed = False
        if len(self.panes) < 2:  # nothing to arrange (tmux remembers the choice all the same)
            self.last_layout = index
            self.apply_layout()
            return
        from muxd.daemon.layouts import sets as layout_sets  # select-layout's: imported at the first

        self.arrange(layout_sets.build(index, self.panes, self.layout.columns, self.layout.lines))
        self.last_layout = index

    def arrange(self, root: Cell) -> None:
        """A new tree for this window's panes (select-layout); one of another size is fitted."""
        assert self.layout is not None
        columns, lines = self.layout.columns, self.layout.lines
        self.zoomed = False
        self.layout.set_root(root)
        if (root.columns, root.lines) != (columns, lines):
            self.layout.resize(columns, lines)
            self.layout.remember()
        self.apply_layout()

    def placement(self, pane: Pane) -> tuple[int, int]:
        """(left, top) of `pane` in the window; a zoomed pane is at the origin, and so is one
        without a place in the layout (a tmux pane adopted into a window too small to split)."""
        if self.layout is None or (self.zoomed and pane is self.active_pane) or pane not in self.layout.panes():
            return 0, 0
        placed = self.layout.placement(pane)
        return placed.x, placed.y

    def layout_text(self) -> str:
        """tmux's #{window_layout} of this window."""
        if self.layout is None:
            return ""
        return self.layout.dump({id(pane): pane.number for pane in self.panes})

    def apply_layout(self) -> None:
        if self.layout is None:
            return
        if self.zoomed and self.active_pane is not None:
            self.active_pane.resize(self.layout.columns, self.layout.lines)
            return
        for placed in self.layout.placements():
            pane = placed.pane
            assert isinstance(pane, Pane)
            pane.resize(placed.columns, placed.lines)

    def info(self, agent_flags: str = "") -> WindowInfo:
        """Its record; `agent_flags`: its agents' needs (the attention board knows them)."""
        session = self.session
        columns, lines = (self.layout.columns, self.layout.lines) if self.layout else (0, 0)
        return WindowInfo(id=self.id, session=session.name, index=self.index, name=self.name,
                          panes=len(self.panes), active=session.active_window is self,
                          layout=self.layout_text(), session_id=session.id, width=columns, height=lines,
                          zoomed=self.zoomed, last=session.last_window is self and session.active_window is not self,
                          active_pane=self.active_pane.id if self.active_pane else None,
                          alerts=self.alerts, agent_flags=agent_flags)


class Session(msgspec.Struct, eq=False):
    number: int
    name: str
    created_at: float = msgspec.field(default_factory=time.time)
    windows: list[Window] = msgspec.field(default_factory=list)
    last_window: Window | None = None  # the previously active one (tmux marks it '-')
    # Told each window that becomes current (the registry's on_window_current: alerts clear).
    on_current: Callable[[Window], None] | None = None
    _active_window: Window | None = None

    def __repr__(self) -> str:  # not its fields: each of its windows names it again
        return f"Session({self.id} {self.name!r})"

    @property
    def id(self) -> str:
        return f"${self.number}"

    @property
    def active_window(self) -> Window | None:
        return self._active_window

    @active_window.setter
    def active_window(self, window: Window | None) -> None:
        """Whoever changes the current window (keys, commands, the chooser) leaves the one before
        as the last window, as tmux's session_set_current does."""
        previous = self._active_window
        if window is not previous and previous is not None and previous in self.windows:
            self.last_window = previous
        self._active_window = window
        if window is not previous and window is not None and self.on_current is not None:
            self.on_current(window)

    def next_window_index(self, base: int = 0) -> int:
        used = {w.index for w in self.windows}
        return next(i for i in itertools.count(base) if i not in used)

    def add(self, window: Window, *, select: bool = True) -> None:
        self.windows.append(window)
        self.windows.sort(key=lambda w: w.index)
        if select or self.active_window is None:
            self.active_window = window

    def remove(self, window: Window) -> None:
        self.windows.remove(window)
        if self.last_window is window:
            self.last_window = None
        if self.active_window is window:
            self.active_window = self.windows[-1] if self.windows else None

    def panes(self) -> list[Pane]:
        return [pane for window in self.windows for pane in window.panes]

    def info(self, attached: int = 0, needs: dict[str, int] | None = None) -> SessionInfo:
        """Its record; `attached` is how many clients are attached to it (the attach hub knows),
        `needs` how many of its agents need a person, by kind (the attention board knows)."""
        return SessionInfo(id=self.id, name=self.name, windows=len(self.windows),
                           panes=len(self.panes()), created_at=self.created_at, attached=attached,
                           alerts=self.alerts_text(), needs=needs or {})

    def alerts_text(self) -> str:
        """tmux's #{session_alerts}: `1#!,3~`, each flagged window's index and flags."""
        return ",".join(f"{w.index}{w.alerts}" for w in self.windows if w.alerts)


def window_of(pane: Pane) -> Window:
    assert isinstance(pane.window, Window)
    return pane.window


def pane_info(pane: Pane, *, screen: bool = False, pane_base: int = 0, need: Need | None = None) -> PaneInfo:
    """`pane`'s record; with `screen`, its cursor and history size too (which first bring any
    output a flood left deferred onto its screen: not for every listing). `pane_base`: its
    window's pane-base-index (Registry.pane_info reads it); `need`: what its agent needs of a
    person (the attention board's)."""
    window = window_of(pane)
    session = window.session
    left, top = window.placement(pane)
    emulator = pane.emulator if screen else None  # a new pane's screen is built at its first output
    cursor_x, cursor_y = emulator.cursor if emulator is not None else (0, 0)
    return PaneInfo(
        id=pane.id,
        session=session.name,
        session_id=session.id,
        window=window.index,
        window_id=window.id,
        window_name=window.name,
        index=window.panes.index(pane) + pane_base,
        name=pane.name,
        tags=list(pane.tags),
        command=list(pane.command),
        pid=pane.pid,
        foreground=pane.foreground_name(),
        cwd=pane.cwd(),
        width=pane.columns,
        height=pane.lines,
        left=left,
        top=top,
        status="exited" if pane.exited else "running",
        exit_code=pane.exit_code,
        created_at=pane.created_at,
        title=pane.title,
        active=window.active_pane is pane and session.active_window is window,
        agent=pane.agent,
        emulator_failed=pane.emulator_failed,
        tty=pane.tty,
        cursor_x=cursor_x,
        cursor_y=cursor_y,
        history_size=emulator.history_size if emulator is not None else 0,
        history_bytes=emulator.history_bytes if emulator is not None else 0,
        history_limit=pane.scrollback_bytes // (pane.columns + ROW_OVERHEAD_BYTES),
        tmux_shim=pane.tmux_shim,
        source=pane.source,
        attention=need.kind if need is not None else None,
        attention_since=need.since if need is not None else None,
        attention_text=need.text if need is not None else None,
    )


# Told what happened to a session or window, by tmux's hook name: session-created,
# session-closed, session-renamed, window-linked, window-unlinked, window-renamed.
Changed = Callable[[str, "Session | Window"], None]


class Registry:
    """Every session, window and pane of one daemon, and the counters behind their ids."""

    def __init__(self, on_pane_removed: Callable[[Pane], None] | None = None,
                 on_window_current: Callable[[Window], None] | None = None,
                 on_changed: Changed | None = None) -> None:
        self._on_pane_removed = on_pane_removed
        self._on_window_current = on_window_current
        self._on_changed = on_changed
        # What a pane's agent needs of a person, by pane id: the attention board's `need`, set
        # by the daemon once the board exists (records carry it: `list-panes --json`, `muxd top`).
        self.need_of: Callable[[str], Need | None] = lambda pane_id: None
        self.options = Options()  # set-option's values (daemon/panes/options.py)
        self.sessions: list[Session] = []
        self._session_numbers = itertools.count()
        self._window_numbers = itertools.count()
        self._pane_numbers = itertools.count()

    @functools.cached_property
    def key_bindings(self) -> KeyBindings:
        """bind-key's (daemon/client_side/key_bindings.py), built at the first binding made or looked up."""
        from muxd.daemon.client_side.key_bindings import KeyBindings

        return KeyBindings()

    # ids
    def next_pane_number(self) -> int:
        return next(self._pane_numbers)

    def new_session(self, name: str | None) -> Session:
        number = next(self._session_numbers)
        name = check_target_name("session", name) if name is not None else self._free_session_name(number)
        if self.session_named(name) is not None:
            raise Conflict(f"duplicate session: {name}", session=name)
        session = Session(number=number, name=name, on_current=self._on_window_current)
        self.sessions.append(session)
        self._changed("session-created", session)
        return session

    def _changed(self, kind: str, thing: Session | Window) -> None:
        if self._on_changed is not None:
            self._on_changed(kind, thing)

    def _free_session_name(self, number: int) -> str:
        names = {s.name for s in self.sessions}
        return next(str(n) for n in itertools.count(number) if str(n) not in names)

    def pane_base(self, window: Window) -> int:
        """The window's pane-base-index: the index of its first pane."""
        return self.options.number("pane-base-index", window.id)

    def pane_info(self, pane: Pane, *, screen: bool = False) -> PaneInfo:
        """`pane`'s record (module pane_info), its index counted from pane-base-index."""
        return pane_info(pane, screen=screen, pane_base=self.pane_base(window_of(pane)), need=self.need_of(pane.id))

    def pane_index(self, pane: Pane) -> int:
        """The pane's index in its window, counted from the window's pane-base-index."""
        window = window_of(pane)
        return window.panes.index(pane) + self.pane_base(window)

    def pane_at(self, window: Window, index: int) -> Pane | None:
        """The pane of `window` whose index (pane_index) is `index`, if any."""
        position = index - self.pane_base(window)
        return window.panes[position] if 0 <= position < len(window.panes) else None

    def new_window(self, session: Session, name: str, index: int | None = None, *,
                   select: bool = True) -> Window:
        base = self.options.number("base-index", session.id)
        window = Window(number=next(self._window_numbers), session=session,
                        index=session.next_window_index(base) if index is None else index,
                        name=check_window_name(name))
        session.add(window, select=select)
        if window.name:  # a nameless one is told when its program names it (name_window)
            self._changed("window-linked", window)
        return window

    def name_window(self, window: Window, name: str) -> None:
        """A window made without a name gets its first pane's program's: it is told linked now,
        with that name (a window whose program never started was never told, nor is its end)."""
        window.name = name
        self._changed("window-linked", window)

    def link_window(self, window: Window, session: Session, index: int, *, select: bool = True) -> None:
        """`window`, taken out of its session (drop_window), goes into `session` at `index`."""
        window.session, window.index = session, index
        session.add(window, select=select)
        self._changed("window-linked", window)

    def rename_window(self, window: Window, name: str) -> None:
        """Rename `window` (its name checked by the caller)."""
        if name != window.name:
            window.name = name
            self._changed("window-renamed", window)

    # lookups
    def session_named(self, name: str) -> Session | None:
        return next((s for s in self.sessions if s.name == name), None)

    def all_panes(self) -> list[Pane]:
        return [pane for session in self.sessions for pane in session.panes()]

    def pane_by_id(self, pane_id: str) -> Pane | None:
        # (no list of every pane built: each ended execution asks, for its event's placement)
        for session in self.sessions:
            for window in session.windows:
                for pane in window.panes:
                    if pane.id == pane_id:
                        return pane
        return None

    def pane_named(self, name: str) -> Pane | None:
        return next((p for p in self.all_panes() if p.name == name), None)

    def check_pane_name_free(self, name: str | None) -> None:
        """Raise unless `name` (None: no name) can name a new pane."""
        if name is not None and self.pane_named(check_target_name("pane", name)) is not None:
            raise Conflict(f"duplicate pane name: {name}", name=name)

    # removal: a window without panes goes, and a session without windows goes
    def remove_pane(self, pane: Pane) -> None:
        window = window_of(pane)
        window.remove(pane)
        self._close(pane)
        if not window.panes:
            self.remove_window(window)

    def remove_window(self, window: Window) -> None:
        for pane in list(window.panes):
            window.remove(pane)
            self._close(pane)
        self.drop_window(window)

    def drop_window(self, window: Window) -> None:
        """`window` leaves its session (its panes are elsewhere or closed); an empty session goes."""
        session = window.session
        self.options.forget(window.id)
        if window in session.windows:
            session.remove(window)
            if window.name:
                self._changed("window-unlinked", window)
            if self.options.flag("renumber-windows", session.id):
                base = self.options.number("base-index", session.id)
                for index, other in enumerate(sorted(session.windows, key=lambda w: w.index), start=base):
                    other.index = index
        if not session.windows:
            self._close_session(session)

    def _close_session(self, session: Session) -> None:
        if session in self.sessions:
            self.sessions.remove(session)
            self.options.forget(session.id)
            self._changed("session-closed", session)

    def _close(self, pane: Pane) -> None:
        pane.close()
        self.options.forget(pane.id)
        if self._on_pane_removed is not None:
            self._on_pane_removed(pane)

    def remove_session(self, session: Session) -> None:
        for window in list(session.windows):
            self.remove_window(window)
        self._close_session(session)

    def rename_session(self, session: Session, name: str) -> None:
        name = check_target_name("session", name)
        if name != session.name and self.session_named(name) is not None:
            raise Conflict(f"duplicate session: {name}", session=name)
        if name != session.name:
            session.name = name
            self._changed("session-renamed", session)
