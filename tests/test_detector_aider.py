"""AiderDetector on small screens modelled on what Aider 0.86 prints: a rule, the files in
the chat and the `> ` prompt, the reply, the token report and yes/no questions (80 columns)."""

from __future__ import annotations

import pytest

from muxd.detectors.aider import AiderDetector
from muxd.detectors.base import ScreenContext
from muxd.testing.screens import assert_survives_garbage, margin_rows
from muxd.detectors.state import Activity, AgentState, Confirmation, Detection, ToolSighting

COLUMNS = 80
RULE = "─" * COLUMNS
DETECTOR = AiderDetector()


def screen(text: str) -> list[str]:
    return margin_rows(text, COLUMNS)


def ctx(rows: list[str], **kwargs: object) -> ScreenContext:
    return ScreenContext(lines=rows, columns=COLUMNS, **kwargs)  # type: ignore[arg-type]


def detect(rows: list[str], prev: AgentState | None = None) -> Detection:
    detection = DETECTOR.detect(ctx(rows), prev)
    assert detection.agent_type == "aider"
    return detection


BANNER = """
    |Aider v0.86.2
    |Model: openai/fake-model with whole edit format
    |Git repo: none
    |Added notes.txt to the chat.
"""
PROMPT = """
    |──
    |notes.txt
    |>
"""
FINISHED_TURN = """
    |──
    |notes.txt
    |> say something

    |Sure! Here is an answer.

    |Tokens: 732 sent, 49 received. Cost: $0.01 message, $0.03 session.
"""


def asking(text: str, *after: str) -> list[str]:
    """The banner, then the prompt `> text` and the rows printed after it."""
    return screen(BANNER + f"    |──\n    |notes.txt\n    |> {text}\n\n" + "\n".join(f"    |{row}" for row in after))


# ---------------------------------------------------------------- identification


@pytest.mark.parametrize("name, argv", [
    ("aider", ["/home/u/.venv/bin/python3", "/home/u/.venv/bin/aider", "--model", "openai/x"]),
    ("python3", ["python3", "-m", "aider", "--no-git"]),
    ("aider", ["aider"]),
    ("uvx", ["uvx", "--from", "aider-chat", "aider"]),
    ("pipx", ["pipx", "run", "aider-chat"]),
])
def test_identify_by_process(name: str, argv: list[str]) -> None:
    assert DETECTOR.identify(ctx([], process_name=name, process_argv=argv)) == 1.0


@pytest.mark.parametrize("name, argv", [
    ("python3", ["python3", "manage.py", "runserver"]),
    ("vim", ["vim", "aider"]),
    ("bash", ["bash"]),
    ("codex", ["codex"]),
])
def test_other_processes_are_not_aider(name: str, argv: list[str]) -> None:
    assert DETECTOR.identify(ctx([], process_name=name, process_argv=argv)) < 0.5


@pytest.mark.parametrize("rows", [
    screen(BANNER + PROMPT),
    screen(FINISHED_TURN + PROMPT),                    # banner scrolled away
    asking("hi", "     ░█    Waiting for openai/fake-model"),
    screen("|Create new file? (Y)es/(N)o [Yes]:"),
], ids=["fresh", "scrolled", "waiting", "question"])
def test_identify_by_screen(rows: list[str]) -> None:
    assert DETECTOR.identify(ctx(rows)) >= 0.5


OTHER_SCREENS = {
    "prompt-alone": PROMPT,
    "shell": """
        |user@host:~/src$ echo "Tokens: 5 sent, 3 received."
        |Tokens: 5 sent, 3 received.
        |user@host:~/src$
    """,
    "python": """
        |>>> print("Aider v0.86.2")
        |Aider v0.86.2
        |>>>
    """,
    "vim": """
        |Aider v0.86.2
        |Model: openai/x with whole edit format
        |~
        |"notes.md" 2L, 50B                                 1,1   All
    """,
    "git-log": """
        |commit 3f2a1b7c9d (HEAD -> main)
        |    Tokens: 4.0k sent, 264 received.
        |(END)
    """,
    "claude": """
        |● Done.
        |────────────────────────────────────────
        |❯
        |────────────────────────────────────────
        |  ⏸ manual mode on · ? for shortcuts
    """,
    "heredoc": """
        |user@host:~$ cat <<EOF
        |> hello
        |>
    """,
}


@pytest.mark.parametrize("name", sorted(OTHER_SCREENS))
def test_other_screens_are_not_aider(name: str) -> None:
    assert DETECTOR.identify(ctx(screen(OTHER_SCREENS[name]))) < 0.5


# ---------------------------------------------------------------- states


def test_idle_at_start_with_model_from_the_banner() -> None:
    d = detect(screen(BANNER + PROMPT))
    assert (d.state, d.rule, d.model, d.tokens) == ("Idle", "prompt", "openai/fake-model", None)


