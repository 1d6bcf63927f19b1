"""CodexDetector on small screens modelled on what Codex CLI 0.169 draws: history above,
the status line, the `›` composer and its footer at the bottom of an 80-column pane."""

from __future__ import annotations

import pytest

from muxd.detectors.base import ScreenContext
from muxd.testing.screens import assert_survives_garbage, margin_rows
from muxd.detectors.codex import CodexDetector
from muxd.detectors.state import Activity, AgentError, AgentState, Confirmation, Detection, ToolSighting

COLUMNS = 80
DETECTOR = CodexDetector()


def screen(text: str) -> list[str]:
    return margin_rows(text)


def ctx(rows: list[str], **kwargs: object) -> ScreenContext:
    return ScreenContext(lines=rows, columns=COLUMNS, **kwargs)  # type: ignore[arg-type]


def detect(rows: list[str], prev: AgentState | None = None) -> Detection:
    detection = DETECTOR.detect(ctx(rows), prev)
    assert detection.agent_type == "codex"
    return detection


HEADER = """
    |  >_ OpenAI Codex (v0.169.0)
    |     /tmp/work

    |  To get started, describe a task or try one of these commands:
    |  /init - create an AGENTS.md file with instructions for Codex
"""
COMPOSER = """
    |› Ask Codex to do anything

    |  gpt-5-codex default · /tmp/work
    |  ← for agents · ? for shortcuts
"""
FIRST_TURN = """
    |› hello there

    |• Sure! Here is a short answer.

    |  Worked for 16s • 22:18

"""


def turn(*rows: str) -> list[str]:
    """The second turn's rows (plain text, "" for a blank row) between the user message and
    the composer."""
    body = "\n".join(f"|{row}" if row else "" for row in rows)
    return screen(HEADER + FIRST_TURN + "|› please run ls\n\n" + body + "\n\n" + COMPOSER)


# ---------------------------------------------------------------- identification


@pytest.mark.parametrize("name, argv", [
    ("codex", ["codex"]),
    ("codex", ["/usr/lib/node_modules/@openai/codex/vendor/x86_64-unknown-linux-musl/codex/codex", "resume"]),
    ("node", ["node", "/usr/lib/node_modules/@openai/codex/bin/codex.js"]),
    ("node", ["/usr/bin/node", "/home/u/.npm-global/bin/codex", "--model", "o3"]),
    ("npx", ["npx", "-y", "@openai/codex@0.169.0"]),
    ("npm exec @openai", ["npm exec @openai/codex"]),
])
def test_identify_by_process(name: str, argv: list[str]) -> None:
    assert DETECTOR.identify(ctx([], process_name=name, process_argv=argv)) == 1.0


@pytest.mark.parametrize("name, argv", [
    ("vim", ["vim", "codex"]),
    ("node", ["node", "server.js"]),
    ("bash", ["bash"]),
    ("gemini", ["gemini"]),
])
def test_other_processes_are_not_codex(name: str, argv: list[str]) -> None:
    assert DETECTOR.identify(ctx([], process_name=name, process_argv=argv)) < 0.5


def test_identify_by_screen() -> None:
    assert DETECTOR.identify(ctx(screen(HEADER + COMPOSER))) >= 0.5
    # header scrolled away: the composer with Codex's footer is enough
    assert DETECTOR.identify(ctx(screen(FIRST_TURN + COMPOSER))) >= 0.5
    # and with a draft typed over the placeholder
    drafted = COMPOSER.replace("Ask Codex to do anything", "fix the flaky test")
    assert DETECTOR.identify(ctx(screen(FIRST_TURN + drafted))) >= 0.5


def test_an_editor_showing_codex_text_is_capped() -> None:
    assert DETECTOR.identify(ctx(screen(HEADER + COMPOSER), process_name="vim", process_argv=["vim", "x"])) < 0.5


OTHER_SCREENS = {
    "shell": """
        |user@host:~/src$ ls
        |README.md  muxd  tests
        |user@host:~/src$
    """,
    "vim": """
        |def main():
        |    print("› hi")
        |~
        |"main.py" 2L, 30B                                 1,1   All
    """,
    "python": """
        |Python 3.11.7 (main) [GCC 11.4.0] on linux
        |>>> print("Would you like to run the following command?")
        |Would you like to run the following command?
        |>>>
    """,
    "git-log": """
        |commit 3f2a1b7c9d (HEAD -> main)
        |Author: Someone <someone@example.com>
        |    Codex: detector
        |(END)
    """,
    "cat-capture": HEADER + COMPOSER + "    |user@host:~$",
    "claude": """
        |● The tool finished.
        |✻ Cogitated for 10s
        |────────────────────────────────────────
        |❯
        |────────────────────────────────────────
        |  ⏸ manual mode on · ? for shortcuts · ← for agents
    """,
    "gemini": """
        | ⠏ Thinking... (esc to cancel, 8s)                 ? for shortcuts
        |────────────────────────────────────────
        | >   Type your message or @path/to/file
    """,
}


