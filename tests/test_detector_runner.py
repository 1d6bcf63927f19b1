"""The runner around detectors: choosing, isolation, debouncing, counting tool uses once."""

import pytest

from muxd.detectors.base import ScreenContext
from muxd.detectors.runner import (
    DETECT_COST_SHARE, DETECT_SLOW_INTERVAL_MAX_S, TICKING_REFRESH_S, DetectionSchedule, DetectorRunner,
    new_tool_uses,
)
from muxd.detectors.state import Detection, ToolSighting


class ScriptedDetector:
    """Reads its answer off the first screen line: 'STATE tool1,tool2 description'."""

    name = "scripted"

    def identify(self, ctx):
        return 1.0 if ctx.lines and ctx.lines[0].startswith("@") else 0.0

    def detect(self, ctx, prev):
        state, tools, *rest = ctx.lines[0][1:].split(" ", 2) + ["", ""]
        sightings = [ToolSighting(t.split("#")[0], t) for t in tools.split(",") if t]
        return Detection(agent_type="claude", state=state, rule="scripted", line=ctx.lines[0],
                         description=rest[0] or None, tools_seen=sightings, tokens=len(ctx.lines))


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def frame(text, **kw):
    return ScreenContext(lines=text.split("\n"), **kw)


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def runner(clock):
    return DetectorRunner("%1", [ScriptedDetector()], clock=clock)


def test_a_new_state_needs_a_second_look(runner, clock):
    assert runner.run(frame("@Thinking - Pondering")) is None
    assert runner.pending
    clock.now += 0.1
    state = runner.run(frame("@Thinking - Pondering"))
    assert state.activity.state == "Thinking" and state.activity.description == "Pondering"
    assert state.activity.since == clock.now and state.is_agent and state.agent_type == "claude"
    assert state.evidence.detector == "scripted" and state.evidence.line == "@Thinking - Pondering"
    assert not runner.pending


def test_a_flicker_is_not_published(runner, clock):
    runner.run(frame("@Idle"))
    runner.run(frame("@Idle"))
    assert runner.run(frame("@Generating")) is None
    assert runner.run(frame("@Idle")) is None  # same as published: nothing to say
    assert runner.state.activity.state == "Idle"


def test_confirmation_is_published_at_once(runner):
    state = runner.run(frame("@AwaitingConfirmation"))
    assert state.activity.state == "AwaitingConfirmation" and state.is_awaiting_confirmation
    assert not state.is_awaiting_input


def test_since_survives_field_changes(runner, clock):
    runner.run(frame("@Thinking - A"))
    runner.run(frame("@Thinking - A"))
    since = runner.state.activity.since
    clock.now += 5
    state = runner.run(frame("@Thinking - B\nmore"))
    assert state.activity.description == "B" and state.activity.since == since
    assert state.session.tokens_used == 2


def test_another_agent_in_the_same_state_is_in_it_since_it_was_seen(clock):
    class ScriptedShell(ScriptedDetector):
        name = "scripted-shell"

        def identify(self, ctx):
            return 1.0 if ctx.lines and ctx.lines[0].startswith("$") else 0.0

        def detect(self, ctx, prev):
            return Detection(agent_type="shell", state="Idle", rule="scripted", line=ctx.lines[0])

    runner = DetectorRunner("%1", [ScriptedShell(), ScriptedDetector()], clock=clock)
    runner.run(frame("$ ", process_name="bash"), settled=True)
    assert (runner.state.agent_type, runner.state.activity.since) == ("shell", 1000.0)
    clock.now += 5
    state = runner.run(frame("@Idle", process_name="claude"), settled=True)
    assert (state.agent_type, state.activity.state, state.activity.since) == ("claude", "Idle", 1005.0)
    clock.now += 5
    state = runner.run(frame("$ ", process_name="bash"), settled=True)
    assert (state.agent_type, state.activity.since) == ("shell", 1010.0)


def test_each_tool_use_counts_once_however_often_redrawn(runner):
    for text in ("@ToolUse Bash#1", "@ToolUse Bash#1", "@ToolUse Bash#1,Read#2", "@Idle Bash#1,Read#2",
                 "@Idle Read#2", "@Idle Read#2,Bash#3"):
        runner.run(frame(text))
    assert runner.state.recent_tools == ["Bash", "Read", "Bash"]


