"""A pane: a program on a PTY, the screen its output draws, and the bytes typed into it.

The master fd is read with `loop.add_reader` in large coalesced chunks and fed straight
into the pane's `Emulator`; the PTY itself is the backpressure (a full PTY blocks the
child). Exit is noticed through a pidfd, so no SIGCHLD handler is needed.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import time
from collections.abc import Callable

from muxd.config import PTY_READ_CHUNK_BYTES
from muxd.daemon import pty as ptys
from muxd.daemon.recording import PaneRecorder
from muxd.detectors.state import AgentState
from muxd.emulator import Emulator

log = logging.getLogger(__name__)

# One readable callback reads at most this much before letting other panes run.
READ_BUDGET_PER_WAKEUP_BYTES = 256 * 1024


class Pane:
    def __init__(
        self,
        number: int,
        *,
        command: list[str],
        cwd: str,
        env: dict[str, str],
        columns: int,
        lines: int,
        name: str | None,
        tags: list[str],
        remove_on_exit: bool,
        scrollback_bytes: int,
        on_exit: Callable[[Pane], None],
        on_output: Callable[[], None] | None = None,
    ) -> None:
        self.number = number
        self.command = command
        self.start_cwd = cwd
        self.env = env
        self.name = name
        self.tags = tags
        self.remove_on_exit = remove_on_exit
        self.created_at = time.time()
        self.exit_code: int | None = None
        self.exited = False
        self.window: object | None = None  # set by the Window that holds it
        self.emulator = Emulator(columns=columns, lines=lines, scrollback_bytes=scrollback_bytes,
                                 reply=self.write)
        self._on_exit = on_exit
        self.on_output = on_output
        self.recorder: PaneRecorder | None = None  # set when MUXD_RECORD_DIR asks for recordings
        self.agent = AgentState(pane_id=self.id)  # the last published state (see daemon/detection.py)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._process: ptys.PtyProcess | None = None
        self._pidfd: int | None = None
        self._pending_input = bytearray()
        self._closed = False

    # ------------------------------------------------------------ identity

    @property
    def id(self) -> str:
        return f"%{self.number}"

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    @property
    def columns(self) -> int:
        return self.emulator.columns

    @property
    def lines(self) -> int:
        return self.emulator.lines

    # ------------------------------------------------------------ lifecycle

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        """Spawn the program (raises SpawnFailed) and start watching its output and exit."""
        self._loop = loop
        self._process = ptys.spawn(self.command, env=self.env, cwd=self.start_cwd,
                                   columns=self.columns, lines=self.lines)
        loop.add_reader(self._process.master_fd, self._on_readable)
        self._pidfd = os.pidfd_open(self._process.pid)
        loop.add_reader(self._pidfd, self._on_process_exit)

    def _on_readable(self) -> None:
        assert self._process is not None
        chunks: list[bytes] = []
        total = 0
        eof = False
        while total < READ_BUDGET_PER_WAKEUP_BYTES:
            try:
                chunk = os.read(self._process.master_fd, PTY_READ_CHUNK_BYTES)
            except BlockingIOError:
                break
            except OSError:  # EIO: every slave fd is closed
                eof = True
                break
            if not chunk:
                eof = True
                break
            chunks.append(chunk)
            total += len(chunk)
        if chunks:
            data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
            self.emulator.feed(data)
            if self.recorder is not None:
                self.recorder.output(data)
            if self.on_output is not None:
                self.on_output()
        if eof:
            self._stop_reading()

    def _stop_reading(self) -> None:
        if self._process is not None and self._loop is not None and not self._closed:
            self._loop.remove_reader(self._process.master_fd)
            self._loop.remove_writer(self._process.master_fd)

    def _on_process_exit(self) -> None:
        assert self._process is not None and self._loop is not None
        status = self._process.popen.poll()
        if status is None:
            return
        self._loop.remove_reader(self._pidfd)
        os.close(self._pidfd)
        self._pidfd = None
        # The program is gone but its last output may still sit in the PTY: take it in first.
        self._on_readable()
        self.exited = True
        self.exit_code = status if status >= 0 else 128 - status
        self._on_exit(self)

    # ------------------------------------------------------------ input and size

    def write(self, data: bytes) -> None:
        """Queue bytes for the program's input; never blocks the loop."""
        if not data or self._process is None or self._closed or self.exited:
            return
        self._pending_input += data
        self._flush_input()

    def _flush_input(self) -> None:
        assert self._process is not None and self._loop is not None
        fd = self._process.master_fd
        while self._pending_input:
            try:
                written = os.write(fd, self._pending_input)
            except BlockingIOError:
                break
            except OSError:
                self._pending_input.clear()
                break
            del self._pending_input[:written]
        if self._pending_input:
            self._loop.add_writer(fd, self._flush_input)
        else:
            self._loop.remove_writer(fd)

    def resize(self, columns: int, lines: int) -> None:
        if (columns, lines) == (self.columns, self.lines):
            return
        self.emulator.resize(columns, lines)
        if self._process is not None and not self._closed:
            try:
                ptys.set_window_size(self._process.master_fd, columns, lines)
            except OSError:
                pass  # the terminal is already gone; the screen still follows

    # ------------------------------------------------------------ live facts

    def foreground_pid(self) -> int | None:
        if self._process is None or self.exited or self._closed:
            return None
        return ptys.foreground_pid(self._process.master_fd)

    def cwd(self) -> str | None:
        pid = self.foreground_pid() or (None if self.exited else self.pid)
        live = ptys.process_cwd(pid) if pid else None
        return live or self.start_cwd

    def foreground_name(self) -> str | None:
        pid = self.foreground_pid()
        return ptys.process_name(pid) if pid else None

    # ------------------------------------------------------------ teardown

    def close(self) -> None:
        """Hang up the program (SIGHUP to its process group, like a closed terminal) and free the PTY."""
        if self._closed:
            return
        process, loop = self._process, self._loop
        if process is not None and loop is not None:
            loop.remove_reader(process.master_fd)
            loop.remove_writer(process.master_fd)
            if self._pidfd is not None:
                loop.remove_reader(self._pidfd)
                os.close(self._pidfd)
                self._pidfd = None
            if not self.exited:
                for sig in (signal.SIGHUP, signal.SIGCONT):
                    try:
                        os.killpg(process.pid, sig)
                    except OSError:
                        pass
            os.close(process.master_fd)
            loop.call_later(2.0, _reap_or_kill, process)
        if self.recorder is not None:
            self.recorder.close()
        self._closed = True


def _reap_or_kill(process: ptys.PtyProcess) -> None:
    """A hung-up program that ignores SIGHUP gets SIGKILL; either way it is reaped."""
    if process.popen.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            process.popen.wait(timeout=1)
        except Exception:  # noqa: BLE001 - a zombie left to init is no error worth raising
            pass
