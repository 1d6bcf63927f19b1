"""Fusing the screen with the agent's own hooks: `HookView` folds a pane's hook facts, `fuse`
makes the published AgentState from the screen's last reading and that view. Pure: the
caller passes the time.

Which activity state wins, in this order (the rule's name is kept in `AgentState.fusion`):

1. "screen-dialog" / "screen-exited": a dialog on screen (a confirmation, or a question the
   agent asks: AwaitingInput, which it asks through a tool the hooks saw start), or an exited
   pane, is what the pane shows, whatever the last hook said. A hook never overrides a
   confirmation the screen shows (it gives the question and options the hook lacks).
2. "screen-only": the hooks claim nothing now (none came, or the last said nothing about the
   activity, like SessionStart): the screen decides.
   "dialog-pending": the hooks say the agent asks permission and the screen still shows it
   busy, without the dialog: what the hooks said before asking stands for HOOK_DIALOG_WAIT_S,
   so that AwaitingConfirmation comes with the dialog's own question and options (the hook
   fires just before the agent draws it); after that the hook's word alone is published (rule 5).
3. "agree": both say busy, or both say the agent is at its prompt (or both say it asks). The
   newer of the two gives the exact state; confidence "certain" (or "screen" when the rest
   was the screen's word: a turn ended as below).
4. "screen-unknown": the screen cannot tell (Unknown): the hook's claim stands.
5. "hook-newer": they disagree and the hook came at or after the moment the screen began to
   show its state: the hook wins (the screen has not caught up, or misreads).
6. "open-turn": the screen began to show the agent at its prompt after the hook, but the hooks
   opened a turn (a prompt, a tool) that no Stop has closed: the hook's busy claim holds for
   HOOK_TURN_HOLD_S (HOOK_TOOL_HOLD_S while a tool runs) after the later of the screen's change
   and the hooks' claim (rule 5 has the same bound against a screen that never left its
   prompt). A screen at rest mid-turn is the false Idle this exists to prevent ("Shell
   awaiting input", a quiet tool); the bound is for turns that end with no sign at all.
7. "closed-turn": the hooks ended the turn (a Stop) and the screen began to show the agent busy
   only after it: until HOOK_STOP_HOLD_S after the Stop, the hooks' rest holds. A screen that
   draws a turn's last words after its Stop (read, debounced, published late) would otherwise
   look like a new turn starting and ending; a real new turn comes with its own prompt hook.
   A busy reading with no live sign on screen (SCREEN_TAIL_RULES: Codex's answer under the
   prompt, no status line, until "Worked for" is drawn) holds HOOK_TURN_HOLD_S: a loaded
   machine draws that line seconds after the Stop, and nothing on such a screen says a new
   turn began (a spinner or a status line would).
8. "screen-newer": otherwise the screen changed after the hook, and the newer evidence wins.

A StopFailure on a usage or rate limit claims UsageLimited (its words may say the reset: the
`limit` fact). A turn that ends with no hook telling it closes the hooks' turn, the rest then
being the screen's word (`HookView.see`, `HookView.interrupted`): the screen shows a usage
limit (UsageLimited, Codex fires no hook on it), an interrupt or an error line under the prompt, or the turn's prompt back in the input box after it drew the turn
busy (Claude Code fires no Stop when interrupted; Codex none on an API error), or a
permission dialog it showed is gone with the agent at its prompt (denied), or muxd itself sent
the interrupt key (a cancelled execution) and the screen is at rest.

The screen's evidence dates from when it *began* to show its state (activity.since), not from
its last look: a screen that keeps showing Idle is no newer evidence against a prompt submitted
since. Facts other than the state (tool, prompt, session id, error, background) come from the
hook when it gave them, else from the screen, each with its `sources` entry.
"""

from __future__ import annotations

import msgspec

from muxd.detectors.hook_events import HookFact
from muxd.detectors.reset_time import reset_at
from muxd.detectors.state import (
    AT_PROMPT_STATES, BUSY_STATES, HOOK_LATE_S, LIMIT_KINDS, TURN_OVER_STATES, Activity, ActivityState, AgentError,
    AgentState, Confidence, Confirmation, Fusion, Provenance, UsageLimit,
)

HOOK_TURN_HOLD_S = 30.0    # an open turn outlives a screen at rest this long (rule 6)
HOOK_TOOL_HOLD_S = 600.0   # and this long while a tool has started and not finished
HOOK_STOP_HOLD_S = 2.0     # a turn's end outlives a screen still drawing it busy this long (rule 7)
HOOK_DIALOG_WAIT_S = 1.5   # a permission hook waits this long for its dialog on screen ("dialog-pending")

