"""`PaneLanes`: blocking jobs done for panes on a few threads, in order and one at a time for
each pane, several panes at once. A pane whose job hangs holds one thread and its own later
jobs; once its oldest job has waited or run `stuck_after_s`, the pane's new jobs fail at once
(TimeoutError) instead of queueing behind it, and other panes go on. The threads are daemon
threads: one stuck for good (a read on a hung mount) does not keep the daemon from exiting."""

from __future__ import annotations

import queue
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")


@dataclass
class _Lane:
    jobs: deque[tuple[Future[Any], Callable[..., Any], tuple[Any, ...]]] = field(default_factory=deque)
    head_since: float = 0.0  # when the job now first in line got there


class PaneLanes:
    def __init__(self, threads: int, stuck_after_s: float, thread_name: str) -> None:
        self._stuck_after_s = stuck_after_s
        self._lock = threading.Lock()
        self._lanes: dict[str, _Lane] = {}
        self._ready: queue.SimpleQueue[str | None] = queue.SimpleQueue()  # panes with jobs and no thread
        self._closed = False
        self._threads = [threading.Thread(target=self._work, name=f"{thread_name}_{n}", daemon=True)
                         for n in range(threads)]
        for thread in self._threads:
            thread.start()

    def submit(self, pane_id: str, job: Callable[..., T], *args: Any) -> Future[T]:
        """`job(*args)` run after the pane's earlier jobs; its future."""
        future: Future[T] = Future()
        with self._lock:
            lane = self._lanes.get(pane_id)
            if self._closed:
                future.set_exception(RuntimeError("the daemon is stopping"))
            elif lane is not None and (waited := time.monotonic() - lane.head_since) > self._stuck_after_s:
                future.set_exception(TimeoutError(f"pane {pane_id}'s earlier job has not ended in {waited:.1f} s"))
            else:
                if lane is None:
                    lane = self._lanes[pane_id] = _Lane(head_since=time.monotonic())
                    self._ready.put(pane_id)
                lane.jobs.append((future, job, args))
        return future

    def _work(self) -> None:
        while (pane_id := self._ready.get()) is not None:
            self._drain(pane_id)

    def _drain(self, pane_id: str) -> None:
        """Run the pane's jobs, oldest first, until there are none."""
        while True:
            with self._lock:
                lane = self._lanes[pane_id]
                future, job, args = lane.jobs[0]
            if future.set_running_or_notify_cancel():  # not given up while it waited
                try:
                    result = job(*args)
                except BaseException as exc:
                    future.set_exception(exc)
                else:
                    future.set_result(result)
            with self._lock:
                lane.jobs.popleft()
                lane.head_since = time.monotonic()
                if not lane.jobs:
                    del self._lanes[pane_id]
                    return

    def close(self) -> None:
        """Jobs not started are cancelled; a running one is left to end on its own."""
        with self._lock:
            self._closed = True
            for lane in self._lanes.values():
                for future, _, _ in lane.jobs:
                    future.cancel()
        for _ in self._threads:
            self._ready.put(None)