def test_idle_after_a_turn_with_tokens_and_cost() -> None:
    d = detect(screen(FINISHED_TURN + PROMPT))
    assert (d.state, d.tokens, d.cost_usd, d.model) == ("Idle", 781, 0.03, None)


def test_idle_with_a_draft_keeps_the_finished_turn_tokens() -> None:
    d = detect(screen(FINISHED_TURN + "    |──\n    |notes.txt\n    |> next question"))
    assert (d.state, d.tokens) == ("Idle", 781)


def test_tokens_in_thousands() -> None:
    rows = screen(FINISHED_TURN.replace("732 sent, 49 received", "4.0k sent, 1.9k cache hit, 264 received") + PROMPT)
    assert detect(rows).tokens == 4264


def test_thinking_while_waiting_for_the_model() -> None:
    d = detect(asking("hi", "     ░█    Waiting for openai/fake-model"))
    assert (d.state, d.rule, d.description, d.model, d.tokens) == (
        "Thinking", "waiting-spinner", "Waiting for openai/fake-model", "openai/fake-model", None)


def test_thinking_during_litellm_retries_carries_the_error() -> None:
    d = detect(asking("overload test",
                      "  ░litellm.InternalServerError: InternalServerError: OpenAIException - fake overload",
                      "The API provider's servers are down or overloaded.",
                      "Retrying in 0.2 seconds...",
                      "   █░      Waiting for openai/fake-model"))
    assert (d.state, d.description) == ("Thinking", "Waiting for openai/fake-model")
    assert d.error is not None and d.error.type == "overloaded"
    assert d.error.message == "litellm.InternalServerError: InternalServerError: OpenAIException - fake overload"


def test_generating_while_the_reply_streams() -> None:
    d = detect(asking("hi", "I will create a new file.", "", "hello.py"))
    assert (d.state, d.rule, d.line) == ("Generating", "reply-streaming", "hello.py")


def test_create_file_question() -> None:
    d = detect(asking("make hello.py", "I will create a new file.", "",
                      "Tokens: 651 sent, 31 received.", "", "hello.py", "Create new file? (Y)es/(N)o [Yes]:"))
    assert (d.state, d.rule, d.tokens, d.model) == ("AwaitingConfirmation", "yes-no-question", 682, "openai/fake-model")
    assert d.confirmation == Confirmation(prompt="Create new file? (Y)es/(N)o [Yes]:", options=["Yes", "No"])


def test_question_with_more_choices_and_a_typed_answer() -> None:
    d = detect(asking("/add x", "Add file to the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: y"))
    assert d.state == "AwaitingConfirmation"
    assert d.confirmation is not None
    assert d.confirmation.options == ["Yes", "No", "All", "Skip all", "Don't ask again"]


def test_answered_question_above_new_output_is_not_awaiting() -> None:
    d = detect(asking("make hello.py", "Create new file? (Y)es/(N)o [Yes]: y", "Applied edit to hello.py",
                      "I will also add a test"))
    assert d.state == "Generating"


def test_interrupted_turn_back_at_the_prompt_is_idle() -> None:
    rows = screen(BANNER + """
        |──
        |notes.txt
        |> slow answer please

        |Sure! Here
        |^C again to exit
    """ + PROMPT)
    assert (detect(rows).state, detect(rows).tokens) == ("Idle", None)


def test_shell_command_running_is_tool_use() -> None:
    d = detect(asking("!cargo build", "   Compiling iovec v0.1.4"))
    assert (d.state, d.tool) == ("ToolUse", "run")


def sent(text: str) -> tuple[list[str], tuple[int, int]]:
    """The prompt `> text` as the last row and the cursor at the start of the blank row under
    it: what Aider shows once Enter is pressed, until its command or the model prints."""
    rows = screen(BANNER + f"    |──\n    |notes.txt\n    |> {text}\n")
    return rows, (0, len(rows))


@pytest.mark.parametrize("text, state, tool", [
    ("/run sleep 12; echo ran-it", "ToolUse", "run"),
    ("!make test", "ToolUse", "run"),
    ("please answer slowly", "Thinking", None),
])
def test_sent_with_nothing_drawn_yet_is_busy(text: str, state: str, tool: str | None) -> None:
    rows, cursor = sent(text)
    d = DETECTOR.detect(ctx(rows, cursor=cursor), None)
    assert (d.state, d.tool) == (state, tool)
    # The same row with the cursor still on it is a draft.
    assert DETECTOR.detect(ctx(rows, cursor=(len(rows[-1]), len(rows) - 1)), None).state == "Idle"



@pytest.mark.parametrize("last_input, state", [
    (b"\r", "Thinking"),                 # Enter: the request is on its way
    (b"please answer slowly\r", "Thinking"),
    (b"", "Thinking"),                    # not known (a replayed log): the frame alone decides
    (b"\x03", "Idle"),                   # Ctrl-C: the cursor left the draft to print `^C again to exit`
])
def test_the_last_key_tells_enter_from_ctrl_c(last_input: bytes, state: str) -> None:
    rows, cursor = sent("please answer slowly")
    assert DETECTOR.detect(ctx(rows, cursor=cursor, last_input=last_input), None).state == state