@pytest.mark.parametrize("name", sorted(OTHER_SCREENS))
def test_other_screens_are_not_codex(name: str) -> None:
    assert DETECTOR.identify(ctx(screen(OTHER_SCREENS[name]))) < 0.5


# ---------------------------------------------------------------- states


def test_idle_at_start_with_model_from_footer() -> None:
    d = detect(screen(HEADER + COMPOSER))
    assert (d.state, d.rule, d.model) == ("Idle", "composer", "gpt-5-codex")


def test_idle_after_a_finished_turn() -> None:
    d = detect(screen(HEADER + FIRST_TURN + COMPOSER))
    assert (d.state, d.rule, d.line) == ("Idle", "turn-done", "Worked for 16s • 22:18")


def test_idle_with_a_draft_and_with_an_open_slash_popup() -> None:
    draft = screen(FIRST_TURN + COMPOSER.replace("Ask Codex to do anything", "fix the tests"))
    assert detect(draft).state == "Idle"
    popup = screen(FIRST_TURN + """
        |› please run ls

        |› /status      show current session configuration and token usage
        |  /statusline  configure which items appear in the status line

        |› /status

        |  gpt-5-codex default · /tmp/work
    """)
    assert (detect(popup).state, detect(popup).rule) == ("Idle", "composer-popup")


def test_thinking_from_the_status_line() -> None:
    d = detect(turn("◦ Working (2s • esc to interrupt)"))
    assert (d.state, d.description, d.elapsed_s, d.model) == ("Thinking", "Working", 2, "gpt-5-codex")
    assert d.line == "◦ Working (2s • esc to interrupt)"


def test_thinking_with_a_reasoning_header_and_minutes() -> None:
    d = detect(turn("• Planning the change (1m 05s • esc to interrupt)"))
    assert (d.state, d.description, d.elapsed_s) == ("Thinking", "Planning the change", 65)


def test_status_line_cut_at_the_screen_edge() -> None:
    header = "Let me think about this carefully. First I consider the question, then I weig…"
    d = detect(turn("◦ " + header))
    assert (d.state, d.description, d.elapsed_s) == ("Thinking", header, None)
    cut = "• Let me think about this carefully. First I consider the question (8s • esc to…"
    assert len(cut) == COLUMNS
    d = detect(turn(cut))
    assert (d.state, d.elapsed_s) == ("Thinking", 8)
    assert d.description == "Let me think about this carefully. First I consider the question"


def test_generating_while_the_answer_streams() -> None:
    d = detect(turn("• Here is what I fo"))
    assert (d.state, d.rule, d.line) == ("Generating", "answer-streaming", "• Here is what I fo")


def test_tool_running_under_the_status_line() -> None:
    d = detect(turn("• Running ls -la", "", "• Working (3s • esc to interrupt)"))
    assert (d.state, d.tool, d.description, d.elapsed_s) == ("ToolUse", "exec_command", "Working", 3)
    assert d.tools_seen == []  # counted once it shows as `Ran`


def test_finished_tool_with_the_status_back_is_thinking() -> None:
    d = detect(turn("• Ran ls -la", "  └ README.md", "", "• Working (5s • esc to interrupt)"))
    assert (d.state, d.tool) == ("Thinking", None)
    assert d.tools_seen == [ToolSighting("exec_command", "Ran ls -la")]


def test_explored_items_are_tool_sightings() -> None:
    d = detect(turn("• Explored", "  └ Read foo.txt", "    List ls -la", "", "• Done looking.", "",
                    "  Worked for 3s • 22:19"))
    assert d.state == "Idle"
    assert d.tools_seen == [ToolSighting("exec_command", "Read foo.txt"), ToolSighting("exec_command", "List ls -la")]


APPROVAL = """
    |› please run ls

    |• Running mkdir -p demo && ls demo

    |  Would you like to run the following command?

    |  Reason: Create a demo directory outside the sandbox

    |  $ mkdir -p demo && ls demo

    |› 1. Yes, proceed (y)
    |  2. Yes, and don't ask again for commands that start with `mkdir -p demo` (p)
    |  3. No, and tell Codex what to do differently (esc)

    |  Press enter to confirm or esc to cancel
"""


