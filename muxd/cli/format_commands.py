"""tmux formats on the command line: the `-F`/`-f` options of the list commands and
`display-message` (their bodies are format_lines.py's)."""

from __future__ import annotations

from muxd.cli.format_lines import display
from muxd.cli.table import cli_command

TYPE_CHECKING = False  # typing only for the type checker: see cli/table.py
if TYPE_CHECKING:
    import argparse
    from typing import Any


def add_format_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-F", dest="format", metavar="FORMAT",
                        help="one line per item in this tmux format (#{pane_id}, #{agent_state}…)")
    parser.add_argument("-f", dest="filter", metavar="FILTER",
                        help="only the items for which this format is true (#{==:#{agent_state},Idle})")


def _configure_display(p: argparse.ArgumentParser) -> None:
    from argparse import SUPPRESS

    p.add_argument("-t", dest="target", help="target pane")
    p.add_argument("-p", dest="print", action="store_true",
                   help="print to stdout (muxd prints there in any case: a command line has no status line)")
    p.add_argument("-F", dest="format", metavar="FORMAT", help="the format (as the positional message)")
    p.add_argument("-a", dest="all_variables", action="store_true", help="list every format variable and its value")
    p.add_argument("-v", "-I", "-N", dest="ignored", action="store_true", help=SUPPRESS)
    p.add_argument("-c", dest="client", help=SUPPRESS)
    p.add_argument("-d", dest="delay", help=SUPPRESS)
    p.add_argument("message", nargs="?", help="a tmux format: #{session_name}:#{window_index}.#{pane_index}")


@cli_command("display-message")(_configure_display)
def display_message(client: Any, args: argparse.Namespace) -> int:
    return display(client, args)
