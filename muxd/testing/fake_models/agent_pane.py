"""A real agent CLI in a muxd pane, driven as a person would drive it, with every state
muxd publishes for the pane recorded as it happens.

The states come from the daemon's event stream (a subscription held on a background
thread), not from polling `list-panes`: a Thinking or ToolUse state that lasts a few
hundred milliseconds is still seen. Waiting is on conditions with deadlines, never on sleeps;
a timed-out wait reports the states published so far and the screen.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import re
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import msgspec

from muxd.detectors.base import ScreenContext
from muxd.detectors.registry import load_detectors
from muxd.detectors.runner import DetectorRunner
from muxd.detectors.state import BUSY_STATES
from muxd.detectors.submit_uptake import SUBMIT_UPTAKE_RULE
from muxd.protocol.messages import AgentStateChanged, Event, PaneExited, Subscribe
from muxd.testing.fake_models.launch import AgentLaunch
from muxd.testing.patience import Deadline, event_set, stretched
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until

STATE_TIMEOUT_S = 20.0
TURN_TIMEOUT_S = 60.0
SUBSCRIBE_TIMEOUT_S = 10.0
LOG_LINES_SHOWN = 30  # of the daemon's log, in a failure's report
LEFTOVER_EXIT_TIMEOUT_S = 3.0
PANE_WIDTH = 120
PANE_HEIGHT = 40
# Sessions worth running twice: at the usual size and in a pane as small as a four-way split,
# where dialogs are taller than the screen and rows wrap (as `pytest.mark.parametrize` args).
PANE_SIZES = ("pane_size", [(PANE_WIDTH, PANE_HEIGHT), (50, 16)])
PANE_SIZE_IDS = ["usual", "50x16"]

State = dict[str, Any]  # an AgentState as JSON, the shape `list-panes --json` gives under "agent"


class PublishedStates:
    """Every AgentState the daemon publishes for one pane, in order, from a subscription."""

    def __init__(self, server: MuxdTestServer) -> None:
        self._server = server
        self._pane_id: str | None = None
        self._states: list[State] = []
        self._early: list[tuple[str, State]] = []  # events that came before the pane id was known
        self.exit_code: int | None = None
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._failure: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="muxd-states", daemon=True)

    def start(self) -> PublishedStates:
        self._thread.start()
        if not event_set(self._ready, SUBSCRIBE_TIMEOUT_S) or self._failure is not None:
            raise AssertionError(f"cannot subscribe to muxd events: {self._failure!r}")
        return self

    def follow(self, pane_id: str) -> None:
        """From now on keep only `pane_id`'s states (and the ones it had already published)."""
        with self._lock:
            self._pane_id = pane_id
            self._states = [s for p, s in self._early if p == pane_id]
            self._early.clear()

    def stop(self) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(stretched(SUBSCRIBE_TIMEOUT_S))

    def __len__(self) -> int:
        with self._lock:
            return len(self._states)

    @property
    def failure(self) -> BaseException | None:
        return self._failure

    def since(self, mark: int = 0) -> list[State]:
        with self._lock:
            return list(self._states[mark:])

    def _on_event(self, event: Event) -> None:
        if isinstance(event, PaneExited):
            if event.pane_id == self._pane_id:
                self.exit_code = event.exit_code
            return
        if not isinstance(event, AgentStateChanged):
            return
        state = msgspec.to_builtins(event.state)
        with self._lock:
            if self._pane_id is None:
                self._early.append((event.pane_id, state))
            elif event.pane_id == self._pane_id:
                self._states.append(state)

    def _run(self) -> None:
        async def main() -> None:
            self._loop = asyncio.get_running_loop()
            self._stop = asyncio.Event()
            client = await self._server.client(on_event=self._on_event)
            try:
                await client.call(Subscribe, panes=None)
                self._ready.set()
                await self._stop.wait()
            finally:
                await client.close()

        try:
            asyncio.run(main())
        except BaseException as exc:  # reported by start() or by a wait that sees no states
            self._failure = exc
            self._ready.set()


