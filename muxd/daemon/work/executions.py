"""The execution history wired to live panes: one `ExecutionTracker` per pane fed the states
the detectors publish, the prompt marks its shell writes and its exit; the effects carried out
(prompts typed, interrupt keys sent, records completed and saved); waiters told.

The domain is in muxd/executions; persistence behind `ExecutionStore` (muxd/store). Pending
and running executions live here, in memory, and are written through; a daemon that dies
leaves them `interrupted` when the store is opened again.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import secrets
import shlex
import time
from collections.abc import Callable, Coroutine, Iterable, Mapping
from typing import TYPE_CHECKING, Any

import msgspec

from muxd.config import EXECUTION_TIMER_SLACK_S, HISTORY_PRUNE_INTERVAL_S, SUBMIT_GAP_S
from muxd.config import HISTORY_UNTOLD_ROW_WITHIN_S, HISTORY_UNTOLD_RUNNING_ROW_WITHIN_S
from muxd.daemon.access.control import current_principal, is_agent_principal
from muxd.daemon.work.execution_backlog import ExecutionBacklog
from muxd.daemon.work import turn_screen
from muxd.daemon.work.pane_run import PaneRun
from muxd.daemon.panes.detection import shell_in_front
from muxd.daemon.panes.session_ids import register_session_id_reader
from muxd.detectors.state import AgentState
from muxd.errors import Conflict, NotFound, StoreUnavailable
from muxd.executions.record import ENDED_STATUSES, Execution, finished, new_execution_id
from muxd.executions.tracker import (
    Deliver, Effect, ExecutionTracker, Finish, Interrupt, Resubmit, Save, error_of, exit_error,
)
from muxd.executions.transcript import Transcript, TranscriptBuffer
from muxd.store.execution_store import EVERYTHING, ExecutionStore, Scope
from muxd.store.retention import Retention

if TYPE_CHECKING:
    from muxd.daemon.work.session_log_finder import SessionLogs
    from muxd.daemon.panes.detection import PaneDetection
    from muxd.daemon.panes.pane import Pane
    from muxd.protocol.messages import Spawn

log = logging.getLogger(__name__)

# The key that stops an agent's turn: Escape in the full-screen CLIs (Cline: "esc to cancel"), C-c elsewhere.
INTERRUPT_KEYS = dict.fromkeys(("claude", "codex", "gemini", "opencode", "qwen", "pi", "cline", "kilo"), b"\x1b")
CTRL_C = b"\x03"
CLEAR_INPUT = b"\x15"  # C-u
PASTE_START, PASTE_END = b"\x1b[200~", b"\x1b[201~"
BRACKETED_PASTE_MODE = 2004


class ExecutionService:
    def __init__(self, detections: Mapping[str, PaneDetection], store: ExecutionStore | None,
                 transcript_max_bytes: int, on_ended: Callable[[Execution], None] | None = None,
                 host: str | None = None) -> None:
        self.detections = detections  # the daemon's, by pane id: typed input, tool uses, the input box
        self.host = host  # this daemon's (MUXD_HOST): a record in memory says it as a stored one does
        self.on_ended = on_ended  # told each execution once it ended and is complete (the event bus)
        self.store = store
        self.transcript_max_bytes = transcript_max_bytes
        # Pane ids start again at %1 in every daemon run: the history keys panes by run.
        self.run_id = f"{int(time.time())}-{secrets.token_hex(3)}"
        self.panes: dict[str, PaneRun] = {}
        self.finishing: dict[str, Execution] = {}  # ended, being completed and saved
        # What the store would not take yet (full, locked): found by `live`, written again later.
        self.backlog = ExecutionBacklog(store, self._active_record) if store is not None else None
        self._stopped: list[Execution] = []  # what still ran when the daemon stopped, written by close()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._waiters: dict[str, list[asyncio.Future[Execution]]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        # The agent session id each pane's log named last: agent_summary's session.id between turns.
        self.session_ids: dict[str, str] = {}
        register_session_id_reader(self._session_id_of)

    @functools.cached_property
    def logs(self) -> SessionLogs:
        """The agents' own session logs, read on threads of their own: built at the first turn
        that needs one (their finder and the turns' completion are imported then, not at start)."""
        from muxd.daemon.work.session_log_finder import SessionLogs

        return SessionLogs()

    async def open(self, retention: Retention) -> None:
        """Before serving: what a dead daemon left running is `interrupted`; old history is pruned."""
        self._loop = asyncio.get_running_loop()  # the writer thread reports failed saves to it
        if self.store is None:
            return
        try:
            left = await self.store.interrupt_running(time.time())
            if left:
                log.warning("%d execution(s) were running when the daemon last stopped: now interrupted", left)
        except StoreUnavailable as exc:
            log.error("history: %s", exc.message)
        self._start(self._prune_now_and_then(retention))

    async def _prune_now_and_then(self, retention: Retention) -> None:
        """Retention, at start and every HISTORY_PRUNE_INTERVAL_S (in batches: writes go on between)."""
        while self.store is not None:
            try:
                pruned = await self.store.prune(older_than=retention.older_than(time.time()),
                                                keep_rows=retention.keep_rows)
                if pruned:
                    log.info("history: %d old execution(s) pruned", pruned)
            except StoreUnavailable as exc:
                log.error("history: %s", exc.message)
            await asyncio.sleep(HISTORY_PRUNE_INTERVAL_S)

    def _start(self, job: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(job)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _session_id_of(self, pane: Pane, state: AgentState) -> str | None:
        run = self.panes.get(pane.id)
        return self.session_ids.get(pane.id) if run is not None and run.pane is pane else None

    def pane_key(self, pane_id: str) -> str:
        return f"{self.run_id}/{pane_id}"

    # ------------------------------------------------------------ panes

    def pane_started(self, pane: Pane, program: Execution | None = None) -> None:
        if self.store is None:
            return  # recording is off (MUXD_HISTORY=0): no pane is followed
        run = PaneRun(pane, ExecutionTracker(pane.id))
        run.manual = functools.partial(self._manual, pane)
        run.tracker.turn_shown = functools.partial(turn_screen.turn_shown, run)
        run.tracker.prompt_waiting = functools.partial(turn_screen.prompt_waiting, self.detections, pane.id)
        run.tracker.screen_settled = functools.partial(turn_screen.screen_settled, self.detections, pane.id)
        run.tracker.shell_in_front = functools.partial(shell_in_front, pane)
        self.panes[pane.id] = run
        run.marks_tap = functools.partial(self._output, run)
        if program is not None:
            run.program = msgspec.structs.replace(program, status="running", started_at=time.time(),
                                                  kind="command")
            run.keep_transcript(TranscriptBuffer(pane.columns, pane.lines, self.transcript_max_bytes))
            self._save(run.program)
        self._retap(run)

    def program_execution(self, number: int, spawn: Spawn, argv: list[str], **link: object) -> Execution:
        """The record of a new pane's program run as an execution (muxd run, create_pane); `link`
        overrides its fields (a task's verification: task_id, principal, triggered_by)."""
        pane_id = f"%{number}"
        principal = current_principal().name
        trigger = "agent" if is_agent_principal(principal) else spawn.record_as or "cli"  # an agent's own token
        fields: dict[str, object] = {"triggered_by": trigger, "principal": principal, "message": shlex.join(argv),
                                     **link}
        return Execution(id=new_execution_id(), pane_id=pane_id, pane_key=self.pane_key(pane_id),
                         agent_name=spawn.pane_name or pane_id, kind="command", host=self.host,
                         **fields)  # type: ignore[arg-type]

    def program_id(self, pane: Pane) -> str | None:
        """The execution id of `pane`'s program, if it is recorded as one."""
        run = self.panes.get(pane.id)
        return run.program.id if run is not None and run.program is not None else None

    def shutdown(self) -> None:
        """The daemon stops: what runs or waits ends `interrupted`, written by `close()` before the store closes."""
        now = time.time()
        for run in self.panes.values():
            active = run.tracker.active() + ([run.program] if run.program is not None else [])
            for execution in active:
                ended = finished(execution, "interrupted", now,
                                 error=error_of("interrupted", "the daemon stopped while it ran"))
                self._stopped.append(ended)
                self._ended(ended)
            if run.timer is not None:
                run.timer.cancel()
            run.keep_transcript(None)
        self.panes.clear()  # the panes' removal that follows has nothing left to record
        if "logs" in self.__dict__:
            self.logs.close()
        for task in self._tasks:
            task.cancel()

    async def close(self) -> None:
        """After `shutdown`: write what ended unwritten and what the stop interrupted (or log what is lost)."""
        if self.backlog is not None:
            await self.backlog.close(self._stopped)

    def pane_removed(self, pane: Pane) -> None:
        self.session_ids.pop(pane.id, None)
        run = self.panes.pop(pane.id, None)
        if run is None:
            return
        if not pane.exited:
            self._apply(run, run.caught_up().pane_exited(None, time.time(), killed=True))
            self._end_program(run, None)
        run.keep_transcript(None)
        if run.timer is not None:
            run.timer.cancel()

    def pane_exited(self, pane: Pane) -> None:
        run = self.panes.get(pane.id)
        if run is None:
            return
        now = time.time()
        self._apply(run, run.caught_up().pane_exited(pane.exit_code, now))
        self._end_program(run, pane.exit_code)

    def _end_program(self, run: PaneRun, exit_code: int | None) -> None:
        program, run.program = run.program, None
        if program is None:
            return
        now = time.time()
        if exit_code == 0:
            ended = finished(program, "success", now, exit_code=0)
        elif exit_code is None:
            ended = finished(program, "cancelled", now, error=error_of("pane_killed", "the pane was killed"))
        else:
            ended = finished(program, "failed", now, exit_code=exit_code,
                             error=exit_error(program.message, exit_code))
        self._finish(run, ended)

    def _retap(self, run: PaneRun) -> None:
        """`run`'s pane tells the history its chunks only while a shell is in front, whose prompt
        marks start commands (`_output`). The pane appends a running execution's output to its
        transcript itself (no call of ours per read: a busy fleet reads thousands a second), so an
        agent's screen redraws cost the history no frame of its own per read."""
        if self.panes.get(run.pane.id) is not run:
            return  # no longer followed (removed, respawned): its tap stays off
        tapped_for = run.tracker.state.is_agent
        if tapped_for == run.tapped_for:
            return  # most state changes change nothing (called on each)
        run.tapped_for = tapped_for
        wanted = None if tapped_for else run.marks_tap
        taps = run.pane.output_taps
        if run.tap is not None and run.tap != wanted and run.tap in taps:
            taps.remove(run.tap)
        run.tap = wanted
        if wanted is not None and wanted not in taps:
            taps.append(wanted)

    def _output(self, run: PaneRun, data: bytes) -> None:
        """Every chunk a pane writes while a shell is in front (an agent's own shell tools' marks
        are not command lines of its pane: `_retap` takes this tap off then)."""
        for mark in run.marks.feed(data):
            now = time.time()
            if mark.kind == "C":
                running = run.tracker.running
                if running is not None and running.kind == "command" and running.triggered_by != "manual":
                    continue  # the command muxd typed (muxd run -t): already running
                self._begin(run)
                template = self._template(run.pane, "manual", None, message=mark.command)
                self._apply(run, run.caught_up().start_command(template, now))
            elif mark.kind == "D":
                self._apply(run, run.tracker.command_finished(mark.exit_code, now))

    # ------------------------------------------------------------ states

    def agent_changed(self, pane: Pane, state: AgentState, before: AgentState | None = None) -> None:
        """A state the detectors published for `pane`; `before`, the one published before it,
        which the daemon may not have given here (`counters_only`: it is counted now)."""
        run = self.panes.get(pane.id)
        if run is None:
            return
        tracker = run.tracker
        if before is not None:
            tracker.take_counters(before)
        was_running = tracker.running
        effects = tracker.state_changed(state, time.time(), manual=run.manual)
        # Many states change nothing here (one busy state to another mid-turn: no effect, no
        # deadline moved, no tap to change): checked here, without a call for each.
        if effects:
            if tracker.running is not None and tracker.running is not was_running and any(
                    isinstance(e, Save) for e in effects):
                self._begin(run, submitted=True, agent_turn=True)  # a person's prompt began a turn (already in the log)
            self._apply(run, effects)
        elif tracker.due() != run.timer_due or (run.timer is None and run.timer_due is not None):
            self._schedule(run)
        if state.is_agent is not run.tapped_for:
            self._retap(run)

    def _manual(self, pane: Pane) -> tuple[Execution, str | None]:
        """A person's prompt made `pane`'s agent busy: the record to start, the message typed."""
        return self._template(pane, "manual", None), self._typed_input(pane)

    def _typed_input(self, pane: Pane) -> str | None:
        detection = self.detections.get(pane.id)
        return detection.runner.take_typed_input() if detection is not None else None

    def _template(self, pane: Pane, triggered_by: str, principal: str | None, **fields: object) -> Execution:
        return Execution(id=new_execution_id(), pane_id=pane.id, pane_key=self.pane_key(pane.id),
                         agent_name=pane.name or pane.id, agent_type=pane.agent.agent_type,
                         triggered_by=triggered_by, principal=principal, host=self.host,
                         **fields)  # type: ignore[arg-type]

    # ------------------------------------------------------------ requests

    async def submit(self, pane: Pane, principal: str, *, force: bool = False,
                     **fields: object) -> tuple[Execution, bool]:
        """A prompt for `pane`'s agent; (its record, False) if `principal` sent this pane the same
        prompt with the same idempotency key before; conflict if it sent another prompt with it.
        Unless `force`, it is never typed where a shell is in front when its turn comes: it fails
        as `no_agent` instead (the agent exited while it waited)."""
        key = fields.get("idempotency_key")
        if key is not None:
            earlier = await self._with_key(principal, pane, str(key))
            if earlier is not None:
                if earlier.message != fields.get("message"):
                    raise Conflict(f"idempotency key {key!r} already names execution {earlier.id} on {pane.id}, "
                                   "sent with another message: a new prompt needs a new key",
                                   execution_id=earlier.id, idempotency_key=key)
                return earlier, False
        if pane.exited:
            raise Conflict(f"pane {pane.id} has exited", pane=pane.id)
        run = self.panes.get(pane.id)
        if run is None:
            raise NotFound(f"pane {pane.id} is not followed by the history", pane=pane.id)
        triggered_by = str(fields.pop("triggered_by"))
        execution_id = fields.pop("execution_id", None)  # allocated by another host's daemon (host_sending.py)
        execution = self._template(pane, triggered_by, principal, kind="prompt", **fields)
        if execution_id is not None:
            execution = msgspec.structs.replace(execution, id=str(execution_id))
        effects = run.tracker.submit(execution, time.time(), force=force)
        self._apply(run, effects)
        told = next((e.execution for e in effects if e.execution.id == execution.id), execution)
        return run.tracker.find(execution.id) or told, True

    async def _with_key(self, principal: str, pane: Pane, key: str) -> Execution | None:
        """What `principal` sent `pane` with idempotency key `key`, if anything. A key is scoped to
        (principal, pane): another principal's same key is another key, so nobody can take an
        orchestrator's (predictable) key first, or get back through it what another sent."""
        pane_key = self.pane_key(pane.id)
        stored = await self.store.by_idempotency_key(principal, pane_key, key) if self.store is not None else None
        # Memory after the await: a twin submitted meanwhile is found here, not sent twice.
        run = self.panes.get(pane.id)
        in_memory = [*(run.tracker.active() if run is not None else ()), *self.finishing.values(),
                     *(self.backlog if self.backlog is not None else ())]
        return next((e for e in in_memory if (e.idempotency_key, e.principal, e.pane_key) == (key, principal, pane_key)),
                    stored)

    def type_command(self, pane: Pane, principal: str, command: str, triggered_by: str,
                     timeout_s: float | None, **trace: str) -> Execution:
        """Run `command` in the integrated shell of `pane` (muxd run -t), recorded by its marks;
        `trace`: its trace_id and span_id, if it is traced."""
        run = self.panes.get(pane.id)
        if pane.exited:
            raise Conflict(f"pane {pane.id} has exited", pane=pane.id)
        if run is None or not run.marks.seen:
            raise Conflict(f"pane {pane.id}'s shell does not write prompt marks (OSC 133): muxd cannot tell "
                           "when a command ends there; run it in a new window (without -t)", pane=pane.id)
        if run.tracker.running is not None or run.tracker.state.is_agent:
            raise Conflict(f"pane {pane.id} is busy: its shell is not at a prompt", pane=pane.id)
        execution = self._template(pane, triggered_by, principal, message=command, timeout_s=timeout_s, **trace)
        self._begin(run)
        self._apply(run, run.tracker.start_command(execution, time.time()))
        pane.send(command.encode() + b"\r")
        return execution

    def cancel(self, execution_id: str) -> Execution:
        for run in self.panes.values():
            if run.tracker.find(execution_id) is not None:
                effects = run.caught_up().cancel(execution_id, time.time())
                self._apply(run, effects)
                return next(e.execution for e in effects
                            if isinstance(e, (Save, Finish)) and e.execution.id == execution_id)
            if run.program is not None and run.program.id == execution_id:
                run.pane.send(CTRL_C)
                return run.program
        raise Conflict(f"execution {execution_id} is not running or pending", execution_id=execution_id)

    def live(self, execution_id: str) -> Execution | None:
        """An execution not yet (finally) in the store: pending, running, being completed, or
        ended and waiting in the backlog for the store to take it."""
        if execution_id in self.finishing:
            return self.finishing[execution_id]
        kept = self.backlog.get(execution_id) if self.backlog is not None else None
        return kept or self._active_record(execution_id)

    async def record(self, execution_id: str) -> Execution | None:
        """The newest record of `execution_id`: in memory, else in the store."""
        found = self.live(execution_id)
        if found is None and self.store is not None:
            found = await self.store.get(execution_id)
        return found

    async def transcript(self, execution_id: str) -> Transcript | None:
        kept = self.backlog.transcript(execution_id) if self.backlog is not None else None
        return kept or (await self.store.transcript(execution_id) if self.store is not None else None)

    def _active_record(self, execution_id: str) -> Execution | None:
        """`execution_id` as it is now if it is pending or running."""
        for run in self.panes.values():
            found = run.tracker.find(execution_id)
            if found is not None:
                return found
            if run.program is not None and run.program.id == execution_id:
                return run.program
        return None

    def unwritten(self, scope: Scope) -> list[Execution]:
        """What `live` knows that `scope` may see: the store may not hold these yet."""
        found = {e.id: e for e in self.active(scope)}
        found.update((e.id, e) for e in (*self.finishing.values(), *(self.backlog or ())) if scope.sees(e))
        return list(found.values())

    def save_active(self) -> None:
        """Write each pending or running execution again as it is (another host wrote it interrupted)."""
        for execution in self.active(EVERYTHING):
            self._save(execution)

    def active(self, scope: Scope) -> list[Execution]:
        found = [e for run in self.panes.values() for e in run.tracker.active()]
        found += [run.program for run in self.panes.values() if run.program is not None]
        return [e for e in found if scope.sees(e)]

    async def wait(self, execution_ids: Iterable[str], *, any_one: bool, timeout_s: float) -> bool:
        """Wait until each (or any one) of the executions ended; False if the time ran out."""
        loop = asyncio.get_running_loop()
        futures = []
        for execution_id in execution_ids:
            if execution_id not in self.finishing and self._active_record(execution_id) is None:
                if any_one:
                    return True
                continue  # ended already (or unknown: the caller checked)
            future: asyncio.Future[Execution] = loop.create_future()
            self._waiters.setdefault(execution_id, []).append(future)
            futures.append(future)
        if not futures:
            return True
        done, pending = await asyncio.wait(futures, timeout=timeout_s,
                                           return_when=asyncio.FIRST_COMPLETED if any_one else asyncio.ALL_COMPLETED)
        for future in pending:
            future.cancel()
        return bool(done) if any_one else not pending

    # ------------------------------------------------------------ effects

    def _begin(self, run: PaneRun, *, submitted: bool = False, agent_turn: bool = False) -> None:
        """An execution starts in `run`'s pane now: its transcript and its first row. An agent's
        turn on the main screen keeps no bytes: its transcript is its rows, read at its end (the
        pane's scrollback holds them; the alternate screen keeps none)."""
        pane = run.pane
        emulator = pane.emulator
        run.keep_transcript(None if agent_turn and not emulator.alternate_screen else
                            TranscriptBuffer(pane.columns, pane.lines, self.transcript_max_bytes))
        run.start_row = emulator.rows_scrolled + emulator.cursor[1]
        detection = self.detections.get(pane.id)
        run.tools_at_start = detection.runner.tools_counted if detection is not None else 0
        # The agent's own log, its end marked now, found off the loop (it reads /proc and the file).
        # Keyed by the agent's own process: one started again from the same shell is another.
        run.agent_pid = pane.foreground_pid() or pane.pid
        run.session_log = self.logs.mark_soon(pane.id, pane.agent.agent_type, run.agent_pid,
                                              not submitted) if pane.agent.is_agent else None

    def _apply(self, run: PaneRun, effects: list[Effect]) -> None:
        for effect in effects:
            if isinstance(effect, Deliver):
                self._begin(run, agent_turn=effect.execution.kind == "prompt")
                self._deliver(run.pane, effect.execution.message or "")
                self._save(effect.execution)
            elif isinstance(effect, Resubmit):
                if not run.pane.exited:
                    log.info("execution %s: its prompt is still in %s's input box: Enter again",
                             effect.execution.id, run.pane.id)
                    run.pane.send(b"\r")
            elif isinstance(effect, Interrupt):
                if not run.pane.exited:
                    run.pane.send(INTERRUPT_KEYS.get(run.pane.agent.agent_type or "", CTRL_C))
                    detection = self.detections.get(run.pane.id)
                    if detection is not None:
                        detection.interrupted()  # no hook tells an interrupted turn's end
            elif isinstance(effect, Save):
                self._save(effect.execution)
            elif isinstance(effect, Finish):
                self._finish(run, effect.execution)
        self._schedule(run)

    def _deliver(self, pane: Pane, message: str) -> None:
        data = message.encode()
        if "\n" in message and BRACKETED_PASTE_MODE in pane.emulator.private_modes:
            data = PASTE_START + data + PASTE_END  # a multi-line prompt, not several submitted lines
        # C-u first empties the input box (every agent CLI takes it so): an interrupted turn's
        # prompt comes back there (Claude Code), or a person left words in it.
        pane.send(CLEAR_INPUT + data)
        # The Enter goes as its own write a moment later (ink-based TUIs take a CR in the same
        # read as pasted text for a newline).
        asyncio.get_running_loop().call_later(SUBMIT_GAP_S, lambda: pane.exited or pane.send(b"\r"))

    def _schedule(self, run: PaneRun) -> None:
        due = run.tracker.due()
        if run.timer is not None:
            if due == run.timer_due:
                return  # most state changes move no deadline
            run.timer.cancel()
            run.timer = None
        run.timer_due = due
        if due is not None:
            run.timer = asyncio.get_running_loop().call_later(
                max(0.0, due - time.time()) + EXECUTION_TIMER_SLACK_S, self._tick, run)

    def _tick(self, run: PaneRun) -> None:
        run.timer = None
        if self.panes.get(run.pane.id) is run:
            self._apply(run, run.caught_up().tick(time.time()))

    async def _finalized(self, execution: Execution, snapshot: object) -> Execution:
        """`execution` completed from the screen and the agent's log; as it ended if that fails
        (a record left unsaved would stay `running` for ever: an execution always ends)."""
        from muxd.daemon.work import execution_finish

        try:
            return await execution_finish.finalize(execution, snapshot, self.logs)
        except Exception:
            log.exception("completing execution %s: saved as it ended, without its answer", execution.id)
            return execution

    def _finish(self, run: PaneRun, execution: Execution) -> None:
        """Complete an ended execution (at once where nothing is to be waited for, else off the
        loop's critical path), then save it and tell waiters."""
        from muxd.daemon.work import execution_finish

        output = run.transcript
        of_rows = output is None and execution.kind == "prompt"  # (_begin kept no bytes for it)
        run.keep_transcript(None)
        snapshot = execution_finish.snapshot(run, execution, self.detections.get(run.pane.id), rows_read=of_rows)
        if of_rows:
            output = TranscriptBuffer.of_rows(snapshot.lines[snapshot.turn_from:], run.pane.columns,
                                              run.pane.lines, self.transcript_max_bytes)
        execution = msgspec.structs.replace(execution, transcript_bytes=output.kept if output else 0,
                                            transcript_truncated=bool(output and output.truncated))
        self.finishing[execution.id] = execution
        try:
            completed = execution_finish.finalized_at_once(execution, snapshot, self.logs)
        except Exception:
            log.exception("completing execution %s: saved as it ended, without its answer", execution.id)
            completed = execution
        if completed is None:
            self._start(self._complete(execution, snapshot, output))
        else:
            self._store(completed, output)  # no task: most turns (an agent that keeps no log)

    async def _complete(self, execution: Execution, snapshot: object, output: TranscriptBuffer | None) -> None:
        self._store(await self._finalized(execution, snapshot), output)

    def _store(self, execution: Execution, output: TranscriptBuffer | None) -> None:
        """Write an ended, complete execution; its waiters are told once it is stored (`_stored`)."""
        self.finishing[execution.id] = execution
        if execution.session_id and execution.pane_id in self.panes:
            self.session_ids[execution.pane_id] = execution.session_id
        if self.store is None:
            self._stored(execution, output, None)
            return
        # The output is compressed on the writer thread, with the row: no trip of its own.
        # A person's turn nobody waits for is written with others that end about then.
        untold = execution.triggered_by == "manual" and execution.id not in self._waiters
        try:
            stored = self.store.saving(execution, output, within=HISTORY_UNTOLD_ROW_WITHIN_S if untold else 0.0)
        except Exception as exc:  # (the store tells its failures through the future: a bug) kept, as one
            log.exception("saving execution %s", execution.id)
            stored = asyncio.get_running_loop().create_future()
            stored.set_exception(StoreUnavailable(f"the history write failed: {exc!r}"))
        stored.add_done_callback(functools.partial(self._stored, execution, output))

    def _stored(self, execution: Execution, output: TranscriptBuffer | None, stored: asyncio.Future[None] | None) -> None:
        failure = stored.exception() if stored is not None and not stored.cancelled() else None
        if isinstance(failure, StoreUnavailable):  # kept, found by live(), written once the store takes it
            self.backlog.keep(execution, output.finish() if output is not None else None,  # type: ignore[union-attr]
                              failure)
        elif failure is not None:
            log.error("completing execution %s: %r", execution.id, failure)
        elif stored is not None:
            self.backlog.written(execution.id)  # type: ignore[union-attr]
        self.finishing.pop(execution.id, None)
        self._ended(execution)

    def _save(self, execution: Execution) -> None:
        if execution.status in ENDED_STATUSES:
            # Ended without running (cancelled while pending, never delivered): written before
            # waiters are told, and found in `finishing` meanwhile, so what they read back is the end.
            self._store(execution, None)
        elif self.store is not None:
            # A turn a person began (nobody was told of it: no caller holds its id) is written with
            # others later, or with its end if that comes first; it is in memory meanwhile.
            unannounced = execution.status == "running" and execution.triggered_by == "manual"
            self.store.save_soon(execution, self._save_failed,
                                 within=HISTORY_UNTOLD_RUNNING_ROW_WITHIN_S if unannounced else 0.0)

    def _save_failed(self, execution: Execution, failure: StoreUnavailable) -> None:
        """(On the writer thread.) A queued save failed: the backlog writes it again."""
        assert self.backlog is not None and self._loop is not None
        try:
            self._loop.call_soon_threadsafe(self.backlog.keep, execution, None, failure)
        except RuntimeError:  # the loop is closed: the daemon is gone
            log.error("history: %s (%s) not written: %s", execution.id, execution.status, failure.message)

    def _ended(self, execution: Execution) -> None:
        for future in self._waiters.pop(execution.id, []):
            if not future.done():
                future.set_result(execution)
        if self.on_ended is not None:
            self.on_ended(execution)
