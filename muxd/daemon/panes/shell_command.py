"""What a pane runs for a command line, by tmux's rules: the default shell, the default command,
and `sh -c` for one argument with shell syntax. Shared by new panes (server.py) and
respawn-pane (daemon/panes/respawn.py)."""

from __future__ import annotations

import os
import pwd

_SHELL_METACHARACTERS = set(" \t\n;&|<>()$`\\\"'*?[]#~=%")


def default_shell() -> str:
    shell = os.environ.get("SHELL")
    if shell and os.access(shell, os.X_OK):
        return shell
    try:
        return pwd.getpwuid(os.getuid()).pw_shell or "/bin/sh"
    except KeyError:
        return "/bin/sh"


def command_argv(command: list[str], shell: str = "", default_command: str = "") -> list[str]:
    """As tmux: no command runs the default command through the shell, else the shell itself
    (`shell`, else the user's); one argument with shell syntax runs through `sh -c`."""
    if not command:
        shell = shell or default_shell()
        return [shell, "-c", default_command] if default_command else [shell]
    if len(command) == 1 and any(ch in _SHELL_METACHARACTERS for ch in command[0]):
        return ["/bin/sh", "-c", command[0]]
    return list(command)
