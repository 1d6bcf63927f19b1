"""Attach benchmark: keystroke-to-echo latency and CPU of a 60 Hz TUI, muxd against tmux.

Both run inside the same kind of outer terminal (a pane of a private tmux server, 100x30):
(a) `muxd attach` to a muxd session, (b) `tmux attach` to an inner tmux server, each with the
same program in the pane. Latency: a character sent to the outer pane with `send-keys`, timed
until `capture-pane` of the outer pane shows it (median of N; each capture-pane costs ~3 ms, so
this figure moves in steps of that). Also, without the outer tmux: the attach client in a
pseudo-terminal of our own, a character written to it until its echo comes out of it (the
client + server path alone). CPU: server + client CPU time while the pane runs a full-screen
redraw at 60 Hz for a few seconds, measured after it has run for --warmup-seconds (caches kept
per style, per row or per client fill up in the first frames; a client stays attached for
longer than that).

    .venv/bin/python benchmarks/bench_attach.py [--samples 100] [--cpu-seconds 5] [--warmup-seconds 2]
                                                [--backend ghostty|pyte|both]

`--backend` picks muxd's emulator backend(s) (MUXD_EMULATOR; default: $MUXD_EMULATOR or the
code's default); each is compared with the same run's tmux. The load average before and after
is printed too: on a shared machine the figures move with it.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import select
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import textwrap
import time
import uuid
from pathlib import Path

from _peers import cpu_seconds_exact

from muxd.emulator.backend import BACKEND_ENV, BACKENDS, backend_name
from muxd.testing.outer_terminal import OuterTerminal, muxd_command
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until

WARMUP_S = 2.0  # the TUI's first frames fill caches (per style, per row, per client): not measured

TUI_60HZ = textwrap.dedent(r"""
    import os, shutil, sys, time
    sys.stdout.write("\x1b[?1049h\x1b[?25l")
    frame = 0
    while True:
        cols, rows = shutil.get_terminal_size()
        start = time.monotonic()
        out = ["\x1b[H"]
        for y in range(rows):
            colour = 16 + (frame + y) % 216
            text = f"row {y:3d} frame {frame:6d} " + "#" * ((frame + y) % max(1, cols - 30))
            out.append(f"\x1b[38;5;{colour}m" + text[:cols].ljust(cols) + ("\r\n" if y < rows - 1 else ""))
        sys.stdout.write("".join(out))
        sys.stdout.flush()
        frame += 1
        time.sleep(max(0.0, 1 / 60 - (time.monotonic() - start)))
""")


def load_average() -> str:
    """The 1, 5 and 15 minute load averages."""
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def echo_latency(term: OuterTerminal, samples: int) -> list[float]:
    """Seconds from send-keys of one character until the outer pane shows it."""
    times = []
    for i in range(samples):
        if i and i % 60 == 0:
            term.keys("C-l")  # keep the line short (cat ignores it; the tty erases nothing)
        before = term.screen().count("x")
        start = time.perf_counter()
        term.type("x")
        wait_until(lambda: term.screen().count("x") > before, timeout=5, interval=0.0,
                   message="echo")
        times.append(time.perf_counter() - start)
    return times


def pty_echo_latency(argv: list[str], env: dict[str, str], ready: bytes, samples: int) -> list[float]:
    """Seconds from writing one character into a pseudo-terminal running the attach client
    `argv` (attached to `cat`) until the character comes back out of it."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: the attach client, on the pty as its terminal
        os.execvpe(argv[0], argv, env)
    try:
        # The outer terminal's size (a pty starts at 0x0), so the session keeps its size.
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
        os.set_blocking(fd, False)
        seen = [b""]

        def attached() -> bool:
            seen[0] += _read_ready(fd, 0.05)
            return ready in seen[0]

        wait_until(attached, timeout=10, message=f"{argv[0]} attached")
        while _read_ready(fd, 0.2):  # let the first frames settle
            pass
        times = []
        for _ in range(samples):
            start = time.perf_counter()
            os.write(fd, b"x")
            got = b""
            while b"x" not in got:
                got += _read_ready(fd, 2.0)
            times.append(time.perf_counter() - start)
            while _read_ready(fd, 0.01):  # cursor moves after the echo
                pass
        return times
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        os.close(fd)


def _read_ready(fd: int, timeout: float) -> bytes:
    if not select.select([fd], [], [], timeout)[0]:
        return b""
    try:
        return os.read(fd, 65536)
    except (BlockingIOError, OSError):
        return b""


def cpu_share(pids: list[int], seconds: float, warmup_s: float = 0.0) -> list[float]:
    """Each process's CPU time over `seconds` of wall time, as a share of one core, after
    `warmup_s` of running unmeasured."""
    time.sleep(warmup_s)  # letting it run, not synchronising
    before = [cpu_seconds_exact(p) for p in pids]
    start = time.monotonic()
    time.sleep(seconds)  # measuring over a fixed interval, not synchronising
    elapsed = time.monotonic() - start
    return [(cpu_seconds_exact(p) - b) / elapsed for p, b in zip(pids, before)]


