"""The daemon's log: a private file (0600, opened without following links) that rotates at a
size, with repeats of one message thinned out.

Anything a client can trigger over and over (a refused token, a failing request) must not grow
the log without bound: each message (by its format string) is written at most
LOG_REPEATS_PER_WINDOW times per LOG_REPEAT_WINDOW_S, and the next one written after a quiet
spell says how many were left out; the file itself rotates at LOG_FILE_MAX_BYTES. Events
known to repeat by design (refused tokens) are counted at their source instead
(muxd/sampled_log.py); this filter is the net under every other message.
"""

from __future__ import annotations

import logging
import logging.handlers
import os
from pathlib import Path
from typing import IO, Any

import msgspec

from muxd.config import LOG_FILE_BACKUPS, LOG_FILE_MAX_BYTES, LOG_REPEAT_WINDOW_S, LOG_REPEATS_PER_WINDOW
from muxd.paths import open_private

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_configured_path = ""  # where configure() sent the log, for `muxd server status`


class _Window(msgspec.Struct):
    started: float
    written: int = 0
    left_out: int = 0


class RepeatLimiter(logging.Filter):
    """Passes at most `limit` records of one message per `window_s`; counts the rest."""

    def __init__(self, limit: int = LOG_REPEATS_PER_WINDOW, window_s: float = LOG_REPEAT_WINDOW_S) -> None:
        super().__init__()
        self.limit = limit
        self.window_s = window_s
        # Keyed by the format string, which the code fixes: the set of keys cannot grow with input.
        self._windows: dict[tuple[str, int, str], _Window] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        key = (record.name, record.levelno, str(record.msg))
        window = self._windows.get(key)
        if window is None or record.created - window.started >= self.window_s:
            left_out = window.left_out if window is not None else 0
            window = self._windows[key] = _Window(record.created)
            if left_out:
                record.msg = f"{record.msg} [and {left_out} more like this not logged]"
        window.written += 1
        if window.written <= self.limit:
            return True
        window.left_out += 1
        return False


class PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """RotatingFileHandler whose file is opened by `open_private` (0600, no symlinks, ours)."""

    def _open(self) -> IO[Any]:
        fd = open_private(Path(self.baseFilename), os.O_WRONLY | os.O_APPEND)
        return os.fdopen(fd, "a", encoding=self.encoding or "utf-8", errors=self.errors)


def configure(path: Path) -> None:
    """Send the process's logging to `path`, privately, rotated, with repeats thinned."""
    global _configured_path
    _configured_path = str(path)
    handler = PrivateRotatingFileHandler(path, maxBytes=LOG_FILE_MAX_BYTES, backupCount=LOG_FILE_BACKUPS,
                                         encoding="utf-8")
    handler.addFilter(RepeatLimiter())
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)


def configured_path() -> str:
    """The file configure() sends the log to; "" before it was called (a daemon inside a test)."""
    return _configured_path
