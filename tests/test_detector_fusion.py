"""The screen fused with the agent's hooks (muxd/detectors/fusion.py through DetectorRunner.hook):
which wins when, what each field's source is, and the confidence, on a fake clock with real
Detection objects."""

from __future__ import annotations

import pytest

from muxd.detectors.base import ScreenContext
from muxd.detectors.fusion import HOOK_DIALOG_WAIT_S, HOOK_STOP_HOLD_S, HOOK_TOOL_HOLD_S, HOOK_TURN_HOLD_S
from muxd.detectors.hook_events import HookFact
from muxd.detectors.provenance import STATE_STALE_S, confidence_at
from muxd.detectors.runner import DetectorRunner
from muxd.detectors.state import AgentError, Confirmation, Detection, ToolSighting


class Screen:
    """A detector whose answer is set by the test: `screen.shows(...)` then `look()`."""

    name = "scripted"

    def __init__(self) -> None:
        self.detection = Detection(agent_type="claude", state="Idle", rule="prompt")

    def identify(self, ctx):
        return 1.0

    def detect(self, ctx, prev):
        return self.detection


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def screen():
    return Screen()


@pytest.fixture
def runner(clock, screen):
    return DetectorRunner("%1", [screen], clock=clock)


def show(runner, screen, state, rule=None, **fields):
    """The screen shows `state` now, settled (no debouncing): the runner reads it."""
    screen.detection = Detection(agent_type=fields.pop("agent_type", "claude"), state=state,
                                 rule=rule or state.lower(), **fields)
    runner.run(ScreenContext(lines=[f"{state} {fields}"], process_name="claude"), settled=True)
    return runner.state


def hook(runner, clock, event, hook_event, **fields):
    fact = HookFact(agent=fields.pop("agent", "claude"), event=event, hook_event=hook_event, observed_at=clock.now,
                    **fields)
    runner.hook(fact)
    return runner.state


def test_a_turn_from_the_hooks_and_stop_makes_idle_certain(runner, screen, clock):
    state = show(runner, screen, "Idle")
    assert state.confidence == "screen" and state.fusion is None
    assert state.sources["state"].source == "screen" and state.sources["state"].observed_at == clock.now
    clock.now += 1
    state = hook(runner, clock, "prompt_submitted", "UserPromptSubmit", prompt="fix it", session_id="s1")
    assert state.activity.state == "Thinking" and state.confidence == "hook" and state.fusion.rule == "hook-newer"
    assert state.prompt == "fix it" and state.sources["prompt"].source == "hook"
    assert state.sources["state"].detail == "UserPromptSubmit" and state.activity.since == clock.now
    assert not state.is_awaiting_input and state.session.id == "s1"
    clock.now += 0.2
    state = show(runner, screen, "Thinking", description="Pondering")
    assert state.confidence == "certain" and state.fusion.rule == "agree"
    assert state.activity.description == "Pondering" and state.activity.since == clock.now - 0.2
    clock.now += 5
    state = hook(runner, clock, "stopped", "Stop", answer="done")
    assert state.activity.state == "Idle" and state.is_awaiting_input and state.confidence == "hook"
    assert state.activity.description is None  # the spinner's words are not the hook's Idle
    clock.now += 0.1
    state = show(runner, screen, "Idle")
    assert state.activity.state == "Idle" and state.confidence == "certain"
    assert state.sources["state"].source == "hook" and state.sources["state"].detail == "Stop"


def test_a_dialog_on_screen_always_wins(runner, screen, clock):
    dialog = Confirmation(prompt="Do you want to proceed?", options=["1. Yes", "2. No"])
    show(runner, screen, "AwaitingConfirmation", confirmation=dialog, tool="Bash")
    clock.now += 1
    state = hook(runner, clock, "stopped", "Stop")
    assert state.activity.state == "AwaitingConfirmation" and state.confirmation == dialog
    assert state.fusion.rule == "screen-dialog" and state.fusion.hook == "Idle" and state.confidence == "screen"
    assert state.sources["state"].source == "screen"


def test_a_question_on_screen_wins_over_the_tool_that_asks_it(runner, screen, clock):
    show(runner, screen, "Thinking")
    clock.now += 1
    hook(runner, clock, "tool_started", "PreToolUse", tool="AskUserQuestion", tool_input="Which database?")
    clock.now += 0.2
    state = show(runner, screen, "AwaitingInput", rule="question-dialog")
    assert state.activity.state == "AwaitingInput" and state.is_awaiting_input
    assert state.fusion.rule == "screen-dialog" and state.fusion.hook == "ToolUse"


