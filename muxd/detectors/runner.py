"""`DetectorRunner`: turns a pane's frames into published `AgentState`s.

Per pane, sans-IO (the caller supplies frames and the clock). It picks the detector that
identifies the frame, runs it in isolation (an exception costs that frame, never the pane: the
last state stays; a run over budget is kept, and its cost, `last_cost_s`, slows the schedule
down instead: results never depend on the machine's speed), counts each tool use once however many frames
redraw it, and debounces: a new activity state is published only once a second frame
confirms it or it has held for DEBOUNCE_S. The daemon decides *when* to call `run`
(throttled, off the output hot path); see `DetectionSchedule`.

The agent's own lifecycle hooks come in through `hook` (a `HookFact`): the published state is
then a function of the screen's last reading and the hooks' view (muxd/detectors/fusion.py
says which wins when), and every field says where it came from (`sources`).
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable, Sequence

import msgspec

from muxd.detectors.base import Detector, ScreenContext
from muxd.detectors.frame_shape import FrameShape
from muxd.detectors.fusion import HookView, applies, fuse, held_until
from muxd.detectors.hook_events import HookFact
from muxd.detectors.provenance import carried, screen_sources
from muxd.detectors.registry import choose, shell_detector
from muxd.detectors.schedule import (  # noqa: F401 - the schedule's names, long imported from here
    DETECT_COST_SHARE, DETECT_MAX_INTERVAL_S, DETECT_MIN_INTERVAL_S, DETECT_QUIET_DELAY_S, DETECT_SLOW_INTERVAL_MAX_S,
    DetectionSchedule,
)
from muxd.detectors.shell_names import SHELLS
from muxd.detectors.state import (
    AT_PROMPT_STATES, RECENT_TOOLS_MAX, Activity, AgentSession, AgentState, Detection, Evidence, ToolSighting,
    UsageLimit, takes_prompt,
)
from muxd.detectors.submit_uptake import held, submitted_at

log = logging.getLogger(__name__)

DETECT_BUDGET_S = 0.05          # one detect() call; slower ones are logged, and kept (see DetectionSchedule)
DEBOUNCE_S = 0.3                # a new state must hold this long, or be seen twice
# Frames in a row that may go unidentified (a resize redraw, a cleared screen) before the
# agent found last is given up for the fallback, as long as the foreground process is the same
# and is not a shell (a shell in front is never an agent's redraw: the agent has gone).
STICKY_UNIDENTIFIED_FRAMES = 10
# Frames of tool sightings a new frame is compared with (see _count_tools).
TOOL_FRAMES_REMEMBERED = 4
# While the same program stays in the foreground, the agent found is asked again whether the
# frame is still its own only every this many frames (identification is half of the cost).
REIDENTIFY_EVERY_FRAMES = 10
# A frame whose words did not change (only a spinner and its seconds and tokens ticked) is
# read again only after this long, to keep those counters fresh.
TICKING_REFRESH_S = 1.0
# Tool uses remembered with their lines, for the tool calls of the execution that made them.
TOOL_USES_KEPT = 200
# States that must never wait for a second look: an approval prompt stalls a fleet.
PUBLISH_AT_ONCE = frozenset({"AwaitingConfirmation", "Exited"})


def new_tool_uses(before: Sequence[ToolSighting], now: Sequence[ToolSighting]) -> list[ToolSighting]:
    """The sightings in `now` that are new since `before`: what follows the part of `now` that
    the previous frame already showed.

    Frames scroll, redraw half-way and briefly hide lines, so the two lists are aligned by
    their longest common subsequence, and only what comes after the earliest point where that
    alignment is complete counts as new (new output appears at the bottom). Nothing in common
    means the screen changed wholesale: all of `now` is new.
    """
    rows, cols = len(before), len(now)
    if not rows:
        return list(now)
    previous = [0] * (cols + 1)  # LCS lengths of before[:i] against now[:j]
    for i in range(rows):
        current = [0] * (cols + 1)
        for j in range(cols):
            current[j + 1] = previous[j] + 1 if before[i] == now[j] else max(previous[j + 1], current[j])
        previous = current
    best = previous[cols]
    seen_up_to = next(j for j in range(cols + 1) if previous[j] == best)
    return list(now[seen_up_to:])


class DetectorRunner:
    def __init__(self, pane_id: str, detectors: Sequence[Detector], *,
                 clock: Callable[[], float] = time.time, timer: Callable[[], float] = time.perf_counter,
                 budget_s: float = DETECT_BUDGET_S, debounce_s: float = DEBOUNCE_S) -> None:
        self.pane_id = pane_id
        self.detectors = detectors  # not copied: registry.Detectors looks them up at the first reading
        self.fallback = shell_detector()
        self.clock = clock
        self.timer = timer  # measures what a detection costs
        self.budget_s = budget_s
        self.debounce_s = debounce_s
        self.state = AgentState(pane_id=pane_id)  # published: the screen and the hooks fused
        self.screen = self.state  # what the screen alone says (debounced), with its sources
        self.hooks: HookView | None = None  # what the agent's hooks said, once one spoke
        self.failures = 0
        self.overruns = 0       # detections that took longer than budget_s (their results kept)
        self.last_cost_s = 0.0  # what the last detection took: DetectionSchedule.ran(cost_s=…)
        self._candidate: Detection | None = None
        self._candidate_since = 0.0
        self._sightings: deque[list[ToolSighting]] = deque(maxlen=TOOL_FRAMES_REMEMBERED)
        self._recent_tools: list[str] = []
        self._last_frame: tuple[object, ...] | None = None
        self._shape = FrameShape()
        self._last_read_at = float("-inf")
        self._last_detector: Detector | None = None
        self._last_process: str | None = None
        self._unidentified = 0
        self._since_identified = 0
        self._tools_counted = 0  # tool uses counted so far (recent_tools keeps only the last few)
        # The screen's detector rule and input box as last read, and since when they are so.
        self._shown: tuple[str | None, str | None] = (None, None)
        self._shown_since = float("-inf")
        # The newest tool uses with the line that showed each (an execution's tool calls).
        self.tool_uses: deque[ToolSighting] = deque(maxlen=TOOL_USES_KEPT)
        # What the last publish was made from, and the state it left: the same again is skipped.
        self._published_from: tuple[Detection, str, int] | None = None
        self._published_state: AgentState | None = None
        # The text a person typed at the agent's prompt, kept out of AgentState so that
        # keystrokes publish nothing (see take_typed_input).
        self.typed_input: str | None = None
        # What the agent's input box holds on the last frame read, at its prompt (None: empty, or
        # not at its prompt): a prompt muxd typed that is still there was not submitted.
        self.draft: str | None = None
        self._at_prompt = False  # the last frame read showed the agent at its prompt
        # The last frame's Idle was read as Unknown: a prompt just sent, not yet seen taken
        # (submit_uptake.py). Looked at again until that ends, even on a still screen.
        self._awaiting_uptake = False
        # A frame skipped as ticking only is read at the latest at this time (this runner's
        # clock), output or not: the daemon looks again then. None: the last frame was read.
        self.unread_until: float | None = None

    def run(self, ctx: ScreenContext, *, settled: bool = False) -> AgentState | None:
        """Detect on one frame; returns the new published state if it changed, else None.

        `settled=True` says the frame is final (a saved screen): publish without debouncing."""
        # At the prompt, a moved cursor is a keystroke: the shape masks digits (a spinner's
        # clock), and a typed digit must not go unread.
        # A new Enter is a new frame too: what it sent may be awaiting its uptake (submit_uptake.py).
        frame = (ctx.process_name, ctx.exited, ctx.columns, ctx.cursor if self._at_prompt else None,
                 submitted_at(ctx))
        reshaped = self._shape.changed(ctx.lines)
        now = self.clock()
        if not reshaped and frame == self._last_frame and not self.pending and not settled and (
                now - self._last_read_at < TICKING_REFRESH_S):
            # The same words (at most a spinner and its counters moved): nothing new on screen.
            # Read at the latest then: the last frame of a turn may differ only in a glyph (Cline's
            # spinner turning into its answer's `*`), and no output may come after it.
            self.unread_until = self._last_read_at + TICKING_REFRESH_S
            return None if self.hooks is None else self._fused(now)
        self.unread_until = None
        self._last_frame = frame
        self._last_read_at = now
        found = self._detect(ctx)
        if found is None:
            return None
        detection, detector_name = found
        self._at_prompt = takes_prompt(detection.state, detection.confirmation)
        if detection.agent_type not in (None, self.screen.agent_type):
            self.typed_input = None  # another program now: what was typed at the last one is moot
        self.draft = detection.input_text if self._at_prompt else None
        if self._at_prompt and detection.input_text:
            self.typed_input = detection.input_text
        self._count_tools(detection)
        if not settled and not self._confirmed(detection, now):
            return None
        source = (detection, detector_name, self._tools_counted)
        if source == self._published_from and self.screen is self._published_state and (
                self.screen.activity.since):
            # What the last look found, again: _publish would build the same state (only a
            # hold of the hooks' open turn may have run out meanwhile).
            return None if self.hooks is None else self._fused(now)
        screen = self._publish(detection, detector_name, now)
        shown = (screen.evidence and screen.evidence.rule, self.draft)
        if shown != self._shown:
            self._shown, self._shown_since = shown, now
        self.screen = msgspec.structs.replace(screen, sources=carried(self.screen, screen))
        self._let_hooks_see()
        if self.hooks is not None and not applies(self.screen, self.hooks) and (
                self.screen.agent_type is not None or self.screen.activity.state == "Exited"):
            self.hooks = None  # the agent has gone (another program, a shell, an exit): its hooks are moot
        self._published_from, self._published_state = source, self.screen
        return self._fused(now)

    def hook(self, fact: HookFact | None) -> AgentState | None:
        """Fold in one hook fact (`muxd.detectors.hook_events.hook_fact`); returns the new
        published state if it changed, else None. A fact from another agent than the one the
        hooks spoke for so far starts a fresh view (a new program in the pane)."""
        if fact is None:
            return None
        if self.hooks is None or self.hooks.agent != fact.agent:
            self.hooks = HookView(fact.agent)
        self.hooks.take(fact)
        self._let_hooks_see()  # a dialog may be on screen already
        if fact.event == "tool_finished" and fact.subagent_id is None and fact.tool:
            call = f"{fact.tool}({fact.tool_input})" if fact.tool_input else fact.tool
            self._add_tool_uses([ToolSighting(fact.tool, call)])
        return self._fused(self.clock())

    def interrupted(self) -> AgentState | None:
        """The agent was sent its interrupt key now (see `HookView.interrupted`); returns the
        new published state if that changed it."""
        if self.hooks is None:
            return None
        self.hooks.interrupted(self.clock())
        self._let_hooks_see()
        return self._fused(self.clock())

    def _let_hooks_see(self) -> None:
        """The hooks' view learns what the screen shows now (see `HookView.see`)."""
        if self.hooks is not None:
            self.hooks.see(self.screen, self._shown_since, self.draft)

    def refresh(self) -> AgentState | None:
        """Fuse again with nothing new but the time (a hold of the hooks' open turn may have
        ended: see `recheck_at`); returns the new published state if it changed."""
        return self._fused(self.clock())

    @property
    def recheck_at(self) -> float | None:
        """The time (this runner's clock) at which the published state may change by itself:
        a hold of the fusion runs out (`muxd.detectors.fusion.held_until`).
        The daemon calls `refresh` then; None: nothing to wait for."""
        hooks = self.hooks
        if hooks is None or self.state.fusion is None:
            return None
        return held_until(self.screen, hooks, self.state.fusion.rule)

    def _fused(self, now: float) -> AgentState | None:
        """Publish the screen and the hooks fused; the new state if it changed, else None."""
        fused = fuse(self.screen, self.hooks, now, self.state)
        fused = msgspec.structs.replace(fused, sources=carried(self.state, fused))
        if fused.recent_tools != self._recent_tools:  # a hook counted a tool the screen has not shown
            fused = msgspec.structs.replace(fused, recent_tools=list(self._recent_tools))
        if fused == self.state:
            return None
        if msgspec.structs.replace(fused, evidence=self.state.evidence) == self.state:
            # Only the evidence line moved (a spinner glyph turning): keep it, tell no one.
            self.state = fused
            return None
        self.state = fused
        return fused

    @staticmethod
    def significant(before: AgentState, after: AgentState | None) -> bool:
        """A change worth looking again soon for, as the next may follow at once: not a
        spinner's ticking seconds or tokens, nor its words (Claude Code changes its verb every
        few seconds; Codex streams its reasoning's heading word by word, which would otherwise
        keep a pane at the fastest pace for as long as the model reasons)."""
        if after is None:
            return False
        return (before.agent_type, before.activity.state, before.tool, before.confirmation, before.error) != (
                after.agent_type, after.activity.state, after.tool, after.confirmation, after.error)

    def take_typed_input(self) -> str | None:
        """The latest non-empty text seen in the agent's input box while it waited at its
        prompt (lines joined by "\\n"), or None; forgotten once taken. What a person sent is
        the text the box held just before the agent went busy."""
        typed, self.typed_input = self.typed_input, None
        return typed

    @property
    def tools_counted(self) -> int:
        """Tool uses counted since the pane started (the newest TOOL_USES_KEPT are in tool_uses)."""
        return self._tools_counted

    @property
    def pending(self) -> bool:
        """A candidate state waits for confirmation, or a prompt just sent for its uptake: run
        again soon even if nothing is drawn."""
        return self._awaiting_uptake or (
            self._candidate is not None and self._candidate.state != self.screen.activity.state)

    # ------------------------------------------------------------ steps

    def _detect(self, ctx: ScreenContext) -> tuple[Detection, str] | None:
        detector = self._choose(ctx)
        started = self.timer()
        try:
            detection = detector.detect(ctx, self.screen)
        except Exception:
            self.failures += 1
            log.exception("detector %s failed on pane %s", detector.name, self.pane_id)
            return None
        finally:
            self.last_cost_s = self.timer() - started
        if self.last_cost_s > self.budget_s:
            # Kept: dropping it would make the answer depend on the machine's load. The
            # schedule spaces the next looks by this cost instead.
            self.overruns += 1
            log.log(logging.WARNING if self.overruns == 1 else logging.DEBUG,
                    "detector %s took %.0f ms on pane %s (budget %.0f ms): looking less often",
                    detector.name, self.last_cost_s * 1000, self.pane_id, self.budget_s * 1000)
        if not isinstance(detection, Detection):
            self.failures += 1
            log.error("detector %s returned %r, not a Detection", detector.name, type(detection))
            return None
        uptake_s = getattr(detector, "submit_uptake_s", 0.0)
        waiting = held(detection, ctx, self.screen, uptake_s) if uptake_s else None
        self._awaiting_uptake = waiting is not None
        detection = waiting or detection
        if ctx.exited and detection.state != "Exited":
            detection = msgspec.structs.replace(detection, state="Exited", rule="pane-exited")
        elif detection.state == "Exited" and not ctx.exited and detector is not self.fallback:
            return self._gone(ctx, detection, detector)
        if detection.state == "Exited" and detection.agent_type is None:
            detection = msgspec.structs.replace(detection, agent_type=self.screen.agent_type)
        return detection, detector.name

    def _gone(self, ctx: ScreenContext, detection: Detection, detector: Detector) -> tuple[Detection, str]:
        """The agent's screen says it has quit, but the pane's own program lives on: only a pane
        whose program exited says Exited. A shell in front (or, with no process known, a shell
        prompt on screen) is what the pane now runs; the agent's process still in front is
        printing its goodbye and cannot be read yet."""
        self._last_detector = None  # never kept for the frames that follow
        if ctx.process_name is None or ctx.process_name in SHELLS:
            return self.fallback.detect(ctx, self.screen), self.fallback.name
        return msgspec.structs.replace(detection, state="Unknown", rule="exiting"), detector.name

    def _choose(self, ctx: ScreenContext) -> Detector:
        # The agent found last is asked first: while it still recognises the frame, the others
        # need not look (identification is most of a detection's cost).
        last = self._last_detector
        shell_in_front = ctx.process_name in SHELLS
        if last is not None and ctx.process_name == self._last_process and not ctx.exited and not shell_in_front:
            # Same program in front: re-identify only every few frames, the agent is still there.
            self._since_identified += 1
            if self._since_identified < REIDENTIFY_EVERY_FRAMES:
                return last
            kept, _ = choose([last], ctx)
            if kept is not None:
                self._unidentified = self._since_identified = 0
                return kept
        detector, _ = choose(self.detectors, ctx)
        if detector is not None:
            self._last_detector, self._last_process = detector, ctx.process_name
            self._unidentified = self._since_identified = 0
            return detector
        self._unidentified += 1
        last = self._last_detector
        if last is not None and ctx.exited:
            return last  # the program that ran there reads its own exit screen (tokens, resume id)
        if (last is not None and self._unidentified <= STICKY_UNIDENTIFIED_FRAMES
                and ctx.process_name == self._last_process and not shell_in_front):
            return last
        return self.fallback

    def _count_tools(self, detection: Detection) -> None:
        if not detection.tools_seen:
            return  # a frame showing no tools (a redraw, a dialog) must not reset the count
        # Against each of the last few frames, not just the last one: a redraw caught half-way
        # that drops a line and the next frame that has it again must not count it twice.
        now = detection.tools_seen
        if self._sightings and self._sightings[-1] == now:
            return  # the common case: the same tools as last frame
        if self.hooks is None:  # the agent's hooks report its finished tools exactly: counted from
            # those alone (a tool seen on both must count once), so no alignment is needed then
            self._add_tool_uses(min((new_tool_uses(before, now) for before in self._sightings), key=len,
                                    default=list(now)))
        self._sightings.append(list(now))

    def _add_tool_uses(self, fresh: Sequence[ToolSighting]) -> None:
        for sighting in fresh:
            self._recent_tools.append(sighting.name)
            self.tool_uses.append(sighting)
        self._tools_counted += len(fresh)
        del self._recent_tools[:-RECENT_TOOLS_MAX]

    def _confirmed(self, detection: Detection, now: float) -> bool:
        if detection.state == self.screen.activity.state or detection.state in PUBLISH_AT_ONCE or (
                self._awaiting_uptake):  # an Enter, not a flickering screen, made it: no second look
            self._candidate = None
            return True
        candidate = self._candidate
        if candidate is None or candidate.state != detection.state:
            self._candidate = detection
            self._candidate_since = now
            return False
        # Seen twice in a row: confirmed (the daemon samples at most every 100 ms).
        self._candidate = None
        return True

    def _publish(self, d: Detection, detector_name: str, now: float) -> AgentState:
        """The state the screen alone says, with its sources ("screen", now, the rule)."""
        previous = self.screen.activity
        agent = d.agent_type
        # The same state of another agent is a new one: a program just started at a shell's
        # prompt has been at its own prompt since now, not since the shell's was shown.
        same = previous.state == d.state and agent == self.screen.agent_type
        since = previous.since if same and previous.since else now
        session = AgentSession(
            id=d.session_id, model=d.model, tokens_used=d.tokens, cost_usd=d.cost_usd,
            context_left_pct=d.context_left_pct,
        )
        # Keep what the agent showed earlier in this session but no longer shows (the model
        # scrolls away with the banner); a different agent starts afresh.
        if agent == self.screen.agent_type and agent is not None:
            old = self.screen.session
            session = AgentSession(
                id=session.id or old.id, model=session.model or old.model,
                tokens_used=session.tokens_used, cost_usd=session.cost_usd if session.cost_usd is not None else old.cost_usd,
                context_left_pct=session.context_left_pct if session.context_left_pct is not None else old.context_left_pct,
            )
        state = AgentState(
            pane_id=self.pane_id,
            agent_type=agent,
            is_agent=agent not in (None, "shell"),
            activity=Activity(state=d.state, description=d.description, elapsed_s=d.elapsed_s, since=since),
            session=session,
            recent_tools=list(self._recent_tools),
            tool=d.tool,
            is_awaiting_input=d.state in AT_PROMPT_STATES,
            is_awaiting_confirmation=d.state == "AwaitingConfirmation",
            confirmation=d.confirmation,
            error=d.error,
            limit=self._limit_seen(d.limit),
            evidence=Evidence(detector=detector_name, rule=d.rule, line=d.line),
            background=d.background,
        )
        return msgspec.structs.replace(state, sources=screen_sources(state, now, d.rule, d.field_rules))


    def _limit_seen(self, limit: UsageLimit | None) -> UsageLimit | None:
        """`limit` as first seen: the same words on later frames keep the reset they gave then
        (a relative "retry in 400s" means 400 s from when it was drawn, not from each look)."""
        shown = self.screen.limit
        if limit is not None and shown is not None and limit.message == shown.message:
            return shown
        return limit
