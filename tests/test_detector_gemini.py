"""GeminiDetector on small screens modelled on what Gemini CLI 0.61 draws: history, the
spinner above the input box rule, the ` > ` composer and its two-row footer (80 columns)."""

from __future__ import annotations

import pytest

from muxd.detectors.base import ScreenContext
from muxd.testing.screens import assert_survives_garbage, margin_rows
from muxd.detectors.gemini import GeminiDetector
from muxd.detectors.state import Activity, AgentError, AgentState, Confirmation, Detection, ToolSighting

COLUMNS = 80
RULE = "─" * COLUMNS
DETECTOR = GeminiDetector()


def screen(text: str) -> list[str]:
    return margin_rows(text, COLUMNS)


def ctx(rows: list[str], **kwargs: object) -> ScreenContext:
    return ScreenContext(lines=rows, columns=COLUMNS, **kwargs)  # type: ignore[arg-type]


def detect(rows: list[str], prev: AgentState | None = None) -> Detection:
    detection = DETECTOR.detect(ctx(rows), prev)
    assert detection.agent_type == "gemini"
    return detection


BANNER = """
    | ▝▜▄     Gemini CLI v0.61.0
    |   ▝▜▄
    |  ▗▟▀    Authenticated with gemini-api-key /auth

    |Tips for getting started:
    |1. Create GEMINI.md files to customize your interactions
"""
INPUT_BOX = """
    |──
    | Shift+Tab to accept edits

    | >   Type your message or @path/to/file

    | workspace (/directory)                 sandbox                    /model
    | /tmp/work                              no sandbox                   Auto
"""
IDLE_ABOVE = "    |                                                            ? for shortcuts\n"
SHELL_BOX = """
    |╭──────────────────────────────────────────────────────────╮
    |│ ✓  Shell mkdir -p demo && ls demo                        │
    |│                                                          │
    |│ x.txt                                                    │
    |╰──────────────────────────────────────────────────────────╯
"""


def spinner(text: str = "Thinking...", elapsed: str = "8s") -> str:
    return f"    | ⠏ {text} (esc to cancel, {elapsed})                           ? for shortcuts\n"


def busy(*parts: str, line: str | None = None) -> list[str]:
    conversation = BANNER + "    | > please run a shell command\n\n" + "".join(parts)
    return screen(conversation + "\n" + (line or spinner()) + INPUT_BOX)


# ---------------------------------------------------------------- identification


@pytest.mark.parametrize("name, argv", [
    ("gemini", ["gemini"]),
    ("node", ["node", "/usr/lib/node_modules/@google/gemini-cli/dist/index.js"]),
    ("node", ["/usr/bin/node", "--max-old-space-size=8192", "/usr/local/bin/gemini", "-m", "gemini-2.5-pro"]),
    ("npx", ["npx", "https://github.com/google-gemini/gemini-cli"]),
    ("npx", ["npx", "-y", "@google/gemini-cli@0.61.0"]),
])
def test_identify_by_process(name: str, argv: list[str]) -> None:
    assert DETECTOR.identify(ctx([], process_name=name, process_argv=argv)) == 1.0


@pytest.mark.parametrize("name, argv", [
    ("vim", ["vim", "gemini"]),
    ("node", ["node", "server.js"]),
    ("bash", ["bash"]),
    ("codex", ["codex"]),
])
def test_other_processes_are_not_gemini(name: str, argv: list[str]) -> None:
    assert DETECTOR.identify(ctx([], process_name=name, process_argv=argv)) < 0.5


@pytest.mark.parametrize("rows", [
    screen(BANNER + IDLE_ABOVE + INPUT_BOX),
    screen("    | > hello\n" + IDLE_ABOVE + INPUT_BOX),  # banner scrolled away
    busy(),
], ids=["fresh", "scrolled", "busy"])
def test_identify_by_screen(rows: list[str]) -> None:
    assert DETECTOR.identify(ctx(rows)) >= 0.5


