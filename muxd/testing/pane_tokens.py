"""A pane's own token as a test reads it: what the pane's shell prints of its MUXD_TOKEN."""

from __future__ import annotations

import re

from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until

SECRET = re.compile(r"^muxd_[A-Za-z0-9_-]{43}$")


def pane_token(server: MuxdTestServer, pane: str) -> str:
    """What `printenv MUXD_PANE MUXD_TOKEN` prints inside the pane."""
    server.cli("send-keys", "-t", pane, "printenv MUXD_PANE MUXD_TOKEN", "Enter", check=True)
    found: list[str] = []

    def printed() -> bool:
        lines = server.capture(pane).splitlines()
        found[:] = [line.strip() for line in lines if SECRET.match(line.strip())]
        return bool(found) and pane in [line.strip() for line in lines]

    wait_until(printed, timeout=10, message=f"MUXD_TOKEN printed in {pane}")
    return found[0]