def test_a_permission_hook_waits_for_its_dialog_which_gives_the_question(runner, screen, clock):
    show(runner, screen, "Thinking")
    clock.now += 1
    hook(runner, clock, "tool_started", "PreToolUse", tool="Bash", tool_input="rm -rf build")
    clock.now += 0.1
    asked_at = clock.now
    state = hook(runner, clock, "permission_requested", "PermissionRequest", tool="Bash", tool_input="rm -rf build")
    # The dialog is not drawn yet: AwaitingConfirmation waits for its question and options.
    assert state.activity.state == "ToolUse" and state.fusion.rule == "dialog-pending"
    assert (state.tool, state.tool_input) == ("Bash", "rm -rf build") and not state.is_awaiting_confirmation
    assert runner.recheck_at == asked_at + HOOK_DIALOG_WAIT_S
    clock.now += 0.2
    dialog = Confirmation(prompt="Bash command", options=["1. Yes", "2. No"])
    state = show(runner, screen, "AwaitingConfirmation", confirmation=dialog, tool="Bash")
    assert state.confirmation == dialog and state.sources["confirmation"].source == "screen"
    assert state.confidence == "certain" and state.sources["tool"].source == "hook"
    # Approved: the screen shows the tool running, and the hooks' tool stands again.
    clock.now += 2
    state = show(runner, screen, "ToolUse", tool="Bash")
    assert state.activity.state == "ToolUse" and state.confirmation is None
    assert state.fusion.rule == "agree" and state.fusion.hook == "ToolUse"


def test_a_dialog_drawn_before_its_hook_names_the_tool_the_hooks_saw_start(runner, screen, clock):
    # A short pane scrolls the dialog's "Bash command" header away: the screen names no tool, and
    # the permission hook has not come yet, but the hooks saw Bash start and not finish.
    show(runner, screen, "Thinking")
    clock.now += 1
    hook(runner, clock, "tool_started", "PreToolUse", tool="Bash", tool_input="mkdir demo")
    clock.now += 0.1
    dialog = Confirmation(prompt="Do you want to proceed?", options=["1. Yes", "4. No"])
    state = show(runner, screen, "AwaitingConfirmation", confirmation=dialog)
    assert state.activity.state == "AwaitingConfirmation" and state.fusion.rule == "screen-dialog"
    assert (state.tool, state.tool_input) == ("Bash", "mkdir demo") and state.sources["tool"].source == "hook"
    assert state.confirmation == dialog and state.sources["confirmation"].source == "screen"
    # A dialog with no tool the hooks saw open keeps the screen's word alone.
    clock.now += 1
    hook(runner, clock, "tool_finished", "PostToolUse", tool="Bash")
    clock.now += 0.1
    state = show(runner, screen, "AwaitingConfirmation", confirmation=dialog)
    assert state.tool is None and "tool" not in state.sources


def test_a_permission_dialog_denied_on_screen_ends_the_turn(runner, screen, clock):
    show(runner, screen, "Thinking")
    clock.now += 1
    hook(runner, clock, "tool_started", "PreToolUse", tool="Write", tool_input="new.txt")
    hook(runner, clock, "permission_requested", "PermissionRequest", tool="Write", tool_input="new.txt")
    clock.now += 0.2
    show(runner, screen, "AwaitingConfirmation", confirmation=Confirmation(prompt="Create new.txt?"), tool="Write")
    clock.now += 3  # Esc: "⎿ Rejected write to new.txt", back at the prompt, no hook
    state = show(runner, screen, "Idle", rule="prompt-idle")
    assert state.activity.state == "Idle" and state.fusion.rule == "agree" and state.confidence == "screen" and runner.recheck_at is None


def test_a_busy_claim_over_a_screen_that_never_left_its_prompt_is_bounded(runner, screen, clock):
    show(runner, screen, "Idle", rule="prompt-idle")
    clock.now += 1
    claimed_at = clock.now
    assert hook(runner, clock, "prompt_submitted", "UserPromptSubmit").activity.state == "Thinking"
    assert runner.recheck_at == claimed_at + HOOK_TURN_HOLD_S
    clock.now = claimed_at + HOOK_TURN_HOLD_S
    state = runner.refresh()
    assert state.activity.state == "Idle" and state.fusion.rule == "screen-newer"


