"""What a tool that drives tmux pays per command when its `tmux` is muxd's shim: the command
lines Claude Code's agent teams and libtmux send, run through muxd's `tmux` launcher against a
muxd daemon and through real tmux against a private tmux server, in the same run.

    .venv/bin/python benchmarks/bench_tmux_shim.py [--runs 30]

Each command line runs `--runs` times on each side, alternating (both see the same load);
medians count. The ratio is tmux/muxd: 1.0 would mean the shim costs no more than tmux. The CPU
each client process used (user + system, from rusage; not the server's) is shown too: on a
shared machine wall times follow the load, CPU times much less so. A tmux client is a small C
program; the shim starts a Python interpreter per call, so most of the gap
is interpreter start-up (bench_cli_start.py measures that alone).

Beside the launcher (`python -S`, cli/tmux_fast_path.py), in the same run:
- the full CLI's `run_tmux` as the launcher ran it before issue 29 (site, argparse, the CLI);
- the floor of any Python launcher: `python -S -c pass` and `python -I -c pass`, no work at all;
- a compiled launcher (tmux_launcher.c, built now with the system `cc`; skipped without one)
  sending the very requests the fast path sends for that line, recorded here, in one write as
  it does, and printing the last reply: what a small C launcher would cost if it did the fast
  path's work (each line here is one request after the Hello: the daemon expands
  display-message's and list-panes' formats, expand-format).
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import uuid

from _peers import run_benchmark
from _timing import run_ms

import muxd
from muxd.cli import tmux_fast_path
from muxd.client.blocking import BlockingClient
from muxd.daemon.tmux.shim import launcher_path
from muxd.protocol.framing import HEADER_BYTES
from muxd.protocol.msgpack_lite import unpack
from muxd.testing.server import MuxdTestServer

SESSION = "bench"


def command_lines(pane: str) -> list[list[str]]:
    """What a teammate spawner sends, per call (pane: the pane the lines target)."""
    return [
        ["display-message", "-p", "-t", pane, "#{session_name}:#{window_id}.#{pane_id}"],
        ["list-panes", "-t", SESSION, "-F", "#{pane_id} #{pane_width}x#{pane_height}"],
        ["send-keys", "-t", pane, "-l", ""],
        ["capture-pane", "-p", "-t", pane],
        ["has-session", "-t", SESSION],
    ]


# The full CLI, as the launcher ran it before the fast path (`python -P -m muxd tmux`, less runpy).
FULL_CLI = ("import argparse, sys; from muxd.cli.tmux_commands import run_tmux; sys.exit(run_tmux(sys.argv[1:], "
            "argparse.Namespace(server_name=None, cli_token=None, cli_token_file=None)))")


def compiled_launcher(directory: str) -> str | None:
    """tmux_launcher.c built in `directory` with the system C compiler; None without one."""
    compiler = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if compiler is None:
        return None
    built = os.path.join(directory, "tmux_launcher")
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tmux_launcher.c")
    subprocess.run([compiler, "-O2", "-o", built, source], check=True)
    return built


def recorded_requests(words: list[str], env: dict[str, str]) -> list[str]:
    """The request bodies (hex) the fast path sends for the tmux line `words`, Hello first (in
    one write for each line timed here)."""
    sent: list[bytes] = []
    flush = BlockingClient._flush

    def recording(client: BlockingClient) -> None:
        sent.extend(client._outgoing)
        flush(client)

    BlockingClient._flush = recording  # type: ignore[method-assign]
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        with open(os.devnull, "w") as devnull, contextlib.redirect_stdout(devnull):
            assert tmux_fast_path.answer(words) == 0, words
    finally:
        BlockingClient._flush = flush  # type: ignore[method-assign]
        os.environ.clear()
        os.environ.update(saved)
    return [framed[HEADER_BYTES:].hex() for framed in sent]


def _row(label: str, took: float, tmux: float) -> str:
    return f"  {label:34} {took:6.1f} ms  ratio {tmux / took:4.2f}x"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    compileall.compile_dir(os.path.dirname(muxd.__file__), quiet=1)  # as pip does at install
    tmux_name = f"bench-shim-{uuid.uuid4().hex[:8]}"
    tmux = ["tmux", "-L", tmux_name]
    server = MuxdTestServer().start()
    built = tempfile.TemporaryDirectory()
    try:
        subprocess.run([*tmux, "-f", "/dev/null", "new-session", "-d", "-s", SESSION, "-x", "80", "-y", "24",
                        "sleep 600"], check=True)
        tmux_pane = subprocess.run([*tmux, "display-message", "-p", "-t", SESSION, "#{pane_id}"], check=True,
                                   capture_output=True, text=True).stdout.strip()
        muxd_pane = server.cli("new-session", "-d", "-P", "-s", SESSION, "--tmux-shim", "--", "sleep", "600",
                               check=True).stdout.strip()
        shim = [str(launcher_path(server.socket_path)), "-L", server.name]  # as libtmux calls it
        full = [sys.executable, "-P", "-c", FULL_CLI, "-L", server.name]
        env = {**server.env, "PYTHONPATH": os.path.dirname(os.path.dirname(muxd.__file__))}
        launcher = compiled_launcher(built.name)
        floors = {"python -S -c pass": [sys.executable, "-S", "-c", "pass"],
                  "python -I -c pass": [sys.executable, "-I", "-c", "pass"]}
        print(f"median ms per call, {args.runs} runs each, alternating; ratio tmux/muxd (target >= 0.2x)")
        if launcher is None:
            print("(no C compiler (cc, gcc, clang): the compiled launcher's rows are skipped)")
        ratios: dict[str, list[float]] = {}
        for tmux_words, muxd_words in zip(command_lines(tmux_pane), command_lines(muxd_pane)):
            sides = {"muxd tmux (launcher, fast path)": shim + muxd_words, "full CLI (before issue 29)": full + muxd_words,
                     **floors}
            if launcher is not None:
                compiled = [launcher, str(server.socket_path),
                            *recorded_requests(["-L", server.name, *muxd_words], server.env)]
                last = unpack(subprocess.run(compiled, check=True, capture_output=True).stdout)
                assert isinstance(last, dict) and last.get("type") != "error", last  # the daemon answered it
                sides["compiled launcher (same requests)"] = compiled
            took: dict[str, list[float]] = {"tmux": [], **{label: [] for label in sides}}
            cpu: dict[str, list[float]] = {label: [] for label in took}
            for _ in range(args.runs):
                for label, argv, argv_env in (("tmux", [*tmux, *tmux_words], server.env),
                                              *((label, argv, env) for label, argv in sides.items())):
                    wall, used = run_ms(argv, argv_env)
                    took[label].append(wall)
                    cpu[label].append(used)
            medians = {label: statistics.median(values) for label, values in took.items()}
            cpu_medians = {label: statistics.median(values) for label, values in cpu.items()}
            print(f"{tmux_words[0]:18} tmux {medians['tmux']:6.1f} ms  (its client's cpu {cpu_medians['tmux']:5.1f} ms)")
            for label in sides:
                ratios.setdefault(label, []).append(medians["tmux"] / medians[label])
                print(f"{_row(label, medians[label], medians['tmux'])}  (cpu {cpu_medians[label]:5.1f} ms)")
        print("geometric mean ratio tmux/muxd:")
        for label, values in ratios.items():
            print(f"  {label:34} {statistics.geometric_mean(values):4.2f}x")
    finally:
        subprocess.run([*tmux, "kill-server"], check=False, stderr=subprocess.DEVNULL)
        server.stop()
        built.cleanup()
    return 0


if __name__ == "__main__":
    run_benchmark(main)
