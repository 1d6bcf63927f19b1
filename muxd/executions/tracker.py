"""`ExecutionTracker`: follows the executions of one pane from start to end. Sans-IO.

The daemon feeds it what happens to the pane — a prompt submitted (`submit`), each published
`AgentState` (`state_changed`; of a run that only moves a turn's counters on, the last, late:
`counters_only`, `take_counters`), a shell's prompt marks (`command_started` /
`command_finished`), the pane's exit, the clock (`tick`) — and carries out the `Effect`s it
returns: deliver a prompt to the agent, send the interrupt key, save a record, finish a record
(the daemon adds what needs I/O: the answer read off the screen, the agent's session log, the
transcript).

One execution runs at a time. A prompt submitted while the agent is busy (or another
execution runs) waits in order as `pending` and is delivered when the agent is next at its
prompt. An agent turn ends when the agent is back at its prompt and stays there for
IDLE_SETTLE_S (after having been seen busy, or TURN_UNSEEN_S after delivery for a turn too
short to be seen, once `turn_shown` says the screen shows it); a turn that ends showing an API
error is `failed`, and one a usage limit stopped (UsageLimited) `failed` with `usage_limit`. A
prompt never seen busy whose text stays in the agent's input box (`prompt_waiting`) gets
Enter again, a few times, and fails as `prompt_not_taken` if it stays. A prompt about to be
delivered where a shell, not an agent, is now in front (`shell_in_front`: the agent exited
while it waited) is not typed, which would run it as a command: it fails as `no_agent`,
unless it was submitted with force.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

import msgspec

from muxd.config import (
    EXECUTION_IDLE_SETTLE_S, EXECUTION_QUEUE_MAX, EXECUTION_RESUBMIT_GAP_S, EXECUTION_RESUBMITS_MAX,
    EXECUTION_TURN_RECHECK_S, EXECUTION_TURN_UNSEEN_S, EXECUTION_TURN_UNSHOWN_S,
)
from muxd.detectors.state import (
    BUSY_STATES, HOOK_LATE_S, LIMIT_KINDS, TURN_OVER_STATES, AgentError, AgentState, takes_prompt,
)
from muxd.errors import Conflict
from muxd.executions.fingerprint import stack_hash
from muxd.executions.record import COST_DECIMALS, Execution, ExecutionError, Status, finished

# Still the agent's turn, though not busy: it waits for a "yes" from someone.
MID_TURN_STATES = BUSY_STATES | {"AwaitingConfirmation"}


# ---------------------------------------------------------------- effects

class Deliver(msgspec.Struct, frozen=True):
    """Type `execution.message` at the agent's prompt and submit it; the record is `running`."""

    execution: Execution


class Resubmit(msgspec.Struct, frozen=True):
    """Press Enter again: the agent's input box still holds the delivered prompt, unsent (a CLI
    that took the Enter as part of the typing, as Codex does when the text reaches it late)."""

    execution: Execution


class Interrupt(msgspec.Struct, frozen=True):
    """Send the agent's interrupt key (the running turn was cancelled or timed out)."""

    execution: Execution


class Save(msgspec.Struct, frozen=True):
    """Persist the record as it is now (queued, started, cancelled while pending)."""

    execution: Execution


class Finish(msgspec.Struct, frozen=True):
    """The execution ended: complete it with what the screen, logs and transcript say, save it."""

    execution: Execution


Effect = Deliver | Resubmit | Interrupt | Save | Finish


# The failures muxd itself names (the pane's program gone, a shell command's status, no agent
# left to take a waiting prompt), as opposed to an error the agent reported (on screen, through
# a hook, in its log).
MUXD_FAILURE_TYPES = frozenset({"pane_exited", "exit_status", "no_agent"})


def error_of(error_type: str, message: str) -> ExecutionError:
    return ExecutionError(type=error_type, message=message, stack_hash=stack_hash(error_type, message))


# What a turn that ended on a usage or rate limit failed with, whichever source told it.
USAGE_LIMIT_ERROR = "usage_limit"