def test_a_permission_hook_whose_dialog_never_shows_asks_alone(runner, screen, clock):
    show(runner, screen, "Thinking")
    clock.now += 1
    hook(runner, clock, "permission_requested", "PermissionRequest", tool="Bash", tool_input="rm -rf build")
    clock.now += HOOK_DIALOG_WAIT_S - 0.1
    assert runner.refresh() is None
    clock.now += 0.1
    state = runner.refresh()
    assert state.activity.state == "AwaitingConfirmation" and state.is_awaiting_confirmation
    assert state.fusion.rule == "hook-newer" and state.confidence == "hook"
    assert state.confirmation == Confirmation(prompt="Bash: rm -rf build")
    assert state.sources["confirmation"].source == "hook" and (state.tool, state.tool_input) == ("Bash", "rm -rf build")


def test_a_permission_hook_over_a_screen_at_rest_asks_at_once(runner, screen, clock):
    show(runner, screen, "Idle")  # the turn went faster than the screen was read
    clock.now += 1
    state = hook(runner, clock, "permission_requested", "PermissionRequest", tool="Bash")
    assert state.activity.state == "AwaitingConfirmation" and state.fusion.rule == "hook-newer"


def test_an_interrupt_the_screen_shows_ends_the_hooks_turn(runner, screen, clock):
    show(runner, screen, "Idle")
    clock.now += 1
    hook(runner, clock, "prompt_submitted", "UserPromptSubmit", prompt="go")
    clock.now += 0.5
    show(runner, screen, "Thinking")
    clock.now += 3  # Esc: Claude Code fires no Stop, its screen says "⎿ Interrupted"
    state = show(runner, screen, "Idle", rule="interrupted")
    assert state.activity.state == "Idle" and state.fusion.rule == "agree" and state.confidence == "screen"
    assert runner.recheck_at is None
    clock.now += 1  # a person starts typing: the box's rule changes, the turn stays closed
    assert show(runner, screen, "Idle", rule="prompt-idle").activity.state == "Idle"
    clock.now += 1
    state = hook(runner, clock, "prompt_submitted", "UserPromptSubmit", prompt="again")
    assert state.activity.state == "Thinking" and state.prompt == "again"


def test_tools_come_exact_from_the_hooks(runner, screen, clock):
    show(runner, screen, "Thinking")
    clock.now += 1
    state = hook(runner, clock, "tool_started", "PreToolUse", tool="Edit", tool_input="/w/a.py")
    assert (state.activity.state, state.tool, state.tool_input) == ("ToolUse", "Edit", "/w/a.py")
    assert state.sources["tool"] == state.sources["tool_input"] and state.sources["tool"].source == "hook"
    assert state.confidence == "certain"  # both say busy
    clock.now += 1
    state = hook(runner, clock, "tool_finished", "PostToolUse", tool="Edit")
    assert state.activity.state == "Thinking" and state.tool is None and state.tool_input is None
    assert "tool" not in state.sources


def test_an_old_hook_does_not_pin_a_state_the_screen_since_changed(runner, screen, clock):
    show(runner, screen, "Thinking")
    hook(runner, clock, "stopped", "Stop")
    clock.now += 3
    state = show(runner, screen, "Generating")  # a new turn the hooks did not report
    assert state.activity.state == "Generating" and state.fusion.rule == "screen-newer"
    assert state.confidence == "screen" and state.sources["state"].source == "screen"


def test_a_screen_drawing_a_turns_end_after_its_stop_is_no_new_turn(runner, screen, clock):
    """The answer's last words are read (and published) after the Stop came: the screen says
    Generating for a moment. That is not a new turn starting and ending (the history would
    record one): the Stop's rest holds, briefly, until the screen shows the prompt too."""
    show(runner, screen, "Thinking")
    clock.now += 1
    hook(runner, clock, "stopped", "Stop")
    stopped_at = clock.now
    clock.now += 0.4
    state = show(runner, screen, "Generating")
    assert state.activity.state == "Idle" and state.fusion.rule == "closed-turn"
    assert runner.recheck_at == stopped_at + HOOK_STOP_HOLD_S
    clock.now += 0.3
    state = show(runner, screen, "Idle")
    assert state.activity.state == "Idle" and state.confidence == "certain" and runner.recheck_at is None
    # A screen still busy once the hold is over is believed (a turn the hooks did not report).
    show(runner, screen, "Generating")
    clock.now += HOOK_STOP_HOLD_S
    state = runner.refresh()
    assert state.activity.state == "Generating" and state.fusion.rule == "screen-newer"


