"""Options, as tmux's: a table of the options muxd has, and their values at four scopes.

A server option has one value. A session option is looked up on the session, then globally
(`set -g`); a window option on the pane (`set -p`), its window, then globally (`set -gw`). The
scope of a name comes from the table, as tmux finds it (`set -g remain-on-exit on` needs no -w).
Values are kept as tmux prints them ("on", "C-a", "1"); `value()` turns them into Python values.
Objects are keyed by their ids (`$N`, `@N`, `%N`), which are never reused in a daemon's life.

Besides its own, the table has tmux's other options (daemon/tmux/options.py), kept and shown
but acted on by nothing, and user options (`@name`) at any scope, as tmux has them for
plugins and scripts: a tmux.conf loads.
"""

from __future__ import annotations

import os
from typing import Literal, NamedTuple

from muxd.config import ATTACH_NOTICE_S, PASTE_BUFFERS_MAX
from muxd.daemon.attention.alert_options import ALERT_OPTIONS
from muxd.daemon.panes.hook_arrays import HookArrays
from muxd.daemon.tmux.options import TMUX_ONLY_OPTIONS
from muxd.errors import BadRequest

Scope = Literal["server", "session", "window"]
Kind = Literal["flag", "choice", "number", "key", "string", "shell", "term", "style"]
_FLAG_VALUES = {"on": "on", "yes": "on", "1": "on", "off": "off", "no": "off", "0": "off"}
NUMBER_MAX = 2**31 - 1


class Option(NamedTuple):  # not a dataclass: the CLI's formats read the table, and dataclasses cost 8 ms
    name: str
    scope: Scope
    kind: Kind
    default: str
    help: str
    choices: tuple[str, ...] = ()  # a choice's values; its first two toggle, as a flag's
    inert: bool = False  # one of tmux's that muxd keeps and shows but does not act on


OPTIONS: dict[str, Option] = {o.name: o for o in (
    Option("buffer-limit", "server", "number", str(PASTE_BUFFERS_MAX),
           "automatic paste buffers kept (copies); the oldest go first"),
    Option("prefix", "session", "key", "C-b", "the prefix key of attached clients (--prefix and $MUXD_PREFIX win)"),
    Option("status", "session", "choice", "on", "show the status line", ("on", "off")),  # tmux's has 2-5 too
    Option("mouse", "session", "flag", "on", "muxd takes the mouse: wheel, drag to copy, click a pane (off: "
                                               "the terminal's own selection; programs that ask still get it)"),
    Option("base-index", "session", "number", "0", "the index of a session's first new window"),
    Option("repeat-time", "session", "number", "500", "milliseconds after a key bound with -r (C-b arrows) "
                                                      "during which keys bound with -r need no prefix"),
    Option("history-limit", "session", "number", "0",
           "rows of history new panes keep at least, at their width (0: the server's memory budget, "
           "$MUXD_SCROLLBACK_BYTES)"),
    Option("default-shell", "session", "shell", "", "the shell new panes run (default: $SHELL, else the "
                                                     "user's login shell)"),
    Option("default-terminal", "session", "term", "xterm-256color", "TERM of new panes' programs"),
    Option("default-command", "session", "string", "", "what new panes run when given no command, through "
                                                       "the shell (empty: the shell itself)"),
    Option("pane-base-index", "window", "number", "0", "the index of a window's first pane (targets, "
                                                       "#{pane_index}, C-b q)"),
    Option("remain-on-exit", "window", "choice", "off",
           "keep panes opened interactively (muxd, new, C-b c, splits) when their program exits "
           "(failed: only when it failed)", ("off", "on", "failed")),
    Option("renumber-windows", "session", "flag", "off",
           "when a window closes, number the session's windows again from base-index"),
    Option("display-time", "session", "number", str(int(ATTACH_NOTICE_S * 1000)),
           "milliseconds a message stays in the status line (0: until a key is pressed)"),
    Option("status-style", "session", "style", "bg=green,fg=black",
           "the status line's look, as tmux's styles: fg=, bg= (colour235, #ff8800, brightred), bold…"),
    Option("message-style", "session", "style", "bg=yellow,fg=black", "the look of messages and prompts"),
    Option("status-left", "session", "string", "[#{session_name}] ",
           "before the window list: a tmux format, strftime first (%H:%M); #[styles] are not drawn"),
    Option("status-right", "session", "string",
           "#{agent_attention}#{?#{&&:#{agent_attention},#{agent_status}}, · ,}#{agent_status}",
           "the right side: a tmux format (#{agent_attention}: agents in other sessions that need you, "
           "#{agent_status}: the active pane's agent, tokens)"),
    Option("status-left-length", "session", "number", "10", "cells status-left may take"),
    Option("status-right-length", "session", "number", "40", "cells status-right may take"),
    # muxd's copy mode has always had vi's keys, so vi is its default (tmux's is emacs).
    Option("mode-keys", "window", "choice", "vi", "copy mode's keys: vi's or emacs's", ("vi", "emacs")),
    *(Option(name, scope, kind, default, help, choices)  # type: ignore[arg-type]
      for name, scope, kind, default, help, choices in ALERT_OPTIONS),
    Option("limit-resume", "window", "flag", "off",
           "when a usage limit stopped the pane's agent and it said when the limit resets, send it "
           "limit-resume-prompt then (as an execution, triggered_by schedule)"),
    Option("limit-resume-prompt", "window", "string", "continue", "what limit-resume sends the agent"),
)}
_OWN = frozenset(OPTIONS)
INERT_HELP = "tmux's; kept and shown, no effect in muxd"
OPTIONS.update((row[0], Option(row[0], row[1], row[2], row[3], INERT_HELP,  # type: ignore[arg-type]
                               row[4] if len(row) > 4 else (), inert=True))  # type: ignore[misc]
               for row in TMUX_ONLY_OPTIONS if row[0] not in _OWN)
