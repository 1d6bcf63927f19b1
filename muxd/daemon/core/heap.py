"""`keep_freed_heap()`: the daemon's C heap keeps what it frees, up to a bound, instead of
handing it back to the kernel at once (glibc's malloc; elsewhere nothing changes).

By default glibc returns the free memory at the top of a heap as soon as it passes 128 KiB, and
the next allocation faults those pages back in, each zeroed by the kernel (~3 us a page on this
project's VMs). The history's writer does that with every batch of ended turns (each transcript
joined, then compressed: ~300 faults for 20 turns of 70 KB), the loop a few a turn: with the
heap kept, the writer's share of a recorded execution went from 0.25 to 0.18 ms (issue 29, goal
5b; benchmarks/README.md). What is kept is bounded per heap (HEAP_KEEP_FREED_BYTES), and only
memory the daemon used at some point is ever kept.
"""

from __future__ import annotations

import logging
import os

from muxd.config import HEAP_KEEP_FREED_BYTES, HEAP_MMAP_FROM_BYTES

log = logging.getLogger(__name__)

# mallopt(3)'s parameters (malloc.h): setting either also stops glibc adjusting them itself.
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3


def keep_freed_heap() -> bool:
    """Ask glibc to keep up to HEAP_KEEP_FREED_BYTES freed at the top of each heap, and to take
    allocations under HEAP_MMAP_FROM_BYTES from the heap (a larger one is its own mapping, given
    back when freed). True if it took both; False on another C library."""
    try:
        os.confstr("CS_GNU_LIBC_VERSION")
    except (ValueError, OSError):
        return False
    import ctypes  # (~2 ms, 0.25 MiB: a step of the deferred work of the first pane, not of the start)

    libc = ctypes.CDLL(None)
    taken = (libc.mallopt(_M_MMAP_THRESHOLD, HEAP_MMAP_FROM_BYTES) == 1
             and libc.mallopt(_M_TRIM_THRESHOLD, HEAP_KEEP_FREED_BYTES) == 1)
    if not taken:
        log.warning("malloc kept its defaults: mallopt refused the heap's bounds")
    return taken
