"""tmux's format variables, from muxd's records: what `-F` and `display-message` expand.

A `FormatScope` fetches the server's sessions, windows and panes once (three requests on one
connection) and gives each item its variables as tmux does: a pane sees its window's and its
session's too, a window its active pane's and its session's, a session its active window's and
that window's active pane's (tmux's format_defaults). Records are read by attribute, so the
msgspec Structs and the CLI's msgpack_lite Records both serve: the CLI's `-F` and the status
line (client_side/status_formats.py) read them alike. Here, by the option table whose
defaults a format shows.
"""

from __future__ import annotations

import posix  # os's uname without os: a shim's format call imports none (muxd/_environ.py)

from muxd import __version__
from muxd._environ import hook_variables_from_env
from muxd.config import TMUX_VERSION
from muxd.formats import expand, is_true

TYPE_CHECKING = False  # typing only for the type checker (the CLI imports this): see cli/table.py
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping
    from typing import Any

    Variables = Mapping[str, str]
    _ReadOnlyMapping = Mapping[str, str]
else:
    # Layers and OptionDefaults read as Mappings by hand: collections.abc (with os and its
    # _collections_abc) costs a tmux shim's format call ~2 ms to import.
    _ReadOnlyMapping = object
_Parts = list[dict[str, str]]


class Layers(_ReadOnlyMapping):
    """Variables looked up in these maps in order, the first that has a name giving its value:
    collections.ChainMap's reading half, without importing collections."""

    __slots__ = ("maps",)

    def __init__(self, *maps: Mapping[str, str]) -> None:
        self.maps = list(maps)

    def __getitem__(self, name: str) -> str:
        for layer in self.maps:
            if name in layer:
                return layer[name]
        raise KeyError(name)

    def get(self, name: str, default: Any = None) -> Any:
        return self[name] if name in self else default

    def __contains__(self, name: object) -> bool:
        return any(name in layer for layer in self.maps)

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys(name for layer in reversed(self.maps) for name in layer))

    def __len__(self) -> int:
        return len(set().union(*self.maps))

    def keys(self) -> list[str]:
        return list(self)


def _flag(value: object) -> str:
    return "1" if value else "0"


def _text(value: object) -> str:
    return "" if value is None else str(value)


# What shlex.quote leaves bare (its `[^\w@%+=:,./-]`, ASCII): shlex imports re, enum and functools,
# a third of a tmux shim call's display-message (cli/tmux_fast_path.py).
_SHELL_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-")


def shell_join(words: list[str]) -> str:
    """shlex.join(words), to the character, without importing shlex."""
    return " ".join(word if word and _SHELL_SAFE.issuperset(word)
                    else "'" + word.replace("'", "'\"'\"'") + "'" for word in words)


def pane_variables(pane: Any, window: Any = None) -> dict[str, str]:
    """A PaneInfo's variables; `window` (its WindowInfo) tells whether it is the window's active pane."""
    agent = pane.agent
    exited = pane.status == "exited"
    active = window.active_pane == pane.id if window is not None and window.active_pane else pane.active
    return {
        "pane_id": pane.id,
        "pane_index": str(pane.index),
        "pane_pid": _text(pane.pid),
        "pane_current_command": pane.foreground or (pane.command[0].rpartition("/")[2] if pane.command else ""),
        "pane_current_path": _text(pane.cwd),
        "pane_start_command": shell_join(pane.command),
        "pane_width": str(pane.width),
        "pane_height": str(pane.height),
        "pane_left": str(pane.left),
        "pane_top": str(pane.top),
        "pane_right": str(pane.left + pane.width - 1),
        "pane_bottom": str(pane.top + pane.height - 1),
        "pane_active": _flag(active),
        "pane_last": "0",
        "pane_dead": _flag(exited),
        "pane_dead_status": _text(pane.exit_code) if exited else "",
        "pane_title": pane.title,
        "pane_tty": _text(pane.tty),
        "pane_in_mode": "0",
        "pane_synchronized": "0",
        "pane_format": "1",
        "cursor_x": str(pane.cursor_x),
        "cursor_y": str(pane.cursor_y),
        "history_size": str(pane.history_size),
        "history_limit": str(pane.history_limit),  # muxd budgets bytes: full rows of this width
        "history_bytes": str(pane.history_bytes),
        # muxd's own
        "pane_name": _text(pane.name),
        "pane_tags": ",".join(pane.tags),
        "pane_created": str(int(pane.created_at)),
        "agent_type": _text(agent.agent_type),
        "agent_state": agent.activity.state if agent.agent_type else "",
        "agent_doing": _text(agent.activity.description),
        "agent_model": _text(agent.session.model),
        "agent_tokens": _text(agent.session.tokens_used),
    }


