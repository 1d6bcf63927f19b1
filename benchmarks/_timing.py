"""Timing one-shot commands against a peer on a shared machine: each run of the command right
after a run of the peer, so both see the same load, and the medians of both."""

from __future__ import annotations

import resource
import statistics
import subprocess
import time


def run_ms(argv: list[str], env: dict[str, str], stdin: bytes | None = None) -> tuple[float, float]:
    """Wall and CPU milliseconds of one run of `argv` (CPU: user + system, from rusage)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(argv, env=env, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = (time.perf_counter() - started) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000


def paired_medians(argv: list[str], bare: list[str], env: dict[str, str], runs: int,
                   stdin: bytes | None = None) -> list[float]:
    """Median wall and CPU ms of `argv`, then of `bare`, each run of one right after one of the other."""
    samples: list[list[float]] = [[], [], [], []]
    for _ in range(runs):
        for offset, command in ((0, argv), (2, bare)):
            wall, cpu = run_ms(command, env, stdin)
            samples[offset].append(wall)
            samples[offset + 1].append(cpu)
    return [statistics.median(values) for values in samples]
