"""muxd.executions.answers on real screens: each fixture in answers_data/ is a pane's rows
(scrollback first, soft wraps joined) once the agent was back at its prompt, captured from
the real CLIs against the fake models (`<agent>[_<renderer>]_<size>_<turn>.txt`) or copied from
shared/corpus/real (`corpus_*.txt`, plain `capture-pane -p` screens). `<name>.answer` is the
answer read from it, checked by reading the screen (an empty file: None)."""

from __future__ import annotations

from pathlib import Path

import pytest

from muxd.executions.answers import extract_answer, normalise_answer, turn_start

DATA = Path(__file__).parent / "answers_data"

# (fixture, agent, the message of the turn read; None: the last prompt on the screen)
SCREENS = [
    ("claude_classic_120x40_tool", "claude", "please run a command"),
    ("claude_classic_50x16_long", "claude", "write a long answer"),
    ("claude_classic_120x40_markdown", "claude", "show some markdown"),
    ("claude_fullscreen_50x16_long", "claude", "write a long answer"),
    ("claude_fullscreen_50x16_markdown", "claude", "show some markdown"),
    ("codex_inline_120x40_tool", "codex", "please run a command"),
    ("codex_inline_50x16_long", "codex", "write a long answer"),
    ("codex_inline_50x16_markdown", "codex", "show some markdown"),
    ("codex_altscreen_50x16_long", "codex", "write a long answer"),
    ("gemini_120x40_tool", "gemini", "please run a command"),
    ("gemini_50x16_long", "gemini", "write a long answer"),
    ("gemini_120x40_markdown", "gemini", "show some markdown"),
    ("aider_120x40_short", "aider", "say something short"),
    ("aider_50x16_long", "aider", "write a long answer"),
    # as CI saw it once: rows Rich's live area drew left above the same rows printed for good
    ("aider_50x16_long_live_repeat", "aider", "write a long answer"),
    ("aider_120x40_markdown", "aider", "show some markdown"),
    ("opencode_120x40_tool", "opencode", "please run a command"),
    ("opencode_120x40_markdown", "opencode", "show some markdown"),
    ("opencode_50x16_tool", "opencode", "please run a command"),
    ("corpus_claude_autotool_25", "claude", "please use bash to make a dir"),
    ("corpus_claude_interrupted_1", "claude", None),
    ("corpus_claude_idle_1", "claude", None),
    ("corpus_claude_question_7", "claude", None),
    ("corpus_codex_toolrun_15", "codex", "please think and then run a shell command"),
    ("corpus_codex_apierror_9", "codex", "overload test"),
    ("corpus_gemini_toolrun_13", "gemini", "please run a shell command"),
    ("corpus_gemini_apierror_21", "gemini", "overload test"),
    ("corpus_aider_apierror_5", "aider", "overload test"),
    ("corpus_aider_permission_1", "aider", None),
]


def rows_of(name: str) -> list[str]:
    return (DATA / f"{name}.txt").read_text().splitlines()


@pytest.mark.parametrize(("name", "agent", "message"), SCREENS, ids=[case[0] for case in SCREENS])
def test_the_answer_on_a_real_screen(name, agent, message):
    rows = rows_of(name)
    expected = (DATA / f"{name}.answer").read_text().rstrip("\n") or None
    start = turn_start(agent, rows, message)
    assert extract_answer(agent, rows[start or 0:], message) == expected
    # cut at the echo or not, the same turn is read: the reader finds the echo itself
    assert extract_answer(agent, rows, message) == expected


ANSWERS_SEEN_WHOLE = {
    "claude_classic_120x40_tool": "I will run a command first.\n\nThe command ran. Everything looks fine.",
    "codex_inline_120x40_tool": "I will run a command first.\n\nThe command ran. Everything looks fine.",
    "gemini_120x40_tool": "I will run a command first.\n\nThe command ran. Everything looks fine.",
    "opencode_120x40_tool": "I will run a command first.\n\nThe command ran. Everything looks fine.",
    "aider_120x40_short": "Sure! Here is a short answer from the fake model server, streamed word by word.",
}


