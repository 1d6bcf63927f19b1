"""Colour in the CLI's output: whether to use it (`--color=auto|always|never`, NO_COLOR, a
terminal on stdout) and the SGR styles that tell agent states apart at a glance, the same in
`muxd ls` as in `muxd top`: waiting for a person bold red, a usage limit yellow, failed red,
busy cyan, finished green; at rest (Idle) the terminal's own colour."""

from __future__ import annotations

import argparse
import os
import sys

COLOR_CHOICES = ("auto", "always", "never")
RESET = "\x1b[0m"
BOLD = "\x1b[1m"
# A row's style by what it needs from a person (top_board's needs).
NEED_STYLES = {"waiting": "\x1b[1;31m", "limited": "\x1b[33m", "failed": "\x1b[31m", "finished": "\x1b[32m",
               None: ""}
BUSY_STYLE = "\x1b[36m"
# An agent's activity state (detectors/state.py) by the need it stands for.
STATE_STYLES = {"AwaitingConfirmation": NEED_STYLES["waiting"], "AwaitingInput": NEED_STYLES["waiting"],
                "UsageLimited": NEED_STYLES["limited"],
                "Thinking": BUSY_STYLE, "Generating": BUSY_STYLE, "ToolUse": BUSY_STYLE}
_DUMB_TERMINALS = ("dumb", "unknown", "")


def add_color_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--color", choices=COLOR_CHOICES, default="auto",
                        help="colour the agent states: auto (default) on a terminal unless NO_COLOR is set")


def use_color(choice: str = "auto") -> bool:
    """Whether to write SGR styles: `always`/`never` as said; `auto` only on a terminal that
    shows colour, and not when NO_COLOR holds any value (https://no-color.org)."""
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    return sys.stdout.isatty() and os.environ.get("TERM", "").lower() not in _DUMB_TERMINALS


def styled(text: str, style: str) -> str:
    return f"{style}{text}{RESET}" if style else text