_CLAIMS: dict[str, ActivityState] = {
    "prompt_submitted": "Thinking", "tool_started": "ToolUse", "tool_finished": "Thinking",
    "permission_requested": "AwaitingConfirmation", "idle_notified": "Idle", "stopped": "Idle",
    "stop_failed": "Idle", "interrupted": "Idle",
}
# States only the screen can show: the agent's dialogs, and the pane's program gone.
_SCREEN_ONLY_STATES = frozenset({"AwaitingConfirmation", "AwaitingInput", "Exited"})
# The screen detectors' rules for a prompt under a turn's end no hook reports: an interrupt
# ("⎿ Interrupted", "■ Conversation interrupted") or an error line.
SCREEN_TURN_ENDS = frozenset({"interrupted", "turn-ended"})
# (detector, rule) of busy readings made from the turn's words alone, with no live sign (a
# spinner, a status line, an elapsed time): after a Stop they are its tail (rule 7).
SCREEN_TAIL_RULES = frozenset({("codex", "answer-streaming"), ("codex", "tool-finished"),
                               ("codex", "approval-decided"), ("codex", "turn-started")})
# Events after which the agent is back at its prompt: the turn is over.
_TURN_ENDS = frozenset({"idle_notified", "stopped", "stop_failed", "interrupted", "session_ended"})


