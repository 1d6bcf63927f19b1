"""CLI commands about the server itself: start-server, server status, kill-server."""

from __future__ import annotations

import argparse
import os
import sys
import time

from muxd.cli.render import age, print_json, print_table
from muxd.cli.table import cli_command
from muxd.store.location import MEMORY

TYPE_CHECKING = False  # typing (~2 ms to import) only for the type checker: see cli/table.py
if TYPE_CHECKING:
    from typing import Any


def _configure_nothing(p: argparse.ArgumentParser) -> None:
    pass


@cli_command("kill-server")(_configure_nothing)
def kill_server(client: Any, args: argparse.Namespace) -> int:
    client.call("kill-server", "ok")
    return 0


def _configure_start(p: argparse.ArgumentParser) -> None:
    p.add_argument("-f", "--foreground", action="store_true",
                   help="run the server in this process until SIGTERM or SIGINT (for a service manager: "
                        "`muxd systemd-unit`)")
    p.epilog = ("The server logs to $XDG_STATE_HOME/muxd/NAME.log (else ~/.local/state/muxd/NAME.log), "
                "which outlives a reboot; `muxd server status` shows where.")


@cli_command("start-server")(_configure_start)
def start_server(client: Any, args: argparse.Namespace) -> int:
    if args.foreground:
        from muxd.daemon.main import main as daemon_main

        return daemon_main(["--name", args.server_name])
    from muxd.cli.main import chosen_host, connect_cli

    if chosen_host(args):  # that host's proxy starts it, as for any command that starts one
        connect_cli(args, start=True).close()
        return 0
    from muxd.client.autostart import start_unless_running

    start_unless_running(args.server_name)
    return 0


def _configure_server(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=["status", "modules"],
                   help="what to ask the server: its status, or the modules it has imported")
    p.add_argument("--json", action="store_true")


@cli_command("server")(_configure_server)
def server(client: Any, args: argparse.Namespace) -> int:
    status = client.call("server-status", "status", modules=args.action == "modules")
    if args.action == "modules" and not args.json:
        print("\n".join(status.modules))
        return 0
    if status.database_problem:  # said where it is seen, whatever the format asked
        print(f"muxd: {status.database_problem}", file=sys.stderr)
    if args.json:
        print_json(status)
        return 0
    rows = [
        ["socket", status.socket], ["pid", str(status.pid)], ["version", status.version],
        ["protocol", str(status.protocol_version)],
        ["started", time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(status.started_at))
         + f" ({age(status.started_at)} ago)"],
        ["sessions", str(status.sessions)], ["panes", str(status.panes)], ["emulator", status.emulator],
        ["database", _database(status)], ["host", status.host], ["log", status.log or "-"],
    ]
    if status.unwritten_executions or status.lost_executions:
        rows.append(["history", f"{status.unwritten_executions} execution(s) wait to be written, "
                                f"{status.lost_executions} lost (see the daemon's log)"])
    if status.audit_rows_dropped or status.audit_rows_failed:
        rows.append(["audit rows lost", f"{status.audit_rows_dropped} dropped (queue full), "
                                        f"{status.audit_rows_failed} not written"])
    print_table(["FIELD", "VALUE"], rows + [["client pid", str(os.getpid())]])
    return 0


def _database(status: Any) -> str:
    if status.database_problem:
        return f"DAMAGED: {status.database_problem}"
    if status.database == MEMORY:
        return ":memory: (as MUXD_DB asks: nothing is kept after the server stops)"
    return status.database