def test_codexs_answer_drawn_seconds_after_its_stop_is_the_turns_tail(clock):
    """Codex draws the answer under the prompt with no status line, and "Worked for" under it
    only after its Stop hook has run: on a loaded machine seconds after the Stop. Nothing on
    that screen says a new turn began, so the Stop's rest holds (a new turn of the history
    would otherwise start there); a status line after the short hold is believed."""
    codex = Screen()
    codex.name = "codex"
    runner = DetectorRunner("%1", [codex], clock=clock)
    show(runner, codex, "Thinking", rule="status-line", agent_type="codex")
    clock.now += 1
    hook(runner, clock, "stopped", "Stop", agent="codex")
    stopped_at = clock.now
    clock.now += 0.5
    state = show(runner, codex, "Generating", rule="answer-streaming", agent_type="codex")
    assert state.activity.state == "Idle" and state.fusion.rule == "closed-turn"
    assert runner.recheck_at == stopped_at + HOOK_TURN_HOLD_S
    clock.now += HOOK_STOP_HOLD_S * 3
    assert runner.refresh() is None and runner.state.activity.state == "Idle"  # no change with time
    state = show(runner, codex, "Idle", rule="turn-done", agent_type="codex")
    assert state.activity.state == "Idle" and state.fusion.rule == "agree"
    # The same screen with a live sign, once the short hold is over: a turn the hooks missed.
    state = show(runner, codex, "Thinking", rule="status-line", agent_type="codex")
    assert state.activity.state == "Thinking" and state.fusion.rule == "screen-newer"


def test_an_open_turn_holds_against_a_screen_at_rest_for_a_while(runner, screen, clock):
    show(runner, screen, "Idle")
    clock.now += 1
    hook(runner, clock, "prompt_submitted", "UserPromptSubmit", prompt="go")
    clock.now += 0.5
    show(runner, screen, "Thinking")
    clock.now += 10
    state = show(runner, screen, "Idle")  # the false Idle: the agent is mid-turn
    assert state.activity.state == "Thinking" and state.fusion.rule == "open-turn"
    assert state.fusion.screen == "Idle" and state.confidence == "hook"
    assert runner.recheck_at == clock.now + HOOK_TURN_HOLD_S
    clock.now += HOOK_TURN_HOLD_S - 1
    assert runner.refresh() is None
    clock.now += 1
    state = runner.refresh()
    assert state.activity.state == "Idle" and state.fusion.rule == "screen-newer" and runner.recheck_at is None


def test_a_hold_that_ran_out_ends_at_the_next_look_too(runner, screen, clock):
    show(runner, screen, "Thinking")
    hook(runner, clock, "prompt_submitted", "UserPromptSubmit")
    clock.now += 1
    assert show(runner, screen, "Idle").activity.state == "Thinking"
    clock.now += HOOK_TURN_HOLD_S
    assert show(runner, screen, "Idle").activity.state == "Idle"  # the same screen, read again


def test_a_running_tool_holds_longer(runner, screen, clock):
    show(runner, screen, "Thinking")
    clock.now += 1
    hook(runner, clock, "tool_started", "BeforeTool", tool="run_shell_command", tool_input="make test")
    clock.now += 20
    state = show(runner, screen, "Idle")  # "! Shell awaiting input": the command still runs
    assert state.activity.state == "ToolUse" and state.tool == "run_shell_command"
    assert runner.recheck_at == clock.now + HOOK_TOOL_HOLD_S
    clock.now += 1
    state = hook(runner, clock, "tool_finished", "AfterTool", tool="run_shell_command")
    assert state.activity.state == "Thinking"
    clock.now += 1
    state = hook(runner, clock, "stopped", "AfterAgent")
    assert state.activity.state == "Idle" and state.confidence == "certain"


def test_a_screen_that_cannot_tell_gives_way(runner, screen, clock):
    show(runner, screen, "Thinking")
    hook(runner, clock, "prompt_submitted", "UserPromptSubmit")
    clock.now += 1
    state = show(runner, screen, "Unknown")  # a dialog the detector does not know
    assert state.activity.state == "Thinking" and state.fusion.rule == "screen-unknown"


