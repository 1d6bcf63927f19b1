"""`python -m muxd.daemon.main --name NAME`: run one muxd server in this process.

With `--ready-fd N` it writes `ready` (or `error <code> <message>`) on fd N once it is
listening, then closes it: that is how a client that started it knows when to connect.
"""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import sys
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING

from muxd.daemon.core import msgspec_first  # noqa: F401 - before any other import of msgspec
from muxd.config import DEFAULT_SCROLLBACK_BYTES, SCROLLBACK_BYTES_MAX
from muxd.daemon.core import log_file
from muxd.daemon.core.loop import run
from muxd.errors import BadRequest, MuxdError
from muxd.paths import DEFAULT_SERVER_NAME, ensure_socket_dir, ensure_state_dir, lock_path, log_path, socket_path
from muxd.store.database import Database, busy_timeout_from_env
from muxd.store.location import db_path
from muxd.store.opening import open_database
from muxd.store.retention import retention_from_env

if TYPE_CHECKING:
    from muxd.daemon.server import Daemon


ENV_SCROLLBACK = "MUXD_SCROLLBACK_BYTES"
# The daemon's flags, each `--flag VALUE` or `--flag=VALUE`: --scrollback-bytes is the memory each
# pane's scrollback may hold (default $MUXD_SCROLLBACK_BYTES, else DEFAULT_SCROLLBACK_BYTES).
FLAGS = ("--name", "--ready-fd", "--scrollback-bytes")


def _report(fd: int | None, line: str) -> None:
    if fd is None:
        return
    try:
        os.write(fd, (line + "\n").encode())
        os.close(fd)
    except OSError:
        pass


async def _main(daemon: Daemon, ready_fd: int | None) -> None:
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, daemon.request_shutdown)
    loop.add_signal_handler(signal.SIGHUP, lambda: None)
    await daemon.serve(on_ready=lambda: _ready(daemon, ready_fd))


def _ready(daemon: Daemon, ready_fd: int | None) -> None:
    """Tell whoever started the daemon it listens, after the config file's bad lines (a
    foreground daemon prints those itself)."""
    # The collector, off while the start imported (client/autostart.py), runs from now on; what
    # the start built lives as long as the daemon, so no pass need ever look at it again.
    gc.freeze()
    gc.enable()
    warnings = [f"warning {error}" for error in daemon.config_errors]
    if ready_fd is None:
        for error in daemon.config_errors:
            print(f"muxd: {error}", file=sys.stderr)
    _report(ready_fd, "\n".join([*warnings, "ready"]))


def _opening_database(server_name: str) -> Future[Database]:
    """The server's database, opening on a thread of its own while the daemon imports the rest:
    a new file's schema waits on the disk (tens of ms) more than it runs. $MUXD_DB may name a
    PostgreSQL database (issue 30): open_database imports its driver for a URL only."""
    opener = ThreadPoolExecutor(max_workers=1, thread_name_prefix="muxd-db-open")
    env = dict(os.environ)
    opening = opener.submit(lambda: open_database(db_path(server_name, env), busy_timeout_s=busy_timeout_from_env(env)))
    opener.shutdown(wait=False)  # the thread ends once the file is open
    return opening


def scrollback_budget(flag: int | None, variable: str | None) -> int:
    """Bytes of memory each pane's scrollback may hold: --scrollback-bytes, else $MUXD_SCROLLBACK_BYTES,
    else the default; bad_request outside 0..SCROLLBACK_BYTES_MAX."""
    value: int | str = flag if flag is not None else (variable or DEFAULT_SCROLLBACK_BYTES)
    try:
        budget = int(value)
    except ValueError:
        raise BadRequest(f"{ENV_SCROLLBACK} must be a number of bytes, got {value!r}") from None
    if not 0 <= budget <= SCROLLBACK_BYTES_MAX:
        raise BadRequest(f"scrollback of {budget} bytes is out of range 0..{SCROLLBACK_BYTES_MAX}")
    return budget


def parse_flags(argv: list[str]) -> dict[str, str]:
    """FLAGS' values in `argv` (what the clients that start a daemon pass; argparse and gettext
    would cost its start ~3 ms); BadRequest for anything else."""
    values: dict[str, str] = {}
    words = iter(argv)
    for word in words:
        flag, equals, value = word.partition("=")
        if flag not in FLAGS:
            raise BadRequest(f"unknown argument {word!r}: the daemon takes {', '.join(FLAGS)}")
        if not equals:
            value = next(words, None)  # type: ignore[assignment]
            if value is None:
                raise BadRequest(f"{flag} needs a value")
        values[flag] = value
    return values


def _number(values: dict[str, str], flag: str) -> int | None:
    if flag not in values:
        return None
    try:
        return int(values[flag])
    except ValueError:
        raise BadRequest(f"{flag} takes a whole number, got {values[flag]!r}") from None


def main(argv: list[str] | None = None) -> int:
    try:
        flags = parse_flags(sys.argv[1:] if argv is None else argv)
        ready_fd, flag_scrollback = _number(flags, "--ready-fd"), _number(flags, "--scrollback-bytes")
    except BadRequest as exc:
        print(f"muxd-daemon: {exc.message}", file=sys.stderr)
        return 2
    name = flags.get("--name", DEFAULT_SERVER_NAME)
    try:
        scrollback_bytes = scrollback_budget(flag_scrollback, os.environ.get(ENV_SCROLLBACK))
        ensure_socket_dir()
        ensure_state_dir()
        log_file.configure(log_path(name))
        retention = retention_from_env(os.environ)
        database = _opening_database(name)
        from muxd.daemon.commands import CommandTable  # the bulk of the daemon's imports, meanwhile
        from muxd.daemon.server import Daemon

        daemon = Daemon(socket_path(name), lock_path(name), commands=CommandTable(),
                        scrollback_bytes=scrollback_bytes,
                        detection=os.environ.get("MUXD_DETECTION", "1") != "0", retention=retention,
                        history=os.environ.get("MUXD_HISTORY", "1") != "0", database=database.result())
        run(_main(daemon, ready_fd))
    except MuxdError as exc:
        _report(ready_fd, f"error {exc.code} {exc.message}")
        print(f"muxd: {exc.message}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