OTHER_SCREENS = {
    "shell": """
        |user@host:~/src$ echo "(esc to cancel, 5s)"
        |(esc to cancel, 5s)
        |user@host:~/src$
    """,
    "vim": """
        |Allow execution of [Shell]?
        |● 1. Allow once
        |  2. No, suggest changes (esc)
        |~
        |"notes.txt" 3L, 60B                                1,1   All
    """,
    "python": """
        |>>> print("✦ Gemini CLI v0.61.0")
        |✦ Gemini CLI v0.61.0
        |>>>
    """,
    "git-log": """
        |commit 3f2a1b7c9d (HEAD -> main)
        |    Type your message or @path/to/file
        |(END)
    """,
    "claude": """
        |● Done.
        |────────────────────────────────────────
        |❯
        |────────────────────────────────────────
        |  ⏸ manual mode on · ? for shortcuts
    """,
    "codex": """
        |• Working (2s • esc to interrupt)

        |› Ask Codex to do anything

        |  gpt-5-codex default · /tmp/work
    """,
}


@pytest.mark.parametrize("name", sorted(OTHER_SCREENS))
def test_other_screens_are_not_gemini(name: str) -> None:
    assert DETECTOR.identify(ctx(screen(OTHER_SCREENS[name]))) < 0.5


# ---------------------------------------------------------------- states


def test_idle_with_model_from_the_footer() -> None:
    d = detect(screen(BANNER + IDLE_ABOVE + INPUT_BOX))
    assert (d.state, d.rule, d.model, d.description) == ("Idle", "input-box", "Auto", None)
    assert d.line == ">   Type your message or @path/to/file"


def test_idle_with_a_draft_and_after_a_cancelled_request() -> None:
    draft = screen(BANNER + IDLE_ABOVE + INPUT_BOX.replace("  Type your message or @path/to/file", "fix it"))
    assert detect(draft).state == "Idle"
    cancelled = screen("    | > think slowly please\n\n    |ℹ Request cancelled.\n" + IDLE_ABOVE + INPUT_BOX)
    assert (detect(cancelled).state, detect(cancelled).error) == ("Idle", None)


def test_press_ctrl_c_again_is_idle() -> None:
    rows = screen("    | > hi\n    |ℹ Request cancelled.\n    | Press Ctrl+C again to exit.\n" + IDLE_ABOVE + INPUT_BOX)
    assert detect(rows).state == "Idle"


def test_thinking_before_any_answer() -> None:
    d = detect(busy())
    assert (d.state, d.rule, d.description, d.elapsed_s, d.model) == ("Thinking", "spinner", "Thinking...", 8, "Auto")


def test_spinner_with_a_phrase_and_minutes() -> None:
    d = detect(busy(line=spinner("Finalizing Code Implementation", "43m 42s")))
    assert (d.description, d.elapsed_s) == ("Finalizing Code Implementation", 2622)


def test_generating_when_answer_text_follows_the_prompt() -> None:
    d = detect(busy("    |✦ Sure! Here is\n"))
    assert (d.state, d.rule, d.line) == ("Generating", "answer-streaming", "✦ Sure! Here is")
    assert d.description == "Thinking..."


def test_finished_tool_box_then_spinner_is_thinking() -> None:
    d = detect(busy(SHELL_BOX))
    assert (d.state, d.tool) == ("Thinking", None)
    assert d.tools_seen == [ToolSighting("Shell", "Shell mkdir -p demo && ls demo")]


def test_answer_after_the_tool_box_is_generating() -> None:
    assert detect(busy(SHELL_BOX, "\n    |✦ The tool finished.\n")).state == "Generating"


def test_running_tool_box_is_tool_use() -> None:
    d = detect(busy(SHELL_BOX.replace("✓", "⊶")))
    assert (d.state, d.tool) == ("ToolUse", "Shell")
    assert d.line == "│ ⊶  Shell mkdir -p demo && ls demo                        │"
    # A use from its first running frame, the same one the finished box shows (a short pane
    # can scroll the finished box away before a look sees it).
    assert d.tools_seen == [ToolSighting("Shell", "Shell mkdir -p demo && ls demo")]


@pytest.mark.parametrize("glyph", ["⊶", "⊷"])  # the running glyph blinks between the two
def test_running_tool_box_is_tool_use_on_either_blink(glyph: str) -> None:
    d = detect(busy(SHELL_BOX.replace("✓", glyph)))
    assert (d.state, d.tool) == ("ToolUse", "Shell")