def test_session_errors_and_background_work(runner, screen, clock):
    show(runner, screen, "Idle", session_id="from-screen", model="opus")
    state = hook(runner, clock, "session_started", "SessionStart", session_id="abc-123", message="startup")
    assert state.session.id == "abc-123" and state.session.model == "opus"
    assert state.sources["session_id"].source == "hook" and state.sources["model"].source == "screen"
    assert state.fusion.rule == "screen-only" and state.activity.state == "Idle"
    clock.now += 1
    hook(runner, clock, "prompt_submitted", "UserPromptSubmit", prompt="go")
    hook(runner, clock, "subagent_started", "SubagentStart", subagent_id="a1")
    state = hook(runner, clock, "tool_started", "PreToolUse", tool="Grep", subagent_id="a1")
    assert state.activity.state == "Thinking" and state.background == 1  # a subagent's tool: not the main state
    clock.now += 1
    state = hook(runner, clock, "stopped", "Stop", background=2)
    assert state.activity.state == "Idle" and state.background == 2 and state.sources["background"].detail == "Stop"
    state = hook(runner, clock, "subagent_stopped", "SubagentStop", subagent_id="a1")
    assert state.background == 1
    state = hook(runner, clock, "subagent_stopped", "SubagentStop", subagent_id="a2")
    assert state.background == 0 and "background" not in state.sources
    clock.now += 1
    hook(runner, clock, "prompt_submitted", "UserPromptSubmit", prompt="again")
    state = hook(runner, clock, "stop_failed", "StopFailure", error_type="rate_limit", message="429")
    assert state.activity.state == "Idle" and (state.error.type, state.error.message) == ("rate_limit", "429")
    assert state.sources["error"].detail == "StopFailure"
    state = hook(runner, clock, "prompt_submitted", "UserPromptSubmit", prompt="retry")
    assert state.error is None and "error" not in state.sources


def test_another_program_on_screen_ends_what_the_hooks_said(runner, screen, clock):
    show(runner, screen, "Thinking")
    hook(runner, clock, "prompt_submitted", "UserPromptSubmit", prompt="go")
    clock.now += 1
    state = show(runner, screen, "Idle", agent_type="shell")
    assert state.agent_type == "shell" and state.fusion is None and state.prompt is None
    assert runner.hooks is None and state.confidence == "screen"


def test_hooks_before_the_screen_names_the_agent(runner, screen, clock):
    show(runner, screen, "Unknown", agent_type=None)
    state = hook(runner, clock, "prompt_submitted", "UserPromptSubmit", prompt="hi")
    assert state.agent_type == "claude" and state.is_agent and state.activity.state == "Thinking"


def test_nothing_new_publishes_nothing(runner, screen, clock):
    show(runner, screen, "Idle")
    assert runner.hook(None) is None
    assert runner.hook(HookFact(agent="claude", event="session_started", hook_event="SessionStart",
                                observed_at=clock.now)) is not None  # the view now speaks (screen-only)
    clock.now += 1
    assert runner.hook(HookFact(agent="claude", event="session_started", hook_event="SessionStart",
                                observed_at=clock.now)) is None


def test_screen_sources_keep_their_first_observation(runner, screen, clock):
    state = show(runner, screen, "Thinking", description="Pondering", tokens=10, model="opus")
    first = clock.now
    assert state.sources["tokens_used"].observed_at == first and state.sources["model"].detail == "thinking"
    clock.now += 2
    state = show(runner, screen, "Thinking", description="Pondering", tokens=20, model="opus")
    assert state.sources["model"].observed_at == first and state.sources["tokens_used"].observed_at == clock.now
    assert state.sources["state"].observed_at == first


def test_a_busy_state_nothing_confirms_goes_stale(runner, screen, clock):
    state = show(runner, screen, "Thinking")
    assert confidence_at(state, clock.now + STATE_STALE_S) == "screen"
    assert confidence_at(state, clock.now + STATE_STALE_S + 1) == "stale"
    idle = show(runner, screen, "Idle")
    assert confidence_at(idle, clock.now + 10 * STATE_STALE_S) == "screen"  # at rest: a quiet screen is true


