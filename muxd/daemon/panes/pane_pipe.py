"""pipe-pane: a shell command joined to a pane, as tmux's. With -O (the default) the command's
standard input gets everything the pane's program writes; with -I whatever the command writes
goes to the pane as if typed. A pane has at most one pipe; it closes with the pane.

The pane never waits for the command: output the command does not read fast enough, beyond
PIPE_PANE_BUFFER_MAX_BYTES, is dropped (tmux drops it too), so a stuck pipe cannot stall a pane.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from muxd.config import PIPE_PANE_BUFFER_MAX_BYTES, PTY_READ_CHUNK_BYTES
from muxd.errors import BadRequest

if TYPE_CHECKING:
    from muxd.daemon.panes.pane import Pane

log = logging.getLogger(__name__)


class PanePipe:
    def __init__(self, pane: Pane, process: asyncio.subprocess.Process, command: str) -> None:
        self.pane = pane
        self.process = process
        self.command = command
        self.dropped_bytes = 0
        self._reader: asyncio.Task[None] | None = None
        if process.stdin is not None:
            pane.output_taps.append(self._output)
        if process.stdout is not None:
            self._reader = asyncio.create_task(self._input(process.stdout))

    def _output(self, data: bytes) -> None:
        stdin = self.process.stdin
        if stdin is None or stdin.is_closing():
            return
        if stdin.transport.get_write_buffer_size() + len(data) > PIPE_PANE_BUFFER_MAX_BYTES:
            if not self.dropped_bytes:
                log.warning("pipe-pane of %s is not reading: output dropped", self.pane.id)
            self.dropped_bytes += len(data)
            return
        stdin.write(data)

    async def _input(self, stdout: asyncio.StreamReader) -> None:
        while data := await stdout.read(PTY_READ_CHUNK_BYTES):
            self.pane.write(data)  # as typed: dropped beyond the pane's input cap, never blocking

    def close(self) -> None:
        """Stop feeding the command and reading it: it sees end of file (or a broken pipe)."""
        if self._output in self.pane.output_taps:
            self.pane.output_taps.remove(self._output)
        if self.process.stdin is not None and not self.process.stdin.is_closing():
            self.process.stdin.close()
        if self._reader is not None:
            self._reader.cancel()
            transport = getattr(self.process.stdout, "_transport", None)
            if transport is not None:
                transport.close()


class PanePipes:
    """The open pipes of a daemon's panes, by pane id."""

    def __init__(self) -> None:
        self.by_pane: dict[str, PanePipe] = {}

    async def open(self, pane: Pane, command: str, *, output: bool, input: bool,
                   only_if_none: bool) -> PanePipe | None:
        """Close the pane's pipe, then open one for `command` (none if empty; with `only_if_none`,
        none if there was one: a toggle). Returns the new pipe."""
        old = self.close(pane.id)
        if not command or (only_if_none and old is not None):
            return None
        if pane.exited:
            raise BadRequest(f"pane {pane.id} has exited", pane=pane.id)
        if not output and not input:
            output = True
        try:
            process = await asyncio.create_subprocess_exec(
                "/bin/sh", "-c", command, cwd=pane.cwd() or "/", env=pane.env, start_new_session=True,
                stdin=asyncio.subprocess.PIPE if output else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE if input else asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.DEVNULL)
        except OSError as exc:  # the pane's directory gone, no processes left to fork…
            raise BadRequest(f"pipe-pane: {exc.strerror or exc}", pane=pane.id) from exc
        pipe = PanePipe(pane, process, command)
        self.by_pane[pane.id] = pipe
        return pipe

    def close(self, pane_id: str) -> PanePipe | None:
        pipe = self.by_pane.pop(pane_id, None)
        if pipe is not None:
            pipe.close()
        return pipe

    def close_all(self) -> None:
        for pane_id in list(self.by_pane):
            self.close(pane_id)
