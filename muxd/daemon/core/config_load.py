"""The config file at server start, as tmux's: `~/.config/muxd/muxd.conf` (XDG_CONFIG_HOME
honoured; `muxd -f FILE` names another) is run by `muxd source-file` before the server reports
itself ready, so the first command already sees its options and sessions.

It runs in a muxd process of its own, a client like any other: config lines are CLI command
lines, and the CLI is what parses and runs them. Its bad lines (file:line: why) come back to
be logged and shown by whoever started the server; the rest of the file still loads. What its
commands print (a `run-shell`'s output: tmux shows it in a pane's view mode) goes to the log.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys

from muxd.config import CONFIG_LOAD_TIMEOUT_S
from muxd.paths import CLIENT_NAME_ENV, config_file

log = logging.getLogger(__name__)

# A pane's identity must not leak into the config's commands (they act as the socket owner).
_ENV_DROPPED = ("MUXD_PANE", "MUXD_TOKEN", "MUXD_CLI_TOKEN")
# How the config's `muxd` greets the server ($MUXD_CLIENT_NAME): its requests run at once, while
# every other client's wait until the config is loaded.
CONFIG_CLIENT_NAME = "muxd-config"


async def load_config(server_name: str) -> list[str]:
    """Run the config file (if there is one) against the server `server_name`, which must be
    listening; returns its error lines."""
    path, chosen = config_file()
    if (not chosen and not path.exists()) or str(path) == os.devnull:  # `-f /dev/null`: no config
        return []
    env = {k: v for k, v in os.environ.items() if k not in _ENV_DROPPED}
    env[CLIENT_NAME_ENV] = CONFIG_CLIENT_NAME
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-P", "-m", "muxd", "-L", server_name, "source-file", str(path),
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        cwd=os.path.expanduser("~"), env=env)
    try:
        stdout, stderr = await asyncio.wait_for(process.communicate(), CONFIG_LOAD_TIMEOUT_S)
    except TimeoutError:
        process.kill()
        await process.wait()
        errors = [f"{path}: took longer than {CONFIG_LOAD_TIMEOUT_S:g}s to load: stopped"]
    else:
        errors = [line.removeprefix("muxd: ") for line in stderr.decode("utf-8", "replace").splitlines() if line]
        for line in stdout.decode("utf-8", "replace").splitlines():
            log.info("config output: %s", line)
    for error in errors:
        log.warning("config: %s", error)
    return errors