def test_tools_are_counted_from_the_hooks_once_they_report_them(runner, screen, clock):
    show(runner, screen, "Thinking")
    hook(runner, clock, "tool_started", "PreToolUse", tool="Bash", tool_input="ls")
    assert runner.state.recent_tools == []  # counted once finished: a declined tool never ran
    state = hook(runner, clock, "tool_finished", "PostToolUse", tool="Bash", tool_input="ls")
    assert state.recent_tools == ["Bash"] and runner.tools_counted == 1
    assert [u.signature for u in runner.tool_uses] == ["Bash(ls)"]
    clock.now += 0.5  # the screen draws the same call: not counted again
    state = show(runner, screen, "Thinking", tools_seen=[ToolSighting("Bash", "Bash(ls)")])
    assert state.recent_tools == ["Bash"] and runner.tools_counted == 1
    hook(runner, clock, "tool_finished", "PostToolUse", tool="Read", subagent_id="sub-1")
    assert runner.tools_counted == 1  # a subagent's tools are not the conversation's


def test_an_error_line_the_screen_shows_ends_the_turn_it_never_drew_busy(runner, screen, clock):
    show(runner, screen, "Idle", rule="turn-done")  # the last turn's end
    clock.now += 1
    assert hook(runner, clock, "prompt_submitted", "UserPromptSubmit", prompt="go").activity.state == "Thinking"
    clock.now += 0.3  # Codex fails at once: no Stop, its screen says "■ We're … high demand"
    state = show(runner, screen, "Idle", rule="turn-ended")
    assert state.activity.state == "Idle" and state.fusion.rule == "agree" and state.confidence == "screen"


def test_a_stop_with_background_agents_running_is_no_rest(runner, screen, clock):
    show(runner, screen, "Thinking")
    hook(runner, clock, "prompt_submitted", "UserPromptSubmit")
    clock.now += 1
    state = hook(runner, clock, "stopped", "Stop", background=1)
    assert state.activity.state == "Thinking" and state.background == 1 and state.fusion.rule == "screen-only"
    clock.now += 0.3  # "✻ Waiting for 1 background agent to finish"
    state = show(runner, screen, "ToolUse", tool="Agent", description="Waiting for 1 background agent to finish")
    assert state.activity.state == "ToolUse" and state.background == 1


def test_the_turns_prompt_put_back_in_the_box_ends_it(runner, screen, clock):
    show(runner, screen, "Idle", rule="prompt-idle")
    clock.now += 1
    hook(runner, clock, "prompt_submitted", "UserPromptSubmit", prompt="think for\nlong")
    clock.now += 0.1  # a frame drawn before the submit cleared the box: no end
    assert show(runner, screen, "Idle", rule="turn-done", input_text="think for long").activity.state == "Thinking"
    clock.now += 0.1
    show(runner, screen, "Thinking", rule="spinner")
    clock.now += 0.5  # Esc before any answer: Claude Code puts the prompt back, no Stop
    state = show(runner, screen, "Idle", rule="prompt-idle", input_text="think for long")
    assert state.activity.state == "Idle" and state.fusion.rule == "agree" and state.confidence == "screen"
    assert state.prompt == "think for\nlong"  # the last turn's prompt is still told


def test_a_dialog_drawn_before_its_hook_came_and_denied_ends_the_turn(runner, screen, clock):
    show(runner, screen, "Thinking")
    clock.now += 1
    hook(runner, clock, "tool_started", "PreToolUse", tool="Write", tool_input="new.txt")
    clock.now += 0.1
    show(runner, screen, "AwaitingConfirmation", confirmation=Confirmation(prompt="Create new.txt?"), tool="Write")
    clock.now += 0.1  # the hook command took longer than the screen to tell
    hook(runner, clock, "permission_requested", "PermissionRequest", tool="Write", tool_input="new.txt")
    clock.now += 2
    state = show(runner, screen, "Idle", rule="prompt-idle")
    assert state.activity.state == "Idle" and state.fusion.rule == "agree" and state.confidence == "screen"


def test_a_dialog_answered_between_two_looks(runner, screen, clock):
    show(runner, screen, "Thinking", rule="spinner")
    clock.now += 1
    hook(runner, clock, "tool_started", "PreToolUse", tool="Bash", tool_input="make")
    hook(runner, clock, "permission_requested", "PermissionRequest", tool="Bash", tool_input="make")
    clock.now += HOOK_DIALOG_WAIT_S + 0.5  # never saw the dialog; now the command runs
    state = show(runner, screen, "ToolUse", rule="tool-running", tool="Bash")
    assert state.activity.state == "ToolUse" and not state.is_awaiting_confirmation


