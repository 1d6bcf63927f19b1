"""muxd.testing.patience: a readiness wait's timeout is a budget of the machine's time, stretched
by its load and by MUXD_TEST_PATIENCE, and a wait that runs out says what it waited and saw."""

import asyncio
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from muxd.testing import patience
from muxd.testing.patience import (LOAD_STRETCH_MAX, PATIENCE_ENV, Deadline, event_set, patient_wait_for,
                                   wait_process)
from muxd.testing.wait import WaitTimeout, async_wait_until, returns_within, wait_until


def test_load_is_at_least_the_load_average() -> None:
    assert patience.load() >= os.getloadavg()[0] - 0.01
    assert patience.cores() >= 1


def test_the_patience_variable_multiplies_every_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PATIENCE_ENV, "4")
    started = time.monotonic()
    with pytest.raises(WaitTimeout) as failure:
        wait_until(lambda: False, timeout=0.25, message="never")
    assert time.monotonic() - started >= 1.0
    text = str(failure.value)
    assert "never not met within 0.25s of machine time (waited " in text
    assert f"{PATIENCE_ENV}=4" in text and f"on {patience.cores()} cores" in text


def test_a_bad_patience_value_counts_as_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PATIENCE_ENV, "lots")
    assert patience.patience() == 1.0
    monkeypatch.setenv(PATIENCE_ENV, "0.1")  # never shorter than the budget
    assert patience.patience() == 1.0


def test_the_stretch_is_the_load_per_core_between_one_and_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PATIENCE_ENV, raising=False)
    monkeypatch.setattr(patience, "load", lambda: 0.0)
    assert patience.stretch() == 1.0
    monkeypatch.setattr(patience, "load", lambda: 3.0 * patience.cores())
    assert patience.stretch() == pytest.approx(3.0)
    assert patience.stretched(10.0) == pytest.approx(30.0)
    monkeypatch.setattr(patience, "load", lambda: 1000.0 * patience.cores())
    assert patience.stretch() == LOAD_STRETCH_MAX


def test_a_load_that_comes_during_a_wait_stretches_what_is_left(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PATIENCE_ENV, raising=False)
    loads = iter([0.0, 0.0])  # idle when the wait starts, then five runnable tasks per core
    monkeypatch.setattr(patience, "load", lambda: next(loads, 5.0 * patience.cores()))
    deadline = Deadline(0.2)
    started = time.monotonic()
    wait_until(deadline.expired, timeout=30)
    assert time.monotonic() - started >= 0.8
    assert f"load {5.0 * patience.cores():.1f} on {patience.cores()} cores" in deadline.describe()


def test_a_condition_that_comes_true_returns_at_once() -> None:
    flag = threading.Event()
    threading.Timer(0.05, flag.set).start()
    started = time.monotonic()
    assert wait_until(flag.is_set, timeout=10) is True
    assert event_set(threading.Event(), 0.05) is False
    assert time.monotonic() - started < 10


def test_async_waits_count_machine_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PATIENCE_ENV, "3")

    async def never() -> bool:
        return False

    async def run() -> float:
        started = time.monotonic()
        with pytest.raises(WaitTimeout, match=r"machine time \(waited"):
            await async_wait_until(never, timeout=0.2)
        return time.monotonic() - started

    assert asyncio.run(run()) >= 0.6


def test_patient_wait_for_returns_the_result_or_cancels_the_awaitable() -> None:
    cancelled = []

    async def slow() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            cancelled.append(True)

    async def run() -> str:
        with pytest.raises(TimeoutError, match="not done within 0.1s of machine time"):
            await patient_wait_for(slow(), 0.1)
        return await patient_wait_for(asyncio.sleep(0, "done"), 5)

    assert asyncio.run(run()) == "done"
    assert cancelled == [True]


def test_wait_process_gives_the_exit_code_or_leaves_it_running() -> None:
    assert wait_process(subprocess.Popen(["sh", "-c", "exit 3"]), 30) == 3
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            wait_process(sleeper, 0.1)
        assert sleeper.poll() is None
    finally:
        sleeper.kill()
        sleeper.wait()


def test_returns_within_reports_a_blocked_call_in_machine_time() -> None:
    with pytest.raises(WaitTimeout, match=r"the call still blocked after 0.1s of machine time"):
        returns_within(threading.Event().wait, timeout=0.1)
    assert returns_within(lambda: 7, timeout=5) == 7


@pytest.mark.parametrize("method", ["signal", "thread"])
def test_the_pytest_plugin_stretches_pytest_timeout(tmp_path: Path, method: str) -> None:
    """A test needing 2 s under `--timeout 1` (and under its own `timeout(1)` marker) passes when
    MUXD_TEST_PATIENCE=4 says the machine is that slow: the plugin stretches the ceiling, with
    either of pytest-timeout's methods (signal: re-armed while the budget lasts; thread: stretched
    as the test starts)."""
    (tmp_path / "test_slow.py").write_text(textwrap.dedent("""
        import time
        import pytest

        def test_slow_under_the_option():
            time.sleep(2)

        @pytest.mark.timeout(1)
        def test_slow_under_a_marker():
            time.sleep(2)
    """))
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                          "--timeout", "1", "--timeout-method", method, "test_slow.py"], cwd=tmp_path,
                         capture_output=True, text=True, env={**os.environ, PATIENCE_ENV: "4"},
                         timeout=patience.stretched(120))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "2 passed" in run.stdout


def test_a_wall_time_wait_is_never_stretched(monkeypatch: pytest.MonkeyPatch) -> None:
    """A timeout that is itself under test (`wall=True`) ends on the clock however slow the machine."""
    monkeypatch.setenv(PATIENCE_ENV, "10")
    started = time.monotonic()
    with pytest.raises(WaitTimeout, match=r"0.2s of wall time"):
        wait_until(lambda: False, timeout=0.2, wall=True)
    assert time.monotonic() - started < 1.5