class HookView:
    """What the hooks of one agent in a pane have said, folded: the activity they claim now
    (`claim`, since `claim_at`), whether a turn or a tool is open, and the facts they gave, each
    with its provenance."""

    def __init__(self, agent: str) -> None:
        self.agent = agent
        self.claim: ActivityState | None = None
        self.claim_event: str | None = None
        self.claim_at = float("-inf")
        self.turn_open = False
        self.tool_open = False
        self.asked: str | None = None  # what a permission hook said is asked
        # The claim before a permission hook's: what stands while its dialog is awaited.
        self.before_ask: tuple[ActivityState | None, str | None, float] = (None, None, float("-inf"))
        self.dialog_shown = False  # the screen has shown the dialog the hooks asked for
        self.prompt_left_box = False  # the screen has shown the turn busy since its prompt left the box
        self.prompt_at = float("inf")   # when the turn's prompt was submitted
        self.interrupt_at = float("-inf")  # when muxd last sent the agent its interrupt key
        # Field name ("tool", "prompt", "session_id", …) -> (value, provenance).
        self.facts: dict[str, tuple[object, Provenance]] = {}

    def take(self, fact: HookFact) -> None:
        """Fold one fact in. A subagent's facts never move the main conversation's state."""
        told = Provenance(source="hook", observed_at=fact.observed_at, detail=fact.hook_event)
        if fact.session_id:
            self._tell("session_id", fact.session_id, told)
        event = fact.event
        if event in ("subagent_started", "subagent_stopped"):
            count = self.facts.get("background", (0, told))[0]
            count = int(count) if isinstance(count, int) else 0
            self._tell("background", count + 1 if event == "subagent_started" else max(0, count - 1), told)
            return
        if fact.subagent_id is not None:
            return
        if event == "session_started":
            if fact.message != "compact":  # a new conversation (not one compacted mid-turn)
                self._close(None, None, told.observed_at)
                self.facts.pop("error", None)
                self.facts.pop("limit", None)
            return
        if event == "session_ended":
            self._close(None, None, told.observed_at)
            return
        claim = _CLAIMS.get(event)
        if event == "stop_failed" and fact.error_type in LIMIT_KINDS:
            claim = "UsageLimited"  # the turn ended on a usage (or rate) limit
        if claim is None:
            return
        if event == "stopped" and fact.background:
            # The turn's own work is done but its background agents still run (Claude Code's
            # "Waiting for 1 background agent to finish"): not the agent at rest, and no turn
            # for the hooks to hold open either. The screen tells until the next hook.
            self._close(None, None, told.observed_at)
        elif event in _TURN_ENDS:
            self._close(claim, fact.hook_event, told.observed_at)
        else:
            if claim == "AwaitingConfirmation" and self.claim != claim:
                self.before_ask = (self.claim, self.claim_event, self.claim_at)
                self.dialog_shown = False
            self.claim, self.claim_event, self.claim_at = claim, fact.hook_event, fact.observed_at
            self.turn_open = True
            self.tool_open = event == "tool_started" or (event == "permission_requested" and self.tool_open)
        if event == "prompt_submitted":
            self.prompt_left_box, self.prompt_at = False, fact.observed_at
            for name in ("error", "limit", "tool", "tool_input", "answer"):
                self.facts.pop(name, None)
            if fact.prompt:
                self._tell("prompt", fact.prompt, told)
        if event in ("tool_started", "permission_requested") and fact.tool:
            self._tell("tool", fact.tool, told)
            if fact.tool_input:
                self._tell("tool_input", fact.tool_input, told)
            else:
                self.facts.pop("tool_input", None)
        if event == "permission_requested":
            tool = fact.tool and (f"{fact.tool}: {fact.tool_input}" if fact.tool_input else fact.tool)
            self.asked = fact.message or tool or "permission requested"
        if event == "stopped" and fact.answer:
            self._tell("answer", fact.answer, told)  # the history's, not a state field
        if event == "stopped" and fact.background is not None:
            self._tell("background", fact.background, told)
        if event == "stop_failed":
            message = fact.message or fact.error_type or "unknown"
            self._tell("error", AgentError(type=fact.error_type or "unknown", message=message), told)
            if claim == "UsageLimited":  # the reset, if its words say it, is from when the hook came
                self._tell("limit", UsageLimit(message=message, resets_at=reset_at(message, fact.observed_at)), told)

    def see(self, screen: AgentState, shown_since: float, draft: str | None = None) -> None:
        """The screen began (at `shown_since`, after the hooks' last claim) to show the agent at
        its prompt under an interrupted or failed turn, or with the turn's own prompt put back
        in its input box (`draft`: Claude Code does so when a turn is interrupted before it
        answered): the turn is over though no hook said so (Claude Code fires no Stop on an
        interrupt, Codex none on an API error). The rest then stands as the screen's word, so a
        screen drawing the ended turn busy just after it is its tail (rule 7), not a new turn.
        A permission dialog the screen showed and then left was answered."""
        state, evidence = screen.activity.state, screen.evidence
        if self.claim == "AwaitingConfirmation":
            if state == "AwaitingConfirmation":
                self.dialog_shown = True
            elif shown_since > self.claim_at and (self.dialog_shown or (
                    state in BUSY_STATES and shown_since > self.claim_at + HOOK_DIALOG_WAIT_S)):
                # (busy anew long after the ask, no dialog seen: answered between two looks)
                self._answered(screen, shown_since)
                return
        if not self.turn_open:
            return
        if state == "UsageLimited" and shown_since > self.claim_at:
            # A usage limit ended the turn, and no hook may tell it (Codex fires none on an API
            # error): the screen's word stands as the hooks' rest.
            self._close("UsageLimited", None, shown_since)
            return
        if state in BUSY_STATES:
            if (screen.activity.since or float("-inf")) >= self.prompt_at - HOOK_LATE_S:
                # The turn drawn busy: a frame read just after the submit may still show the prompt
                # in the box, or not yet (a loaded machine draws late); neither is its return.
                self.prompt_left_box = True
            return
        if state not in AT_PROMPT_STATES:
            return
        prompt = self.facts.get("prompt", (None,))[0]
        restored = bool(draft) and isinstance(prompt, str) and "".join(draft.split()) == "".join(prompt.split())
        if shown_since > self.claim_at and (
                (evidence is not None and evidence.rule in SCREEN_TURN_ENDS) or (restored and self.prompt_left_box)):
            self._close("Idle", None, shown_since)
        elif self.interrupt_at >= self.claim_at:  # at rest since the interrupt, or never drawn busy
            self._close("Idle", None, self.interrupt_at)

    def interrupted(self, at: float) -> None:
        """muxd sent the agent its interrupt key at `at` (cancelling an execution): the next
        screen at rest ends the turn the hooks opened (none of them tells it)."""
        if self.turn_open:
            self.interrupt_at = at

    def _answered(self, screen: AgentState, at: float) -> None:
        """The dialog the hooks asked for was on screen and is gone: answered. Approved, the
        agent goes on (what the hooks said before asking stands again); denied, it is back at
        its prompt and the turn is over (Claude Code fires no Stop then)."""
        self.dialog_shown = False
        if screen.activity.state in AT_PROMPT_STATES:
            self._close("Idle", None, at)
            return
        claim, event, _ = self.before_ask
        self.claim, self.claim_event, self.claim_at = (claim, event, at) if claim in BUSY_STATES else (None, None, at)

    def fact(self, name: str) -> tuple[object, Provenance] | None:
        return self.facts.get(name)

    def _tell(self, name: str, value: object, told: Provenance) -> None:
        self.facts[name] = (value, told)

    def _close(self, claim: ActivityState | None, event: str | None, at: float) -> None:
        self.claim, self.claim_event, self.claim_at = claim, event, at
        self.turn_open = self.tool_open = False


