"""CLI commands about access: `muxd token create|list|revoke`, `muxd grant`, `muxd metrics`."""

from __future__ import annotations

import argparse
import sys

from muxd.cli.render import age, print_json, print_line, print_table
from muxd.cli.table import cli_command
from muxd.config import TASK_SCOPES
from muxd.daemon.access.tiers import TIERS

TYPE_CHECKING = False  # typing (~2 ms to import) only for the type checker: see cli/table.py
if TYPE_CHECKING:
    from typing import Any


def _configure_token(p: argparse.ArgumentParser) -> None:
    actions = p.add_subparsers(dest="token_action", metavar="ACTION", required=True)
    create = actions.add_parser("create", help="issue a token and print its secret (shown once)")
    create.add_argument("--tier", required=True, choices=TIERS, metavar="TIER",
                        help=f"what the token may do: {', '.join(TIERS)}")
    create.add_argument("--pane", dest="panes", action="append", default=[], metavar="PANE",
                        help="bind the token to this pane (repeatable; %%N@host: another host's on a "
                             "shared database); default: every pane")
    create.add_argument("--name", help="a unique name (letters, digits, _.@+-; no @ on a shared database)")
    create.add_argument("--scope", dest="scopes", action="append", choices=TASK_SCOPES, metavar="SCOPE",
                        help="a task-queue scope (tasks:read, tasks:write; repeatable); "
                             "default: both, tasks:read only for view_only")
    create.add_argument("--json", action="store_true", help="print the token and secret as JSON")
    listing = actions.add_parser("list", aliases=["ls"], help="list tokens (never their secrets)")
    listing.add_argument("-a", "--all", action="store_true", help="include revoked tokens")
    listing.add_argument("--json", action="store_true")
    revoke = actions.add_parser("revoke", help="revoke a token by id or name")
    revoke.add_argument("token", metavar="ID|NAME")


@cli_command("token")(_configure_token)
def token(client: Any, args: argparse.Namespace) -> int:
    if args.token_action == "create":
        created = client.call("create-token", "token-created", tier=args.tier, name=args.name, panes=args.panes,
                              scopes=args.scopes)
        if args.json:
            print_json({"token": created.token, "secret": created.secret})
        else:
            print(created.secret)
            print(f"token {created.token.id} ({created.token.name}, {created.token.tier}): "
                  "the secret is shown only now", file=sys.stderr)
        return 0
    if args.token_action in ("list", "ls"):
        tokens = client.call("list-tokens", "token-list", include_revoked=args.all).tokens
        if args.json:
            print_json(tokens)
            return 0
        if not tokens:
            print("no tokens")
            return 0
        print_table(["ID", "NAME", "KIND", "TIER", "PANES", "SCOPES", "AGE", "REVOKED"], [
            [t.id, t.name, t.kind, t.tier, "all" if t.panes is None else ",".join(t.panes),
             ",".join(s.removeprefix("tasks:") for s in t.scopes) or "-", age(t.created_at),
             "" if t.revoked_at is None else (t.revoked_reason or "yes")]
            for t in tokens])
        return 0
    revoked = client.call("revoke-token", "token", token=args.token).token
    print(f"revoked {revoked.id} ({revoked.name})")
    return 0


def _configure_grant(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", dest="pane", required=True, metavar="PANE", help="the pane to share (%%N@host: another host's on a shared database)")
    p.add_argument("--to", required=True, metavar="PANE|TOKEN",
                   help="a pane (its agent, i.e. its MUXD_TOKEN) or a pane-bound token's id or name")
    p.add_argument("--revoke", action="store_true", help="take the grant back")


@cli_command("grant")(_configure_grant)
def grant(client: Any, args: argparse.Namespace) -> int:
    request = "revoke-grant" if args.revoke else "grant"
    token = client.call(request, "token", pane=args.pane, to=args.to).token
    print(f"{'revoked' if args.revoke else 'granted'} {args.pane} {'from' if args.revoke else 'to'} {token.name}",
          file=sys.stderr)
    return 0


def _configure_metrics(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="per-tool counters as JSON")
    p.add_argument("--tool", help="one tool only (with --json)")


@cli_command("metrics")(_configure_metrics)
def metrics(client: Any, args: argparse.Namespace) -> int:
    reply = client.call("get-metrics", "metrics", tool=args.tool)
    if args.json:
        print_json(reply.tools)
    else:
        for line in reply.prometheus.splitlines():  # tool names are whatever MCP clients called
            print_line(line)
    return 0