@pytest.mark.parametrize("name", sorted(ANSWERS_SEEN_WHOLE))
def test_text_tool_text_turns_join_their_answer_blocks_with_a_blank_line(name):
    agent = name.split("_")[0]
    message = "say something short" if agent == "aider" else "please run a command"
    assert extract_answer(agent, rows_of(name), message) == ANSWERS_SEEN_WHOLE[name]


MARKDOWN = ("Here is a list:\n\n- first item with `code` in it\n- second item is **bold** text\n\n"
            "1. one\n2. two\n\nA final line with *emphasis* in it.")


@pytest.mark.parametrize("name", ["claude_classic_120x40_markdown", "codex_inline_50x16_markdown",
                                  "gemini_120x40_markdown", "aider_120x40_markdown", "opencode_120x40_markdown"])
def test_markdown_drawn_as_styles_reads_back_as_the_streamed_text(name):
    agent = name.split("_")[0]
    assert extract_answer(agent, rows_of(name), "show some markdown") == normalise_answer(MARKDOWN)


def test_turn_start_is_the_last_echo_of_the_message():
    rows = ["❯ hi", "", "● Hello.", "", "❯ hi", "", "● Hello again.", "", "✻ Baked for 1s",
            "─" * 40, "❯ ", "─" * 40]
    assert turn_start("claude", rows, "hi") == 4
    assert turn_start("claude", rows, None) == 4
    assert turn_start("claude", rows, "something else") is None
    assert extract_answer("claude", rows, "hi") == "Hello again."


def test_a_message_wrapped_over_several_rows_is_one_echo():
    rows = ["› please write a long answer about the", "  alphabet in many words", "",
            "• Sure, here it is.", "", "  Worked for 1s • 11:02", "", "› Ask Codex to do anything"]
    message = "please write a long answer about the alphabet in many words"
    assert turn_start("codex", rows, message) == 0
    assert extract_answer("codex", rows, message) == "Sure, here it is."


def test_a_turn_taller_than_an_alternate_screen_reads_as_its_visible_end():
    # opencode in a 50x16 pane: the echo and the first text scrolled off with the tool box's top
    rows = rows_of("opencode_50x16_tool")
    assert turn_start("opencode", rows, "please run a command") is None
    assert extract_answer("opencode", rows, "please run a command") == "The command ran. Everything looks fine."


def test_a_pinned_echo_with_the_answer_right_under_it():
    # Codex on its alternate screen pins the prompt above an answer whose start scrolled off
    rows = rows_of("codex_altscreen_50x16_long")
    assert rows[0] == "› write a long answer" and rows[1].startswith("  ")
    answer = extract_answer("codex", rows, "write a long answer")
    assert answer is not None and answer.endswith("bravo, end of paragraph 6.")
    assert "Tip:" not in answer


def test_no_answer_without_a_reader_or_an_echo():
    rows = rows_of("claude_classic_120x40_tool")
    for agent in (None, "shell", "unknown"):
        assert extract_answer(agent, rows, "please run a command") is None
        assert turn_start(agent, rows, "please run a command") is None
    # an answer is read after the echo, but for a CLI that scrolls it out of its own screen
    assert extract_answer("codex", rows_of("codex_inline_120x40_tool")[-6:], "please run a command") is None
    assert extract_answer("claude", [], None) is None


def test_normalise_answer_keeps_words_and_paragraphs_only():
    text = "  First  line\nwrapped here.\n\n\n\n* one\n+ two\n• three\n\nA `code` and **bold** and __strong__ and *em*."
    assert normalise_answer(text) == ("First line wrapped here.\n\n- one - two - three\n\n"
                                      "A code and bold and strong and em.")
    assert normalise_answer(normalise_answer(text)) == normalise_answer(text)


@pytest.mark.parametrize("text", ["2 * 3 * 4", "call f(*args, **kwargs)", "snake_case_name and x_y.txt",
                                  "a ** b", "- a dash item"])
def test_normalise_answer_leaves_text_that_is_not_markup(text):
    assert normalise_answer(text) == text