def window_flags(alerts: str, active: bool, last: bool, zoomed: bool, agent_flags: str) -> str:
    """tmux's #{window_raw_flags} (`#!~`, `*` or `-`, `Z`), then muxd's agent flags (`?$X+`)."""
    return alerts + ("*" if active else "-" if last else "") + ("Z" if zoomed else "") + agent_flags


def window_variables(window: Any) -> dict[str, str]:
    alerts, agent_flags = getattr(window, "alerts", ""), getattr(window, "agent_flags", "")
    flags = window_flags(alerts, window.active, window.last, window.zoomed, agent_flags)
    return {
        "window_id": window.id,
        "window_index": str(window.index),
        "window_name": window.name,
        "window_active": _flag(window.active),
        "window_last_flag": _flag(window.last),
        "window_zoomed_flag": _flag(window.zoomed),
        "window_activity_flag": _flag("#" in alerts),
        "window_bell_flag": _flag("!" in alerts),
        "window_silence_flag": _flag("~" in alerts),
        "window_agent_flags": agent_flags,
        "window_flags": flags.replace("#", "##"),  # as tmux: a status line draws ## as #
        "window_raw_flags": flags,
        "window_panes": str(window.panes),
        "window_width": str(window.width),
        "window_height": str(window.height),
        "window_layout": window.layout,
        "window_visible_layout": window.layout,
        "window_format": "1",
        "session_name": window.session,
        "session_id": window.session_id,
    }


def session_variables(session: Any) -> dict[str, str]:
    return {
        "session_id": session.id,
        "session_name": session.name,
        "session_windows": str(session.windows),
        "session_attached": str(session.attached),
        "session_many_attached": _flag(session.attached > 1),
        "session_created": str(int(session.created_at)),
        "session_activity": str(int(session.created_at)),
        "session_grouped": "0",
        "session_group": "",
        "session_format": "1",
        "session_alerts": getattr(session, "alerts", ""),
    }


def server_variables(socket_path: str, pid: int | None, hook: Mapping[str, str] | None = None) -> Layers:
    """The server's variables (and a hook's, in its commands: `hook`, by default this process's
    own), then the options' defaults as tmux shows them (#{focus-events})."""
    host = posix.uname().nodename
    return Layers(hook_variables_from_env() if hook is None else hook, {
        "host": host,
        "host_short": host.split(".", 1)[0],
        "pid": _text(pid),
        "version": TMUX_VERSION,
        "muxd_version": __version__,
        "socket_path": socket_path,
    }, OptionDefaults())


class _Computed(_ReadOnlyMapping):
    """Variables worked out on their first lookup (`_values`), and only for a name `_may_hold`."""

    def _values(self) -> dict[str, str]:
        raise NotImplementedError

    def _may_hold(self, name: object) -> bool:
        return True

    def __getitem__(self, name: str) -> str:
        if not self._may_hold(name):
            raise KeyError(name)
        return self._values()[name]

    def __contains__(self, name: object) -> bool:
        return self._may_hold(name) and name in self._values()

    def __iter__(self) -> Iterator[str]:
        return iter(self._values())

    def __len__(self) -> int:
        return len(self._values())

    def keys(self) -> list[str]:
        return list(self._values())


class OptionDefaults(_Computed):
    """Every option's default as a format shows it: a flag is 1 or 0. Set values are not
    fetched: `#{focus-events}` is its default. The option table is read on the first lookup
    that gets this far: most formats name no option, and the table costs a shim call 4 ms."""

    def __init__(self) -> None:
        self._table: dict[str, str] | None = None

    def _values(self) -> dict[str, str]:
        if self._table is None:
            from muxd.daemon.panes.options import OPTIONS

            self._table = {name: ("1" if option.default == "on" else "0") if option.kind == "flag"
                           else option.default for name, option in OPTIONS.items()}
        return self._table


# The names attention/elsewhere.py's attention_variables gives (tests/test_format_variables.py).
ATTENTION_PREFIXES = ("agents_", "agent_attention")


class Attention(_Computed):
    """#{agent_attention} and #{agents_waiting}… of the sessions but one, counted on the first
    lookup of such a name: most formats name none, and the count imports daemon/attention."""

    def __init__(self, sessions: dict[str, Any], session_id: str) -> None:
        self._sessions = sessions
        self._session_id = session_id
        self._counted: dict[str, str] | None = None

    def _values(self) -> dict[str, str]:
        if self._counted is None:
            from muxd.daemon.attention.elsewhere import attention_variables, elsewhere

            needs = ((s.id, getattr(s, "needs", None) or {}) for s in self._sessions.values())
            self._counted = attention_variables(elsewhere(needs, self._session_id))
        return self._counted

    def _may_hold(self, name: object) -> bool:
        return isinstance(name, str) and name.startswith(ATTENTION_PREFIXES)


