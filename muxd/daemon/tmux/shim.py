"""The tmux shim's daemon side: a `tmux` launcher in the daemon's private socket directory, and
the environment that makes a pane's programs believe they run in tmux.

A pane opted in (`--tmux-shim`, anything `muxd tmux` creates, a split of such a pane) gets
`TMUX=<muxd socket>,<daemon pid>,<session number>` and `TMUX_PANE=%N` as tmux sets them, and
the launcher's directory first on its PATH: tools that drive tmux when they find TMUX set
(Claude Code's agent teams, orchestration scripts, libtmux) then run `muxd tmux …` against
this daemon, and every pane they make is a muxd pane.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

import muxd

LAUNCHER_NAME = "tmux"


def launcher_dir(socket_path: Path) -> Path:
    """The directory holding the `tmux` launcher of the daemon at `socket_path` (private, as the
    socket directory is)."""
    return socket_path.parent / f"{socket_path.stem}.tmux-bin"


def launcher_path(socket_path: Path) -> Path:
    return launcher_dir(socket_path) / LAUNCHER_NAME


# The launcher's Python: without `site` (-S), the fast path of the lines tools send on every
# call (cli/tmux_launcher.py), which adds site-packages itself when a line needs more. The sh
# launcher runs it with -c; the `#!` launcher holds it as its own lines.
LAUNCHER_CODE = "from muxd.cli.tmux_launcher import main; main()"
LAUNCHER_HEADER = "# muxd's tmux: tmux command lines, answered by muxd (muxd tmux --help)\n"
# The kernel reads a `#!` line into a 128-byte buffer before Linux 5.1 (256 since): beyond, the
# line would be cut, so the launcher goes through sh.
SHEBANG_MAX_BYTES = 127


def launcher_script(python: str, package_root: str) -> str:
    """A script running `muxd tmux "$@"` with this interpreter and this muxd, whatever the pane's
    program did to PYTHONPATH or the working directory (python -P): started by the kernel from
    its `#!` line when the interpreter's path allows one, else by sh (a call's exec less)."""
    shebang = f"#!{python} -SP\n"
    if os.path.isabs(python) and not any(char.isspace() for char in python) and python.isprintable() \
            and len(os.fsencode(shebang)) <= SHEBANG_MAX_BYTES:
        # As the sh launcher's PYTHONPATH: this muxd first, for this interpreter and (main() sets
        # PYTHONPATH when the full CLI answers) for what it starts, a daemon.
        return (f"{shebang}{LAUNCHER_HEADER}"
                "import sys\n"
                f"ROOT = {package_root!r}\n"
                "sys.path.insert(0, ROOT)\n"
                "from muxd.cli.tmux_launcher import main\n"
                "main(ROOT)\n")
    root = shlex.quote(package_root)
    return ("#!/bin/sh\n"
            f"{LAUNCHER_HEADER}"
            f"PYTHONPATH={root}${{PYTHONPATH:+:\"$PYTHONPATH\"}}\n"
            "export PYTHONPATH\n"
            f"exec {shlex.quote(python)} -S -P -c {shlex.quote(LAUNCHER_CODE)} \"$@\"\n")


def write_launcher(socket_path: Path) -> Path:
    """Write (or rewrite) the launcher of the daemon at `socket_path`; its path."""
    directory = launcher_dir(socket_path)
    directory.mkdir(mode=0o700, exist_ok=True)
    path = directory / LAUNCHER_NAME
    package_root = str(Path(muxd.__file__).resolve().parent.parent)
    staged = directory / f".{LAUNCHER_NAME}.{os.getpid()}"
    # The paths' own bytes, which the kernel (`#!`) and sh read.
    staged.write_text(launcher_script(sys.executable, package_root), encoding=sys.getfilesystemencoding(),
                      errors="surrogateescape")
    staged.chmod(0o700)
    staged.replace(path)  # atomic: a pane running `tmux` now never sees half a script
    return path


def remove_launcher(socket_path: Path) -> None:
    directory = launcher_dir(socket_path)
    try:
        (directory / LAUNCHER_NAME).unlink(missing_ok=True)
        directory.rmdir()
    except OSError:
        pass  # someone put something there: leave it


def shim_env(env: dict[str, str], socket_path: Path, session_number: int, pane_id: str) -> None:
    """Make `env` (a new pane's) a tmux pane's environment leading back to this daemon."""
    env["TMUX"] = f"{socket_path},{os.getpid()},{session_number}"
    env["TMUX_PANE"] = pane_id
    env["PATH"] = f"{launcher_dir(socket_path)}{os.pathsep}{env.get('PATH') or os.defpath}"