class AgentPane:
    """Start with `start()`; `submit`, `press`, `wait_for`; `close()` ends the pane and any
    process the CLI left behind (found by the private HOME in its environment)."""

    def __init__(self, server: MuxdTestServer, launch: AgentLaunch, session: str = "agent", *,
                 size: tuple[int, int] = (PANE_WIDTH, PANE_HEIGHT)) -> None:
        self.server = server
        self.launch = launch
        self.session = session
        self.size = size  # columns, rows
        self.pane_id = ""
        self.states = PublishedStates(server)
        self.cursor = 0  # waits look at states from here on; each match moves it past itself
        self.sent_at = 0.0  # wall-clock time of the last submit's Enter

    # ------------------------------------------------------------ lifecycle

    def start(self, *, from_shell: bool = False) -> AgentPane:
        """Start the CLI as the pane's program or, `from_shell`, typed at a shell in the pane
        (then quitting it leaves the shell running)."""
        self.states.start()
        self.server.cli(*self.launch.new_session_args(self.session, *self.size, from_shell=from_shell),
                        check=True)
        panes = json.loads(self.server.cli("list-panes", "-t", self.session, "--json", check=True).stdout)
        self.pane_id = panes[0]["id"]
        self.states.follow(self.pane_id)
        if from_shell:
            self.wait_for("Idle", lambda s: s["agent_type"] == "shell", what="the shell at its prompt")
            self.type(self.launch.command_line)
            self.press("Enter")
        return self

    def close(self) -> list[int]:
        """Stop watching, kill the pane, then end leftovers; returns the PIDs it had to end."""
        self.states.stop()
        self.server.cli("kill-session", "-t", self.session)
        return end_processes_with_home(self.launch.home)

    # ------------------------------------------------------------ driving

    def type(self, text: str) -> None:
        """Type `text` literally, without Enter."""
        self.server.cli("send-keys", "-t", self.pane_id, "-l", text, check=True)

    def press(self, *keys: str) -> None:
        """Send key names (`Enter`, `Escape`, `C-c`, …)."""
        self.server.cli("send-keys", "-t", self.pane_id, *keys, check=True)

    def submit(self, text: str) -> None:
        """Type `text`, wait until the screen shows it once more than before, then press Enter
        as a separate write: Codex and Gemini take text and Enter arriving together as a paste
        (a newline in the draft, nothing sent)."""
        shown_before = self.screen().count(text)
        self.type(text)
        try:
            wait_until(lambda: self.screen().count(text) > shown_before, timeout=STATE_TIMEOUT_S,
                       interval=0.05, message=f"{text!r} typed")
        except AssertionError:
            raise AssertionError(self.report(f"{text!r} never showed up in the input", self.cursor)) from None
        self.sent_at = time.time()  # the Enter's (assert_no_idle_before_busy)
        self.press("Enter")

    def run_turn(self, message: str, last_words: str, *, timeout: float = TURN_TIMEOUT_S) -> list[str]:
        """Submit `message`; once the agent is Idle with `last_words` (the end of its scripted
        answer) on its rows, return `history()`. The words say the answer is all there: a
        detector may take a pause in the middle of a long answer for Idle."""
        mark = self.mark()
        self.submit(message)
        rows: list[str] = []

        def answered() -> bool:
            # Idle first, then the rows, the same on two looks in a row: a CLI re-rendering its
            # answer in place (Aider's markdown) is not caught half-way.
            if self.agent()["activity"]["state"] != "Idle":
                return False
            now = self.history()
            settled = now == rows and any(last_words in row for row in now)
            rows[:] = now
            return settled

        try:
            wait_until(answered, timeout=timeout, interval=0.1, message=f"Idle after answering {message!r}")
        except AssertionError as exc:
            raise AssertionError(self.report(f"no Idle with {last_words!r} on screen: {exc}", mark)) from None
        return rows

    # ------------------------------------------------------------ observing

    def screen(self) -> str:
        return self.server.capture(self.pane_id)

    def history(self) -> list[str]:
        """Every row of the pane, scrollback first, soft-wrapped rows joined (`capture-pane -J -S -`)."""
        return self.server.capture(self.pane_id, "-J", "-S", "-").splitlines()

    def agent(self) -> State:
        """The pane's `agent` object as `muxd list-panes -a --json` shows it now."""
        panes = json.loads(self.server.run_here("list-panes", "-a", "--json", check=True).stdout)
        return next(p["agent"] for p in panes if p["id"] == self.pane_id)

    def summary(self) -> dict[str, Any]:
        return json.loads(self.server.run_here("summary", "-t", self.pane_id, "--json", check=True).stdout)

    def session_id_shown_by(self, command: str) -> str:
        """Submit `command` (one that opens a status panel) and wait until the pane's summary
        names a session id; returns it."""
        self.submit(command)

        def named() -> str | None:
            return self.summary()["session"]["id"]  # type: ignore[no-any-return]

        try:
            return wait_until(named, timeout=STATE_TIMEOUT_S, interval=0.1, message="a session id")
        except AssertionError:
            raise AssertionError(self.report(f"no session id after {command}", self.cursor)) from None

    def typed_input(self) -> str | None:
        """What muxd's detectors read in the agent's input box on the screen now, as a runner
        keeps it (`DetectorRunner.take_typed_input`): checked in this process on the captured
        screen, since the daemon keeps typed text out of its protocol."""
        runner = DetectorRunner(self.pane_id, load_detectors())
        program = os.path.basename(self.launch.argv[0])
        runner.run(ScreenContext(lines=self.screen().split("\n"), columns=self.size[0], process_name=program,
                                 process_argv=self.launch.argv), settled=True)
        return runner.take_typed_input()

    def mark(self) -> int:
        """Forget the states published so far: the next wait looks only at later ones. Call it
        just before acting; returns the position, for `report`/`explained`."""
        self.cursor = len(self.states)
        return self.cursor

    def wait_for(self, state: str | None = None, where: Callable[[State], bool] | None = None, *,
                 timeout: float = STATE_TIMEOUT_S, what: str = "") -> State:
        """The first state published since the cursor whose activity is `state` (if given) and
        for which `where` holds (if given); the cursor moves past it, so waits read in order."""
        start = self.cursor

        def matches(s: State) -> bool:
            return (state is None or s["activity"]["state"] == state) and (where is None or bool(where(s)))

        def found() -> tuple[int, State] | None:
            return next(((start + i, s) for i, s in enumerate(self.states.since(start)) if matches(s)), None)

        try:
            index, match = wait_until(found, timeout=timeout, interval=0.05,
                                      message=what or f"state {state or 'any'}")
        except AssertionError as exc:
            raise AssertionError(self.report(f"{what or state} not published: {exc}", start)) from None
        self.cursor = index + 1
        return match

    def settles_at(self, state: str, *, since: int = 0, timeout: float = STATE_TIMEOUT_S,
                   what: str = "") -> State:
        """Wait until the pane's current published state (as `list-panes` shows it) is `state`:
        for when the state may never have changed, so no new one is published."""
        def current() -> State | None:
            agent = self.agent()
            return agent if agent["activity"]["state"] == state else None

        try:
            return wait_until(current, timeout=timeout, interval=0.1, message=what or state)
        except AssertionError as exc:
            raise AssertionError(self.report(f"{what or state}: not the current state: {exc}", since)) from None

    def report(self, headline: str, since: int = 0) -> str:
        """The states published since `since`, one a line, and the screen: for failure messages."""
        lines = [headline, f"--- states published for {self.pane_id} since #{since} ---"]
        lines += [describe(s) for s in self.states.since(since)] or ["(none)"]
        if self.states.failure is not None:
            lines.append(f"(the event subscription failed: {self.states.failure!r})")
        lines += [f"--- screen of {self.pane_id} (muxd capture-pane -p) ---", self.screen().rstrip()]
        # What the daemon holds now (a state it never published would not be in the list above).
        lines += ["--- the daemon's state of it now ---", describe(self.agent())]
        log = self.server.log_path
        lines += ["--- the daemon's log, its end ---", *(log.read_text(errors="replace").splitlines()[-LOG_LINES_SHOWN:]
                                                     if log.exists() else ["(none)"])]
        return "\n".join(lines)

    @contextmanager
    def explained(self, headline: str, since: int = 0) -> Iterator[None]:
        """Re-raise an assertion failure with the states and the screen attached."""
        try:
            yield
        except AssertionError as exc:
            raise AssertionError(self.report(f"{headline}: {exc}", since)) from None


