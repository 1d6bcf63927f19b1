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


class PrivateRotatingFileHandler(logging.FileHandler):
    """A log file opened by `open_private` (0600, no symlinks, ours) and rotated as
    logging.handlers.RotatingFileHandler rotates: before a record would take it to `maxBytes`,
    the file becomes `.1` (`.1` becomes `.2`, and so on up to `backupCount`). Written here because
    logging.handlers (with pickle) cost a daemon's start ~2 ms before its first reply."""

    def __init__(self, filename: Path | str, maxBytes: int = 0, backupCount: int = 0,  # noqa: N803 - its names
                 encoding: str | None = None) -> None:
        super().__init__(filename, "a", encoding=encoding)
        self.maxBytes = maxBytes
        self.backupCount = backupCount

    def _open(self) -> IO[Any]:
        fd = open_private(Path(self.baseFilename), os.O_WRONLY | os.O_APPEND)
        return os.fdopen(fd, "a", encoding=self.encoding or "utf-8", errors=self.errors)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            if self._full_with(record):
                self._rotate()
        except Exception:
            self.handleError(record)
            return
        super().emit(record)

    def _full_with(self, record: logging.LogRecord) -> bool:
        if self.maxBytes <= 0 or not os.path.isfile(self.baseFilename):  # (a pipe or a device never rotates)
            return False
        if self.stream is None:
            self.stream = self._open()
        self.stream.seek(0, os.SEEK_END)
        return self.stream.tell() + len(f"{self.format(record)}\n") >= self.maxBytes

    def _rotate(self) -> None:
        if self.stream is not None:
            self.stream.close()
            self.stream = None  # type: ignore[assignment]
        if self.backupCount > 0:
            for number in range(self.backupCount - 1, 0, -1):
                older = f"{self.baseFilename}.{number}"
                if os.path.exists(older):
                    os.replace(older, f"{self.baseFilename}.{number + 1}")
            os.replace(self.baseFilename, f"{self.baseFilename}.1")
        self.stream = self._open()


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
