"""Recording a pane's output as an asciicast v2 file, with the time of every read and resize.

Set MUXD_RECORD_DIR and every pane the daemon starts writes `<dir>/<server pid>-<pane>.cast`;
`muxd replay` plays them back through the emulator and detectors at the recorded pace. This is
how the benchmarks get real agent sessions at real speed (see benchmarks/README.md).
"""

from __future__ import annotations

import codecs
import json
import logging
import os
import time
from pathlib import Path
from typing import IO

log = logging.getLogger(__name__)

RECORD_DIR_ENV = "MUXD_RECORD_DIR"


class PaneRecorder:
    """Appends `[seconds, "o", text]` output and `[seconds, "r", "COLSxROWS"]` resize events;
    stops quietly (logged) if the disk says no."""

    def __init__(self, path: Path, columns: int, lines: int, command: list[str]) -> None:
        self.path = path
        self._started = time.monotonic()
        # A read may end inside a UTF-8 sequence: decode incrementally, as a terminal would.
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._file: IO[str] | None = open(path, "w", encoding="utf-8")
        os.chmod(path, 0o600)  # a session's output may hold secrets
        header = {"version": 2, "width": columns, "height": lines, "timestamp": int(time.time()),
                  "command": " ".join(command)}
        self._write(json.dumps(header) + "\n")

    def output(self, data: bytes) -> None:
        text = self._decoder.decode(data)
        if text:
            self._event("o", text)

    def resize(self, columns: int, lines: int) -> None:
        """The pane's terminal became `columns` x `lines`: players resize theirs at this moment."""
        self._event("r", f"{columns}x{lines}")

    def _event(self, kind: str, payload: str) -> None:
        self._write(json.dumps([round(time.monotonic() - self._started, 6), kind, payload],
                               ensure_ascii=False) + "\n")

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def _write(self, line: str) -> None:
        if self._file is None:
            return
        try:
            self._file.write(line)
            self._file.flush()
        except OSError as exc:
            log.warning("recording %s stopped: %s", self.path, exc)
            self.close()


def recorder_for(pane_id: str, columns: int, lines: int, command: list[str]) -> PaneRecorder | None:
    """A recorder when MUXD_RECORD_DIR is set (and usable), else None."""
    directory = os.environ.get(RECORD_DIR_ENV)
    if not directory:
        return None
    try:
        Path(directory).mkdir(mode=0o700, parents=True, exist_ok=True)
        path = Path(directory) / f"{os.getpid()}-{pane_id.lstrip('%')}.cast"
        return PaneRecorder(path, columns, lines, command)
    except OSError as exc:
        log.warning("cannot record pane %s in %s: %s", pane_id, directory, exc)
        return None