def _class(state: str) -> str:
    if state in BUSY_STATES:
        return "busy"
    return "rest" if state in AT_PROMPT_STATES else state


def hold_ends(screen: AgentState, hooks: HookView) -> float:
    """When rule 6 stops holding the hooks' open turn against this screen at rest, rule 7
    their closed turn against this screen still busy, or "dialog-pending" waiting for a dialog."""
    if hooks.claim == "AwaitingConfirmation" and screen.activity.state in BUSY_STATES:
        return hooks.claim_at + HOOK_DIALOG_WAIT_S
    if not hooks.turn_open:  # from the Stop: a screen busy soon after it is still drawing it
        evidence = screen.evidence
        tail = evidence is not None and (evidence.detector, evidence.rule) in SCREEN_TAIL_RULES
        return hooks.claim_at + (HOOK_TURN_HOLD_S if tail else HOOK_STOP_HOLD_S)
    since = screen.activity.since if screen.activity.since is not None else float("-inf")
    # From the later of the screen's rest and the hooks' claim: a screen that never left its
    # prompt does not hold a claim made since for ever.
    return max(since, hooks.claim_at) + (HOOK_TOOL_HOLD_S if hooks.tool_open else HOOK_TURN_HOLD_S)


def held_until(screen: AgentState, hooks: HookView, rule: str) -> float | None:
    """When the verdict of `rule` may change with time alone (a hold running out: see
    `hold_ends`); None when it stands until something new is seen or heard."""
    if rule in ("open-turn", "closed-turn", "dialog-pending") or (
            rule == "hook-newer" and screen.activity.state in AT_PROMPT_STATES and hooks.turn_open):
        return hold_ends(screen, hooks)
    return None


def decide(screen: AgentState, hooks: HookView, now: float) -> tuple[str, str, Confidence]:
    """(winner "screen" | "hook", rule, confidence) for the activity state: see the module's docstring."""
    s, h = screen.activity.state, hooks.claim
    screen_at = screen.activity.since if screen.activity.since is not None else float("-inf")
    if s in _SCREEN_ONLY_STATES:
        rule = "screen-exited" if s == "Exited" else "screen-dialog"
        return "screen", rule, "certain" if h == s else "screen"
    if h is None:
        return "screen", "screen-only", "screen"
    if h == "AwaitingConfirmation" and s in BUSY_STATES and now < hold_ends(screen, hooks):
        return "screen", "dialog-pending", "screen"
    if _class(s) == _class(h):
        return ("hook" if hooks.claim_at >= screen_at else "screen"), "agree", "certain" if hooks.claim_event else "screen"
    if s == "Unknown":
        return "hook", "screen-unknown", "hook"
    mid_turn_at_rest = s in AT_PROMPT_STATES and hooks.turn_open
    if hooks.claim_at >= screen_at and not (mid_turn_at_rest and now >= hold_ends(screen, hooks)):
        return "hook", "hook-newer", "hook"
    if mid_turn_at_rest and now < hold_ends(screen, hooks):
        return "hook", "open-turn", "hook"
    if s in BUSY_STATES and h in TURN_OVER_STATES and not hooks.turn_open and now < hold_ends(screen, hooks):
        return "hook", "closed-turn", "hook"
    return "screen", "screen-newer", "screen"


def applies(screen: AgentState, hooks: HookView | None) -> bool:
    """The hooks speak for the program the screen shows (or the screen has not named one)."""
    return hooks is not None and screen.agent_type in (None, hooks.agent) and screen.activity.state != "Exited"


