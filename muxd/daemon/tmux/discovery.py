"""What runs in a tmux server: its panes with their sessions, windows, sizes and programs, and
what a tmux target names. Blocking (each question runs `tmux` once): the daemon calls these in
a thread.

Names are anything a program chose: tmux keeps `new-window -n` names as given, control
characters and newlines included, so the listing frames each value by its length (`framed`)
rather than trusting lines and separators (libtmux's own listing fails on such a name, and
every pane of the server with it).
"""

from __future__ import annotations

import os
import shlex
import subprocess
from dataclasses import dataclass
from typing import Literal

from muxd.config import TMUX_COMMAND_TIMEOUT_S
from muxd.errors import BadRequest, NotFound

ScopeKind = Literal["server", "session", "window", "pane"]
_KIND_RANK = {"server": 0, "session": 1, "window": 2, "pane": 3}


@dataclass(frozen=True)
class TmuxPaneFacts:
    pane: str          # "%3"
    window: str        # "@1"
    window_index: int
    window_name: str
    session: str       # "$0"
    session_name: str
    columns: int
    lines: int
    pid: int | None
    command: list[str]  # what tmux started in it, else what runs in it now
    path: str


@dataclass(frozen=True)
class Scope:
    """What a watch covers: the whole server, or one session, window or pane (tmux's ids)."""

    kind: ScopeKind
    session: str = ""
    window: str = ""
    pane: str = ""

    def covers(self, facts: TmuxPaneFacts) -> bool:
        if self.kind == "server":
            return True
        if self.kind == "session":
            return facts.session == self.session
        if self.kind == "window":
            return facts.window == self.window
        return facts.pane == self.pane

    def within(self, other: Scope) -> bool:
        """Everything this scope covers is covered by `other`."""
        if _KIND_RANK[self.kind] < _KIND_RANK[other.kind]:
            return False
        probe = TmuxPaneFacts(self.pane, self.window, 0, "", self.session, "", 0, 0, None, [], "")
        return other.covers(probe)


def server_args(socket_name: str | None, socket_path: str | None) -> list[str]:
    """tmux's own options naming the server: -L NAME, -S PATH, or none (tmux's default)."""
    if socket_name and socket_path:
        raise BadRequest("give -L or -S, not both")
    if socket_name:
        return ["-L", socket_name]
    if socket_path:
        return ["-S", os.path.abspath(os.path.expanduser(socket_path))]
    return []


def target_kind(target: str) -> ScopeKind:
    """What a tmux target names: %N a pane, @N a window, `session:window.pane` a pane,
    `session:window` a window, $N or a bare name a session."""
    if target.startswith("%"):
        return "pane"
    if target.startswith("@"):
        return "window"
    _, colon, rest = target.partition(":")
    if not colon:
        return "session"
    return "pane" if "." in rest else "window"


def describe_server(args: list[str]) -> str:
    """A tmux server as messages name it: "tmux -L work", "tmux (default server)"."""
    return f"tmux {' '.join(args)}" if args else "tmux (default server)"


class TmuxServer:
    """One tmux server, by the options that name it (server_args)."""

    def __init__(self, args: list[str]) -> None:
        import libtmux  # only when something is watched: the daemon starts without it

        self.args = args
        if args[:1] == ["-L"]:
            self.server = libtmux.Server(socket_name=args[1])
        elif args[:1] == ["-S"]:
            self.server = libtmux.Server(socket_path=args[1])
        else:
            self.server = libtmux.Server()
        self.label = " ".join(args)  # "-L work"; "" is tmux's default server

    @property
    def described(self) -> str:
        return describe_server(self.args)

    def check_alive(self) -> None:
        if not self.server.is_alive():
            raise NotFound(f"no {self.described} is running", server=self.label)

    def resolve(self, target: str | None) -> Scope:
        """The scope `target` names (None: the whole server); not_found if tmux knows no such thing."""
        if not target:
            return Scope("server")
        kind = target_kind(target)
        ids = self._query(target, "#{session_id} #{window_id} #{pane_id}")
        if len(ids) != 3:
            raise NotFound(f"{self.described} has no {kind} {target!r}", target=target)
        return Scope(kind, *ids)

    def _query(self, target: str, fmt: str) -> list[str]:
        result = self.server.cmd("display-message", "-p", "-t", target, fmt)
        return (result.stdout[0] if result.stdout else "").split()

    def panes(self) -> list[TmuxPaneFacts]:
        """Every pane of the server, now."""
        listed = subprocess.run(["tmux", *self.args, "list-panes", "-a", "-F", _LISTING], capture_output=True,
                                timeout=TMUX_COMMAND_TIMEOUT_S, check=False)
        if listed.returncode != 0:
            said = listed.stderr.decode("utf-8", "replace").strip().splitlines()
            raise NotFound(f"{self.described}: {said[0] if said else 'list-panes failed'}", server=self.label)
        return [_pane_facts(*record) for record in read_listing(listed.stdout)]