def test_a_frame_without_tools_does_not_recount_them(runner):
    for text in ("@ToolUse Bash#1", "@Idle", "@Idle Bash#1", "@Idle Bash#1,Read#2"):
        runner.run(frame(text))
    assert runner.state.recent_tools == ["Bash", "Read"]


def test_a_briefly_unrecognised_frame_keeps_the_agent(runner):
    runner.run(frame("@Idle"), settled=True)
    state = runner.run(frame("redrawing…"), settled=True)
    assert state is None or state.agent_type == "claude"
    assert runner.state.agent_type == "claude"


def test_recent_tools_keep_the_last_ten(runner):
    names = [f"Tool{chr(ord('A') + n)}" for n in range(15)]
    for name in names:
        runner.run(frame(f"@ToolUse {name}#1"))
    assert runner.state.recent_tools == names[5:]


def test_frames_where_only_spinners_and_counters_tick_are_read_once_a_second(clock):
    seen = []

    class Counting(ScriptedDetector):
        def detect(self, ctx, prev):
            seen.append(ctx.lines[0])
            return super().detect(ctx, prev)

    runner = DetectorRunner("%1", [Counting()], clock=clock)
    runner.run(frame("@Thinking - ✻ Pondering (3s · 1.2k tokens)"), settled=True)
    clock.now += 0.2
    runner.run(frame("@Thinking - ✶ Pondering (4s · 1.9k tokens)"))   # ticked: skipped
    assert len(seen) == 1
    clock.now += 0.2
    runner.run(frame("@Thinking - ✶ Musing (4s · 1.9k tokens)"))      # new words: read
    assert seen[-1].endswith("Musing (4s · 1.9k tokens)")
    clock.now += 1.0
    state = runner.run(frame("@Thinking - ✳ Musing (12s · 10.4k tokens)"))  # a second on: refreshed
    assert seen[-1].endswith("(12s · 10.4k tokens)") and state.activity.description.endswith("10.4k tokens)")


def test_a_last_frame_that_differs_only_in_a_glyph_is_read_though_no_output_follows(clock):
    # Cline's answer streams behind its spinner (`⠹ The command ran fine.`); its last frame turns
    # the glyph into `*` and the input box is back. Nothing is written after it.
    class GlyphReader(ScriptedDetector):
        def detect(self, ctx, prev):
            state = "Generating" if "⠹" in ctx.lines[1] else "Idle"
            return Detection(agent_type="claude", state=state, rule="glyph", line=ctx.lines[1])

    runner = DetectorRunner("%1", [GlyphReader()], clock=clock)
    spinning, done = frame("@\n⠹ The command ran fine."), frame("@\n* The command ran fine.")
    assert runner.run(spinning, settled=True).activity.state == "Generating" and runner.unread_until is None
    read_at = clock.now
    clock.now += 0.2
    assert runner.run(done) is None  # the same shape: skipped for now...
    assert runner.unread_until == read_at + TICKING_REFRESH_S  # ...and to be read then, output or not
    clock.now = runner.unread_until
    assert runner.run(done) is None and runner.pending  # read: Idle, seen once
    clock.now += 0.1
    assert runner.run(done).activity.state == "Idle" and runner.unread_until is None


@pytest.mark.parametrize("before, now, new", [
    ([], ["a"], ["a"]),
    (["a"], ["a", "b"], ["b"]),
    (["a", "b"], ["b", "c"], ["c"]),            # a scrolled off
    (["a", "b"], ["b"], []),
    (["a", "b"], ["x", "y"], ["x", "y"]),       # a different screen
    (["a", "a"], ["a", "a", "a"], ["a"]),       # the same command run again
    (["a", "a", "b"], ["a", "a", "a", "b"], []),  # a redraw showing a hidden line again
    (["a", "b", "b"], ["a", "b"], []),          # a half-drawn frame
    (["b"], ["a", "b"], []),                    # a line above coming back into view
    (["a", "b"], ["b", "c", "d"], ["c", "d"]),
])
def test_new_tool_uses(before, now, new):
    s = lambda names: [ToolSighting(n, n) for n in names]  # noqa: E731
    assert new_tool_uses(s(before), s(now)) == s(new)


class Raising:
    name = "raising"

    def identify(self, ctx):
        return 1.0

    def detect(self, ctx, prev):
        raise RuntimeError("boom")


