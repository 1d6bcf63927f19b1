"""CLI commands that fit muxd into the user's system: shell completion, the manual page and a
systemd user unit, each printed for the user to install. The generators (shtab,
argparse-manpage) are imported only by these commands: `muxd ls` never pays for them."""

from __future__ import annotations

import argparse
import sys

from muxd.cli.table import cli_command

TYPE_CHECKING = False  # typing (~2 ms to import) only for the type checker: see cli/table.py
if TYPE_CHECKING:
    from typing import Any


def _configure_completion(p: argparse.ArgumentParser) -> None:
    from muxd.cli.completion_script import SHELLS

    p.add_argument("shell", choices=SHELLS,
                   help="bash: `source <(muxd completion bash)` in ~/.bashrc; zsh: `eval \"$(muxd completion zsh)\"` "
                        "in ~/.zshrc after compinit (or the script saved as _muxd in a $fpath directory); fish: "
                        "`muxd completion fish > ~/.config/fish/completions/muxd.fish`")


@cli_command("completion")(_configure_completion)
def completion(client: Any, args: argparse.Namespace) -> int:
    from muxd.cli.completion_script import completion_script
    from muxd.cli.parsers import full_parser

    sys.stdout.write(completion_script(full_parser(), args.shell))
    return 0


def _configure_man(p: argparse.ArgumentParser) -> None:
    p.add_argument("--roff", action="store_true",
                   help="print the page's roff even on a terminal (`muxd man > muxd.1`, for share/man/man1)")


@cli_command("man")(_configure_man)
def man(client: Any, args: argparse.Namespace) -> int:
    from muxd.cli.parsers import full_parser
    from muxd.cli.man_page import man_page

    roff = man_page(full_parser())
    if not args.roff and sys.stdout.isatty():
        import shutil
        import subprocess

        if shutil.which("man"):  # read as a manual page, not as its source
            return subprocess.run(["man", "-l", "-"], input=roff.encode(), check=False).returncode
    sys.stdout.write(roff)
    return 0


def _configure_systemd_unit(p: argparse.ArgumentParser) -> None:
    p.add_argument("--muxd", metavar="COMMAND",
                   help="how the unit runs muxd (default: this muxd's interpreter, `python -P -m muxd`)")


@cli_command("systemd-unit")(_configure_systemd_unit)
def systemd_unit(client: Any, args: argparse.Namespace) -> int:
    from muxd.cli.systemd_unit import systemd_unit as unit

    sys.stdout.write(unit(args.server_name, args.muxd))
    return 0