def turn_error(error_type: str, message: str) -> ExecutionError:
    """The error a turn ended on, as the history types it: a limit (a plan's, a quota, a 429 the
    agent gave up on) is `usage_limit`, so one failure is one type whatever said it."""
    return error_of(USAGE_LIMIT_ERROR if error_type in LIMIT_KINDS else error_type, message)


def exit_error(command: str | None, exit_code: int) -> ExecutionError:
    """A command that exited non-zero. Its pattern is the command (normalised) and the status:
    `make test` failing with 2 again is the same failure; another command, or status, is not."""
    message = f"{command}: exited with status {exit_code}" if command else f"exited with status {exit_code}"
    return ExecutionError(type="exit_status", message=message,
                          stack_hash=stack_hash(f"exit_status {exit_code}", message))


class _Turn(msgspec.Struct):
    """What is known of the running execution beyond its record."""

    delivered_at: float
    seen_busy: bool = False
    at_prompt_since: float | None = None
    error: AgentError | None = None
    tokens_max: int | None = None
    cost_start: float | None = None
    cost_end: float | None = None
    recheck_at: float | None = None  # an unseen turn not on the screen yet: look again then
    resubmits: int = 0               # Enters sent again for a prompt left in the input box
    resubmitted_at: float = 0.0
    hook_ended_at: float | None = None  # the agent's hooks said the turn ended then (its Stop)