def framed(variable: str) -> str:
    """A tmux format giving the value of `variable` (one tmux keeps: a name, an id), whatever it
    holds, newlines included: its length in bytes, `:`, the value (read_framed)."""
    return f"#{{n:{variable}}}:#{{{variable}}}"


# The values a pane's facts are made of, each framed (read_framed): tmux keeps them, so the
# length and the value written after it are the same string.
_FRAMED = ("pane_id", "window_id", "window_index", "window_name", "session_id", "session_name",
           "pane_width", "pane_height", "pane_pid", "pane_start_command")
# Computed anew each time tmux expands them (what runs in the pane now, its directory): framed,
# they could change between the length and the value. Lines and separators cut out instead.
_LOOSE = ("pane_current_command", "pane_current_path")
_LOOSE_SEPARATOR = "\x1f"
_LISTING = "".join(framed(name) for name in _FRAMED) + _LOOSE_SEPARATOR.join(
    f"#{{s/[\n{_LOOSE_SEPARATOR}]/?/:{name}}}" for name in _LOOSE)


def read_framed(data: bytes, count: int, at: int = 0) -> tuple[list[str], int]:
    """`count` values written by `framed` formats, from `data[at:]`, and where they end;
    ValueError if that is not what `data` holds there."""
    values = []
    for _ in range(count):
        colon = data.index(b":", at)
        size = int(data[at:colon])
        end = colon + 1 + size
        if size < 0 or end > len(data):
            raise ValueError(f"a value of {size} bytes at {at} runs past the end")
        values.append(data[colon + 1:end].decode("utf-8", "replace"))
        at = end
    return values, at


def read_listing(data: bytes) -> list[list[str]]:
    """The records of list-panes -F _LISTING: each pane's values, in _FRAMED then _LOOSE order."""
    records, at = [], 0
    while at < len(data):
        values, at = read_framed(data, len(_FRAMED), at)
        end = data.index(b"\n", at)
        loose = data[at:end].decode("utf-8", "replace").split(_LOOSE_SEPARATOR)
        if len(loose) != len(_LOOSE):
            raise ValueError(f"{len(loose)} values where list-panes should give {len(_LOOSE)}")
        records.append(values + loose)
        at = end + 1
    return records


def _pane_facts(pane: str, window: str, window_index: str, window_name: str, session: str, session_name: str,
                width: str, height: str, pid: str, start_command: str, current_command: str,
                path: str) -> TmuxPaneFacts:
    return TmuxPaneFacts(pane=pane, window=window, window_index=int(window_index or 0), window_name=window_name,
                         session=session, session_name=session_name, columns=int(width or 80),
                         lines=int(height or 24), pid=int(pid) if pid else None,
                         command=_argv(start_command) or [current_command], path=path)


def _argv(command: str | None) -> list[str]:
    """tmux's pane_start_command as an argv: tmux quotes each argument, and runs a lone one
    through the shell (`"bash --norc"`), whose words are then the command's."""
    try:
        argv = shlex.split(command or "")
        return shlex.split(argv[0]) if len(argv) == 1 else argv
    except ValueError:  # unbalanced quotes: the shell made sense of it, or not
        return [command or ""]