def test_a_screen_error_the_hooks_ended_is_not_kept(runner, screen, clock):
    show(runner, screen, "Thinking")
    hook(runner, clock, "prompt_submitted", "UserPromptSubmit")
    clock.now += 1
    show(runner, screen, "Thinking", rule="api-retry", error=AgentError(type="api_error", message="retrying"))
    clock.now += 2  # the retry went through and the turn ended; the screen has not caught up
    state = hook(runner, clock, "stopped", "Stop")
    assert state.activity.state == "Idle" and state.error is None and "error" not in state.sources


def test_a_prompt_drawn_in_the_box_after_its_hook_is_no_interrupt(runner, screen, clock):
    show(runner, screen, "Idle", rule="turn-done")
    clock.now += 1
    hook(runner, clock, "prompt_submitted", "UserPromptSubmit", prompt="typed by a person")
    clock.now += 0.1  # a loaded machine: the box read empty, then with the text, then cleared
    show(runner, screen, "Idle", rule="prompt-idle")
    clock.now += 0.1
    state = show(runner, screen, "Idle", rule="prompt-idle", input_text="typed by a person")
    assert state.activity.state == "Thinking"


def test_a_prompt_whose_hook_came_after_the_spinner_is_still_put_back(runner, screen, clock):
    show(runner, screen, "Idle", rule="prompt-idle")
    clock.now += 1
    show(runner, screen, "Thinking", rule="spinner")  # drawn before the hook reached muxd
    clock.now += 0.3
    hook(runner, clock, "prompt_submitted", "UserPromptSubmit", prompt="think for long")
    clock.now += 2
    state = show(runner, screen, "Idle", rule="prompt-idle", input_text="think for long")
    assert state.activity.state == "Idle" and state.fusion.rule == "agree" and state.confidence == "screen"


def test_muxds_own_interrupt_ends_the_turn_once_the_screen_is_at_rest(runner, screen, clock):
    show(runner, screen, "Idle", rule="prompt-idle")
    clock.now += 1
    hook(runner, clock, "prompt_submitted", "UserPromptSubmit", prompt="think for long")
    clock.now += 0.5  # cancelled before the screen ever drew the turn
    state = runner.interrupted()
    assert state.activity.state == "Idle" and state.fusion.rule == "agree" and state.confidence == "screen"
    clock.now += 1
    hook(runner, clock, "prompt_submitted", "UserPromptSubmit", prompt="again")
    clock.now += 0.2
    show(runner, screen, "Thinking", rule="spinner")
    clock.now += 1
    assert runner.interrupted() is None  # still drawn busy: busy until the screen rests
    clock.now += 0.3
    state = show(runner, screen, "Idle", rule="prompt-idle")
    assert state.activity.state == "Idle" and state.fusion.rule == "agree" and state.confidence == "screen"


def test_a_cancelled_turn_drawn_busy_just_after_is_its_tail(runner, screen, clock):
    show(runner, screen, "Idle", rule="prompt-idle")
    clock.now += 1
    hook(runner, clock, "prompt_submitted", "UserPromptSubmit", prompt="think for long")
    clock.now += 0.5
    assert runner.interrupted().activity.state == "Idle"
    clock.now += 0.3  # the cancelled turn's spinner, drawn late
    state = show(runner, screen, "Thinking", rule="spinner")
    assert state.activity.state == "Idle" and state.fusion.rule == "closed-turn"
    clock.now += HOOK_STOP_HOLD_S
    assert runner.refresh().activity.state == "Thinking"  # busy on: believed


def test_every_tail_rule_is_one_its_detector_reads() -> None:
    # SCREEN_TAIL_RULES names detectors' rules as strings: a rule renamed in its detector would
    # leave the hold silently unused, and the Codex turn's tail would read as a new turn again.
    import importlib
    import inspect

    from muxd.detectors.fusion import SCREEN_TAIL_RULES

    for detector, rule in SCREEN_TAIL_RULES:
        source = inspect.getsource(importlib.import_module(f"muxd.detectors.{detector}"))
        assert f'"{rule}"' in source, (detector, rule)