class ExecutionTracker(msgspec.Struct):
    pane_id: str
    # Whether the screen shows the running prompt's turn (its echo): the daemon reads it. An
    # agent never seen busy is done only once it is, or after EXECUTION_TURN_UNSHOWN_S.
    turn_shown: Callable[[Execution], bool] | None = None
    # Whether the agent's input box still holds the running prompt's text (the daemon reads the
    # detector's draft): a turn never seen busy whose text is still there was never submitted.
    prompt_waiting: Callable[[Execution], bool] | None = None
    # The shell in front of the pane, if a shell and not an agent would read a prompt typed now
    # (the daemon reads the foreground process): asked just before each delivery.
    shell_in_front: Callable[[], str | None] | None = None
    # Whether the pane's newest frame has been read and what it shows published (no look on its
    # way, no state waiting for its second look): an unseen turn is judged on that frame only.
    screen_settled: Callable[[], bool] | None = None
    state: AgentState = msgspec.field(default_factory=AgentState)
    running: Execution | None = None
    queue: deque[Execution] = msgspec.field(default_factory=deque)
    forced: set[str] = msgspec.field(default_factory=set)  # ids of the pending ones sent with force: typed even into a shell
    _turn: _Turn | None = None
    # After an interrupted turn the state on hand may predate the interrupt, and the agent
    # winds the turn down: no person's turn starts until it is seen at its prompt again, and
    # nothing is delivered until then or until `_quiet_until` (the state may not change at all).
    _quiet_until: float = 0.0
    _settling: bool = False

    # ------------------------------------------------------------ questions

    @property
    def is_busy(self) -> bool:
        return self.running is not None or self.state.activity.state in MID_TURN_STATES

    @property
    def queue_length(self) -> int:
        return len(self.queue)

    def active(self) -> list[Execution]:
        """The running execution, then the pending ones in the order they will run."""
        return ([self.running] if self.running is not None else []) + list(self.queue)

    def find(self, execution_id: str) -> Execution | None:
        return next((e for e in self.active() if e.id == execution_id), None)

    def due(self) -> float | None:
        """When `tick` must next be called (a settle or a timeout), or None. Never a time that
        has passed while nothing but time can change (the daemon would tick again at once)."""
        times = []
        turn, running = self._turn, self.running
        if turn is not None and running is not None and running.kind == "prompt":
            if turn.at_prompt_since is not None:
                at = turn.at_prompt_since + EXECUTION_IDLE_SETTLE_S
                if not turn.seen_busy:  # and the unseen grace, and the next look at the screen
                    at = max(at, turn.delivered_at + EXECUTION_TURN_UNSEEN_S, turn.recheck_at or 0.0)
                times.append(at)
            elif not turn.seen_busy and self.state.activity.state in TURN_OVER_STATES:
                times.append(turn.delivered_at + EXECUTION_TURN_UNSEEN_S)  # no state since delivery
        if running is not None and running.timeout_s is not None and running.started_at is not None:
            times.append(running.started_at + running.timeout_s)
        if running is None and self.queue and self._settling:
            times.append(self._quiet_until)
        return min(times) if times else None

    # ------------------------------------------------------------ prompts

    def submit(self, execution: Execution, now: float, *, force: bool = False) -> list[Effect]:
        """A prompt for the agent: delivered now if it is at its prompt and nothing runs, else queued.
        With `force` it is typed even where a shell is in front when its turn comes."""
        if len(self.queue) >= EXECUTION_QUEUE_MAX:
            raise Conflict(f"pane {self.pane_id} already has {EXECUTION_QUEUE_MAX} executions waiting",
                           pane=self.pane_id)
        queued = msgspec.structs.replace(execution, status="pending", queued_at=now)
        if force:
            self.forced.add(queued.id)
        if self.running is None and not self.queue and self._ready(now):
            return self._deliver(queued, now)
        self.queue.append(queued)
        return [Save(queued)]

    def _ready(self, now: float) -> bool:
        # (a usage-limited agent takes a prompt too: muxd's resume at the reset sends one)
        return takes_prompt(self.state.activity.state, self.state.confirmation) and (
            not self._settling or now >= self._quiet_until)

    def _deliver(self, execution: Execution, now: float) -> list[Effect]:
        """Deliver `execution`, or end it undelivered where a shell would run it as a command."""
        forced = execution.id in self.forced
        self.forced.discard(execution.id)
        shell = None if forced or self.shell_in_front is None else self.shell_in_front()
        if shell is not None:
            return [Save(finished(execution, "failed", now, error=error_of(
                "no_agent", f"no agent in {self.pane_id}: the agent exited before the prompt was delivered "
                            f"({shell} runs there)")))]
        started = msgspec.structs.replace(execution, status="running", started_at=now)
        self.running = started
        self._turn = _Turn(delivered_at=now, cost_start=self.state.session.cost_usd)
        return [Deliver(started)]

    def start_command(self, execution: Execution, now: float) -> list[Effect]:
        """A program or command line began (its end comes with `command_finished` or the exit)."""
        effects: list[Effect] = []
        if self.running is not None:  # a shell ran a command while another was recorded: close it
            effects += self._end("interrupted", now, error_of("superseded", "another command started"))
        started = msgspec.structs.replace(execution, kind="command", status="running", started_at=now)
        self.running = started
        self._turn = _Turn(delivered_at=now, seen_busy=True)
        return effects + [Save(started)]

    def command_finished(self, exit_code: int | None, now: float) -> list[Effect]:
        """The running command ended with `exit_code` (OSC 133 D, or the pane's program exited)."""
        running = self.running
        if running is None or running.kind != "command":
            return []
        if exit_code is None or exit_code == 0:
            return self._end("success", now, None, exit_code=exit_code)
        return self._end("failed", now, exit_error(running.message, exit_code),
                         exit_code=exit_code)

    # ------------------------------------------------------------ what the detectors see

    def state_changed(self, state: AgentState, now: float,
                      manual: Callable[[], tuple[Execution, str | None]] | None = None) -> list[Effect]:
        """A new published state. `manual()` gives the record to start if a person's prompt made
        the agent busy, and its message (read from the input box before it went busy); it is
        called only then."""
        before, self.state = self.state, state
        activity = state.activity.state
        running, turn = self.running, self._turn
        if activity == "Exited":
            return self.pane_exited(None, now)
        if activity in TURN_OVER_STATES:
            self._settling = False
        if running is None:
            if (manual is not None and not self._settling and state.is_agent and activity in MID_TURN_STATES
                    and takes_prompt(before.activity.state, before.confirmation)
                    and before.agent_type == state.agent_type):
                return self._start_manual(*manual(), state, now)
            return self._next(now)
        if running.kind != "prompt" or turn is None:
            return []
        self._observe(state)
        self._take_hook_prompt(running, state)
        if activity in MID_TURN_STATES:
            turn.seen_busy = True
            turn.at_prompt_since = turn.hook_ended_at = None
        elif activity in TURN_OVER_STATES and state.background:
            turn.at_prompt_since = None  # background work runs on: the turn settles once it ends
        elif activity in TURN_OVER_STATES:  # at its prompt, or stopped by a usage limit
            if turn.at_prompt_since is None:
                turn.at_prompt_since = now
            said = _said_by_hook(state, "state")  # not a Stop of the turn before this one
            turn.hook_ended_at = said if said is not None and said >= turn.delivered_at else None
        else:  # Unknown: not at the prompt, not known busy
            turn.at_prompt_since = None
        return self.tick(now)

    def take_counters(self, state: AgentState) -> None:
        """`state`, which the daemon did not give `state_changed` because it only moved the running
        turn's counters on (`counters_only`), taken before anything can end the turn: the counters
        of the last state of such a run are its most (issue 29). Nothing without a running turn,
        nor for a state that is not such a one (the one it has, or one it should have been given)."""
        turn = self._turn
        if turn is None or state is self.state or not counters_only(self.state, state):
            return
        self.state = state
        self._count(turn, state)

    def _start_manual(self, manual: Execution, message: str | None, state: AgentState, now: float) -> list[Effect]:
        # Typed by a person: already submitted, so nothing to deliver, and already busy. The
        # agent's own hook, when it has one, gives the prompt as it got it and the moment.
        sources = dict(manual.sources)
        prompt_at, started_at = _said_by_hook(state, "prompt"), _said_by_hook(state, "state")
        if prompt_at is not None and state.prompt and prompt_at >= now - HOOK_LATE_S:  # not the turn before's
            message, sources["message"] = state.prompt, "hook"
        if started_at is not None and started_at >= now - HOOK_LATE_S:
            now, sources["started_at"] = min(now, started_at), "hook"
        self.running = msgspec.structs.replace(manual, triggered_by="manual", status="running", message=message,
                                               started_at=now, queued_at=now, sources=sources)
        self._turn = _Turn(delivered_at=now, seen_busy=True, cost_start=None)
        self._observe(state)
        return [Save(self.running)]

    def _take_hook_prompt(self, running: Execution, state: AgentState) -> None:
        """A person's turn seen busy on screen before its prompt hook came (a loaded machine):
        the hook's prompt, when it comes, is the message (the input box's text was a guess)."""
        if not state.prompt or running.triggered_by != "manual":
            return  # (every state of an agent without hooks: no lookup)
        prompt_at = _said_by_hook(state, "prompt")
        if (running.sources.get("message") != "hook"
                and prompt_at is not None and prompt_at >= (running.started_at or 0.0) - HOOK_LATE_S):
            self.running = msgspec.structs.replace(running, message=state.prompt,
                                                   sources={**running.sources, "message": "hook"})

    def _observe(self, state: AgentState) -> None:
        turn = self._turn
        if turn is None:
            return
        if state.error is not None:
            turn.error = state.error
        elif state.activity.state in BUSY_STATES:
            turn.error = None  # it recovered (a retry went through)
        self._count(turn, state)

    def _count(self, turn: _Turn, state: AgentState) -> None:
        tokens = state.session.tokens_used
        if tokens is not None and (turn.tokens_max is None or tokens > turn.tokens_max):
            turn.tokens_max = tokens
        if state.session.cost_usd is not None:
            turn.cost_end = state.session.cost_usd

    def tick(self, now: float) -> list[Effect]:
        """Time passed: end a settled turn, time out an overdue execution."""
        running, turn = self.running, self._turn
        if running is None or turn is None:
            return self._next(now)
        if running.timeout_s is not None and running.started_at is not None and (
                now >= running.started_at + running.timeout_s):
            effects = self._end("timeout", now, error_of("timeout", f"no end after {running.timeout_s:g}s"))
            self._quiet_until, self._settling = now + EXECUTION_IDLE_SETTLE_S, True
            return [Interrupt(running)] + effects
        if (running.kind == "prompt" and turn.at_prompt_since is None and not turn.seen_busy
                and self.state.activity.state in TURN_OVER_STATES):
            # No state was published since delivery: the agent never left its prompt (a turn
            # refused at once, e.g. an API error shown under the prompt).
            turn.at_prompt_since = turn.delivered_at
        if running.kind != "prompt" or turn.at_prompt_since is None:
            return []
        settled = now - turn.at_prompt_since >= EXECUTION_IDLE_SETTLE_S
        unseen_long_enough = now - turn.delivered_at >= EXECUTION_TURN_UNSEEN_S
        if not settled or not (turn.seen_busy or unseen_long_enough):
            return []
        if not turn.seen_busy and not self._screen_read(turn, now):
            return []
        if not turn.seen_busy and self.prompt_waiting is not None and self.prompt_waiting(running):
            return self._unsent(running, turn, now)
        if not turn.seen_busy and not self._shown(running, turn, now):
            turn.recheck_at = now + EXECUTION_TURN_RECHECK_S
            return []
        error = turn.error or self.state.error
        limit = self.state.limit if self.state.activity.state == "UsageLimited" else None
        ended = turn.hook_ended_at if turn.hook_ended_at is not None else now
        if limit is not None:
            effects = self._end("failed", ended, error_of(USAGE_LIMIT_ERROR, limit.message))
        elif error is not None:
            effects = self._end("failed", ended, turn_error(error.type, error.message))
        else:
            effects = self._end("success", ended, None)
        return effects + self._next(now)

    def _unsent(self, running: Execution, turn: _Turn, now: float) -> list[Effect]:
        """The prompt sits in the agent's input box, not submitted: Enter again, a few times, then
        the execution fails as never taken (it is no success: the agent never saw it)."""
        turn.recheck_at = now + EXECUTION_TURN_RECHECK_S
        if now - turn.delivered_at >= EXECUTION_TURN_UNSHOWN_S:
            effects = self._end("failed", now, error_of(
                "prompt_not_taken", f"the agent's input box still held the prompt {EXECUTION_TURN_UNSHOWN_S:g}s "
                f"after it was typed and Enter was pressed {turn.resubmits + 1} times: never submitted"))
            return effects + self._next(now)
        if turn.resubmits >= EXECUTION_RESUBMITS_MAX or now - turn.resubmitted_at < EXECUTION_RESUBMIT_GAP_S:
            return []
        turn.resubmits += 1
        turn.resubmitted_at = now
        return [Resubmit(running)]

    def _screen_read(self, turn: _Turn, now: float) -> bool:
        """Whether the screen an unseen turn is judged on is the pane's newest, read and
        published: the frame just after an Enter is taken shows the prompt's echo before its
        busy state is confirmed, and a turn ended on it would come back as a person's. If not,
        looked at again soon (up to EXECUTION_TURN_UNSHOWN_S)."""
        if (self.screen_settled is None or self.screen_settled()
                or now - turn.delivered_at >= EXECUTION_TURN_UNSHOWN_S):
            return True
        turn.recheck_at = now + EXECUTION_TURN_RECHECK_S
        return False

    def _shown(self, running: Execution, turn: _Turn, now: float) -> bool:
        """Whether a turn never seen busy has happened on screen (or been waited for long enough)."""
        turn.recheck_at = None
        if self.turn_shown is None or now - turn.delivered_at >= EXECUTION_TURN_UNSHOWN_S:
            return True
        return self.turn_shown(running)

    def _next(self, now: float) -> list[Effect]:
        effects: list[Effect] = []
        while self.running is None and self.queue and self._ready(now):  # past any left undelivered
            effects += self._deliver(self.queue.popleft(), now)
        return effects

    # ------------------------------------------------------------ ends

    def pane_exited(self, exit_code: int | None, now: float, *, killed: bool = False) -> list[Effect]:
        """The pane's program exited (or the pane was `killed` under it): what runs ends by it,
        what waits can never run."""
        effects: list[Effect] = []
        running = self.running
        if running is not None and running.kind == "command":
            effects += self.command_finished(exit_code, now)
        elif running is not None and killed:  # a turn cut off is no answer, however busy it was
            effects += self._end("cancelled", now, error_of("pane_killed", "the pane was killed"))
        elif running is not None:
            if exit_code:
                effects += self._end("failed", now, error_of("pane_exited", f"the agent exited with status {exit_code}"),
                                     exit_code=exit_code)
            else:
                effects += self._end("success" if self._turn and self._turn.seen_busy else "failed", now,
                                     None if self._turn and self._turn.seen_busy else
                                     error_of("pane_exited", "the agent exited before answering"))
        self.forced.clear()
        while self.queue:
            pending = self.queue.popleft()
            effects.append(Save(finished(pending, "cancelled", now,
                                         error=error_of("pane_exited", "the pane exited before it ran"))))
        return effects

    def cancel(self, execution_id: str, now: float) -> list[Effect]:
        """Cancel a running execution (interrupt key) or a pending one (never delivered)."""
        running = self.running
        if running is not None and running.id == execution_id:
            effects: list[Effect] = [Interrupt(running)] if running.kind == "prompt" or running.message else []
            self._quiet_until, self._settling = now + EXECUTION_IDLE_SETTLE_S, True
            return effects + self._end("cancelled", now, None)
        for pending in list(self.queue):
            if pending.id == execution_id:
                self.queue.remove(pending)
                self.forced.discard(pending.id)
                return [Save(finished(pending, "cancelled", now))]
        raise Conflict(f"execution {execution_id} is not running or pending on {self.pane_id}",
                       execution_id=execution_id)

    def _end(self, status: Status, now: float, error: ExecutionError | None, **fields: object) -> list[Effect]:
        running, turn = self.running, self._turn
        assert running is not None
        self.running, self._turn = None, None
        extra: dict[str, object] = dict(fields)
        if turn is not None and running.kind == "prompt":
            if turn.tokens_max is not None:
                extra["tokens_used"] = turn.tokens_max
            if turn.cost_end is not None:
                start = turn.cost_start or 0.0
                extra["cost_usd"] = round(max(0.0, turn.cost_end - start), COST_DECIMALS)
                extra["cost_source"] = "agent"  # the agent's own figure (Aider, opencode, Claude's exit summary)
            sources = dict(running.sources)
            sources.update({k: "screen" for k in ("tokens_used", "cost_usd") if k in extra})
            if turn.hook_ended_at is not None and now == turn.hook_ended_at:
                sources["completed_at"] = "hook"
            extra["sources"] = sources
        return [Finish(finished(running, status, now, error=error, **extra))]


