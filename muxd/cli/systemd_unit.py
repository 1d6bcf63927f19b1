"""The systemd user unit that keeps a muxd server running for people who want it up from login
(`muxd systemd-unit > ~/.config/systemd/user/muxd.service`): the server in the foreground
(`start-server -f`), stopped by SIGTERM, which ends it cleanly."""

from __future__ import annotations

import shlex
import sys

UNIT_TEMPLATE = """\
[Unit]
Description=muxd terminal multiplexer server ({name})
Documentation=man:muxd(1)

[Service]
Type=exec
# Panes get this service's environment, not a login shell's: add Environment= lines (or run
# `systemctl --user import-environment PATH`) for what your agents need.
ExecStart={muxd} -L {name} start-server -f
# SIGTERM to the server alone: it ends its panes itself, as kill-server does; anything left is killed.
KillMode=mixed
Restart=on-failure
RestartSec=2

[Install]
WantedBy=default.target
"""


def systemd_unit(server_name: str, muxd: str | None = None) -> str:
    """The unit text for the server `server_name`, run by `muxd` (default: this interpreter's
    `-P -m muxd`, so the unit runs the muxd installed where this one is; -P: never a muxd/ of
    the directory the service starts in)."""
    command = muxd or f"{shlex.quote(sys.executable)} -P -m muxd"
    return UNIT_TEMPLATE.format(name=server_name, muxd=command)