def test_approval_dialog() -> None:
    d = detect(screen(HEADER + FIRST_TURN + APPROVAL))
    assert (d.state, d.rule, d.tool, d.model) == ("AwaitingConfirmation", "approval-dialog", "exec_command", None)
    assert d.confirmation == Confirmation(prompt="Would you like to run the following command?", options=[
        "1. Yes, proceed (y)",
        "2. Yes, and don't ask again for commands that start with `mkdir -p demo` (p)",
        "3. No, and tell Codex what to do differently (esc)",
    ])
    assert d.line == "Would you like to run the following command?"
    assert d.tools_seen == []  # not a use until approved and run
    assert DETECTOR.identify(ctx(screen(APPROVAL))) >= 0.5


def test_interrupted_turn_is_idle_without_error() -> None:
    d = detect(turn("• Sure! Here is a", "", "■ Conversation interrupted - use /feedback if something went wrong"))
    assert (d.state, d.rule, d.error) == ("Idle", "turn-ended", None)


def test_api_error_ends_the_turn() -> None:
    d = detect(turn("■ We’re currently experiencing high demand, which may cause temporary errors."))
    assert d.state == "Idle"
    assert d.error == AgentError(type="overloaded",
                                 message="We’re currently experiencing high demand, which may cause temporary errors.")


def test_an_error_wrapped_on_a_narrow_pane_is_one_cell() -> None:
    # Codex does not indent the rest of a wrapped `■` row: it is not a cell of its own.
    d = detect(turn("■ We’re currently experiencing high demand, which may cause",
                    "temporary errors."))
    assert (d.state, d.rule) == ("Idle", "turn-ended")
    assert d.error == AgentError(type="overloaded",
                                 message="We’re currently experiencing high demand, which may cause temporary errors.")


def test_reconnecting_is_thinking_with_the_error() -> None:
    d = detect(turn("◦ Reconnecting... 2/5 (4s • esc to interrupt)",
                    "  └ We’re currently experiencing high demand, which may cause temporary errors."))
    assert (d.state, d.description, d.elapsed_s) == ("Thinking", "Reconnecting... 2/5", 4)
    assert d.error is not None and d.error.type == "overloaded"


def test_slash_status_panel_is_idle() -> None:
    d = detect(screen(FIRST_TURN + """
        |/status

        |  Model:               gpt-5-codex (reasoning none)
        |  Token usage:         7.13K total  (7.04K input + 93 output)
    """ + COMPOSER))
    assert (d.state, d.tokens) == ("Idle", None)


def test_footer_with_reasoning_and_context_left() -> None:
    footer = "|  gpt-5.1-codex-max · medium reasoning · 72% context left · ? for shortcuts"
    d = detect(screen(FIRST_TURN + "    |› Ask Codex to do anything\n\n    " + footer))
    assert (d.model, d.context_left_pct) == ("gpt-5.1-codex-max", 72.0)


def test_overlay_over_the_composer_is_unknown_whatever_came_before() -> None:
    # The keys go to the overlay, not to a prompt: not Idle; and a state held from before the
    # overlay would be a guess (it outlived Codex itself when Codex quit to a shell).
    rows = screen(HEADER + FIRST_TURN + """
        |  Warnings · 1 of 2 · Startup
        |  Codex could not find bubblewrap on PATH.
        |  k keep & next · esc dismiss & close · ^o copy · ←/→ warning
    """)
    assert (detect(rows).state, detect(rows).rule) == ("Unknown", "no-composer")
    prev = AgentState(agent_type="codex", activity=Activity(state="Thinking", description="Working"))
    assert detect(rows, prev).state == "Unknown"


def test_exit_summary_then_shell_prompt() -> None:
    rows = screen("""
        |Disconnected from this task. Any running work continues.
        |To reconnect, run:
        |  codex resume 01a20030-2792-7b83-8de4-a1add6a4bd03
        |Token usage so far: total=7,128 input=7,035 output=93
        |root@vm:/tmp/work#
    """)
    d = detect(rows)
    assert (d.state, d.tokens, d.session_id) == ("Exited", 7128, "01a20030-2792-7b83-8de4-a1add6a4bd03")
    assert DETECTOR.identify(ctx(rows)) >= 0.5


def test_config_error_at_start_is_exited_with_the_error() -> None:
    rows = screen("""
        |root@vm:/tmp/work# codex
        |Error loading configuration: approval_policy = "untrusted" is no longer supported
        |root@vm:/tmp/work#
    """)
    d = detect(rows)
    assert d.state == "Exited"
    assert d.error is not None and d.error.type == "config_error"