def test_shell_awaiting_input_while_the_command_runs_is_tool_use() -> None:
    # After a while without output Gemini CLI puts this where its spinner was; the command runs.
    waiting = "    | ! Shell awaiting input (Tab to focus)                       ? for shortcuts\n"
    rows = screen(BANNER + SHELL_BOX.replace("✓", "⊷") + waiting + INPUT_BOX)
    d = detect(rows)
    assert (d.state, d.tool, d.description, d.elapsed_s) == ("ToolUse", "Shell", "Shell awaiting input", None)


CONFIRM = """
    | > please run a shell command

    |╭──────────────────────────────────────────────────────────────╮
    |│ ? Shell  mkdir -p demo && ls demo                            │
    |│ ╭──────────────────────────────────────────────────────────╮ │
    |│ │ mkdir -p demo && ls demo                                 │ │
    |│ ╰──────────────────────────────────────────────────────────╯ │
    |│ Allow execution of [Shell]?                                  │
    |│                                                              │
    |│ ● 1. Allow once                                              │
    |│   2. Allow for this session                                  │
    |│   3. No, suggest changes (esc)                               │
    |╰──────────────────────────────────────────────────────────────╯
"""


def test_shell_confirmation() -> None:
    d = detect(screen(BANNER + CONFIRM))
    assert (d.state, d.rule, d.tool, d.model) == ("AwaitingConfirmation", "confirmation-box", "Shell", None)
    assert d.confirmation == Confirmation(prompt="Allow execution of [Shell]?",
                                          options=["1. Allow once", "2. Allow for this session",
                                                   "3. No, suggest changes (esc)"])
    assert d.tools_seen == []  # not a use until approved and run
    assert DETECTOR.identify(ctx(screen(CONFIRM))) >= 0.5


def test_write_file_confirmation_takes_the_tool_from_the_box_header() -> None:
    rows = screen("""
        |╭──────────────────────────────────────────────────────╮
        |│ ? WriteFile  Writing to new_file.txt                 │
        |│ ╭──────────────────────────────────────────────────╮ │
        |│ │ 1 hello                                          │ │
        |│ ╰──────────────────────────────────────────────────╯ │
        |│ Apply this change?                                   │
        |│                                                      │
        |│ ● 1. Allow once                                      │
        |│   2. Allow for this session                          │
        |│   3. Modify with external editor                     │
        |│   4. No, suggest changes (esc)                       │
        |╰──────────────────────────────────────────────────────╯
    """)
    d = detect(rows)
    assert (d.state, d.tool, d.confirmation.prompt if d.confirmation else None) == (
        "AwaitingConfirmation", "WriteFile", "Apply this change?")
    assert d.confirmation is not None and len(d.confirmation.options) == 4


def test_api_error_in_the_current_turn() -> None:
    rows = screen("    | > overload test\n\n    |✕ [API Error: got status: 503 Service Unavailable]\n"
                  + IDLE_ABOVE + INPUT_BOX)
    d = detect(rows)
    assert d.state == "Idle"
    assert d.error == AgentError(type="server_error", message="[API Error: got status: 503 Service Unavailable]")


def test_goodbye_box_then_shell_prompt() -> None:
    rows = screen("""
        | > /quit
        |╭──────────────────────────────────────────────────────────────────╮
        |│  Agent powering down. Goodbye!                                   │
        |│  Interaction Summary                                             │
        |│  Session ID:                 5faf9945-2fdd-4ec3-99c3-2e96801fb298│
        |│  Model Usage                                                     │
        |│  Model                           Reqs  Input Tokens  Output      │
        |│  ──────────────────────────────────────────────────────────────  │
        |│  gemini-3.5-flash-lite              5           500       50     │
        |│  gemini-2.5-pro                     4         9,380       96     │
        |╰──────────────────────────────────────────────────────────────────╯
        |root@vm:/tmp/work#
    """)
    d = detect(rows)
    assert (d.state, d.rule, d.model, d.tokens) == ("Exited", "goodbye-box", "gemini-3.5-flash-lite", None)
    assert d.session_id == "5faf9945-2fdd-4ec3-99c3-2e96801fb298"
    assert DETECTOR.identify(ctx(rows)) >= 0.5


