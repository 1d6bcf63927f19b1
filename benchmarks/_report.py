"""Figures as text for the daemon benchmarks: numbers, ratios and aligned tables."""

from __future__ import annotations

import os
import platform
import statistics
import subprocess

from _peers import percentile


def fmt(value: float | None, unit: str = "", digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}{unit}"


def ratio(a: float | None, b: float | None) -> str:
    """a ÷ b as "1.3x"; "-" when either is missing or b is 0 (e.g. no clock tick measured)."""
    return "-" if a is None or b is None or b <= 0 else f"{a / b:.2f}x"


def print_table(headers: list[str], rows: list[list[str]]) -> None:
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(headers)]
    for line in [headers, *rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip())


def latency_rows(results: dict[str, list[float]], peers: list[float]) -> list[list[str]]:
    """One row per path of latencies in ms: n, p50, p95, max, then its p50 over each peer's p50."""
    rows = []
    for name, values in results.items():
        p50, p95 = statistics.median(values), percentile(values, 0.95)
        rows.append([name, str(len(values)), fmt(p50, " ms", 1), fmt(p95, " ms", 1), fmt(max(values), " ms", 1),
                     *(ratio(p50, peer) for peer in peers)])
    return rows


def machine_note() -> str:
    """The machine a run's figures come from, with its load averages (the figures move with load)."""
    tmux = subprocess.run(["tmux", "-V"], capture_output=True, text=True).stdout.strip()
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return (f"machine: nproc {len(os.sched_getaffinity(0))}, load {load}, {platform.machine()}, "
            f"Linux {platform.release()}, Python {platform.python_version()}, {tmux}")
