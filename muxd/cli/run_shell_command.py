"""`run-shell`: tmux's, as far as a command line makes sense of it. The shell command's formats are
expanded for the target pane (and, in a hook's command, with the hook's #{hook_pane}…), then it
runs with `sh -c` from this process: its output is this command's, which a hook's runner puts
in the server log. Without -b the command waits for it, and a failure is tmux's line
"'CMD' returned N" with its exit status; -b leaves it running in the background. -C runs the
argument as muxd commands instead. tmux shows the output in the pane's view mode; muxd prints it
(a config file's loader logs it). It is never a muxd execution: no window is made for it.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

from muxd.cli.table import cli_command
from muxd.errors import BadRequest, NotFound

TYPE_CHECKING = False  # typing only for the type checker: see cli/table.py
if TYPE_CHECKING:
    from typing import Any

SHELL = "/bin/sh"


def _configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("-b", dest="background", action="store_true", help="in the background: do not wait for it")
    p.add_argument("-C", dest="muxd_commands", action="store_true", help="the argument is muxd commands, not a shell's")
    p.add_argument("-c", dest="cwd", metavar="DIRECTORY", help="the directory it starts in")
    p.add_argument("-d", dest="delay", metavar="SECONDS", help="wait this long first")
    p.add_argument("-t", dest="target", help="the pane whose formats are expanded (default: the current one)")
    p.add_argument("command", nargs="?", help="a shell command, formats expanded (#{pane_id}, #{q:pane_title}…)")


@cli_command("run-shell")(_configure)
def run_shell(client: Any, args: argparse.Namespace) -> int:
    if args.delay is not None:
        try:
            delay = float(args.delay)
        except ValueError:
            raise BadRequest(f"invalid delay time: {args.delay}") from None
        time.sleep(max(0.0, delay))
    if args.command is None:
        return 0
    text = expanded(client, args.target, args.command)
    if args.muxd_commands:
        return run_muxd_line(client, args, text)
    cwd = os.path.expanduser(args.cwd) if args.cwd else None
    env = shell_env()
    if args.background:
        # What it prints goes where ours goes (a hook's runner reads it to the end), but not to
        # the config file's loader, which would wait for it to end.
        quiet = subprocess.DEVNULL if loading_config() else None
        subprocess.Popen([SHELL, "-c", text], stdin=subprocess.DEVNULL, stdout=quiet, stderr=quiet, cwd=cwd,
                         env=env, start_new_session=quiet is not None)
        return 0
    sys.stdout.flush()
    status = subprocess.run([SHELL, "-c", text], stdin=subprocess.DEVNULL, cwd=cwd, env=env).returncode
    if status > 0:
        print(f"muxd: '{text}' returned {status}", file=sys.stderr)
        return status
    if status < 0:
        print(f"muxd: '{text}' terminated by signal {-status}", file=sys.stderr)
        return 128 - status
    return 0


def loading_config() -> bool:
    """Whether this process is the config file's loader (daemon/core/config_load.py)."""
    from muxd.daemon.core.config_load import CONFIG_CLIENT_NAME
    from muxd.paths import CLIENT_NAME_ENV

    return os.environ.get(CLIENT_NAME_ENV) == CONFIG_CLIENT_NAME


def shell_env() -> dict[str, str]:
    """The shell's environment: ours, but a `muxd` it runs is a client of its own, as a `tmux` that
    tmux's run-shell runs is (not a hook's command, whose events run no hooks). While the config
    file loads, a `muxd` it runs is the loader's too: the server answers it before the file ends."""
    from muxd._environ import HOOK_VARIABLES_ENV
    from muxd.paths import CLIENT_NAME_ENV

    dropped = (HOOK_VARIABLES_ENV,) if loading_config() else (CLIENT_NAME_ENV, HOOK_VARIABLES_ENV)
    return {k: v for k, v in os.environ.items() if k not in dropped}


def expanded(client: Any, target: str | None, template: str) -> str:
    """`template` expanded for the target pane; with no target and no pane to default to, with
    the server's (and a hook's) variables only."""
    from muxd.daemon.panes.format_variables import FormatScope
    from muxd.formats import expand

    scope = FormatScope.of_client(client, template)
    try:
        pane = client.call("show-pane", "pane", target=target).pane
    except NotFound:
        if target is not None:
            raise
        return expand(template, scope.server)
    return expand(template, scope.of_pane(pane))


def run_muxd_line(client: Any, args: argparse.Namespace, line: str) -> int:
    """-C: the line's commands in turn, through this connection; the first that fails ends it."""
    from muxd.cli.option_commands import run_command_line
    from muxd.daemon.core.cli_lines import line_commands

    for words in line_commands(line):
        error = run_command_line(client, args, words)
        if error is not None:
            if error:
                print(f"muxd: {error}", file=sys.stderr)
            return 1
    return 0