class Slow(ScriptedDetector):
    """Costs `cost_s` on the runner's timer (a fake one: the test never depends on speed)."""

    name = "slow"

    def __init__(self, timer, cost_s):
        self.timer, self.cost_s = timer, cost_s

    def detect(self, ctx, prev):
        self.timer.now += self.cost_s
        return super().detect(ctx, prev)


def test_a_detector_that_raises_costs_the_frame_not_the_state(clock):
    good = DetectorRunner("%1", [ScriptedDetector()], clock=clock)
    good.run(frame("@Idle"), settled=True)
    bad = DetectorRunner("%1", [Raising()], clock=clock)
    bad.state = good.state
    assert bad.run(frame("@Thinking")) is None
    assert bad.state.activity.state == "Idle" and bad.failures == 1


@pytest.mark.parametrize("cost_s", [0.001, 0.2, 5.0])
def test_the_answer_does_not_depend_on_how_long_the_look_took(clock, cost_s):
    timer = Clock()
    runner = DetectorRunner("%1", [Slow(timer, cost_s)], clock=clock, timer=timer, budget_s=0.05)
    state = runner.run(frame("@Idle"), settled=True)
    assert state.activity.state == "Idle" and runner.failures == 0
    assert runner.last_cost_s == pytest.approx(cost_s) and runner.overruns == (cost_s > 0.05)


def test_a_costly_look_spaces_the_next_ones_out():
    schedule = DetectionSchedule(min_interval_s=0.1, quiet_delay_s=0.05)
    schedule.ran(0.0, cost_s=0.2)                         # 0.2 s of work: the next after 0.8 s
    assert schedule.output(0.01) == pytest.approx(0.2 / DETECT_COST_SHARE)
    schedule.ran(0.8, cost_s=60.0)                        # however slow, a look still comes
    assert schedule.output(0.9) == pytest.approx(0.8 + DETECT_SLOW_INTERVAL_MAX_S)
    schedule.ran(2.8, cost_s=0.001)                       # cheap again: the usual pace
    assert schedule.output(2.81) == pytest.approx(2.9)


def test_no_agent_falls_back_to_the_shell_detector(runner):
    state = runner.run(frame("$ ls", process_name="bash"), settled=True)
    assert state.agent_type == "shell" and not state.is_agent and state.activity.state == "Idle"
    state = runner.run(frame("whatever", process_name="vim"), settled=True)
    assert state.agent_type is None and state.activity.state == "Unknown"


def test_an_exited_pane_is_exited_whatever_the_screen_says(runner):
    state = runner.run(frame("@Thinking", exited=True, exit_code=1))
    assert state.activity.state == "Exited"


def test_schedule_throttles_while_output_flows():
    schedule = DetectionSchedule(min_interval_s=0.1, quiet_delay_s=0.05)
    assert schedule.output(0.0) == pytest.approx(0.05)
    assert schedule.output(0.03) is None                  # already due
    schedule.ran(0.05)
    assert schedule.output(0.06) == pytest.approx(0.15)   # not sooner than 100 ms after the last look
    schedule.ran(0.15)
    assert schedule.output(1.0) == pytest.approx(1.05)    # quiet for long: 50 ms after output
    schedule.ran(1.05)
    assert schedule.again(1.05) == pytest.approx(1.15)    # a second look needs no output


def test_schedule_backs_off_while_nothing_changes_and_returns_on_change():
    schedule = DetectionSchedule(min_interval_s=0.1, quiet_delay_s=0.05, max_interval_s=0.4)
    schedule.output(0.0)
    schedule.ran(0.05, changed=False)
    assert schedule.output(0.06) == pytest.approx(0.25)   # 0.2 after the last run
    schedule.ran(0.25, changed=False)
    assert schedule.output(0.26) == pytest.approx(0.65)   # 0.4, the ceiling
    schedule.ran(0.65, changed=False)
    assert schedule.output(0.66) == pytest.approx(1.05)
    schedule.ran(1.05, changed=True)
    assert schedule.output(1.06) == pytest.approx(1.15)   # back to 0.1


def test_exit_keeps_the_agent_and_lets_it_read_its_exit_screen(runner):
    runner.run(frame("@Idle"), settled=True)
    state = runner.run(frame("Resume this session with: claude --resume 1", exited=True, exit_code=0))
    assert state.activity.state == "Exited" and state.agent_type == "claude"
    assert state.evidence.detector == "scripted"