def _said_by_hook(state: AgentState, field_name: str) -> float | None:
    """When the agent's own hooks gave `state`'s field `field_name` (None: they did not)."""
    provenance = state.sources.get(field_name)
    return provenance.observed_at if provenance is not None and provenance.source == "hook" else None


def counters_only(before: AgentState, after: AgentState) -> bool:
    """Whether `after` only moves a turn's counters on from `before`: the same busy state of the
    same agent, no error, the same prompt from the same hook; the seconds and spinner words
    anything, tokens not fewer, no cost gone. A tracker that was given `before` takes `after` as a
    count and nothing else, so the daemon gives it the last of a run of them only, when another
    state comes or before the turn can end (`take_counters`): most states of a long turn are such
    a run (a spinner's seconds, its tokens), and a call of the history's each costs the loop
    (issue 29). Counters that never fall make the run's last state its most, as the tracker counts."""
    activity = after.activity.state
    if (activity != before.activity.state or activity not in BUSY_STATES or after.error is not None
            or before.error is not None or after.is_agent is not before.is_agent
            or after.agent_type != before.agent_type or after.prompt != before.prompt):
        return False
    if after.prompt is not None and after.sources.get("prompt") != before.sources.get("prompt"):
        return False
    tokens, had = after.session.tokens_used, before.session.tokens_used
    if had is not None and (tokens is None or tokens < had):
        return False
    return after.session.cost_usd is not None or before.session.cost_usd is None
