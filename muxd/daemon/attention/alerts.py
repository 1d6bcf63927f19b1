"""Window alerts, as tmux 3.3a's alerts.c: activity (#), bell (!) and silence (~).

Pane output is the hot path, so each output batch costs a counter check: the pane's emulator
counts bells (a new one is a bell alert), the window's watch (its monitor-* options, looked up
again only when an option changes) says whether output is an activity alert, and the time of
the batch is kept for silence. Silence needs no polling: one timer per window watched with
monitor-silence, which, when it fires early (output came meanwhile), waits out the rest.

An alert in a window, as tmux does it:
- the window is flagged in its session unless it is the current window of a session with a
  client attached (a bell flags again and again; activity and silence once, until cleared);
- if the session's `*-action` applies (any, none, current window, other windows), the bus
  hears `alert-bell` / `alert-activity` / `alert-silence` and the session's clients get a bell
  to their terminal (visual-* off), a message "Bell in window N" (on) or both.
The flags clear when the window becomes current in its session (`window_current`), which
counts as activity as tmux's session_set_current does.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, Protocol

import msgspec

ACTIVITY, BELL, SILENCE = "#", "!", "~"
FLAG_ORDER = ACTIVITY + BELL + SILENCE  # their order in #{window_flags}
_KIND = {ACTIVITY: "activity", BELL: "bell", SILENCE: "silence"}
_WORD = {ACTIVITY: "Activity", BELL: "Bell", SILENCE: "Silence"}  # tmux's status message


class AlertClients(Protocol):
    """The attached clients, as alerts reach them (the attach hub is this)."""

    def attached(self, session: Any) -> bool: ...

    def alert(self, session: Any, window: Any, word: str, visual: str) -> None:
        """Each client of `session`: a bell (visual off, both) and/or a message (on, both)."""

    def changed(self, session: Any) -> None: ...


class _Watch(msgspec.Struct):
    """What one window's alerts look up, kept until an option changes."""

    generation: int = -1
    bell: bool = True       # monitor-bell
    activity: bool = False  # monitor-activity
    silence_s: int = 0      # monitor-silence
    output_at: float = 0.0  # the last output (or reset), by the alerts' clock
    timer: asyncio.TimerHandle | None = None


class WindowAlerts:
    def __init__(self, options: Any, clients: AlertClients, publish: Callable[..., None], *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._options = options  # the registry's Options
        self._clients = clients
        self._publish = publish  # Attention.publish(kind, **fields)
        self._clock = clock
        self._watches: dict[str, _Watch] = {}  # window id -> its watch
        self._bells: dict[str, int] = {}  # pane id -> the bells its emulator had rung when last looked

    # ------------------------------------------------------------ what happens in panes

    def output(self, pane: Any) -> None:
        """`pane` wrote (an emulated batch of output): bell, activity, the silence clock."""
        window = pane.window
        if window is None or getattr(window, "session", None) is None:
            return
        watch = self._watch(window)
        rung = pane.emulator.bell_count
        if rung != self._bells.get(pane.id, 0):
            self._bells[pane.id] = rung
            if watch.bell:
                self._alert(window, BELL)
        if watch.silence_s:
            watch.output_at = self._clock()
            if watch.timer is None:
                self._arm(window, watch, watch.silence_s)
        if watch.activity and ACTIVITY not in window.alerts:
            self._alert(window, ACTIVITY)

    def window_current(self, window: Any) -> None:
        """`window` became its session's current window: its flags go (tmux's
        winlink_clear_flags), and being chosen is activity (window_update_activity)."""
        if window.alerts:
            window.alerts = ""
            self._clients.changed(window.session)
        watch = self._watch(window)
        if watch.silence_s:
            watch.output_at = self._clock()
        if watch.activity:
            self._alert(window, ACTIVITY)

    def reset_timers(self, windows: list[Any]) -> None:
        """monitor-silence changed: every window's silence is counted again from now (tmux's
        alerts_reset_all)."""
        for window in windows:
            watch = self._watch(window)
            if watch.timer is not None:
                watch.timer.cancel()
                watch.timer = None
            watch.output_at = self._clock()
            if watch.silence_s:
                self._arm(window, watch, watch.silence_s)

    def pane_gone(self, pane: Any) -> None:
        self._bells.pop(pane.id, None)
        window = pane.window
        if window is not None and not getattr(window, "panes", None):
            self._drop(window.id)

    # ------------------------------------------------------------ the checks

    def _watch(self, window: Any) -> _Watch:
        watch = self._watches.get(window.id)
        if watch is None:
            watch = self._watches[window.id] = _Watch(output_at=self._clock())
        if watch.generation != self._options.generation:
            options, ids = self._options, (window.id,)
            watch.generation = options.generation
            watch.bell = options.flag("monitor-bell", *ids)
            watch.activity = options.flag("monitor-activity", *ids)
            watch.silence_s = options.number("monitor-silence", *ids)
        return watch

    def _alert(self, window: Any, flag: str) -> None:
        """tmux's alerts_check_bell / _activity / _silence for one window (muxd links a window
        into one session)."""
        session = window.session
        if flag != BELL and flag in window.alerts:
            return  # activity and silence alert once until cleared; every bell alerts
        if session.active_window is not window or not self._clients.attached(session):
            if flag not in window.alerts:
                window.alerts = "".join(f for f in FLAG_ORDER if f in window.alerts or f == flag)
            self._clients.changed(session)
        kind = _KIND[flag]
        if not self._applies(window, f"{kind}-action"):
            return
        self._publish(f"alert-{kind}", window_id=window.id, window_index=window.index,
                      window_name=window.name, session=session.name, session_id=session.id)
        visual = self._options.lookup(f"visual-{kind}", session.id)
        self._clients.alert(session, window, _WORD[flag], visual)

    def _applies(self, window: Any, option: str) -> bool:
        action = self._options.lookup(option, window.session.id)
        current = window.session.active_window is window
        return action == "any" or (action == "current" and current) or (action == "other" and not current)

    # ------------------------------------------------------------ silence

    def _arm(self, window: Any, watch: _Watch, delay_s: float) -> None:
        watch.timer = asyncio.get_running_loop().call_later(delay_s, self._silence_due, window)

    def _silence_due(self, window: Any) -> None:
        watch = self._watches.get(window.id)
        if watch is None:
            return
        watch.timer = None
        session = window.session
        if window not in session.windows:  # closed, or its last pane moved away
            self._drop(window.id)
            return
        self._watch(window)  # the options may have changed since
        if not watch.silence_s:
            return
        quiet_s = self._clock() - watch.output_at
        if quiet_s < watch.silence_s:  # output came meanwhile: wait out the rest
            self._arm(window, watch, watch.silence_s - quiet_s)
            return
        # As tmux, counted again from now: a window that stays quiet alerts each period.
        watch.output_at = self._clock()
        self._arm(window, watch, watch.silence_s)
        self._alert(window, SILENCE)

    def _drop(self, window_id: str) -> None:
        watch = self._watches.pop(window_id, None)
        if watch is not None and watch.timer is not None:
            watch.timer.cancel()
