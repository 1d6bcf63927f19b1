"""A real outer terminal for attach tests: one pane of a private tmux server, driven like a user.

`OuterTerminal(env, columns, lines, command)` starts `tmux -L muxd-test-<id> -f /dev/null` with a
fixed-size window running `command`; `type()` / `keys()` / `send_hex()` type into it and
`screen()` reads it back with `capture-pane -p [-e]`. Always `close()` it (kills that server only).
"""

from __future__ import annotations

import shlex
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from muxd.testing.patience import stretched
from muxd.testing.wait import wait_for_screen

TMUX_TIMEOUT_S = 10.0


def muxd_command(server_name: str, *args: str) -> str:
    """A shell command line running this checkout's `muxd -L server_name args…`."""
    return shlex.join([sys.executable, "-m", "muxd", "-L", server_name, *args])


class OuterTerminal:
    def __init__(self, env: dict[str, str], *, columns: int = 100, lines: int = 30,
                 command: str = "bash --norc --noprofile", name: str | None = None) -> None:
        self.name = name or f"muxd-test-{uuid.uuid4().hex[:10]}"
        self.env = {**env, "PS1": "$ ", "TERM": env.get("TERM", "xterm-256color")}
        self.tmux("-f", "/dev/null", "new-session", "-d", "-s", "outer", "-x", str(columns),
                  "-y", str(lines), command)
        self.tmux("set-option", "-g", "status", "off")
        self.tmux("set-option", "-g", "window-size", "manual")
        self.tmux("set-option", "-g", "escape-time", "0")
        self.tmux("resize-window", "-t", "outer", "-x", str(columns), "-y", str(lines))

    def tmux(self, *args: str, check: bool = True) -> str:
        result = subprocess.run(["tmux", "-L", self.name, *args], env=self.env, capture_output=True,
                                text=True, timeout=stretched(TMUX_TIMEOUT_S))
        if check and result.returncode != 0:
            raise AssertionError(f"tmux {' '.join(args)} failed: {result.stderr}")
        return result.stdout

    # ------------------------------------------------------------ typing
    def type(self, text: str, *, enter: bool = False) -> None:
        self.tmux("send-keys", "-t", "outer", "-l", "--", text)  # --: text may begin with a dash
        if enter:
            self.tmux("send-keys", "-t", "outer", "Enter")

    def keys(self, *names: str) -> None:
        """tmux key names (C-b, Up, Enter, Escape…), each sent as that key."""
        for name in names:
            self.tmux("send-keys", "-t", "outer", name)

    def send_hex(self, data: bytes) -> None:
        """Raw bytes into the outer pane's input, e.g. SGR mouse reports or a bracketed paste."""
        self.tmux("send-keys", "-t", "outer", "-H", *(f"{b:02x}" for b in data))

    def resize(self, columns: int, lines: int) -> None:
        self.tmux("resize-window", "-t", "outer", "-x", str(columns), "-y", str(lines))

    # ------------------------------------------------------------ reading
    def screen(self, *, escapes: bool = False) -> str:
        return self.tmux("capture-pane", "-p", "-t", "outer", *(["-e"] if escapes else []))

    def lines(self) -> list[str]:
        return self.screen().split("\n")

    def wait_for(self, condition: str | Callable[[str], object], *, timeout: float = 10.0,
                 escapes: bool = False, wall: bool = False) -> str:
        """Wait until the screen contains `condition` (or the predicate holds); return the screen.
        `wall`: the timeout is under test, in wall seconds (patience.Deadline)."""
        return wait_for_screen(
            lambda: self.screen(escapes=escapes),
            (lambda screen: condition in screen) if isinstance(condition, str) else condition,
            timeout=timeout, message=f"outer terminal showing {condition!r}", screen_name="outer screen",
            wall=wall)

    def pane_pid(self) -> int:
        return int(self.tmux("display-message", "-p", "-t", "outer", "#{pane_pid}").strip())

    def tty(self) -> str:
        """Its terminal device, which `muxd attach` in it passes to the daemon."""
        return self.tmux("display-message", "-p", "-t", "outer", "#{pane_tty}").strip()

    def pane_dead(self) -> bool:
        out = self.tmux("list-panes", "-t", "outer", "-F", "#{pane_dead}", check=False)
        return out.strip() in ("1", "")

    def close(self) -> None:
        self.tmux("kill-server", check=False)


def status_line(screen: str, lines: int = 30) -> str:
    """The last row of a `lines`-row screen: muxd's status line."""
    return screen.split("\n")[lines - 1]


def attached_terminal(make: Callable[..., OuterTerminal], server: Any, session: str, *,
                      columns: int = 100, lines: int = 30) -> OuterTerminal:
    """A new outer terminal (from `outer_terminals`' factory) attached to `session`."""
    terminal = make(columns=columns, lines=lines)
    attach_in(terminal, server, session)
    return terminal


def attach_in(terminal: OuterTerminal, server: Any, session: str) -> None:
    """Attach `terminal`'s shell to `session`; back once the status line names it."""
    terminal.type(muxd_command(server.name, "attach", "-t", session), enter=True)
    terminal.wait_for(f"[{session}]")


@contextmanager
def outer_terminals(server: Any) -> Iterator[Callable[..., OuterTerminal]]:
    """A factory of outer terminals whose shells reach `server` (a MuxdTestServer); all closed
    at the end, and the daemon's log tail printed (pytest shows it when the test failed)."""
    terminals: list[OuterTerminal] = []

    def make(columns: int = 100, lines: int = 30, command: str = "bash --norc --noprofile") -> OuterTerminal:
        terminal = OuterTerminal({**server.env, "PS1": "$ "}, columns=columns, lines=lines, command=command)
        terminals.append(terminal)
        return terminal

    try:
        yield make
    finally:
        for terminal in terminals:
            terminal.close()
        if server.log_path.exists():
            print(server.log_path.read_text()[-4000:])