def fuse(screen: AgentState, hooks: HookView | None, now: float, previous: AgentState) -> AgentState:
    """The state to publish from the screen's reading `screen` (with its own sources) and the
    hooks' view; `previous` (the state published last) keeps `since` while the state holds."""
    if hooks is None or not applies(screen, hooks):
        return msgspec.structs.replace(screen, confidence="screen", fusion=None)
    winner, rule, confidence = decide(screen, hooks, now)
    s = screen.activity.state
    claim, claim_event, claim_at = hooks.claim, hooks.claim_event, hooks.claim_at
    if rule == "dialog-pending":  # what the hooks said before they asked stands, if newer
        claim, claim_event, claim_at = hooks.before_ask
        screen_at = screen.activity.since if screen.activity.since is not None else float("-inf")
        winner = "hook" if claim in BUSY_STATES and claim_at >= screen_at else "screen"
    state = claim if winner == "hook" and claim is not None else s
    sources = dict(screen.sources)
    at = claim_at if winner == "hook" else screen.activity.since
    since = previous.activity.since if previous.activity.state == state and previous.activity.since else at
    if state == s:
        activity = msgspec.structs.replace(screen.activity, since=since)
    else:
        same = _class(s) == _class(state)
        activity = Activity(state=state, description=screen.activity.description if same else None,
                            elapsed_s=screen.activity.elapsed_s if same else None, since=since)
    if winner == "hook" or state == claim:  # the hook named the state (first, or exactly)
        # (a turn the screen ended, no hook telling it: the screen's word, kept as the rest claimed)
        sources["state"] = Provenance(source="hook" if claim_event else "screen", observed_at=claim_at,
                                      detail=claim_event or "turn-ended")
    fields: dict[str, object] = {
        "tool": screen.tool if state == s else None, "tool_input": None,
        "confirmation": screen.confirmation if state == s else None,
        "error": screen.error if state == s else None, "prompt": None, "background": screen.background,
        "session": screen.session, "limit": screen.limit if state == s else None,
    }
    for name in ("tool", "confirmation", "error", "limit"):
        if fields[name] is None:
            sources.pop(name, None)
    _hook_fields(fields, sources, hooks, state, winner, rule)
    return msgspec.structs.replace(
        screen,
        agent_type=screen.agent_type or hooks.agent,
        is_agent=True,
        activity=activity,
        is_awaiting_input=state in AT_PROMPT_STATES,
        is_awaiting_confirmation=state == "AwaitingConfirmation",
        sources=sources,
        confidence=confidence,
        fusion=Fusion(screen=s, screen_at=screen.activity.since, hook=hooks.claim, hook_event=hooks.claim_event,
                      hook_at=hooks.claim_at if hooks.claim is not None else None, rule=rule),
        **fields,  # type: ignore[arg-type]
    )


def _hook_fields(fields: dict[str, object], sources: dict[str, Provenance], hooks: HookView,
                 state: str, winner: str, rule: str) -> None:
    """The facts the hooks gave, over the screen's where they are exact."""
    # A dialog asks for the tool the hooks saw start and not finish, even before its own hook
    # comes (and on a short pane whose dialog header scrolled away, the screen cannot name it).
    asking = state == "AwaitingConfirmation" and (hooks.claim == "AwaitingConfirmation" or hooks.tool_open)
    tool = hooks.fact("tool")
    if tool is not None and (state == "ToolUse" and hooks.tool_open or asking):
        fields["tool"], sources["tool"] = tool
        tool_input = hooks.fact("tool_input")
        if tool_input is not None:
            fields["tool_input"], sources["tool_input"] = tool_input
    if state == "AwaitingConfirmation" and fields["confirmation"] is None:
        fields["confirmation"] = Confirmation(prompt=hooks.asked or "permission requested")
        sources["confirmation"] = Provenance(source="hook", observed_at=hooks.claim_at, detail=hooks.claim_event)
    for name in ("prompt", "error"):
        told = hooks.fact(name)
        if told is not None:
            fields[name], sources[name] = told
    limit = hooks.fact("limit")
    shown = fields["limit"]
    if state == "UsageLimited" and limit is not None and (
            shown is None or getattr(shown, "resets_at", None) is None and getattr(limit[0], "resets_at", None)):
        # The screen's words for the limit, unless it shows none or no reset the hook's words give.
        fields["limit"], sources["limit"] = limit
    if state == "UsageLimited" and fields["limit"] is None:  # (never seen: a limit has its words)
        error = fields["error"]
        fields["limit"] = UsageLimit(message=error.message if isinstance(error, AgentError) else "usage limit",
                                     resets_at=None)
    background = hooks.fact("background")
    shown = sources.get("background")
    if background is not None and (shown is None or background[1].observed_at >= shown.observed_at):
        fields["background"], sources["background"] = background
    if not fields["background"]:
        sources.pop("background", None)  # none running: nothing to trace
    session_id = hooks.fact("session_id")
    if session_id is not None:
        fields["session"] = msgspec.structs.replace(fields["session"], id=session_id[0])  # type: ignore[type-var]
        sources["session_id"] = session_id[1]