USER_PREFIX = "@"  # `@name`: a user option, any scope, any text


def option_named(name: str, user_scope: Scope = "session") -> Option:
    """The option called `name`; a user option (`@name`) has the scope its command gives."""
    option = OPTIONS.get(name)
    if option is None and is_user_option(name):
        return Option(name, user_scope, "string", "", "a user option")
    if option is None:
        raise BadRequest(f"invalid option: {name}", option=name)
    return option


def is_user_option(name: str) -> bool:
    return name.startswith(USER_PREFIX) and len(name) > 1


def checked_value(option: Option, value: str | None, current: str) -> str:
    """`value` as stored for `option`, or BadRequest as tmux words it. A flag without a value
    toggles `current`."""
    if option.kind == "flag":
        if value is None:
            return "off" if current == "on" else "on"
        flag = _FLAG_VALUES.get(value.lower())
        if flag is None:
            raise BadRequest(f"bad value: {value}", option=option.name)  # tmux's words, a choice's differ
        return flag
    if option.kind == "choice":
        if value is None:
            return option.choices[1] if current == option.choices[0] else option.choices[0]
        choice = _FLAG_VALUES.get(value.lower(), value.lower())
        if choice not in option.choices:
            raise BadRequest(f"unknown value: {value}", option=option.name)
        return choice
    if value is None:
        raise BadRequest(f"empty value for {option.name}", option=option.name)
    if option.kind == "number":
        if not value.isdigit() or int(value) > NUMBER_MAX:
            raise BadRequest(f"value is invalid: {value}", option=option.name)
        return str(int(value))
    if option.kind == "key":
        from muxd.daemon.client_side.prefix_keys import prefix_bytes

        try:
            prefix_bytes(value)
        except BadRequest:
            raise BadRequest(f"unknown key: {value}", option=option.name) from None
    if option.kind == "term" and (not value or not all(ch.isalnum() or ch in "-_.+" for ch in value)):
        raise BadRequest(f"invalid terminal type: {value!r}", option=option.name)
    if option.kind == "style":
        from muxd.attach.tmux_style import parse_style
        from muxd.emulator.cell import DEFAULT_STYLE

        try:
            parse_style(value, DEFAULT_STYLE)
        except ValueError as exc:
            raise BadRequest(str(exc), option=option.name) from None
    if option.kind == "shell" and value and not (os.path.isabs(value) and os.access(value, os.X_OK)):
        raise BadRequest(f"not a suitable shell: {value}", option=option.name)
    return value


class Options:
    """Every option value set at any scope (defaults are in OPTIONS, never stored)."""

    def __init__(self) -> None:
        self.globals: dict[str, str] = {}                # server options and `-g` ones
        self.defaults: dict[str, str] = {}               # defaults known only at run time (the shell)
        self.local: dict[str, dict[str, str]] = {}       # object id -> its own values
        # A user option may be set globally at each scope (`set -g @x`, `set -gw @x`).
        self.user_globals: dict[str, dict[str, str]] = {}
        # Bumped by every change: a reader on a hot path (window alerts) keeps what it looked up
        # until this moves.
        self.generation = 0
        self.hooks = HookArrays()  # set-hook's, which tmux keeps as array options (hook_arrays.py)

    def _table(self, option: Option, owner: str | None) -> dict[str, str]:
        if owner is not None:
            return self.local.setdefault(owner, {})
        return self.user_globals.setdefault(option.scope, {}) if is_user_option(option.name) else self.globals

    def lookup(self, name: str, *ids: str) -> str:
        """The value of `name` for the objects `ids` (nearest first), else its global value."""
        for object_id in ids:
            value = self.local.get(object_id, {}).get(name)
            if value is not None:
                return value
        return self.globals.get(name, self.defaults.get(name, OPTIONS[name].default))

    def own_value(self, name: str, owner: str | None, user_scope: Scope = "session") -> str | None:
        """The value set on `owner` itself (None: globally), or None when it is not set there."""
        return self._table(option_named(name, user_scope), owner).get(name)

    def set(self, name: str, value: str | None, owner: str | None, user_scope: Scope = "session") -> str:
        """Set (owner None: globally); returns the value stored."""
        option = option_named(name, user_scope)
        values = self._table(option, owner)
        current = values.get(name, "") if is_user_option(name) else self.lookup(name, *([owner] if owner else []))
        values[name] = stored = checked_value(option, value, current)
        self.generation += 1
        return stored

    def unset(self, name: str, owner: str | None, user_scope: Scope = "session") -> None:
        self._table(option_named(name, user_scope), owner).pop(name, None)
        self.generation += 1

    def shown(self, owner: str | None, scope: Scope) -> list[tuple[str, str]]:
        """(name, value) pairs as show-options lists them, sorted as tmux sorts them (user options
        first): every option of `scope` with its global value (owner None), else only those set
        on `owner`."""
        names = {o.name for o in OPTIONS.values() if o.scope == scope}
        if owner is None:
            users = self.user_globals.get(scope, {})
            return sorted([(name, self.lookup(name)) for name in names] + list(users.items()))
        values = self.local.get(owner, {})
        return sorted((name, value) for name, value in values.items() if name in names or is_user_option(name))

    def forget(self, owner: str) -> None:
        self.local.pop(owner, None)
        self.generation += 1
        self.hooks.forget(owner)

    # typed reads for the daemon
    def flag(self, name: str, *ids: str) -> bool:
        return self.lookup(name, *ids) == "on"

    def number(self, name: str, *ids: str) -> int:
        return int(self.lookup(name, *ids))
