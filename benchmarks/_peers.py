"""The peers the daemon benchmark compares: tmux and muxd servers, plus /proc readings.

Split out of bench_daemon.py so each file has one job; see that file for how they are used.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

from _corpora import COLUMNS, LINES

from muxd.cli.pane_commands import HISTORY_START
from muxd.client.connection import Client
from muxd.config import DEFAULT_SCROLLBACK_BYTES
from muxd.daemon.main import ENV_SCROLLBACK as SCROLLBACK_ENV
from muxd.emulator.backend import BACKEND_ENV, backend_name
from muxd.protocol.messages import CapturePane
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import WaitTimeout, wait_until

SERVER_STOP_TIMEOUT_S = 10.0
SETTLE_QUIET_S = 0.3              # the final screen must stay unchanged this long
SCREEN_POLL_S = 0.02
PANE_HOLD_S = 900                 # panes sleep this long after their output; the harness kills them sooner
HOLD = f"; exec sleep {PANE_HOLD_S}"
GATE_OPEN_TIMEOUT_S = 10.0
PROC_POLL_S = 0.005
TMUX_CLI_TIMEOUT_S = 10.0
CAPTURE_TIMEOUT_S = 30.0
TMUX_DEFAULT_HISTORY_LINES = 2000  # tmux's history-limit when not set
# What muxd.emulator.backend logs when libghostty-vt cannot load and the pane gets pyte instead.
BACKEND_FALLBACK_LOGGED = "cannot load"

# ------------------------------------------------------------------ running a benchmark


def run_benchmark(main: Callable[[], int]) -> NoReturn:
    """Exit with `main()`'s status; a `kill` (SIGTERM) cleans up as Ctrl-C does, through the
    `finally`s and ExitStacks that stop servers and remove temp files."""
    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)
    try:
        raise SystemExit(main())
    except KeyboardInterrupt:
        print("interrupted; servers stopped and temp files removed", file=sys.stderr)
        raise SystemExit(130) from None


def percentile(values: list[float], fraction: float) -> float:
    """The value below which `fraction` (0..1) of `values` lie (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


# ------------------------------------------------------------------ /proc


def cpu_seconds(pid: int) -> float:
    """utime + stime of the whole process (all threads, not its children)."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def thread_clocks(pid: int) -> dict[int, tuple[str, float]]:
    """Each live thread of `pid`: (its group, its CPU seconds to the nanosecond: schedstat, where
    the process's utime + stime count 10 ms ticks, ±0.02 s on any difference). The group is
    "loop" (the main thread, which runs a daemon's event loop), else the thread's name without
    its number (muxd-db_0 -> muxd-db)."""
    out: dict[int, tuple[str, float]] = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as fh:
                name = "loop" if int(tid) == pid else fh.read().strip().rstrip("0123456789").rstrip("_-")
            with open(f"/proc/{pid}/task/{tid}/schedstat") as fh:
                ns = int(fh.read().split()[0])
        except OSError:
            continue  # ended meanwhile
        out[int(tid)] = (name, ns / 1e9)
    return out


def cpu_seconds_exact(pid: int) -> float:
    """The CPU seconds of the process's live threads (thread_clocks): for shares of a few percent
    over seconds, where cpu_seconds' 10 ms ticks are a tenth of the figure."""
    return sum(seconds for _, seconds in thread_clocks(pid).values())


def comm(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm") as fh:
            return fh.read().strip()
    except OSError:
        return ""


def children(pid: int) -> set[int]:
    found: set[int] = set()
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as fh:
                found.update(int(p) for p in fh.read().split())
    except OSError:
        pass
    return found


def screen_lines(text: str) -> list[str]:
    """A capture as compared: each line right-stripped, trailing empty lines dropped."""
    lines = [line.rstrip() for line in text.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines


class Cleanup:
    """The panes' process groups, killed however a run ends (their server may have died first)."""

    def __init__(self) -> None:
        self.pane_pids: set[int] = set()

    def kill_panes(self) -> None:
        for pid in self.pane_pids:
            if comm(pid) in ("sh", "cat", "sleep"):
                try:
                    os.killpg(pid, signal.SIGKILL)
                except OSError:
                    pass
        self.pane_pids.clear()


CLEANUP = Cleanup()


def stop_pid(pid: int | None) -> None:
    if pid is None or not comm(pid):
        return
    try:
        os.kill(pid, signal.SIGTERM)
        wait_until(lambda: not comm(pid) or _zombie(pid), timeout=SERVER_STOP_TIMEOUT_S, message=f"pid {pid} exit")
    except WaitTimeout:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


# ------------------------------------------------------------------ the start gate


class Gate:
    """A FIFO the pane's shell reads before `cat`: `open()` once it waits, `release()` starts the run."""

    def __init__(self, path: Path) -> None:
        self.path = path
        os.mkfifo(path)
        self._fd: int | None = None

    def open(self) -> None:
        def try_open() -> bool:
            try:
                self._fd = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)
                return True
            except OSError:  # ENXIO: the shell has not opened its end yet
                return False
        wait_until(try_open, timeout=GATE_OPEN_TIMEOUT_S, interval=PROC_POLL_S,
                   message="pane waiting on the start gate")

    def release(self) -> None:
        assert self._fd is not None
        os.write(self._fd, b"go\n")
        os.close(self._fd)
        self._fd = None
        self.path.unlink()


# ------------------------------------------------------------------ multiplexer peers


class TmuxPeer:
    """A private tmux server (its own socket path), one detached session per pane."""

    def __init__(self, workdir: Path, history_lines: int | None) -> None:
        self.socket = workdir / f"tmux-{time.monotonic_ns()}.sock"
        self.config = "/dev/null"
        if history_lines is not None:
            self.config = str(workdir / f"tmux-{history_lines}.conf")
            Path(self.config).write_text(f"set -g history-limit {history_lines}\n")
        self.env = {k: v for k, v in os.environ.items() if k != "TMUX"} | {"SHELL": "/bin/sh"}
        self.pid: int | None = None

    def tmux(self, *args: str) -> str:
        result = subprocess.run(["tmux", "-S", str(self.socket), "-f", self.config, *args], env=self.env,
                                capture_output=True, text=True, timeout=TMUX_CLI_TIMEOUT_S)
        if result.returncode != 0:
            raise RuntimeError(f"tmux {args[0]} failed: {result.stderr.strip()}")
        return result.stdout

    def new_pane(self, session: str, argv: list[str], columns: int = COLUMNS, lines: int = LINES) -> int:
        # Several arguments: tmux 3.x execs them directly, no shell in between (as muxd does).
        self.tmux("new-session", "-d", "-s", session, "-x", str(columns), "-y", str(lines), *argv)
        pane_pid, server_pid = self.tmux("display", "-p", "-t", session, "#{pane_pid} #{pid}").split()
        self.pid = int(server_pid)
        CLEANUP.pane_pids.add(int(pane_pid))
        return int(pane_pid)

    def pane_facts(self, session: str) -> tuple[int, int, str]:
        """(width, height, scrollback setting) of the session's pane."""
        width, height, limit = self.tmux("display", "-p", "-t", session,
                                         "#{pane_width} #{pane_height} #{history_limit}").split()
        return int(width), int(height), f"history-limit {limit}"

    def capture(self, session: str, history_lines: int = 0) -> str:
        extra = ["-S", "-" if history_lines < 0 else f"-{history_lines}"] if history_lines else []
        return self.tmux("capture-pane", "-p", "-t", session, *extra)

    def stop(self) -> None:
        if self.socket.exists():
            try:
                self.tmux("kill-server")
            except (RuntimeError, subprocess.TimeoutExpired):
                pass
        stop_pid(self.pid)
        self.socket.unlink(missing_ok=True)


class MuxdPeer:
    """A private muxd daemon on emulator `backend` (MUXD_EMULATOR; always set, so the daemon's default
    does not decide); panes made with the CLI, screens read over one client connection. `scrollback_bytes`
    is each pane's budget (MUXD_SCROLLBACK_BYTES), the daemon's default when None."""

    def __init__(self, backend: str | None = None, scrollback_bytes: int | None = None) -> None:
        backend = backend_name(backend)  # None: $MUXD_EMULATOR or the code's default, set explicitly all the same
        env = {BACKEND_ENV: backend}
        if scrollback_bytes is not None:
            env[SCROLLBACK_ENV] = str(scrollback_bytes)
        self.backend = backend
        self.scrollback_bytes = scrollback_bytes or DEFAULT_SCROLLBACK_BYTES
        self.server = MuxdTestServer(env=env)
        self.pid: int | None = None
        self._loop = asyncio.new_event_loop()
        self._client: Client | None = None

    def start(self) -> MuxdPeer:
        self.server.start()
        self.pid = self.server.pid
        self._client = self._loop.run_until_complete(self.server.client(client_name="bench"))
        return self

    def new_pane(self, session: str, argv: list[str], columns: int = COLUMNS, lines: int = LINES) -> int:
        self.server.cli("new-session", "-d", "-s", session, "-x", str(columns), "-y", str(lines),
                        "--", *argv, check=True)
        pane_pid = int(self._pane(session)["pid"])
        CLEANUP.pane_pids.add(pane_pid)
        return pane_pid

    def _pane(self, session: str) -> dict[str, Any]:
        panes = json.loads(self.server.cli("list-panes", "--json", "-t", session, check=True).stdout)
        return dict(panes[0])

    def pane_facts(self, session: str) -> tuple[int, int, str]:
        """(width, height, scrollback setting) of the session's pane."""
        pane = self._pane(session)
        backend = f"{self.backend} UNAVAILABLE, ran pyte" if self.fell_back() else self.backend
        return int(pane["width"]), int(pane["height"]), f"{backend}, scrollback {self.scrollback_bytes / 2**20:g} MiB"

    def fell_back(self) -> bool:
        """Whether the daemon logged that the backend asked for could not load (its panes run pyte)."""
        try:
            return BACKEND_FALLBACK_LOGGED in self.server.log_path.read_text(errors="replace")
        except OSError:
            return False

    def capture(self, session: str, history_lines: int = 0) -> str:
        assert self._client is not None
        start = None if not history_lines else HISTORY_START if history_lines < 0 else -history_lines
        call = self._client.call(CapturePane, target=session, start=start)
        reply = self._loop.run_until_complete(asyncio.wait_for(call, CAPTURE_TIMEOUT_S))
        return str(reply.text)

    def stop(self) -> None:
        try:
            if self._client is not None:
                self._loop.run_until_complete(self._client.close())
        finally:
            self._loop.close()
            if self.server.pid is not None:
                try:
                    self.server.cli("kill-server", timeout=SERVER_STOP_TIMEOUT_S)
                except subprocess.TimeoutExpired:
                    pass
            self.server.stop()


Peer = TmuxPeer | MuxdPeer


@contextmanager
def running(make: Callable[[], Peer]) -> Iterator[Peer]:
    peer = make()
    try:
        if isinstance(peer, MuxdPeer):
            peer.start()
        yield peer
    finally:
        peer.stop()
        CLEANUP.kill_panes()


# ------------------------------------------------------------------ reading a pane


def checked_facts(peer: Peer, session: str, columns: int = COLUMNS, lines: int = LINES) -> str:
    """The pane's size and scrollback setting, as a note; a pane of the wrong size stops the benchmark."""
    width, height, scrollback = peer.pane_facts(session)
    if (width, height) != (columns, lines):
        raise RuntimeError(f"{type(peer).__name__} pane is {width}x{height}, not {columns}x{lines}")
    return f"{width}x{height} {scrollback}"


def settle(capture: Callable[[], str], marker: str, deadline: float) -> tuple[list[str], float]:
    """The final screen and when it was first seen: it shows `marker` and stays the same SETTLE_QUIET_S."""
    candidate: list[str] | None = None
    seen_at = 0.0
    while True:
        screen = screen_lines(capture())
        now = time.monotonic()
        if marker not in screen:
            candidate = None
        elif screen != candidate:
            candidate, seen_at = screen, now
        elif now - seen_at >= SETTLE_QUIET_S:
            return candidate, seen_at
        if now >= deadline:
            raise WaitTimeout(f"screen showing {marker!r} did not settle")
        time.sleep(SCREEN_POLL_S)
