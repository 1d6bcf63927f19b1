"""Keystroke echo through an attached client while another window of the session floods: muxd vs tmux.

    .venv/bin/python benchmarks/bench_echo_under_flood.py [--samples 200] [--flood-mb 4] [--flood "bold rows"]
        [--backend ghostty|pyte|both]

Issue 29's goal 1 (typing first): echo p99 under a neighbour's flood at most 3x tmux's.
Each server (private socket, started fresh, stopped in a `finally`) gets a session of 100x29
whose first window runs `cat`; the attach client (`muxd attach` / `tmux attach`) runs in a
pseudo-terminal of our own (100x30: the pane plus the status line), which is the outer
terminal. One character is written into that terminal and timed until the client writes it back
out (the pane's tty echo, drawn by the multiplexer): the whole keystroke -> pane -> emulator ->
client -> screen path, no polling. First with nothing else running, then while a second window
of the same session (not shown) `cat`s a flood file in an endless loop. Prints p50/p99 for both
and the muxd/tmux ratios, with each server's CPU over the sampling to show the flood kept it busy.
The figures move with the machine's load: run it on a quiet machine, and say the load with them.
`--backend` picks muxd's emulator backend(s) (MUXD_EMULATOR): each muxd daemon is compared with
the same run's tmux.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import select
import shutil
import struct
import sys
import tempfile
import termios
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from _peers import CLEANUP, MuxdPeer, Peer, TmuxPeer, cpu_seconds, percentile, run_benchmark, running
from _report import machine_note, print_table, ratio

from muxd.emulator.backend import BACKENDS, backend_name
from muxd.testing.floods import FLOODS, looping_cat, write_flood
from muxd.testing.wait import wait_until

DEFAULT_SAMPLES = 200
DEFAULT_FLOOD_MB = 4.0
COLUMNS, LINES = 100, 29       # the pane; the client's terminal has one more line for the status line
SESSION = "bench"
READY = b"[bench]"             # both status lines show the session's name once attached
ATTACH_TIMEOUT_S = 20.0
ECHO_TIMEOUT_S = 10.0          # one keystroke's echo; beyond this the run fails rather than hangs
FLOOD_START_TIMEOUT_S = 60.0
QUIET_S = 0.05                 # no output this long after an echo: the client's frame is complete
CLEAR_EVERY = 50               # Ctrl-U the typed line this often, so it never wraps or fills the tty
KILL_LINE = b"\x15"
KEYS = [b"x", b"y", b"z"]
NO_FLOOD = "none"


@dataclass
class Echo:
    peer: str
    flood: str
    latencies_s: list[float]
    server_cpu_pct: float


def _read_ready(fd: int, timeout: float) -> bytes:
    if not select.select([fd], [], [], timeout)[0]:
        return b""
    try:
        return os.read(fd, 65536)
    except OSError:  # EAGAIN, or EIO once the client is gone
        return b""


def _drain(fd: int) -> None:
    while _read_ready(fd, QUIET_S):
        pass


def echo_times(argv: list[str], env: dict[str, str], samples: int, server_pid: int) -> tuple[list[float], float]:
    """Seconds from writing a letter into the attach client's terminal until the client writes
    it back, `samples` times; and the server's CPU % over the sampling."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: the attach client, on the pty as its terminal
        os.execvpe(argv[0], argv, env)
    try:
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", LINES + 1, COLUMNS, 0, 0))
        os.set_blocking(fd, False)
        seen = [b""]

        def attached() -> bool:
            seen[0] += _read_ready(fd, 0.05)
            return READY in seen[0]

        wait_until(attached, timeout=ATTACH_TIMEOUT_S, message=f"{argv[0]} attached")
        _drain(fd)
        times: list[float] = []
        cpu_before, wall_before = cpu_seconds(server_pid), time.monotonic()
        for n in range(samples):
            if n and n % CLEAR_EVERY == 0:
                os.write(fd, KILL_LINE)
                _drain(fd)
            # Another letter on each new line: had the line's erasing not been drawn yet when
            # the key goes (QUIET_S is short on a busy machine), the frame that draws both would
            # leave the same letter in the first cell alone, and hold no echo to see.
            key = KEYS[n // CLEAR_EVERY % len(KEYS)]
            started = time.perf_counter()
            os.write(fd, key)
            got = b""
            while key not in got:
                if time.perf_counter() - started > ECHO_TIMEOUT_S:
                    raise RuntimeError(f"{argv[0]}: no echo in {ECHO_TIMEOUT_S} s")
                got += _read_ready(fd, ECHO_TIMEOUT_S)
            times.append(time.perf_counter() - started)
            _drain(fd)  # the cursor move and status line after the echo
        cpu = 100 * (cpu_seconds(server_pid) - cpu_before) / (time.monotonic() - wall_before)
        return times, cpu
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        os.close(fd)


class Session:
    """The peer's benchmark session: its attach command, and flooding windows added to it."""

    def __init__(self, name: str, peer: Peer) -> None:
        self.name, self.peer = name, peer
        peer.new_pane(SESSION, ["cat"], COLUMNS, LINES)

    def attach_argv(self) -> tuple[list[str], dict[str, str]]:
        if isinstance(self.peer, TmuxPeer):
            return ["tmux", "-S", str(self.peer.socket), "attach", "-t", SESSION], self.peer.env
        return ([sys.executable, "-m", "muxd", "-L", self.peer.server.name, "attach", "-t", SESSION],
                self.peer.server.env)

    def add_flood(self, path: Path) -> tuple[int, Callable[[], str]]:
        """A window (not made current) looping over `path`: its pane's pid and a reader of its screen."""
        argv = looping_cat(path)
        if isinstance(self.peer, TmuxPeer):
            peer = self.peer
            pane, pid = peer.tmux("new-window", "-d", "-P", "-F", "#{pane_id} #{pane_pid}", "-t", SESSION,
                                  "-n", "flood", *argv).split()
            return int(pid), lambda: peer.tmux("capture-pane", "-p", "-t", pane)
        server = self.peer.server
        pane = server.cli("new-window", "-d", "-P", "-F", "#{pane_id}", "-t", SESSION, "-n", "flood",
                          "--", *argv, check=True).stdout.strip()
        pid = server.cli("display-message", "-p", "-t", pane, "#{pane_pid}", check=True).stdout.strip()
        return int(pid), lambda: server.cli("capture-pane", "-p", "-t", pane, check=True).stdout


def measure(name: str, make: Callable[[], Peer], flood: str, path: Path, samples: int) -> list[Echo]:
    results: list[Echo] = []
    with running(make) as peer:
        session = Session(name, peer)
        assert peer.pid is not None
        argv, env = session.attach_argv()
        env = {**env, "TERM": "xterm-256color"}
        results.append(Echo(name, NO_FLOOD, *echo_times(argv, env, samples, peer.pid)))
        pid, screen = session.add_flood(path)
        CLEANUP.pane_pids.add(pid)
        wait_until(lambda: screen().strip(), timeout=FLOOD_START_TIMEOUT_S, message=f"{flood} on the flood pane")
        results.append(Echo(name, flood, *echo_times(argv, env, samples, peer.pid)))
    for echo in results:
        print(f"  {name:<12} {echo.flood:<10} p50 {percentile(echo.latencies_s, 0.5) * 1000:7.2f} ms  "
              f"p99 {percentile(echo.latencies_s, 0.99) * 1000:7.2f} ms", flush=True)
    return results


def report(results: list[Echo], samples: int) -> None:
    tmux = {r.flood: r for r in results if r.peer == "tmux"}
    muxd_peers = list(dict.fromkeys(r.peer for r in results if r.peer != "tmux"))
    print()
    print(machine_note())
    print(f"keystroke -> echo at the attach client's terminal, {samples} samples each; "
          "flood: another window of the same session, not shown")
    rows = []
    for mine in (r for r in results if r.peer != "tmux"):
        theirs = tmux[mine.flood]
        label = [mine.peer] if len(muxd_peers) > 1 else []
        m50, m99 = (percentile(mine.latencies_s, q) * 1000 for q in (0.5, 0.99))
        t50, t99 = (percentile(theirs.latencies_s, q) * 1000 for q in (0.5, 0.99))
        rows.append([*label, mine.flood, f"{m50:.2f}", f"{m99:.2f}", f"{t50:.2f}", f"{t99:.2f}", ratio(m50, t50),
                     ratio(m99, t99), f"{mine.server_cpu_pct:.0f}", f"{theirs.server_cpu_pct:.0f}"])
    print_table([*(["muxd backend"] if len(muxd_peers) > 1 else []), "flood", "muxd p50 ms", "muxd p99 ms", "tmux p50 ms", "tmux p99 ms", "p50 muxd/tmux",
                 "p99 muxd/tmux", "muxd CPU %", "tmux CPU %"], rows)
    print("goal (issue 29): p99 muxd/tmux <= 3.00x under the flood")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=DEFAULT_SAMPLES)
    parser.add_argument("--flood-mb", type=float, default=DEFAULT_FLOOD_MB, help="size of the flood file")
    parser.add_argument("--flood", choices=sorted(FLOODS), default="bold rows")
    parser.add_argument("--backend", choices=[*BACKENDS, "both"], default=None,
                        help="muxd's emulator backend(s) (default: $MUXD_EMULATOR or the code's default)")
    args = parser.parse_args(argv)
    if shutil.which("tmux") is None:
        print("tmux is not installed", file=sys.stderr)
        return 2
    with ExitStack() as stack:
        workdir = Path(tempfile.mkdtemp(prefix="muxd-bench-", dir="/tmp"))
        stack.callback(shutil.rmtree, workdir, ignore_errors=True)
        stack.callback(CLEANUP.kill_panes)
        path = write_flood(args.flood, workdir, int(args.flood_mb * 2**20))
        results: list[Echo] = []
        backends = list(BACKENDS) if args.backend == "both" else [backend_name(args.backend)]
        peers: list[tuple[str, Callable[[], Peer]]] = [("tmux", lambda: TmuxPeer(workdir, None))]
        peers += [(f"muxd-{b}" if len(backends) > 1 else "muxd", lambda b=b: MuxdPeer(b))  # type: ignore[misc]
                  for b in backends]
        for name, make in peers:
            results += measure(name, make, args.flood, path, args.samples)
        report(results, args.samples)
    return 0


if __name__ == "__main__":
    run_benchmark(main)