_SCREEN_VARIABLES = ("cursor_", "history_", "#{E:", "#{e")  # E: may expand any variable


def wants_screen(template: str) -> bool:
    """Whether `template` may show a pane's cursor or history size, which cost a flooding pane a
    catch-up: the panes are listed with them only then."""
    return any(name in template for name in _SCREEN_VARIABLES)


class ClientRecords:
    """A server's sessions, windows and panes as a client fetches them, for a FormatScope."""

    def __init__(self, client: Any, template: str = "") -> None:
        self._client = client
        self._screen = wants_screen(template)

    def sessions(self) -> list[Any]:
        return self._client.call("list-sessions", "session-list").sessions  # type: ignore[no-any-return]

    def windows(self) -> list[Any]:
        return self._client.call("list-windows", "window-list", all=True).windows  # type: ignore[no-any-return]

    def panes(self) -> list[Any]:
        return self._client.call("list-panes", "pane-list", all=True, screen=self._screen).panes  # type: ignore[no-any-return]


class FormatScope:
    """The variables of every item of one server, its records fetched from `records` (sessions(),
    windows(), panes(): a client's requests, or the daemon's own records) on first use; `server`:
    the server's own variables (server_variables)."""

    def __init__(self, records: Any, server: Layers) -> None:
        self._records = records
        self._sessions: dict[str, Any] | None = None
        self._windows: dict[str, Any] | None = None
        self._panes: dict[str, Any] | None = None
        self._attention_of: dict[str, Attention] = {}  # session id -> its #{agents_*}
        self.server = server

    @classmethod
    def of_client(cls, client: Any, template: str = "") -> FormatScope:
        """The scope of the server `client` speaks to, as it answers `client`'s requests."""
        welcome = client.welcome
        return cls(ClientRecords(client, template),
                   server_variables(client.socket_path, welcome.pid if welcome is not None else None))

    # the records
    def sessions(self) -> dict[str, Any]:
        if self._sessions is None:
            self._sessions = {s.id: s for s in self._records.sessions()}
        return self._sessions

    def windows(self) -> dict[str, Any]:
        if self._windows is None:
            self._windows = {w.id: w for w in self._records.windows()} if self.sessions() else {}
        return self._windows

    def panes(self) -> dict[str, Any]:
        if self._panes is None:
            self._panes = {p.id: p for p in self._records.panes()}
        return self._panes

    # the variables
    def of_pane(self, pane: Any) -> Layers:
        window = self.windows().get(pane.window_id)
        session = self.sessions().get(pane.session_id)
        return Layers(pane_variables(pane, window), *self._window_part(window), *self._session_part(session),
                        self._attention(pane.session_id), self.server)

    def of_window(self, window: Any) -> Layers:
        pane = self.panes().get(window.active_pane) if window.active_pane else None
        session = self.sessions().get(window.session_id)
        pane_part = [pane_variables(pane, window)] if pane is not None else []
        return Layers(window_variables(window), *pane_part, *self._session_part(session),
                        self._attention(window.session_id), self.server)

    def of_session(self, session: Any) -> Layers:
        windows = [w for w in self.windows().values() if w.session_id == session.id and w.active]
        if windows:
            return Layers(session_variables(session), *self.of_window(windows[0]).maps)
        return Layers(session_variables(session), self._attention(session.id), self.server)

    def _window_part(self, window: Any) -> _Parts:
        return [window_variables(window)] if window is not None else []

    def _session_part(self, session: Any) -> _Parts:
        return [session_variables(session)] if session is not None else []

    def _attention(self, session_id: str) -> Attention:
        """The agents in other sessions than `session_id` that need a person (#{agents_waiting}…)."""
        known = self._attention_of.get(session_id)
        if known is None:
            known = self._attention_of[session_id] = Attention(self.sessions(), session_id)
        return known

    def expand_pane(self, template: str, pane: Any) -> str:
        return expand(template, self.of_pane(pane))


def expanded_lines(items: Iterable[Any], variables_of: Callable[[Any], Mapping[str, str]], template: str,
                   row_filter: str | None) -> list[str]:
    """One line per item of `items` whose variables pass `row_filter`: `template` expanded."""
    lines = []
    for item in items:
        variables = variables_of(item)
        if row_filter is None or is_true(expand(row_filter, variables)):
            lines.append(expand(template, variables))
    return lines


def variable_lines(variables: Mapping[str, str]) -> list[str]:
    """display-message -a: every variable as NAME=VALUE, by name."""
    return [f"{name}={variables[name]}" for name in sorted(variables)]
