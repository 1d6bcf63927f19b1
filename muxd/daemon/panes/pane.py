"""A pane: a program on a PTY, the screen its output draws, and the bytes typed into it.

The master fd is read with `loop.add_reader` into the pane's `OutputBacklog`, which
`EmulationTurns` feeds to its `Emulator` a time slice per loop turn (daemon/panes/emulation.py).
A wakeup reads, up to a budget, only while the PTY holds bytes at once (FIONREAD says so): a read
finding it empty waits in the kernel for its worker to move what the program wrote since, which
on a busy machine held the loop for milliseconds while a flooding program kept refilling it. A
pane holding PANE_PENDING_MAX_BYTES unemulated stops reading: the full PTY then blocks the child
(backpressure). While someone types elsewhere, a pane nobody attends reads about one PTY's fill
(PANE_PACED_READ_BYTES) and then pauses (PANE_READ_PAUSE_S): its program sleeps on the full PTY
instead of competing for the machine, and the loop waits idle for the keys. A pane only watched
(an attached client's active pane, not typed into) whose output comes slowly leaves its PTY unread
for about a frame after each read (PANE_WATCHED_READ_PAUSE_S): one read and one emulation a frame
its viewer gets, not one a write; input to it ends the pause. Exit is noticed through a pidfd, so no
SIGCHLD handler is needed; it is announced once the last output is on the screen.

An emulator that fails (its `failed` flag: it raised on output or a resize) is fed no more:
the PTY is still read and drained, recorders and taps still get the bytes, the screen stays
as it last was, and the pane reports `emulator_failed`. The daemon's other panes go on.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from muxd.config import (
    PANE_HANGUP_GRACE_S, PANE_INPUT_PENDING_MAX_BYTES, PANE_INPUT_STALL_S, PANE_PACED_READ_BYTES,
    PANE_PENDING_MAX_BYTES, PANE_PENDING_RESUME_BYTES, PANE_READ_PAUSE_S, PANE_TYPING_S,
    PANE_WATCHED_PAUSE_OVERRUN_S, PANE_WATCHED_READ_PAUSE_S, PTY_READ_BUDGET_PER_WAKEUP_BYTES, PTY_READ_CHUNK_BYTES,
)
from muxd.daemon.panes import pty as ptys
from muxd.daemon.panes.emulation import EmulationTurns, OutputBacklog
from muxd.daemon.panes.recording import PaneRecorder
from muxd.detectors.state import AgentState
from muxd.emulator.backend import new_emulator
from muxd.errors import Conflict

LAST_INPUT_KEPT_BYTES = 16  # enough for the last key's escape sequence

if TYPE_CHECKING:
    from muxd.emulator.emulator import Emulator
    from muxd.executions.transcript import TranscriptBuffer

log = logging.getLogger(__name__)


class Pane:
    # muxd sizes its own panes; a pane adopted from tmux follows tmux's size (daemon/tmux/adopted_pane.py).
    resizable = True

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
        turns: EmulationTurns | None = None,
    ) -> None:
        self.number = number
        self.id = f"%{number}"  # (made once: read at every state and every ended turn)
        self.command = command
        self.launch_argv: list[str] | None = None  # what actually runs, when muxd adds to `command`
        self.tmux_shim = False  # its programs see TMUX and muxd's `tmux` (daemon/tmux/shim.py)
        self.start_cwd = cwd
        self.env = env
        self.name = name
        self.tags = tags
        self.remove_on_exit = remove_on_exit
        self._title_set: tuple[str, str] | None = None  # select-pane -T: (title, the program's then)
        self.interactive = False  # made by a person (Spawn.interactive): closes on exit unless remain-on-exit
        self.created_at = time.time()
        self.exit_code: int | None = None
        self.exited = False
        self.window: object | None = None  # set by the Window that holds it
        self.scrollback_bytes = scrollback_bytes  # the history's memory budget (#{history_limit})
        self._emulator: Any = None  # the screen, built at its first use (the emulator property)
        self._size = (columns, lines)  # the screen's size until then
        self._on_exit = on_exit
        self.on_output = on_output
        self.on_submit: Callable[[], None] | None = None  # told of input that ends with Enter
        self.recorder: PaneRecorder | None = None  # set when MUXD_RECORD_DIR asks for recordings
        # Told every chunk of output as it is read (prompt marks, execution transcripts).
        self.output_taps: list[Callable[[bytes], None]] = []
        # The running execution's transcript (the history sets it): each read is appended to it.
        self.transcript: TranscriptBuffer | None = None
        # Told the program's pid once it is reaped (the daemon's watchdog stops guarding it).
        self.on_reaped: Callable[[int], None] | None = None
        self.agent = AgentState(pane_id=self.id)  # the last published state (see daemon/panes/detection.py)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._process: ptys.PtyProcess | None = None
        self._pidfd: int | None = None
        self._pending_input = bytearray()
        self._dropping_input = False  # input beyond the cap is being dropped (logged once)
        self._input_room = asyncio.Event()  # set while at most half the cap is waiting
        self._input_room.set()
        self._input_taken_at = 0.0  # time.monotonic() the program's terminal last took input
        self.typed_at = 0.0  # time.monotonic() of the last input from outside (not the emulator's replies)
        # The end of that input: a detector tells Enter from Ctrl-C when both leave the same frame.
        self.last_input = b""
        self.last_input_at: float | None = None  # its wall-clock time (the detectors' clock)
        self._closed = False
        # Output read but not yet emulated, fed in turns shared with the daemon's other panes.
        self._backlog = OutputBacklog()
        self._turns = turns if turns is not None else EmulationTurns()
        self._reading = False   # the master fd is watched (not paused by backpressure, not at EOF)
        self._read_pause: asyncio.TimerHandle | None = None  # reading put off (see _on_readable)
        self._watched_pause = False  # that pause is a watched pane's, between its viewer's frames
        # Bytes read in the current and the last stretch of PANE_WATCHED_READ_PAUSE_S (_output_slow).
        self._stretch_at, self._stretch_bytes, self._last_stretch_bytes = 0.0, 0, 0
        self._eof = False
        self._exit_status: int | None = None  # the program's, until its exit is announced
        self._failure_noticed = False  # the emulator's failure was logged and its backlog dropped

    # ------------------------------------------------------------ identity

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    @property
    def tty(self) -> str | None:
        return self._process.tty if self._process else None

    @property
    def source(self) -> str:
        """Where the program runs: "muxd" for a program muxd started (see AdoptedPane)."""
        return "muxd"

    @property
    def emulator(self) -> Emulator:
        """The pane's screen, built at its first use (most often the program's first output): a
        new pane's reply does not wait for it, nor a cold start's first pane for the emulator
        backend's import, which runs while the client that asked goes on."""
        emulator = self._emulator
        if emulator is None:
            columns, lines = self._size
            emulator = self._emulator = new_emulator(columns=columns, lines=lines,
                                                     scrollback_bytes=self.scrollback_bytes,
                                                     reply=self._emulator_reply)
        return emulator

    @emulator.setter
    def emulator(self, emulator: Emulator) -> None:
        self._emulator = emulator

    @property
    def columns(self) -> int:
        return self._size[0] if self._emulator is None else self._emulator.columns

    @property
    def lines(self) -> int:
        return self._size[1] if self._emulator is None else self._emulator.lines

    def _program_title(self) -> str:
        return "" if self._emulator is None else self._emulator.title  # a new screen has none

    @property
    def title(self) -> str:
        """The program's title (OSC 0/2), or the one select-pane -T set since the program last
        changed its own (tmux keeps one title that either may set)."""
        program_title = self._program_title()
        if self._title_set is not None and self._title_set[1] == program_title:
            return self._title_set[0]
        return program_title

    def set_title(self, title: str) -> None:
        self._title_set = ("".join(ch for ch in title if ch.isprintable()), self._program_title())

    @property
    def emulator_failed(self) -> bool:
        """The emulator failed (it raised on output or a resize): output is read and dropped."""
        return self._emulator is not None and bool(self._emulator.failed)

    @property
    def unemulated_bytes(self) -> int:
        """Output read from the PTY that the screen does not show yet."""
        return len(self._backlog)

    @property
    def waiting_input_bytes(self) -> int:
        """Input queued for the program that its terminal has not taken yet."""
        return len(self._pending_input)

    # ------------------------------------------------------------ lifecycle

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        """Spawn the program (raises SpawnFailed) and start watching its output and exit."""
        self._loop = loop
        self._process = ptys.spawn(self.launch_argv or self.command, env=self.env, cwd=self.start_cwd,
                                   columns=self.columns, lines=self.lines)
        self._set_reading(True)
        self._pidfd = os.pidfd_open(self._process.pid)
        loop.add_reader(self._pidfd, self._on_process_exit)

    # ------------------------------------------------------------ output

    def _on_readable(self) -> None:
        if not self._turns.paces_reads(self):
            size = self._read_output(PANE_PENDING_MAX_BYTES)
            # Output only a viewer sees, coming slowly: the rest waits for about a frame (see
            # PANE_WATCHED_READ_PAUSE_S), a read and an emulation a frame instead of one a write.
            if (self._output_slow(size) and self._reads_on() and not self.typed_recently()
                    and self._turns.watched(self)):
                self._pause_reading(PANE_WATCHED_READ_PAUSE_S + PANE_WATCHED_PAUSE_OVERRUN_S, watched=True)
            return
        self._read_output(PANE_PENDING_MAX_BYTES, PANE_PACED_READ_BYTES)  # about one PTY's fill
        if self._reads_on():
            self._pause_reading(PANE_READ_PAUSE_S)

    def _reads_on(self) -> bool:
        """Whether the PTY is to be read on after a read: not at its end, and the backlog not
        full (the reader is watched then, or, after a pause, is about to be)."""
        return not self._eof and not self._closed and len(self._backlog) < PANE_PENDING_MAX_BYTES

    def _output_slow(self, size: int) -> bool:
        """Count `size` bytes just read; True while less than PANE_PACED_READ_BYTES came in
        this stretch of PANE_WATCHED_READ_PAUSE_S and in the one before (a PTY left unread that
        long never filled: its program did not wait on it)."""
        now = time.monotonic()
        since = now - self._stretch_at
        if since >= PANE_WATCHED_READ_PAUSE_S:
            # (a stretch that ended long ago counts as none)
            self._last_stretch_bytes = self._stretch_bytes if since < 2 * PANE_WATCHED_READ_PAUSE_S else 0
            self._stretch_at, self._stretch_bytes = now, 0
        self._stretch_bytes += size
        return max(self._stretch_bytes, self._last_stretch_bytes) < PANE_PACED_READ_BYTES

    def _pause_reading(self, seconds: float, *, watched: bool = False) -> None:
        """Leave the PTY unread for `seconds`. While someone types elsewhere (EmulationTurns.
        paces_reads), after a read of at most PANE_PACED_READ_BYTES (a longer one keeps pace with
        a program refilling the PTY as fast as it is read, and holds the loop meanwhile), for
        PANE_READ_PAUSE_S: its program blocks on it meanwhile, so neither it nor the kernel's
        work of moving its output competes for the machine, and the loop waits idle for the
        keys. Input written to the pane ends a pause at once (its echo is awaited)."""
        assert self._loop is not None
        self._watched_pause = watched  # (a frame catches only such a pane up: catch_up)
        self._set_reading(False)
        self._read_pause = self._loop.call_later(seconds, self._read_pause_over)

    def catch_up(self) -> bool:
        """Read now the output waiting while reading is paused (a watched pane between two of
        its viewer's frames): the frame about to be drawn shows it. True if there was some."""
        pause, process = self._read_pause, self._process
        if (pause is None or not self._watched_pause or self._reading or process is None
                or not ptys.readable_bytes(process.master_fd)):
            return False  # (a flood paced while someone types elsewhere stays paced)
        pause.cancel()
        self._read_pause_over()
        return True

    def _read_pause_over(self) -> None:
        """A pause's time is up: output waiting (a TUI's next frame, mostly) is read at once, as
        the reader would the moment it was watched again (which would cost two changes of the
        loop's watch list a read); else the PTY is watched again."""
        over, process = self._read_pause, self._process
        if (not self._reading and process is not None and not self._eof and not self._closed
                and len(self._backlog) < PANE_PENDING_MAX_BYTES and ptys.readable_bytes(process.master_fd)):
            self._on_readable()  # (the pause still set meanwhile: its emulation does not watch the PTY)
            if self._read_pause is not over:
                return  # paused again after this read
        self._end_read_pause()

    def _end_read_pause(self) -> None:
        if self._read_pause is not None:
            self._read_pause.cancel()  # (when input ends it early)
        self._read_pause = None
        if len(self._backlog) < PANE_PENDING_MAX_BYTES:
            self._set_reading(True)

    def _read_output(self, backlog_max: int, budget: int = PTY_READ_BUDGET_PER_WAKEUP_BYTES,
                     drain: bool = False) -> int:
        """Move what the PTY holds into the backlog (up to a read budget, and until the backlog
        holds `backlog_max`), then wait for an emulation turn; return how many bytes came. `drain`
        (the program has exited) reads on while the kernel still moves its last output, rather
        than stopping at what the PTY holds at once."""
        assert self._process is not None
        chunks: list[bytes] = []
        room = min(budget, backlog_max - len(self._backlog))
        total = 0
        while total < room:
            if chunks and not drain and not ptys.readable_bytes(self._process.master_fd):
                break  # the rest would be a wait in the kernel, not a read: the loop goes on
            try:
                chunk = os.read(self._process.master_fd, min(PTY_READ_CHUNK_BYTES, room - total))
            except BlockingIOError:
                break
            except OSError:  # EIO: every slave fd is closed
                self._eof = True
                break
            if not chunk:
                self._eof = True
                break
            chunks.append(chunk)
            total += len(chunk)
        if chunks:
            self._take_output(chunks[0] if len(chunks) == 1 else b"".join(chunks))
        if self._eof and self._loop is not None and not self._closed:
            self._loop.remove_writer(self._process.master_fd)  # no one is left to read input
        if self._eof or len(self._backlog) >= PANE_PENDING_MAX_BYTES:
            self._set_reading(False)
        return total

    def _take_output(self, data: bytes) -> None:
        """The program wrote `data`: record it, tell the taps, and queue it for the screen."""
        if self.recorder is not None:
            self.recorder.output(data)  # the time of the read, as the recording promises
        if self.transcript is not None:  # the running execution's (a call, not a tap per read)
            self.transcript.add(data)
        for tap in self.output_taps:
            tap(data)
        if self.emulator.failed:
            self._notice_emulator_failure()  # it may have failed in a read (deferred output)
        else:
            self._backlog.add(data)
            self._turns.wake(self)

    def _set_reading(self, on: bool) -> None:
        if self._process is None or self._loop is None or self._closed or on == self._reading:
            return
        if on and (self._eof or self._read_pause is not None):
            return  # (a pause's end reads again)
        self._reading = on
        if on:
            self._loop.add_reader(self._process.master_fd, self._on_readable)
        else:
            self._loop.remove_reader(self._process.master_fd)

    def emulate_until(self, deadline: float) -> bool:
        """Emulate waiting output until `deadline` (EmulationTurns calls this); True if some is left."""
        if self._closed:
            return False
        if self._backlog.feed_until(self.emulator.feed, deadline, self._turns.clock) and self.on_output:
            self.on_output()
        self._notice_emulator_failure()
        if len(self._backlog) <= PANE_PENDING_RESUME_BYTES:
            self._set_reading(True)
        if not self._backlog and self._exit_status is not None:
            self._announce_exit()
        return bool(self._backlog)

    def _notice_emulator_failure(self) -> None:
        """Once the emulator has failed, stop feeding it: drop what waits, log it once."""
        if self._failure_noticed or not self.emulator.failed:
            return
        self._failure_noticed = True
        log.error("pane %s: the %s failed; its output is no longer emulated (the screen stays as it was)",
                  self.id, type(self.emulator).__name__)
        self._backlog.clear()
        self._set_reading(True)  # keep draining the PTY, so the program never blocks on it

    def _on_process_exit(self) -> None:
        assert self._process is not None and self._loop is not None
        status = self._process.popen.poll()
        if status is None:
            return
        if self.on_reaped is not None:
            self.on_reaped(self._process.pid)
        self._loop.remove_reader(self._pidfd)
        os.close(self._pidfd)
        self._pidfd = None
        # The program is gone but its last output may still sit in the PTY: take it in first
        # (past the backlog cap: a PTY holds little) and announce the exit once it is emulated.
        self._exit_status = status
        self._read_output(PANE_PENDING_MAX_BYTES + PTY_READ_BUDGET_PER_WAKEUP_BYTES, drain=True)
        if not self._backlog:
            self._announce_exit()

    def _announce_exit(self) -> None:
        status, self._exit_status = self._exit_status, None
        if status is None or self.exited:
            return
        self.exited = True
        self.exit_code = status if status >= 0 else 128 - status
        self._on_exit(self)

    # ------------------------------------------------------------ input and size

    def send(self, data: bytes) -> None:
        """Queue input for the program, or refuse it (Conflict) if the program has left so much
        unread that this would take it past PANE_INPUT_PENDING_MAX_BYTES."""
        waiting = len(self._pending_input)
        if waiting + len(data) > PANE_INPUT_PENDING_MAX_BYTES:
            raise Conflict(f"pane {self.id} is not reading its input: {waiting} bytes already waiting",
                           pane=self.id, waiting_bytes=waiting)
        self.write(data)

    def typed_recently(self) -> bool:
        """Whether input came from outside (keys, send-keys, a paste) within PANE_TYPING_S: its
        answer is awaited by someone, so its output goes first (daemon/panes/emulation.py)."""
        return time.monotonic() - self.typed_at < PANE_TYPING_S

    def write(self, data: bytes) -> None:
        """Queue bytes for the program's input; never blocks the loop and never raises (attached
        clients' keys): beyond the cap they are dropped, logged once."""
        if not data:
            return
        self.typed_at = time.monotonic()
        self.last_input, self.last_input_at = data[-LAST_INPUT_KEPT_BYTES:], time.time()
        if self._read_pause is not None:
            self._end_read_pause()  # its answer is read as soon as it comes
        self._queue_input(data)
        self._turns.await_answer(self)  # its echo goes before the other panes' bulk
        if self.on_submit is not None and data.endswith((b"\r", b"\n")):
            self.on_submit()

    def _queue_input(self, data: bytes) -> None:
        if not data or self._process is None or self._closed or self.exited:
            return
        if len(self._pending_input) + len(data) > PANE_INPUT_PENDING_MAX_BYTES:
            if not self._dropping_input:
                self._dropping_input = True
                log.warning("pane %s is not reading its input: %d bytes waiting, dropping more",
                            self.id, len(self._pending_input))
            return
        if not self._pending_input:
            self._input_taken_at = time.monotonic()  # from now on, a stall is the program's doing
        self._pending_input += data
        self._flush_input()

    def _emulator_reply(self, data: bytes) -> None:
        """The emulator answers the program's queries (cursor position, device attributes)."""
        self._queue_input(data)

    async def input_room(self) -> None:
        """Return once the program has room for more input: no more than half the cap waits, or
        it has taken none for PANE_INPUT_STALL_S (it is not reading), or it is gone."""
        while not self._input_room.is_set() and not (self._closed or self.exited):
            stalled_for = time.monotonic() - self._input_taken_at
            if stalled_for >= PANE_INPUT_STALL_S:
                return
            try:
                await asyncio.wait_for(self._input_room.wait(), PANE_INPUT_STALL_S - stalled_for)
            except TimeoutError:
                pass

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
            self._input_taken_at = time.monotonic()
        if len(self._pending_input) * 2 > PANE_INPUT_PENDING_MAX_BYTES:
            self._input_room.clear()
        else:
            self._input_room.set()
        if self._pending_input:
            self._loop.add_writer(fd, self._flush_input)
        else:
            self._loop.remove_writer(fd)
            self._dropping_input = False

    def resize(self, columns: int, lines: int) -> None:
        if (columns, lines) == (self.columns, self.lines):
            return
        self.emulator.resize(columns, lines)
        self._notice_emulator_failure()
        if self.recorder is not None:
            self.recorder.resize(columns, lines)
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
        self._hang_up()
        if self.recorder is not None:
            self.recorder.close()
        self._closed = True

    def respawn(self, command: list[str], cwd: str, env: dict[str, str],
                launch_argv: list[str] | None = None) -> None:
        """Run a new program in this pane (respawn-pane): one still running is hung up first;
        the screen is reset as tmux resets it, the scrollback kept. Raises SpawnFailed."""
        loop = self._loop
        assert loop is not None and not self._closed
        self._hang_up()
        self.command, self.launch_argv, self.start_cwd, self.env = command, launch_argv, cwd, env
        self.exited, self.exit_code, self._exit_status, self._eof = False, None, None, False
        self._reading = False
        self._pending_input.clear()
        self._input_room.set()
        self._process = None
        # Leave the alternate screen, soft reset (modes, pen, margins), clear and home.
        if not self.emulator.failed:
            self.emulator.feed(b"\x1b[?1049l\x1b[!p\x1b[2J\x1b[H")
        try:
            self.start(loop)
        except BaseException:
            self.exited, self.exit_code = True, None  # dead, as it was (or now is)
            raise

    def _hang_up(self) -> None:
        """End the program (unless it has exited) and let go of its PTY and exit watch."""
        process, loop = self._process, self._loop
        self._turns.forget(self)
        self._backlog.clear()
        if self._read_pause is not None:
            self._read_pause.cancel()
            self._read_pause = None
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
            loop.call_later(PANE_HANGUP_GRACE_S, _reap_or_kill, process, self.on_reaped)


def _reap_or_kill(process: ptys.PtyProcess, on_reaped: Callable[[int], None] | None) -> None:
    """A hung-up program that ignores SIGHUP gets SIGKILL; either way it is reaped."""
    if process.popen.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            process.popen.wait(timeout=1)
        except Exception:  # noqa: BLE001 - a zombie left to init is no error worth raising
            return
    if on_reaped is not None:
        on_reaped(process.pid)