def screen_shows(state: str) -> Callable[[State], bool]:
    """A `wait_for` condition: the screen itself shows `state` (with the agent's hooks heard, a
    published state may come from a hook before the screen draws it)."""
    def shows(s: State) -> bool:
        fusion = s.get("fusion")
        return (fusion["screen"] if fusion else s["activity"]["state"]) == state
    return shows


def states_mid_turn(pane: AgentPane, mark: int, done: State) -> list[str]:
    """The states published from the turn's first busy one (after `mark`) up to `done`, the
    state that ended it: a test of "no false Idle" asserts none of them is Idle."""
    turn = pane.states.since(mark)
    first_busy = next((i for i, s in enumerate(turn) if s["activity"]["state"] in BUSY_STATES), len(turn))
    return [s["activity"]["state"] for s in turn[first_busy:turn.index(done)]]


# Past this long after a prompt's Enter, the pane must have left the Idle it had before.
UPTAKE_GAP_S = 1.0


def assert_no_idle_before_busy(pane: AgentPane, mark: int) -> None:
    """Once the turn's first busy state is published: from the last `submit`'s Enter (states
    since `mark` that began after it) up to that busy state nothing said Idle, and the first
    state told was the runner's "submitted-not-taken" Unknown or came within UPTAKE_GAP_S: the
    pane did not go on saying Idle while the agent's screen only looked at rest."""
    sent_at = pane.sent_at
    after = [s for s in pane.states.since(mark) if (s["activity"]["since"] or 0) >= sent_at]
    first_busy = next((i for i, s in enumerate(after) if s["activity"]["state"] in BUSY_STATES), None)
    with pane.explained("between the Enter and the first busy state", mark):
        assert first_busy is not None, "no busy state yet"
        told = [s["activity"]["state"] for s in after[:first_busy]]
        assert "Idle" not in told, told
        first = after[0]
        gap = first["activity"]["since"] - sent_at
        assert (first.get("evidence") or {}).get("rule") == SUBMIT_UPTAKE_RULE or gap < UPTAKE_GAP_S, (
            f"Idle for {gap:.1f} s after the Enter, then {first['activity']['state']}")


