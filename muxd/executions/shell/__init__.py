"""Shell integrations muxd gives its own shell panes, so every command line is an execution."""

from __future__ import annotations

import os
from pathlib import Path

ENV_SHELL_INTEGRATION = "MUXD_SHELL_INTEGRATION"  # "0": start shells as they are


def integrated_argv(argv: list[str], env: dict[str, str]) -> list[str]:
    """`argv` for a pane that runs the user's shell, with muxd's prompt marks where that is cheap
    (interactive bash, with no arguments of its own); anything else unchanged."""
    if env.get(ENV_SHELL_INTEGRATION, "1") == "0" or len(argv) != 1:
        return argv
    if os.path.basename(argv[0]) != "bash":
        return argv
    rcfile = Path(__file__).with_name("bash_integration.sh")  # a file bash reads: never inside a zip
    return [argv[0], "--rcfile", str(rcfile), "-i"]
