"""The real CLIs in muxd panes, busy in ways that draw no spinner, never published as Idle
(issue 25); the frames of the same situations are in tests/detector_data/issue25.

- Gemini CLI: a long shell command gone silent, its glyph blinking ⊶/⊷, then "! Shell awaiting
  input (Tab to focus)" in place of the spinner while the command still runs.
- Aider: `/run sleep`, with nothing drawn until the command ends.
- Claude Code: "Exit plan mode?" in plan mode; a subagent left running in the background
  ("✻ Waiting for 1 background agent to finish"); the /help overlay, Claude at rest.
- Codex: Ctrl-C while a command runs asks "Task is still running".

Each test takes from 30 s to a minute and a half: the situations need time to show.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from muxd.detectors.base import ScreenContext
from muxd.detectors.registry import load_detectors
from muxd.detectors.runner import DetectorRunner
from muxd.detectors.state import AgentState
from muxd.testing.fake_models import AnthropicFake, Call, GeminiFake, OpenAIChatFake, OpenAIResponsesFake, Pause, Say
from muxd.testing.fake_models.agent_pane import AgentPane, CliPanes, describe, screen_shows
from muxd.testing.wait import wait_until

pytestmark = pytest.mark.agents

PANE = (80, 24)
STARTUP_TIMEOUT_S = 60.0
# Gemini CLI says "Shell awaiting input" once a command that printed something has been silent
# for 5 s (20 s when it never printed): the command prints, then stays silent this long.
GEMINI_COMMAND_S = 15
SUBAGENT_S = 20


@pytest.fixture
def panes(muxd_server, tmp_path) -> Iterator[CliPanes]:
    started = CliPanes(muxd_server, tmp_path, timeout=STARTUP_TIMEOUT_S)
    try:
        yield started
    finally:
        started.close()


def start(panes: CliPanes, cli: str, fake: Any, *args: str, env: dict[str, str] | None = None) -> AgentPane:
    """`cli` in an 80x24 pane, Idle; skips when the CLI is not installed."""
    pane = panes.start(cli, fake, *args, size=PANE, env=env)
    if pane is None:
        pytest.skip(panes.missing)
    return pane


def read_screen(pane: AgentPane, screen: str) -> AgentState:
    """What muxd's detectors and runner make of `screen`, with the pane's program in front."""
    runner = DetectorRunner(pane.pane_id, load_detectors())
    runner.run(ScreenContext(lines=screen.split("\n"), columns=pane.size[0], process_name=pane.launch.argv[0],
                             process_argv=pane.launch.argv), settled=True)
    return runner.state


def never_idle(pane: AgentPane, since: int, until: int) -> None:
    """No state published between positions `since` and `until` was Idle, once the agent took the
    prompt: an Idle still published before its first busy state (the prompt just typed; a field of
    the previous turn's Idle arriving late) is the state the prompt found, not a false Idle."""
    states = pane.states.since(since)[:until - since]
    took = next((i for i, s in enumerate(states) if s["activity"]["state"] != "Idle"), len(states))
    idle = [describe(s) for s in states[took:] if s["activity"]["state"] == "Idle"]
    assert not idle, pane.report(f"Idle published while the agent worked: {idle}", since)


def test_gemini_long_shell_command_is_never_idle(panes):
    fake = GeminiFake([
        [Call("run_shell_command", {"command": f"echo started; sleep {GEMINI_COMMAND_S}; echo finished",
                                    "description": "Wait for the build"})],
        [Say("The command finished. Done.", 0.05)],
    ])
    pane = start(panes, "gemini", fake)
    pane.submit("please run a long command")
    pane.wait_for("AwaitingConfirmation", what="Allow execution of [Shell]?")
    mark = pane.mark()
    pane.press("Enter")  # 1. Allow once
    waiting = pane.wait_for("ToolUse", lambda s: s["activity"]["description"] == "Shell awaiting input",
                            timeout=GEMINI_COMMAND_S, what="ToolUse with Shell awaiting input")
    with pane.explained("Shell awaiting input", mark):
        assert waiting["tool"] == "Shell"
    done = pane.wait_for("Idle", timeout=GEMINI_COMMAND_S + 20, what="Idle after the command")
    with pane.explained("after the command", mark):
        assert "The command finished. Done." in pane.screen()
    never_idle(pane, mark, pane.cursor - 1)
    assert done["recent_tools"].count("Shell") == 1


def test_aider_run_command_is_tool_use_while_nothing_is_drawn(panes):
    pane = start(panes, "aider", OpenAIChatFake([]), "notes.txt")
    mark = pane.mark()
    pane.submit("/run sleep 8; echo ran-it")
    running = pane.wait_for("ToolUse", what="ToolUse while /run runs")
    with pane.explained("/run", mark):
        assert running["tool"] == "run"
        assert "ran-it" not in pane.screen().replace("echo ran-it", "")
    asking = pane.wait_for("AwaitingConfirmation", timeout=20, what="the question about the command's output")
    with pane.explained("after /run", mark):
        assert asking["confirmation"]["prompt"].startswith("Add ")
    never_idle(pane, mark, pane.cursor - 1)


def test_claude_plan_background_agent_and_help(panes):
    fake = AnthropicFake([
        [Say("Here is my plan.", 0.02), Call("ExitPlanMode", {"plan": "## Plan\n\n1. Survey the files."})],
        [Say("Plan approved.", 0.02)],
        [Say("I will start a helper.", 0.02),
         Call("Agent", {"description": "Survey the files", "prompt": "SUBAGENT-MARKER survey the files",
                        "subagent_type": "general-purpose", "run_in_background": True})],
        [Say("The helper runs in the background.", 0.02)],
    ])
    fake.converse("SUBAGENT-MARKER", [[Pause(SUBAGENT_S), Say("Survey done.", 0.02)]])
    pane = start(panes, "claude", fake, "--permission-mode", "plan")

    mark = pane.mark()
    pane.submit("please make a plan")
    asking = pane.wait_for("AwaitingConfirmation", what="Exit plan mode?")
    with pane.explained("plan mode", mark):
        assert asking["tool"] == "ExitPlanMode"
        assert asking["confirmation"]["prompt"] == "Exit plan mode?"
        assert asking["confirmation"]["options"][-1] == "2. No"
    # 1. Yes, and switch to default; a key pressed as the dialog opens can be lost, so again
    # while the dialog is still there
    wait_until(lambda: "Exit plan mode?" not in pane.screen() or pane.press("Enter"), timeout=20, interval=2,
               message="the plan accepted")
    pane.wait_for("Idle", what="Idle after the plan")

    mark = pane.mark()
    pane.submit("please start a background helper")
    # (the Agent tool's start comes first from the hooks, when muxd gave the agent its hooks)
    waiting = pane.wait_for("ToolUse", lambda s: s["tool"] == "Agent" and "background" in (
        s["activity"]["description"] or ""), what="waiting for the background agent")
    with pane.explained("background agent", mark):
        assert waiting["activity"]["description"] == "Waiting for 1 background agent to finish"
        assert "background agent" in pane.screen()
    pane.wait_for("Idle", timeout=SUBAGENT_S + 30, what="Idle once the background agent finished")
    with pane.explained("after the background agent", mark):
        assert 'Agent "Survey the files" finished' in pane.screen()
    never_idle(pane, mark, pane.cursor - 1)

    mark = pane.mark()
    pane.submit("/help")

    def overlay_shown() -> str | None:
        text = pane.screen()
        return text if "Esc to close" in text else None

    screen = wait_until(overlay_shown, timeout=10, message="the /help overlay")
    with pane.explained("/help", mark):
        # Idle was published before and stays (a state the same but for its evidence is not
        # published again): what the detectors read on this screen is Claude at rest.
        assert pane.agent()["activity"]["state"] == "Idle"
        read = read_screen(pane, screen)
        assert (read.activity.state, read.evidence and read.evidence.rule) == ("Idle", "overlay")


def test_codex_ctrl_c_while_a_command_runs_asks_what_to_do(panes):
    fake = OpenAIResponsesFake([
        [Call("exec_command", {"cmd": "sleep 60; echo slept", "sandbox_permissions": "require_escalated",
                               "justification": "Do you want to run a long build step?", "prefix_rule": ["sleep"]})],
        [Say("Stopped.", 0.05)],
    ])
    # Without its hooks: Codex 0.169 started with hooks interrupts the turn on Ctrl-C (the command
    # exits, "■ Conversation interrupted") and never offers to run it in the background.
    pane = start(panes, "codex", fake, env={"MUXD_AGENT_HOOKS": "0"})
    pane.submit("please run a long command")
    pane.wait_for("AwaitingConfirmation", what="the approval")
    mark = pane.mark()
    pane.press("Enter")
    pane.wait_for("ToolUse", screen_shows("ToolUse"), what="ToolUse while the command runs")
    pane.press("C-c")
    asking = pane.wait_for("AwaitingConfirmation", what="Task is still running")
    with pane.explained("Task is still running", mark):
        assert asking["confirmation"] == {"prompt": "Task is still running",
                                          "options": ["1. Cancel task", "2. Run in background", "3. Exit"]}
    never_idle(pane, mark, pane.cursor - 1)
