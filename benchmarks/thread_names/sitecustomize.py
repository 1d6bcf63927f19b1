"""Loaded by the daemons of `bench_history_daemon.py --threads` (this folder on their PYTHONPATH):
gives each Python thread its name in the kernel (/proc/PID/task/TID/comm), which Python 3.11
does not, so the benchmark can tell the writer's CPU from the loop's and the readers'. With
`--entry-costs` it also times the history's calls in the daemon (entry_costs.py)."""

import ctypes
import os
import threading

_PR_SET_NAME = 15
_libc = ctypes.CDLL(None, use_errno=True)
_bootstrap_inner = threading.Thread._bootstrap_inner  # type: ignore[attr-defined]


def _named_bootstrap_inner(self: threading.Thread) -> None:
    _libc.prctl(_PR_SET_NAME, self.name.encode()[:15], 0, 0, 0)
    _bootstrap_inner(self)


threading.Thread._bootstrap_inner = _named_bootstrap_inner  # type: ignore[attr-defined]

if os.environ.get("MUXD_BENCH_ENTRY_COSTS"):  # bench_history_daemon.py --entry-costs
    import entry_costs

    entry_costs.start(os.environ["MUXD_BENCH_ENTRY_COSTS"])