def describe(s: State) -> str:
    """One line per state: what a failure message needs to tell what happened."""
    a = s["activity"]
    parts = [a["state"], repr(a["description"]) if a["description"] else "",
             f"{a['elapsed_s']}s" if a["elapsed_s"] is not None else "",
             f"tokens={s['session']['tokens_used']}" if s["session"]["tokens_used"] is not None else "",
             f"model={s['session']['model']!r}" if s["session"]["model"] else "",
             f"tool={s['tool']}" if s["tool"] else "",
             f"tools={s['recent_tools']}" if s["recent_tools"] else "",
             f"error={s['error']}" if s["error"] else "",
             f"[{s['agent_type']}:{(s['evidence'] or {}).get('rule')}]"]
    return " ".join(p for p in parts if p)


def end_processes_with_home(home: Path) -> list[int]:
    """SIGTERM (then SIGKILL) every process whose environment has HOME=`home`: with a private
    HOME per test, those are exactly what the CLI started (Codex's app-server daemon)."""
    marker = f"HOME={home}".encode()
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes()
        except OSError:
            continue
        if marker in environ.split(b"\0"):
            pids.append(int(entry))
    for sig in (signal.SIGTERM, signal.SIGKILL):
        alive = [p for p in pids if _alive(p)]
        for pid in alive:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = Deadline(LEFTOVER_EXIT_TIMEOUT_S)
        while any(_alive(p) for p in alive) and not deadline.expired():
            time.sleep(0.05)
    return pids


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def screen_number(pattern: str, screen: str) -> int | None:
    """The first group of `pattern` on `screen` as an int (`7,128` → 7128), or None."""
    found = re.search(pattern, screen)
    return int(found.group(1).replace(",", "")) if found else None


class CliPanes:
    """Real CLIs started in panes of one test server, each against its started fake model
    server, once Idle with their model named; `close()` ends every pane and fake.

    `start(cli, fake, *args)` returns None when the CLI is not installed (with why in `missing`);
    with `mcp=True` the CLI calls muxd's MCP tools as its pane's agent (see mcp_agents)."""

    def __init__(self, server: MuxdTestServer, root: Path, *, timeout: float = STATE_TIMEOUT_S,
                 own_sessions: bool = False) -> None:
        self.server, self.root, self.timeout = server, root, timeout
        self.own_sessions = own_sessions  # each CLI in a session (and directory) named after it
        self.missing: str | None = None
        self._started: list[tuple[AgentPane, Any]] = []

    def start(self, cli: str, fake: Any, *args: str, mcp: bool = False,
              size: tuple[int, int] = (PANE_WIDTH, PANE_HEIGHT), env: dict[str, str] | None = None) -> AgentPane | None:
        """`cli` against `fake` in a new pane, at its prompt; None when the CLI is not
        installed. `env` is added to the pane's environment."""
        from muxd.testing.fake_models import launch

        bin_dir, why = launch.find_cli(cli)
        if bin_dir is None:
            self.missing = why
            return None
        fake.start()
        root = self.root / cli if self.own_sessions else self.root
        agent = launch.LAUNCHES[cli](root, fake.url, bin_dir, *args)
        if mcp:
            agent = launch.with_mcp_server(agent, launch.muxd_mcp_server(self.server))
        if env:
            agent = dataclasses.replace(agent, env={**agent.env, **env})
        pane = AgentPane(self.server, agent, session=cli if self.own_sessions else "agent", size=size)
        self._started.append((pane, fake))
        pane.start().wait_for("Idle", lambda s: s["session"]["model"], timeout=self.timeout,
                              what="Idle with the model named")
        return pane

    def start_or_skip(self, cli: str, fake: Any, *args: str) -> AgentPane:
        """`start`, skipping the calling test (with why) when the CLI is not installed."""
        import pytest

        pane = self.start(cli, fake, *args)
        if pane is None:
            pytest.skip(self.missing)
        return pane

    def close(self) -> None:
        for pane, fake in self._started:
            pane.close()
            fake.stop()
