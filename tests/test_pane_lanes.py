"""PaneLanes: a pane's jobs run in order, one at a time; a pane whose job hangs delays no other
pane, and once it has hung past the limit its new jobs fail at once instead of queueing."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from muxd.daemon.panes.pane_lanes import PaneLanes
from muxd.testing.patience import event_set, stretched
from muxd.testing.wait import wait_until

RESULT_WAIT_S = 10.0


@pytest.fixture
def hang() -> Iterator[threading.Event]:
    """Set to let a hung job go (at the end of a test whatever happened)."""
    released = threading.Event()
    yield released
    released.set()


def test_a_hung_pane_delays_no_other_pane(hang):
    lanes = PaneLanes(threads=2, stuck_after_s=60.0, thread_name="test-lanes")
    started = threading.Event()

    def hung() -> str:
        started.set()
        hang.wait()
        return "late"

    stuck = lanes.submit("%1", hung)
    assert event_set(started, RESULT_WAIT_S)
    assert lanes.submit("%2", lambda: "prompt").result(timeout=stretched(RESULT_WAIT_S)) == "prompt"
    behind = lanes.submit("%1", lambda: "after")
    assert not behind.done(), "a pane's jobs run one at a time, in order"
    hang.set()
    assert stuck.result(timeout=stretched(RESULT_WAIT_S)) == "late" and behind.result(timeout=stretched(RESULT_WAIT_S)) == "after"
    lanes.close()


def test_a_pane_hung_past_the_limit_gets_its_new_jobs_refused_at_once(hang):
    lanes = PaneLanes(threads=2, stuck_after_s=0.2, thread_name="test-lanes")
    since = time.monotonic()
    lanes.submit("%1", hang.wait)
    wait_until(lambda: time.monotonic() - since > 0.3, timeout=RESULT_WAIT_S, message="past the limit")
    refused = lanes.submit("%1", lambda: "never")
    with pytest.raises(TimeoutError, match="%1"):
        refused.result(timeout=stretched(RESULT_WAIT_S))
    assert lanes.submit("%2", lambda: "fine").result(timeout=stretched(RESULT_WAIT_S)) == "fine"
    hang.set()

    def served() -> bool:
        try:
            return lanes.submit("%1", lambda: "again").result(timeout=stretched(RESULT_WAIT_S)) == "again"
        except TimeoutError:
            return False  # the hung job has not quite ended yet
    wait_until(served, timeout=RESULT_WAIT_S, message="the pane served again once its job ended")
    lanes.close()


def test_a_failing_job_fails_its_future_only():
    lanes = PaneLanes(threads=1, stuck_after_s=60.0, thread_name="test-lanes")

    def broken() -> None:
        raise RecursionError("maximum recursion depth exceeded")

    with pytest.raises(RecursionError):
        lanes.submit("%1", broken).result(timeout=stretched(RESULT_WAIT_S))
    assert lanes.submit("%1", lambda: 7).result(timeout=stretched(RESULT_WAIT_S)) == 7
    lanes.close()
