"""What runs in a tmux server, asked through libtmux: its panes with their sessions, windows,
sizes and programs, and what a tmux target names. Blocking (libtmux runs `tmux` once per
question): the daemon calls these in a thread.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from typing import Literal

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
        return [TmuxPaneFacts(
            pane=p.pane_id or "", window=p.window_id or "", window_index=int(p.window_index or 0),
            window_name=p.window_name or "", session=p.session_id or "", session_name=p.session_name or "",
            columns=int(p.pane_width or 80), lines=int(p.pane_height or 24),
            pid=int(p.pane_pid) if p.pane_pid else None,
            command=_argv(p.pane_start_command) or [p.pane_current_command or ""],
            path=p.pane_current_path or "") for p in self.server.panes]


def _argv(command: str | None) -> list[str]:
    """tmux's pane_start_command as an argv: tmux quotes each argument, and runs a lone one
    through the shell (`"bash --norc"`), whose words are then the command's."""
    try:
        argv = shlex.split(command or "")
        return shlex.split(argv[0]) if len(argv) == 1 else argv
    except ValueError:  # unbalanced quotes: the shell made sense of it, or not
        return [command or ""]