def test_question_cut_at_the_edge_of_a_narrow_pane() -> None:
    # 60 columns: `[Yes]` itself is cut across two rows.
    rows = [*screen(BANNER)[:2], "> /run sleep 12", "ran-it",
            "Add 0.0k tokens of command output to the chat? (Y)es/(N)o [Y", "es]:"]
    d = DETECTOR.detect(ScreenContext(lines=rows, columns=60), None)
    assert d.state == "AwaitingConfirmation"
    assert d.confirmation == Confirmation(prompt="Add 0.0k tokens of command output to the chat? (Y)es/(N)o [Yes]:",
                                          options=["Yes", "No"])


def test_redraw_of_a_streamed_reply_keeps_the_busy_state() -> None:
    rows = asking("hi")
    assert detect(rows).state == "Idle"  # a typed draft, as far as one frame can tell
    prev = AgentState(agent_type="aider", activity=Activity(state="Generating"))
    assert detect(rows, prev).state == "Generating"


def test_exit_after_keyboard_interrupt() -> None:
    rows = screen(BANNER + PROMPT + """
        |^C KeyboardInterrupt
        |root@vm:/tmp/work#
    """)
    d = detect(rows)
    assert (d.state, d.rule, d.model) == ("Exited", "shell-prompt", "openai/fake-model")
    assert DETECTOR.identify(ctx(rows)) >= 0.5


def test_pane_exited() -> None:
    assert DETECTOR.detect(ctx(screen(BANNER + PROMPT), exited=True), None).state == "Exited"


# ---------------------------------------------------------------- the region rule


def test_conversation_text_does_not_trigger_states() -> None:
    rows = screen(BANNER + """
        |──
        |notes.txt
        |> print "Create new file? (Y)es/(N)o [Yes]:" and "esc to interrupt"

        |Create new file? (Y)es/(N)o [Yes]:
        |     ░█    Waiting for openai/fake-model
        |esc to interrupt

        |Tokens: 10 sent, 5 received.
    """ + PROMPT)
    d = detect(rows)
    assert (d.state, d.confirmation, d.tokens) == ("Idle", None, 15)


# ---------------------------------------------------------------- robustness


def test_garbage_never_raises() -> None:
    assert_survives_garbage(DETECTOR, "─> ░█(Y)es/(N)o [Yes]:Tokens: 1.2k sent, 3 received.Waiting for x\t$#^C", seed=5)
    DETECTOR.detect(ScreenContext(lines=[]), None)
    DETECTOR.detect(ScreenContext(lines=[RULE, ">", "Tokens: x sent, y received."]), None)


def test_applied_edits_are_tool_uses() -> None:
    rows = screen("""
    |> make a file
    |
    |hello.py
    |Applied edit to hello.py
    |Tokens: 600 sent, 82 received.
    |──
    |hello.py
    |>
    """)
    assert detect(rows).tools_seen == [ToolSighting("Edit", "Applied edit to hello.py")]


# ---------------------------------------------------------------- the text at the prompt


def test_input_text_is_what_follows_the_prompt() -> None:
    assert detect(screen(BANNER + PROMPT)).input_text is None
    d = detect(screen(BANNER + PROMPT.replace("|>", "|> make a hello script")))
    assert (d.state, d.input_text) == ("Idle", "make a hello script")


def test_input_text_over_several_rows_each_behind_the_prompt() -> None:
    # prompt_toolkit wraps at the last column and starts each row (wrapped or typed after
    # Alt-Enter) with the prompt again, as Aider showed it in a 70-column pane.
    rows = ["Added notes.txt to the chat.", "─" * 70, "notes.txt",
            "> hello world this is a rather long message that should wrap around th", "> e box edge",
            "> second line"]
    d = DETECTOR.detect(ScreenContext(lines=rows, columns=70), None)
    assert d.state == "Idle"
    assert d.input_text == "hello world this is a rather long message that should wrap around the box edge\nsecond line"


def test_aider_is_not_generating_while_it_starts_or_on_its_exit_row() -> None:
    starting = screen(BANNER)
    assert (detect(starting).state, detect(starting).rule) == ("Unknown", "no-prompt")
    leaving = screen(BANNER + PROMPT + "\n\n    |^C KeyboardInterrupt")
    assert (detect(leaving).state, detect(leaving).rule) == ("Exited", "keyboard-interrupt")
    again = screen(BANNER + PROMPT + "\n\n    |^C again to exit")
    assert (detect(again).state, detect(again).rule) == ("Unknown", "prompt-coming")
    command = asking("/tokens", "Approximate context window usage for openai/fake-model, in tokens:")
    assert (detect(command).state, detect(command).rule) == ("Unknown", "command-output")
