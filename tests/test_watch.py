"""`muxd watch` through a real daemon and fake agents: a question comes out as one JSON line,
-t / --kind / --agent filter, `--until agent-waiting` returns when the agent asks and at once
when it already asks, --timeout and a bad kind exit 1 with one line, --format, the server going
and Ctrl-C end it cleanly."""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from muxd.testing.fake_agent_panes import start_fake_agent
from muxd.testing.patience import stretched, wait_process
from muxd.testing.wait import wait_until

LINE_TIMEOUT_S = 20.0
EXIT_TIMEOUT_S = 20.0


def _interruptible() -> None:
    """In the watch, before it starts: Ctrl-C's SIGINT acts, as in a terminal's foreground. A test
    run started in the background of a shell (`pytest &`) ignores SIGINT, and children inherit that."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Watch:
    """A `muxd watch …` running on its own, its output lines read as they come."""

    def __init__(self, server, *options: str) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "muxd", "-L", server.name, "watch", *options],
                                     env={**server.env, "PYTHONFAULTHANDLER": "1"}, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, preexec_fn=_interruptible)
        self.lines: list[str] = []
        self._queue: queue.Queue[str] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self._queue.put(line.rstrip("\n"))

    def heard(self) -> list[dict]:
        """Every line printed so far, as JSON."""
        while not self._queue.empty():
            self.lines.append(self._queue.get_nowait())
        return [json.loads(line) for line in self.lines]

    def wait_for(self, check, message: str, timeout: float = LINE_TIMEOUT_S) -> dict:
        """The first line printed whose JSON passes `check`."""
        return wait_until(lambda: next((e for e in self.heard() if check(e)), None), timeout=timeout,
                          message=message)

    def end(self) -> tuple[int, str]:
        """Its exit status and stderr, once it exited (and its last lines are read). One that does
        not exit is made to say where it is stuck (its signal masks, every thread's stack)."""
        try:
            status = wait_process(self.proc, EXIT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            status_text = open(f"/proc/{self.proc.pid}/status").read()
            signals = [line for line in status_text.splitlines() if line.startswith("Sig")]
            self.proc.send_signal(signal.SIGABRT)  # faulthandler (PYTHONFAULTHANDLER) dumps the stacks
            wait_process(self.proc, EXIT_TIMEOUT_S)
            raise AssertionError(f"muxd watch did not exit: {signals}\n{self.proc.stderr.read()}") from None
        self._reader.join(timeout=stretched(EXIT_TIMEOUT_S))
        return status, self.proc.stderr.read()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def prime(server, watches: list[Watch], panes: list[str]) -> None:
    """Prompts to `panes` until every watch printed a line: then each is subscribed, and what
    follows cannot be missed. A fake agent's turn takes ~1.5 s, its end an `agent-idle`."""
    def all_heard() -> bool:
        if all(w.heard() for w in watches):
            return True
        for pane in panes:
            server.cli("send-keys", "-t", pane, "hello", "Enter", check=True)
        return False

    wait_until(all_heard, timeout=60, interval=3.0, message="the watches subscribed")


@contextmanager
def watching_an_agent(server, name: str) -> Iterator[tuple[str, Watch]]:
    """A fake agent in a new session `name`, and a subscribed `muxd watch -t name`."""
    pane = start_fake_agent(server, name)
    watch = Watch(server, "-t", name)
    try:
        prime(server, [watch], [pane])
        yield pane, watch
    finally:
        watch.stop()


def test_an_agent_asking_is_one_json_line_with_its_question_and_ctrl_c_ends_it(muxd_server):
    s = muxd_server
    with watching_an_agent(s, "asker") as (pane, watch):
        watch.wait_for(lambda e: e["kind"] == "execution-finished", "the priming turn ended")
        s.cli("send-keys", "-t", pane, "tool", "Enter", check=True)
        asked = watch.wait_for(lambda e: e["kind"] == "agent-waiting", "agent-waiting")
        assert asked["pane_id"] == pane and asked["session"] == "asker" and asked["agent_type"] == "claude"
        assert asked["state"] == "AwaitingConfirmation" and "proceed" in asked["question"].lower()
        assert "current" not in asked and None not in asked.values()
        assert all(e["pane_id"] == pane for e in watch.heard())
        watch.proc.send_signal(signal.SIGINT)
        status, err = watch.end()
        assert status == 130 and "Traceback" not in err


def test_pane_kind_and_agent_filters(muxd_server):
    s = muxd_server
    one = start_fake_agent(s, "one")
    two = start_fake_agent(s, "two", "codex")
    idle_of_one = Watch(s, "--kind", "agent-idle", "-t", "one")
    codex_ends = Watch(s, "--kind", "agent-idle", "--kind", "execution-finished", "--agent", "codex")
    try:
        prime(s, [idle_of_one, codex_ends], [one, two])
        for pane in (one, two):  # one more turn each, heard whole by subscribed watches
            s.cli("send-keys", "-t", pane, "hello", "Enter", check=True)
        codex_ends.wait_for(lambda e: e["kind"] == "execution-finished", "codex's turn finished")
        wait_until(lambda: len([e for e in idle_of_one.heard()]) >= 2, timeout=LINE_TIMEOUT_S,
                   message="one's second turn")
        assert {(e["kind"], e["pane_id"]) for e in idle_of_one.heard()} == {("agent-idle", one)}
        assert {e["pane_id"] for e in codex_ends.heard()} == {two}
        assert {e["kind"] for e in codex_ends.heard()} <= {"agent-idle", "execution-finished"}
    finally:
        idle_of_one.stop()
        codex_ends.stop()


def test_until_returns_when_the_agent_asks_and_at_once_when_it_already_asks(muxd_server):
    s = muxd_server
    pane = start_fake_agent(s, "worker")
    # --kind agent-idle as well: its priming turns show that the watch is subscribed.
    waiting = Watch(s, "--until", "agent-waiting", "--kind", "agent-idle", "-t", "worker", "--timeout", f"{stretched(120):.0f}")
    try:
        prime(s, [waiting], [pane])
        s.cli("send-keys", "-t", pane, "tool", "Enter", check=True)
        status, err = waiting.end()
        assert status == 0, err
        last = waiting.heard()[-1]
        assert last["kind"] == "agent-waiting" and last["pane_id"] == pane and "current" not in last
    finally:
        waiting.stop()
    # Already asking: the watch answers from the pane's state, without waiting for an event.
    started = time.monotonic()
    now = s.cli("watch", "--until", "agent-waiting", "-t", "worker", "--timeout", f"{stretched(60):.0f}",
                check=True)
    assert time.monotonic() - started < 30
    current = json.loads(now.stdout)
    assert current["current"] is True and current["kind"] == "agent-waiting" and current["pane_id"] == pane
    assert "proceed" in current["question"].lower() and current["at"] <= time.time()
    shown = s.cli("watch", "--until", "agent-waiting", "-t", pane, "--format",
                  "#{kind} #{pane_id} #{session_name} #{?current,now,heard} [#{question}]", check=True)
    assert shown.stdout == f"agent-waiting {pane} worker now [Do you want to proceed?]\n"
    listed = json.loads(s.cli("list-panes", "-t", pane, "--json", check=True).stdout)[0]
    assert listed["attention"] == "waiting" and "proceed" in listed["attention_text"].lower()
    assert 0 < listed["attention_since"] <= time.time()


def test_timeout_bad_kind_and_bad_pane_exit_1_with_one_line(muxd_server):
    s = muxd_server
    start_fake_agent(s, "calm")
    quiet = s.cli("watch", "--until", "agent-waiting", "-t", "calm", "--timeout", "0.5")
    assert (quiet.returncode, quiet.stdout) == (1, "")
    assert quiet.stderr == "muxd: no agent-waiting event within 0.5 s\n"
    nothing = s.cli("events", "--kind", "pane-died", "--timeout", "0.3")  # watch's alias
    assert (nothing.returncode, nothing.stderr) == (1, "muxd: no event within 0.3 s\n")
    for options in (["--kind", "agent-sneezed"], ["--until", "agent-sneezed"]):
        bad = s.cli("watch", *options)
        assert bad.returncode == 1 and bad.stdout == "" and len(bad.stderr.splitlines()) == 1
        assert "unknown event kind(s): agent-sneezed; known: agent-state, agent-waiting" in bad.stderr
    missing = s.cli("watch", "-t", "nosuch", "--timeout", "5")
    assert missing.returncode == 1 and len(missing.stderr.splitlines()) == 1 and "nosuch" in missing.stderr


def test_the_server_going_ends_the_watch_with_one_line(muxd_server):
    s = muxd_server
    with watching_an_agent(s, "doomed") as (_, watch):
        s.cli("kill-server", check=True)
        status, err = watch.end()
        assert status == 1 and err.startswith("muxd: the server went away") and len(err.splitlines()) == 1