def test_pane_exited() -> None:
    assert DETECTOR.detect(ctx(screen(HEADER + COMPOSER), exited=True), None).state == "Exited"


# ---------------------------------------------------------------- the region rule


def test_conversation_text_does_not_trigger_states() -> None:
    rows = screen(HEADER + """
        |› print "Would you like to run the following command?" and "(2s • esc to interrupt)"

        |• Would you like to run the following command?
        |  1. Yes, proceed (y)
        |  2. No
        |  Press enter to confirm or esc to cancel
        |  Working (2s • esc to interrupt)

        |  Worked for 2s • 22:18
    """ + COMPOSER)
    d = detect(rows)
    assert (d.state, d.confirmation, d.description) == ("Idle", None, None)


# ---------------------------------------------------------------- robustness


def test_garbage_never_raises() -> None:
    assert_survives_garbage(DETECTOR, "›•◦■└─│╭╰ (0123456789s•esc to interrupt)Worked for\t…$#%:/abc", seed=7)
    DETECTOR.detect(ScreenContext(lines=[]), None)
    DETECTOR.detect(ScreenContext(lines=["›"] * 50 + ["  x" * 500]), None)


def test_idle_after_a_turn_shorter_than_a_second() -> None:
    d = detect(screen(HEADER + FIRST_TURN.replace("Worked for 16s", "Worked for <1s") + COMPOSER))
    assert (d.state, d.rule, d.line) == ("Idle", "turn-done", "Worked for <1s • 22:18")


def test_exit_summary_read_when_the_pane_itself_exited() -> None:
    rows = screen("""
    |Disconnected from this task. Any running work continues.
    |To reconnect, run:
    |  codex resume 01a2008a-0838-7eb3-b9bd-aa7f3b261da5
    |Token usage so far: total=40,161 input=40,109 output=52
    """)
    d = DETECTOR.detect(ScreenContext(lines=rows, columns=120, exited=True, exit_code=0), None)
    assert (d.state, d.tokens, d.session_id) == ("Exited", 40161, "01a2008a-0838-7eb3-b9bd-aa7f3b261da5")


def test_approval_wrapped_on_a_narrow_pane() -> None:
    # A 40-column pane: the question and the reason wrap, a reason's question too.
    d = detect(screen("""
        |› please run ls

        |  Would you like to run the following
        |  command?

        |  Reason: May I create a demo directory
        |  outside the read-only sandbox?

        |  $ mkdir -p codex_demo && sleep 2 &&
        |  ls codex_demo

        |› 1. Yes, proceed (y)
        |  2. Yes, and don't ask again for
        |     commands that start with `mkdir -p
        |     codex_demo` (p)
        |  3. No, and tell Codex what to do
        |     differently (esc)

        |  Press enter to confirm or esc to
        |  cancel
    """))
    assert (d.state, d.tool) == ("AwaitingConfirmation", "exec_command")
    assert d.confirmation is not None
    assert d.confirmation.prompt == "Would you like to run the following command?"
    assert d.confirmation.options[0] == "1. Yes, proceed (y)" and len(d.confirmation.options) == 3


def test_wrapped_options_are_joined() -> None:
    d = detect(screen("""
        |  Would you like to run the following command?

        |  $ sleep 60; echo slept

        |› 1. Yes, proceed (y)
        |  2. Yes, and don't ask again for commands that start with
        |     `sleep 60` (p)
        |  3. No, and tell Codex what to do differently (esc)

        |  Press enter to confirm or esc to cancel
    """))
    assert d.confirmation is not None and d.confirmation.options == [
        "1. Yes, proceed (y)", "2. Yes, and don't ask again for commands that start with `sleep 60` (p)",
        "3. No, and tell Codex what to do differently (esc)"]


def test_approval_cut_by_a_short_pane_keeps_the_options_shown() -> None:
    # 50x16: the list is cut after option 2, a `↓` where the rest would be.
    d = detect(screen("""
        |  Would you like to run the following command?

        |  $ mkdir -p codex_demo && sleep 2 && ls

        |› 1. Yes, proceed (y)
        |  2. Yes, and don't ask again for commands that
        |     start with `mkdir -p codex_demo` (p)
        |↓
        |  Press enter to confirm or esc to cancel
    """))
    assert d.state == "AwaitingConfirmation" and d.confirmation is not None
    assert d.confirmation.options == [
        "1. Yes, proceed (y)", "2. Yes, and don't ask again for commands that start with `mkdir -p codex_demo` (p)"]


