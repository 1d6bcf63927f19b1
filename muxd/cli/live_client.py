"""The connection of the CLI's commands that live on and hear the daemon's events (`watch`,
`top`): the async client (muxd/client/connection.py) of the server `-L` (and -H) name, as the
token options say. They never start a server: there is nothing to watch in a new one."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable

from muxd.cli.main import chosen_token, server_address
from muxd.client.connection import Client
from muxd.paths import CLIENT_NAME_ENV
from muxd.protocol.messages import Event, ShowPane


async def connect_live(args: argparse.Namespace, client_name: str,
                       on_event: Callable[[Event], None] | None = None) -> Client:
    return await Client.connect(server_address(args), client_name=os.environ.get(CLIENT_NAME_ENV) or client_name,
                                token=chosen_token(args), on_event=on_event)


async def pane_ids(client: Client, targets: list[str]) -> list[str]:
    """The pane ids `targets` name, resolved by the daemon as every pane command's `-t`."""
    return [(await client.call(ShowPane, target=target)).pane.id for target in targets]
