"""`muxd hook --agent NAME`: what an agent CLI's hooks run. It reads the event's JSON on stdin
and hands it to the daemon whose pane it runs in ($MUXD, $MUXD_PANE), as that pane's agent
($MUXD_TOKEN), so muxd hears from the agent itself what its screen only suggests.

It must never hold up or fail the agent whose hook runs it: outside a muxd pane, with the
daemon away or slow, with a payload too big, it gives up at once, prints nothing and exits 0.
Agents run it on every tool call, so it imports no more than one request needs (no asyncio,
no msgspec: the blocking client)."""

from __future__ import annotations

import argparse
import os
import sys

from muxd.cli.table import cli_command
from muxd.config import HOOK_CONNECT_TIMEOUT_S, HOOK_PAYLOAD_MAX_CHARS, HOOK_REPLY_TIMEOUT_S

TYPE_CHECKING = False  # typing (~2 ms to import) only for the type checker: see cli/table.py
if TYPE_CHECKING:
    from typing import Any

DEBUG_ENV = "MUXD_HOOK_DEBUG"  # set: say on stderr why an event was not handed over


def _configure_hook(p: argparse.ArgumentParser) -> None:
    p.add_argument("--agent", required=True, help="whose hook runs this: claude, codex, gemini, qwen, cline")
    p.add_argument("payload", nargs="?",
                   help="the event's JSON, for agents that pass it as an argument (Codex's notify); "
                        "default: stdin")


@cli_command("hook")(_configure_hook)
def hook(_client: Any, args: argparse.Namespace) -> int:
    try:
        _hand_over(args.agent, args.payload)
    except Exception as exc:  # noqa: BLE001 - the agent must not hear of it, whatever it is
        if os.environ.get(DEBUG_ENV):
            print(f"muxd hook: {exc}", file=sys.stderr)
    return 0


def _hand_over(agent: str, argument: str | None) -> None:
    pane, socket = os.environ.get("MUXD_PANE"), os.environ.get("MUXD")
    if not pane or not socket:
        return  # not in a muxd pane: nothing to tell
    if argument is not None:
        payload = argument
    elif sys.stdin is None or sys.stdin.isatty():
        return  # run by hand at a prompt: no event to read (and no waiting for one)
    else:
        data = sys.stdin.buffer.read(HOOK_PAYLOAD_MAX_CHARS * 4 + 1)  # a character is up to 4 bytes
        payload = data.decode("utf-8", "replace")
    if len(payload) > HOOK_PAYLOAD_MAX_CHARS:
        raise ValueError(f"payload over {HOOK_PAYLOAD_MAX_CHARS} characters: not sent")
    from muxd.client.blocking import BlockingClient

    with BlockingClient.connect(socket, client_name="muxd-hook", token=os.environ.get("MUXD_TOKEN") or None,
                                connect_timeout_s=HOOK_CONNECT_TIMEOUT_S,
                                reply_timeout_s=HOOK_REPLY_TIMEOUT_S) as client:
        client.call("hook-event", "ok", target=pane, agent=agent, payload=payload)