def run_muxd(samples: int, cpu_s: float, warmup_s: float, script: Path,
             backend: str) -> tuple[list[float], list[float], list[float]]:
    server = MuxdTestServer(env={BACKEND_ENV: backend}).start()
    term = None
    try:
        server.cli("new-session", "-d", "-s", "bench", "--", "cat", check=True)
        server.cli("new-window", "-t", "bench", "-n", "tui", "--", sys.executable, str(script), check=True)
        term = OuterTerminal(server.env, command=muxd_command(server.name, "attach", "-t", "bench"))
        term.wait_for("[bench]")
        term.keys("C-b", "0")
        term.wait_for("0:cat*")
        latency = echo_latency(term, samples)
        direct = pty_echo_latency([sys.executable, "-m", "muxd", "-L", server.name, "attach", "-t", "bench"],
                                  {**server.env, "TERM": "xterm-256color"}, b"[bench]", samples)
        term.keys("C-b", "1")
        term.wait_for("frame")
        pids = [server.pid, term.pane_pid()]
        return latency, direct, cpu_share(pids, cpu_s, warmup_s)
    finally:
        if term is not None:
            term.close()
        server.stop()


def run_tmux(samples: int, cpu_s: float, warmup_s: float, script: Path) -> tuple[list[float], list[float], list[float]]:
    inner = f"muxd-bench-inner-{uuid.uuid4().hex[:8]}"
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}

    def tmux(*args: str) -> str:
        return subprocess.run(["tmux", "-L", inner, *args], env=env, capture_output=True, text=True,
                              check=True).stdout

    tmux("-f", "/dev/null", "new-session", "-d", "-s", "bench", "-x", "100", "-y", "29", "cat")
    tmux("new-window", "-t", "bench", "-n", "tui", f"{sys.executable} {script}")
    tmux("set-option", "-g", "escape-time", "0")
    tmux("select-window", "-t", "bench:0")
    term = None
    try:
        term = OuterTerminal(env, command=f"tmux -L {inner} attach -t bench")
        term.wait_for("[bench]")
        latency = echo_latency(term, samples)
        direct = pty_echo_latency(["tmux", "-L", inner, "attach", "-t", "bench"],
                                  {**env, "TERM": "xterm-256color"}, b"[bench]", samples)
        tmux("select-window", "-t", "bench:1")
        term.wait_for("frame")
        server_pid = int(tmux("display-message", "-p", "#{pid}").strip())
        return latency, direct, cpu_share([server_pid, term.pane_pid()], cpu_s, warmup_s)
    finally:
        if term is not None:
            term.close()
        subprocess.run(["tmux", "-L", inner, "kill-server"], env=env, capture_output=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=100)
    parser.add_argument("--cpu-seconds", type=float, default=5.0)
    parser.add_argument("--warmup-seconds", type=float, default=WARMUP_S,
                        help="the TUI runs this long before its CPU is measured")
    parser.add_argument("--backend", choices=[*BACKENDS, "both"], default=None,
                        help="muxd's emulator backend(s) (default: $MUXD_EMULATOR or the code's default)")
    args = parser.parse_args()
    backends = list(BACKENDS) if args.backend == "both" else [backend_name(args.backend)]
    load_before = load_average()
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "tui60.py"
        script.write_text(TUI_60HZ)
        muxd_runs = {backend: run_muxd(args.samples, args.cpu_seconds, args.warmup_seconds, script, backend)
                     for backend in backends}
        tmux_lat, tmux_pty, tmux_cpu = run_tmux(args.samples, args.cpu_seconds, args.warmup_seconds, script)
    print(f"load average {load_before} before, {load_average()} after; CPU measured for {args.cpu_seconds:g} s "
          f"after {args.warmup_seconds:g} s of warm-up")
    for backend, (muxd_lat, muxd_pty, muxd_cpu) in muxd_runs.items():
        report(f"muxd ({backend})", muxd_lat, muxd_pty, muxd_cpu, tmux_lat, tmux_pty, tmux_cpu)


def report(name: str, muxd_lat: list[float], muxd_pty: list[float], muxd_cpu: list[float],
           tmux_lat: list[float], tmux_pty: list[float], tmux_cpu: list[float]) -> None:
    print(name)
    m, t = statistics.median(muxd_lat) * 1000, statistics.median(tmux_lat) * 1000
    print(f"keystroke-to-echo median  muxd {m:6.2f} ms   tmux {t:6.2f} ms   muxd/tmux {m / t:5.2f}")
    print(f"keystroke-to-echo p90     muxd {statistics.quantiles(muxd_lat, n=10)[-1] * 1000:6.2f} ms   "
          f"tmux {statistics.quantiles(tmux_lat, n=10)[-1] * 1000:6.2f} ms")
    m, t = statistics.median(muxd_pty) * 1000, statistics.median(tmux_pty) * 1000
    print(f"echo via client in a pty  muxd {m:6.2f} ms   tmux {t:6.2f} ms   (no outer tmux, no polling)")
    muxd_total, tmux_total = sum(muxd_cpu), sum(tmux_cpu)
    print(f"60 Hz full-screen TUI CPU muxd {muxd_total * 100:5.1f}% of a core (daemon "
          f"{muxd_cpu[0] * 100:.1f}% + client {muxd_cpu[1] * 100:.1f}%)   tmux {tmux_total * 100:5.1f}% "
          f"(server {tmux_cpu[0] * 100:.1f}% + client {tmux_cpu[1] * 100:.1f}%)   "
          f"muxd/tmux {muxd_total / max(tmux_total, 1e-9):5.2f}")


if __name__ == "__main__":
    main()
