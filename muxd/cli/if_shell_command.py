"""`if-shell`: tmux's. The shell command (its formats expanded for the target pane) runs with
`sh -c`, its output dropped; on exit status 0 the first command line runs, else the second (if
any). With -F the first argument is a format, true when it expands to neither "" nor "0", and
no shell runs. With -b it all happens in the background: the command returns at once (in a
config file: the file goes on loading). The command lines are muxd commands as a config file
has them (`set -g …`, `;` between two), run through this connection.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

from muxd.cli.run_shell_command import SHELL, expanded, loading_config, run_muxd_line, shell_env
from muxd.cli.table import cli_command

TYPE_CHECKING = False  # typing only for the type checker: see cli/table.py
if TYPE_CHECKING:
    from typing import Any


def _configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("-b", dest="background", action="store_true", help="in the background: do not wait for it")
    p.add_argument("-F", dest="format", action="store_true",
                   help="the condition is a format, true unless it expands to '' or '0' (no shell runs)")
    p.add_argument("-t", dest="target", help="the pane whose formats are expanded (default: the current one)")
    p.add_argument("condition", help="a shell command (formats expanded): true when it exits 0")
    p.add_argument("command", help="muxd commands run when the condition is true")
    p.add_argument("otherwise", nargs="?", help="muxd commands run when it is false")


@cli_command("if-shell")(_configure)
def if_shell(client: Any, args: argparse.Namespace) -> int:
    if args.background:
        _again_in_background(args)
        return 0
    condition = expanded(client, args.target, args.condition)
    if args.format:
        true = condition not in ("", "0")
    else:
        sys.stdout.flush()
        true = subprocess.run([SHELL, "-c", condition], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, env=shell_env()).returncode == 0
    line = args.command if true else args.otherwise
    return 0 if line is None else run_muxd_line(client, args, line)


def _again_in_background(args: argparse.Namespace) -> None:
    """-b: this if-shell again, without -b, in a process of its own that nobody waits for (in a
    config file, its output dropped: the file's loader would wait for it)."""
    host = ["-H", args.host_url] if getattr(args, "host_url", None) else []  # else $MUXD_HOST_URL's, inherited
    argv = [sys.executable, "-m", "muxd", "-L", args.server_name, *host, "if-shell"]
    argv += ["-F"] * args.format + (["-t", args.target] if args.target else [])
    argv += ["--", args.condition, args.command] + ([args.otherwise] if args.otherwise is not None else [])
    quiet = subprocess.DEVNULL if loading_config() else None
    subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=quiet, stderr=quiet, env=dict(os.environ),
                     start_new_session=quiet is not None)