def test_ctrl_c_while_a_task_runs_asks_what_to_do_with_it() -> None:
    rows = screen("""
        |• Running sleep 60; echo slept


        |  Task is still running
        |  Choose what happens to the current task.


        |› 1. Cancel task        Stop the current task and stay in
        |                        Codex
        |  2. Run in background  Exit Codex and leave the task
        |                        running
        |  3. Exit               Stop the current task and exit Codex

        |  enter select · esc back
    """)
    d = detect(rows)
    assert (d.state, d.rule) == ("AwaitingConfirmation", "selection-dialog")
    assert d.confirmation == Confirmation(prompt="Task is still running",
                                          options=["1. Cancel task", "2. Run in background", "3. Exit"])
    assert DETECTOR.identify(ctx(rows)) >= 0.5


STATUS_WITH_TERMINALS = "• Working (12s • esc to interrupt) · 1 background terminal running · /ps to view · /stop to close"


@pytest.mark.parametrize("width", [60, 80, 100, 120])
def test_status_line_with_background_terminals_keeps_its_header_and_time(width: int) -> None:
    line = STATUS_WITH_TERMINALS if len(STATUS_WITH_TERMINALS) <= width else STATUS_WITH_TERMINALS[:width - 1] + "…"
    d = DETECTOR.detect(ScreenContext(lines=turn("• Ran make build", "  └ built", "", line), columns=width), None)
    assert (d.state, d.description, d.elapsed_s, d.background) == ("Thinking", "Working", 12, 1)
    # No cell at all in the turn: it waits on the command Codex moved to the background (a real
    # Codex 0.169 screen of a sandboxed `sleep 14` shows nothing else).
    d = DETECTOR.detect(ScreenContext(lines=turn(line), columns=width), None)
    assert (d.state, d.tool, d.description, d.elapsed_s, d.background) == ("ToolUse", "exec_command", "Working", 12, 1)


def test_approval_whose_reason_asks_a_question_keeps_codex_s_question() -> None:
    rows = screen(HEADER + FIRST_TURN + APPROVAL.replace(
        "Reason: Create a demo directory outside the sandbox",
        "Reason: May I run touch lantern.txt in the current directory? The filesystem is read-only."))
    d = detect(rows)
    assert d.confirmation is not None
    assert (d.confirmation.prompt, d.tool) == ("Would you like to run the following command?", "exec_command")


# ---------------------------------------------------------------- the text in the composer


def test_input_text_is_the_draft_not_the_placeholder() -> None:
    assert detect(screen(HEADER + COMPOSER)).input_text is None
    assert detect(screen(HEADER + COMPOSER.replace("Ask Codex to do anything", "Ask a follow-up question"))).input_text is None
    d = detect(screen(HEADER + COMPOSER.replace("Ask Codex to do anything", "fix the flaky test")))
    assert (d.state, d.input_text) == ("Idle", "fix the flaky test")


def test_input_text_of_a_draft_over_several_rows() -> None:
    # As Codex draws it in a 70-column pane: a wrapped row, then a line typed after Ctrl-J.
    rows = ["  >_ OpenAI Codex (v0.169.0)", "", "› hello world this is a rather long message that should wrap around",
            "  the box edge", "  second line", "", "  gpt-5-codex default · /tmp/work"]
    d = DETECTOR.detect(ScreenContext(lines=rows, columns=70), None)
    assert (d.state, d.model) == ("Idle", "gpt-5-codex")
    assert d.input_text == "hello world this is a rather long message that should wrap around the box edge\nsecond line"


def test_the_status_output_gives_the_session_id() -> None:
    d = detect(screen(HEADER + """
        |/status

        |  Model:               gpt-5-codex (reasoning none)
        |  Session:             01a20030-2792-7b83-8de4-a1add6a4bd03

        |  Token usage:         7.13K total  (7.04K input + 93 output)

    """ + COMPOSER))
    assert (d.state, d.session_id) == ("Idle", "01a20030-2792-7b83-8de4-a1add6a4bd03")


def test_command_output_under_a_message_whose_echo_scrolled_away_is_no_turn() -> None:
    # /status in a short pane: its echo scrolled off, its indented rows sit under the last message.
    d = detect(screen("""
        |› overload test
        |                       01a20d52-14af-7291-b638-508
        |                       4291599a3

        |  Token usage:         40.2K total  (40.1K input +
        |                       52 output)

    """ + COMPOSER))
    assert (d.state, d.rule) == ("Idle", "composer")
    started = detect(screen(HEADER + "    |› overload test\n\n" + COMPOSER))
    assert (started.state, started.rule) == ("Thinking", "turn-started")