def test_no_input_box_yet_is_unknown_whatever_came_before() -> None:
    # The banner drawn, the input box not yet (or hidden): Gemini's input is not ready, and
    # a state held from an earlier frame would be a guess.
    rows = screen(BANNER)
    assert (detect(rows).state, detect(rows).rule) == ("Unknown", "no-input-box")
    prev = AgentState(agent_type="gemini", activity=Activity(state="Generating"))
    assert detect(rows, prev).state == "Unknown"


def test_the_shell_line_that_started_gemini_is_not_idle() -> None:
    assert detect(["bash-5.2# gemini"]).state == "Unknown"
    assert (detect(["bash-5.2# gemini", "bash-5.2#"]).state, detect(["bash-5.2#"]).rule) == ("Exited", "shell-prompt")


def test_pane_exited() -> None:
    assert DETECTOR.detect(ctx(busy(), exited=True), None).state == "Exited"


# ---------------------------------------------------------------- the region rule


def test_conversation_text_does_not_trigger_states() -> None:
    rows = screen(BANNER + """
        | > explain "Allow execution of [Shell]?" and "(esc to cancel, 5s)"

        |✦ Gemini shows Allow execution of [Shell]? with options:
        |  ● 1. Allow once
        |  2. No, suggest changes (esc)
        |   ⠏ Thinking... (esc to cancel, 5s)
    """ + IDLE_ABOVE + INPUT_BOX)
    d = detect(rows)
    assert (d.state, d.confirmation, d.elapsed_s) == ("Idle", None, None)


# ---------------------------------------------------------------- robustness


def test_garbage_never_raises() -> None:
    assert_survives_garbage(DETECTOR, "│╭╰─✦✓⊶?●> ⠏(esc to cancel, 5s)Allow execution of [Shell]?1.2.\t$#abc/model", seed=11)
    DETECTOR.detect(ScreenContext(lines=[]), None)
    DETECTOR.detect(ScreenContext(lines=[RULE, " > x", " /model", ""]), None)


# ---------------------------------------------------------------- the text in the input box


def test_input_text_is_the_draft_not_the_placeholder() -> None:
    assert detect(screen(BANNER + INPUT_BOX)).input_text is None
    d = detect(screen(BANNER + INPUT_BOX.replace(">   Type your message or @path/to/file", "> explain this repo")))
    assert (d.state, d.input_text) == ("Idle", "explain this repo")
    assert detect(screen(BANNER + INPUT_BOX.replace(">   Type your message or @path/to/file",
                                                    ">   Type your shell command"))).input_text is None


def test_input_text_of_a_draft_over_several_rows() -> None:
    # As Gemini CLI draws it in a 70-column pane (64 columns of text): a wrapped row, a new line.
    rows = ["─" * 70, " Shift+Tab to accept edits", "", "",
            " > hello world this is a rather long message that should wrap",
            "   around the box edge and more words here", "   second line", "",
            " workspace (/directory)                 sandbox                /model",
            " /tmp/work                              no sandbox               Auto"]
    d = DETECTOR.detect(ScreenContext(lines=rows, columns=70), None)
    assert (d.state, d.model) == ("Idle", "Auto")
    assert d.input_text == ("hello world this is a rather long message that should wrap around the box edge "
                            "and more words here\nsecond line")


def test_the_stats_box_gives_the_session_id() -> None:
    d = detect(screen(BANNER + """
        | > /stats

        |╭──────────────────────────────────────────────────────────────╮
        |│  Session Stats                                               │
        |│  Interaction Summary                                         │
        |│  Session ID:                 6ee40a27-d078-4626-818b-9fc7666c07b8│
        |│  Auth Method:                gemini-api-key                  │
        |╰──────────────────────────────────────────────────────────────╯
    """ + IDLE_ABOVE + INPUT_BOX))
    assert (d.state, d.session_id) == ("Idle", "6ee40a27-d078-4626-818b-9fc7666c07b8")
