"""keep_freed_heap: memory freed and taken again costs no page faults once the daemon's heap
keeps what it frees (glibc's default hands anything over 128 KiB back to the kernel)."""

from __future__ import annotations

import subprocess
import sys

# A fresh interpreter, so the test's own process keeps malloc's defaults: the page faults of 50
# rounds of what the history's writer does for a batch (20 transcripts of 70 KB joined and freed).
_ROUNDS = """
import resource, sys
from muxd.daemon.core.heap import keep_freed_heap
kept = keep_freed_heap() if sys.argv[1] == "keep" else None
parts = [bytes(700) for _ in range(100)]
def batch():
    joined = [b"".join(parts) for _ in range(20)]
    del joined
batch()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(50):
    batch()
print(kept, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _faults(mode: str) -> tuple[str, int]:
    out = subprocess.run([sys.executable, "-c", _ROUNDS, mode], check=True, capture_output=True, text=True,
                         timeout=60).stdout.split()
    return out[0], int(out[1])


def test_a_kept_heap_takes_freed_memory_back_without_faults() -> None:
    kept, faults = _faults("keep")
    assert kept == "True"
    assert faults < 50, f"{faults} page faults in 50 rounds with the heap kept"


def test_without_it_the_same_rounds_fault_their_pages_back_in() -> None:
    # The peer: what the daemon paid before (so the test above could fail).
    kept, faults = _faults("default")
    assert kept == "None"
    assert faults > 500, f"only {faults} page faults in 50 rounds with malloc's defaults"
