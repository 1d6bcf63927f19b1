"""Ids in the CLI's tables: each id's shortest unique start, as git shows hashes (the daemon
says how short: store/short_ids.py), unless `--full-ids`. Every command that takes an id
takes what a table shows."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable
from typing import Any, Literal

from muxd.config import EXECUTION_IDS_MAX_COUNT

FULL_IDS_HELP = "whole ids in tables (default: the shortest unique start of each, which every command takes)"


def add_full_ids_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--full-ids", action="store_true", help=FULL_IDS_HELP)


def shortener(client: Any, kind: Literal["execution", "task"], ids: Iterable[str | None],
              full: bool = False) -> Callable[[str | None], str]:
    """A function from an id of `ids` to what a table shows of it ("" for None)."""
    wanted = sorted({i for i in ids if i})
    short: dict[str, str] = {}
    for at in range(0, 0 if full else len(wanted), EXECUTION_IDS_MAX_COUNT):
        reply = client.call("short-ids", "short-id-list", kind=kind, ids=wanted[at:at + EXECUTION_IDS_MAX_COUNT])
        short.update(reply.short_ids)
    return lambda full_id: short.get(full_id, full_id) if full_id else ""