# ---------------------------------------------------------------- an agent that has gone


def test_an_agent_that_quit_to_its_shell_gives_way_to_the_shell(runner):
    runner.run(frame("@Idle", process_name="python3"), settled=True)
    state = runner.run(frame("@Exited", process_name="bash"), settled=True)
    assert (state.agent_type, state.activity.state, state.is_agent) == ("shell", "Idle", False)
    assert state.evidence.detector == "shell"


def test_an_agent_still_in_front_while_it_says_goodbye_is_not_exited(runner):
    runner.run(frame("@Idle", process_name="python3"), settled=True)
    state = runner.run(frame("@Exited", process_name="python3"), settled=True)
    assert (state.agent_type, state.activity.state, state.evidence.rule) == ("claude", "Unknown", "exiting")


def test_with_no_process_known_a_shell_prompt_after_the_agent_quit_is_the_shell(runner):
    # A replayed recording knows no processes: the shell's prompt on screen tells.
    runner.run(frame("@Idle"), settled=True)
    state = runner.run(frame("@Exited\nbash-5.2$ "), settled=True)
    assert (state.agent_type, state.activity.state, state.evidence.rule) == ("shell", "Idle", "shell-prompt")
    state = runner.run(frame("@Exited\nsome output"), settled=True)
    assert (state.agent_type, state.activity.state) == (None, "Unknown")


def test_a_shell_in_front_keeps_no_agent_for_a_redraw(runner):
    # Identified by its screen while a shell leads (a plug-in's agent), then the screen cleared.
    runner.run(frame("@Idle", process_name="bash"), settled=True)
    state = runner.run(frame("bash-5.2$ ", process_name="bash"), settled=True)
    assert (state.agent_type, state.activity.state) == ("shell", "Idle")


# ---------------------------------------------------------------- what a person types


class TypingDetector:
    """'@STATE' on the first row; the input box's text on the second, if any."""

    name = "typing"

    def identify(self, ctx):
        return 1.0

    def detect(self, ctx, prev):
        text = ctx.lines[1] if len(ctx.lines) > 1 and ctx.lines[1] else None
        return Detection(agent_type="claude", state=ctx.lines[0][1:], rule="typing", line=ctx.lines[0],
                         input_text=text)


def test_typed_input_is_kept_out_of_the_published_state(clock):
    runner = DetectorRunner("%1", [TypingDetector()], clock=clock)
    runner.run(frame("@Idle"), settled=True)
    assert runner.typed_input is None
    for count, text in enumerate(("f", "fi", "fix", "fix the bug 4", "fix the bug 42"), start=1):
        assert runner.run(frame(f"@Idle\n{text}", cursor=(len(text), 1))) is None, "a keystroke publishes nothing"
        assert runner.typed_input == text
    runner.run(frame("@Idle\n", cursor=(0, 1)))  # sent: the box empties before the turn shows
    runner.run(frame("@Thinking\nqueued while busy"))
    assert runner.typed_input == "fix the bug 42", "an empty box or a busy frame keeps the last text"
    assert runner.take_typed_input() == "fix the bug 42"
    assert runner.take_typed_input() is None


def test_typed_digits_are_read_although_a_spinner_clock_is_not(clock):
    # Frames differing only in digits are read at most once a second (a spinner's clock); at
    # the prompt the cursor moves with each key, and that frame is read.
    runner = DetectorRunner("%1", [TypingDetector()], clock=clock)
    runner.run(frame("@Idle\nissue 1", cursor=(7, 1)), settled=True)
    runner.run(frame("@Idle\nissue 12", cursor=(8, 1)))
    assert runner.typed_input == "issue 12"


def test_text_seen_while_awaiting_input_counts_and_multiline_text_is_kept_whole(clock):
    runner = DetectorRunner("%1", [TypingDetector()], clock=clock)
    runner.run(ScreenContext(lines=["@AwaitingInput", "first line\nsecond line"]), settled=True)
    assert runner.take_typed_input() == "first line\nsecond line"


def test_typed_input_is_forgotten_when_another_program_takes_the_pane(clock):
    runner = DetectorRunner("%1", [TypingDetector()], clock=clock)
    runner.run(frame("@Idle\nhalf a thought"), settled=True)
    runner.run(frame("@Exited", process_name="bash"), settled=True)  # quit back to the shell
    assert runner.state.agent_type == "shell" and runner.typed_input is None
