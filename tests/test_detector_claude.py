"""ClaudeDetector on small screens modelled on what Claude Code 2.1 draws (and a few older
layouts). Each screen is the bottom of a 60-column pane; `──` stands for a full-width rule."""

from __future__ import annotations

import random

import pytest

from muxd.detectors.base import ScreenContext
from muxd.detectors.claude import ClaudeDetector
from muxd.detectors.claude_lines import parse_spinner
from muxd.detectors.runner import DetectorRunner
from muxd.detectors.state import Activity, AgentError, AgentState, Confirmation, Detection, ToolSighting

COLUMNS = 60
RULE = "─" * COLUMNS
DETECTOR = ClaudeDetector()


def screen(*parts: str) -> list[str]:
    """Rows written one per line after a `|` margin (a line without one is a blank row);
    a row that is just `──` becomes a full-width rule. Parts are joined top to bottom."""
    rows: list[str] = []
    for part in parts:
        for line in part.strip("\n").split("\n"):
            text = line.lstrip()
            row = text[1:] if text.startswith("|") else ""
            rows.append(RULE if row.strip() == "──" else row.rstrip())
    return rows


def ctx(rows: list[str], **kwargs: object) -> ScreenContext:
    return ScreenContext(lines=rows, columns=COLUMNS, **kwargs)  # type: ignore[arg-type]


def detect(rows: list[str], **kwargs: object) -> Detection:
    detection = DETECTOR.detect(ctx(rows, **kwargs), None)
    assert detection.agent_type == "claude"
    return detection


BANNER = """
    | ▐▛███▛█   Claude Code v2.1.330
    |▝▜██████▀  Opus 5.5 · API Usage Billing
    | ▝▝   ▝▝   /tmp/work
"""
IDLE_BOX = """
    |──
    |❯
    |──
    |  ⏸ manual mode on · ? for shortcuts
"""
BUSY_BOX = """
    |──
    |❯
    |──
    |  ⏸ manual mode on · esc to interrupt
"""
FRESH = screen(BANNER, "|", IDLE_BOX)


def busy(*conversation: str, spinner: str = "✻ Gusting… (4s · ↓ 12 tokens)") -> list[str]:
    return screen(*conversation, f"|\n|{spinner}\n|  ⎿  Tip: Use /memory to view memory\n|", BUSY_BOX)


# ---------------------------------------------------------------- identification


@pytest.mark.parametrize("name, argv", [
    ("claude", ["claude"]),
    ("claude", ["claude", "--permission-mode", "default"]),
    ("2.1.330", ["/root/.local/share/claude/versions/2.1.330"]),
    ("node", ["node", "/usr/lib/node_modules/@anthropic-ai/claude-code/cli.js"]),
    ("node", ["node", "/home/u/.npm-global/bin/claude", "--resume"]),
    ("npx", ["npx", "-y", "@anthropic-ai/claude-code@2.1.330"]),
    ("claude", ["/work/node_modules/@anthropic-ai/claude-code-linux-x64/claude"]),
])
def test_identify_by_process(name: str, argv: list[str]) -> None:
    assert DETECTOR.identify(ctx([], process_name=name, process_argv=argv)) == 1.0


@pytest.mark.parametrize("name, argv", [
    ("node", ["node", "server.js"]),
    ("vim", ["vim", "claude.py"]),
    ("bash", ["bash"]),
    ("python3", ["python3", "claude_code_notes.py"]),
])
def test_other_processes_on_a_blank_screen_are_not_claude(name: str, argv: list[str]) -> None:
    assert DETECTOR.identify(ctx([], process_name=name, process_argv=argv)) < 0.5


@pytest.mark.parametrize("rows", [
    FRESH,
    busy("|❯ hello"),
    screen(IDLE_BOX),  # banner scrolled away
])
def test_identify_by_screen(rows: list[str]) -> None:
    assert DETECTOR.identify(ctx(rows)) >= 0.5


SHELL = screen("""
    |user@host:~/src$ ls
    |README.md  muxd  tests
    |user@host:~/src$ git status
    |On branch main
    |nothing to commit, working tree clean
    |user@host:~/src$
""")
VIM = screen("""
    |import os

    |def main():
    |    print("hello")
    |~
    |~
    |~
    |"main.py" 4L, 48B                                 1,1   All
""")
PYTHON = screen("""
    |Python 3.11.7 (main, Jan  1 2024, 00:00:00) [GCC 11.4.0] on linux
    |Type "help", "copyright", "credits" or "license" for more information.
    |>>> print("❯")
    |❯
    |>>>
""")
GIT_LOG = screen("""
    |commit 3f2a1b7c9d (HEAD -> main)
    |Author: Someone <someone@example.com>
    |Date:   Mon Jan 1 00:00:00 2024

    |    Detectors: Claude Code
    |(END)
""")
# A capture of Claude's screen shown by a pager, and printed by cat in a shell.
CAPTURE = BANNER + "|\n|❯ hello\n|\n|✻ Gusting… (4s · ↓ 12 tokens)\n|" + IDLE_BOX
LESS_CAPTURE = screen(CAPTURE, "|claude_idle.txt (END)")
CAT_CAPTURE = screen("|user@host:~$ cat claude_idle.txt", CAPTURE, "|user@host:~$")


@pytest.mark.parametrize("rows", [SHELL, VIM, PYTHON, GIT_LOG, LESS_CAPTURE, CAT_CAPTURE],
                         ids=["shell", "vim", "python", "git-log", "less-capture", "cat-capture"])
def test_other_screens_are_not_claude(rows: list[str]) -> None:
    assert DETECTOR.identify(ctx(rows)) < 0.5


def test_a_pager_showing_a_live_looking_capture_is_not_claude() -> None:
    rows = screen(CAPTURE)  # the pager shows exactly Claude's rows, without its own status line
    assert DETECTOR.identify(ctx(rows)) >= 0.5
    assert DETECTOR.identify(ctx(rows, process_name="less", process_argv=["less", "x.txt"])) < 0.5


# ---------------------------------------------------------------- idle


def test_fresh_session_is_idle_with_the_banner_model() -> None:
    d = detect(FRESH)
    assert (d.state, d.rule, d.model) == ("Idle", "prompt-idle", "Opus 5.5")
    assert d.description is None and d.tokens is None and d.tool is None


def test_finished_turn_is_idle() -> None:
    d = detect(screen("""
        |❯ say something

        |● Sure! Here is the answer.

        |✻ Brewed for 16s · done 10:14 PM
    """ + IDLE_BOX))
    assert (d.state, d.rule, d.line) == ("Idle", "turn-done", "✻ Brewed for 16s · done 10:14 PM")
    assert d.model is None  # the banner scrolled away


def test_a_teammate_with_its_name_on_the_box_is_idle() -> None:
    # An agent team's teammate (tests/test_agents_real_claude_teams.py) labels its box.
    d = detect(screen("""
        |› Message from @team-lead (ctrl+o to expand)

        |● The fruit of the day is PINEAPPLE.

        |✻ Worked for 0s · done 7:55 PM

        |────────────────────────────────────────────── @helper ─
        |❯
        |──
        |  ⏸ manual mode on · ? for shortcuts · ← for agents
    """))
    assert (d.state, d.rule) == ("Idle", "turn-done")


def test_exit_with_a_teammate_running_awaits_confirmation() -> None:
    # `/exit` while a teammate (or a background task) runs: a panel under a `▔` edge.
    d = detect(screen("""
        |● Agent(Brief helper)

        |● The teammate is on it.
        |""" + "▔" * COLUMNS + """
        |  Background work is running
        |  The following will stop when you exit:
        |  teammate · Brief helper

        |  ❯ 1. Exit and stop tasks
        |    2. Move to background and exit
        |    3. Stay

        |  Enter to confirm · Esc to cancel
    """))
    assert (d.state, d.rule, d.tool) == ("AwaitingConfirmation", "confirm-dialog", None)
    assert d.confirmation == Confirmation(prompt="Background work is running", options=[
        "1. Exit and stop tasks", "2. Move to background and exit", "3. Stay"])


def test_waiting_for_a_background_agent_is_not_idle() -> None:
    # The turn ended with a subagent still running in the background: its result starts the
    # next turn by itself. The agents under the footer count as background work.
    d = detect(screen("""
        |● Agent(Survey the files)
        |  ⎿  Backgrounded agent (↓ to manage · ctrl+o to expand)

        |● The helper runs in the background.

        |✻ Waiting for 1 background agent to finish

        |──
        |❯
        |──
        |  ⏸ manual mode on · ? for shortcuts · ↓ to manage

        |  ● main
        |  ◯ general-purpose  Survey the files  11s · ↑ 6.9k tokens
    """))
    assert (d.state, d.rule, d.tool, d.background) == ("ToolUse", "background-agents", "Agent", 1)
    assert d.description == "Waiting for 1 background agent to finish"


def test_agents_listed_under_the_footer_are_background_work() -> None:
    d = detect(screen(IDLE_BOX, "|", "|  ● main", "|  ◯ general-purpose  Survey the files  3s"))
    assert (d.state, d.background) == ("Idle", 1)


def test_exit_plan_mode_asks_with_its_options_joined() -> None:
    # No key hints under the options; the first option wraps at 60 columns.
    d = detect(screen("""
        |● Here is my plan.
        |""" + "▔" * COLUMNS + """

        |  ────────────────────────────────────────────────────────
        |   Exit plan mode?

        |    Claude wants to exit plan mode

        |    ❯ 1. Yes, and switch to default (ask each time) for
        |         this session
        |      2. No
    """))
    assert (d.state, d.tool) == ("AwaitingConfirmation", "ExitPlanMode")
    assert d.confirmation == Confirmation(prompt="Exit plan mode?", options=[
        "1. Yes, and switch to default (ask each time) for this session", "2. No"])


@pytest.mark.parametrize("tabs", ["Help  General   Commands   Custom commands",
                                  "Settings  Status   Config   Usage   Stats"])
def test_help_and_status_overlays_are_claude_at_rest(tabs: str) -> None:
    rows = screen("|✻ Churned for 30s · done 2:15 PM", "|" + "▔" * COLUMNS, f"|  {tabs}", "|", """
        |  Version:                    2.1.330
        |  Session ID:                 d9eb3151-daa3-4237-ada1-27c69ce1ac26

        |  ←/→ to switch · Esc to close
    """)
    d = detect(rows)
    assert (d.state, d.rule, d.line) == ("Idle", "overlay", tabs)
    assert DETECTOR.identify(ctx(rows)) >= 0.5
    waiting = detect([row.replace("Churned for 30s · done 2:15 PM", "Waiting for 1 background agent to finish")
                      for row in rows])
    assert (waiting.state, waiting.background) == ("ToolUse", 1)


def test_the_model_picker_is_no_question() -> None:
    d = detect(screen("|✻ Churned for 30s · done 2:15 PM", "|" + "▔" * COLUMNS, """
        |  Select model
        |  Your pick is the default for new sessions.

        |  ❯ 1. Default (recommended) ✔  Use the default model
        |    2. Opus                     Opus 5.5

        |  s to use this session only · Enter to save · Esc to cancel
    """))
    assert (d.state, d.rule, d.confirmation) == ("Unknown", "picker", None)


def test_draft_in_the_box_and_interrupted_turn_are_idle() -> None:
    d = detect(screen("""
        |❯ slow answer please

        |● Sure! Here is a slowly streamed answer
        |  ⎿  Interrupted · What should Claude do instead?

        |──
        |❯ a draft not sent yet
        |  that runs over two rows
        |──
        |  ⏸ manual mode on
    """))
    assert (d.state, d.rule, d.line) == ("Idle", "interrupted", "❯ a draft not sent yet")


def test_ctrl_c_once_is_still_idle() -> None:
    d = detect(screen("""
        |✻ Cogitated for 9s · done 10:16 PM
        |                                ctrl+y to paste deleted text
        |──
        |❯
        |──
        |  Press Ctrl-C again to exit
    """))
    assert d.state == "Idle"


def test_older_layout_is_idle() -> None:
    d = detect(screen("""
        |▗ ▗   ▖ ▖  Claude Code v2.1.23
        |           Opus 4.5 · Claude Team
        |  ▘▘ ▝▝    ~/src/project

        |⏺ Read 1 file (ctrl+o to expand)

        |⏺ Done.

        |──
        |❯
        |──
        |  ? for shortcuts                      Update available!
    """))
    assert (d.state, d.model) == ("Idle", "Opus 4.5")
    assert d.tools_seen == [ToolSighting("Read", "Read 1 file")]


def test_model_with_effort_is_the_model_alone() -> None:
    rows = screen("""
        | ▐▛███▛█   Claude Code v2.1.283
        |▝▜██████▀  Opus 4.6 with high effort · Claude Max
    """ + IDLE_BOX)
    assert detect(rows).model == "Opus 4.6"


def test_context_left_from_the_footer() -> None:
    rows = screen("""
        |──
        |❯
        |──
        |  ⏵⏵ accept edits on (shift+tab to cycle)   Context left until auto-compact: 9%
    """)
    assert detect(rows).context_left_pct == 9.0


# ---------------------------------------------------------------- busy


def test_spinner_before_any_block_is_thinking() -> None:
    d = detect(busy("|❯ please use bash", spinner="✢ Reticulating…"))
    assert (d.state, d.rule, d.description) == ("Thinking", "spinner-no-block", "Reticulating")
    assert d.elapsed_s is None and d.tokens is None
    assert d.line == "✢ Reticulating…"


def test_model_is_read_while_the_banner_shows() -> None:
    assert detect(busy(BANNER, "|", "|❯ hello")).model == "Opus 5.5"
    assert detect(busy("|❯ hello")).model is None


def test_spinner_saying_thinking_is_thinking() -> None:
    d = detect(busy("|❯ think hard", spinner="· Transmogrifying… (1m 5s · ↓ 4.8k tokens · still thinking)"))
    assert (d.state, d.rule) == ("Thinking", "spinner-thinking")
    assert (d.description, d.elapsed_s, d.tokens) == ("Transmogrifying", 65, 4800)


def test_thinking_block_ending_is_thinking() -> None:
    d = detect(busy("|❯ think hard\n|\n|  Thinking for 12s…",
                    spinner="· Musing… (12s · ↓ 56 tokens · thought for 12s)"))
    assert (d.state, d.rule, d.elapsed_s) == ("Thinking", "thinking-block", 12)


def test_empty_answer_bullet_is_generating() -> None:
    d = detect(busy("|❯ think hard\n|\n|  Thought for 12s\n|\n|●",
                    spinner="✻ Musing… (13s · ↓ 64 tokens · thought for 12s)"))
    assert (d.state, d.rule, d.tokens) == ("Generating", "answer-block", 64)


def test_streaming_text_is_generating() -> None:
    d = detect(busy("""
        |❯ hello there

        |● Sure! Here is a slowly streamed answer from the model. Each word
        |  arrives after a short pause.
    """, spinner="✶ Reticulating… (10s · ↑ 340 tokens)"))
    assert (d.state, d.description, d.elapsed_s, d.tokens) == ("Generating", "Reticulating", 10, 340)


@pytest.mark.parametrize("block, tool", [
    ("|  Running 1 shell command…", "Bash"),
    ("|● Running 1 shell command…", "Bash"),
    ("|● Creating a demo directory\n|  ⎿  $ mkdir -p demo && ls demo", "Bash"),
    ("|  Creating a demo directory\n|  ⎿  $ mkdir -p demo && ls demo", "Bash"),  # bullet blinked off
    ("|  Reading hello.txt\n|  ⎿  hello.txt", "Read"),
    ("|⏺ Reading 1 file… (ctrl+o to expand)", "Read"),
    ("|● Bash(git status --short)\n|  ⎿  Running…", "Bash"),
    ("|● Update(hello.txt)", "Edit"),
    ("|● Write(new_file.txt)", "Write"),
])
def test_running_tool_is_tool_use(block: str, tool: str) -> None:
    d = detect(busy("|❯ please do it\n|\n|● I will run a command.\n|", block,
                    spinner="· Marinating… (3s · ↓ 21 tokens)"))
    assert (d.state, d.rule, d.tool) == ("ToolUse", "tool-running", tool)


@pytest.mark.parametrize("block", [
    "|  Ran 1 shell command",
    "|  Read 2 files, ran 1 shell command (ctrl+o to expand)",
    "|● Update(hello.txt)\n|  ⎿  Added 1 line, removed 1 line\n|      1 -hello\n|      1 +hey",
    "|● Bash(git status --short)\n|  ⎿  (No content)",
    "|● Answered Claude's questions:\n|  ⎿  · Which greeting style should I use? → Formal",
])
def test_finished_tool_is_thinking(block: str) -> None:
    d = detect(busy("|❯ please do it\n|", block, spinner="* Lollygagging… (4s · ↓ 14 tokens)"))
    assert (d.state, d.rule, d.tool) == ("Thinking", "tool-finished", None)


@pytest.mark.parametrize("block", [
    "|● Found 3 issues",
    "|● Here is the plan.\n|\n|  Reading the docs first, then the code.",
])
def test_answer_text_that_looks_like_a_tool_is_generating(block: str) -> None:
    assert detect(busy("|❯ review this\n|", block)).state == "Generating"


def test_group_with_a_part_it_does_not_know() -> None:
    d = detect(busy("|❯ go\n|", "|  Read 1 file, used 2 tools (ctrl+o to expand)"))
    assert (d.state, d.rule) == ("Thinking", "tool-finished")
    d = detect(busy("|❯ go\n|", "|  Read 1 file, using 1 tool…"))
    assert (d.state, d.rule) == ("ToolUse", "tool-running")


@pytest.mark.parametrize("message, kind", [
    ("529 Overloaded · retrying in 2s · attempt 3/10", "overloaded"),
    ("429 Too Many Requests · retrying in 30s · attempt 1/10", "rate_limited"),
    ("500 Internal Server Error · retrying in 1s · attempt 1/10", "server_error"),
    ("Request timed out · retrying in 1s · attempt 2/10", "timeout"),
    ("API error · retrying in 1s · attempt 2/10", "api_error"),
])
def test_api_error_kinds(message: str, kind: str) -> None:
    spinner = parse_spinner("✻ " + message)
    assert spinner is not None and spinner.error == AgentError(type=kind, message=message)


def test_api_retry_is_thinking_with_an_error() -> None:
    d = detect(busy("|❯ server overload test", spinner="✻ 529 Overloaded · retrying in 2s · attempt 3/10"))
    assert (d.state, d.rule) == ("Thinking", "api-retry")
    assert d.description == "529 Overloaded · retrying in 2s · attempt 3/10"
    assert d.elapsed_s is None
    assert d.error == AgentError(type="overloaded", message="529 Overloaded · retrying in 2s · attempt 3/10")
    other = detect(busy("|❯ x", spinner="✻ API error · retrying in 1s · attempt 2/10"))
    assert other.error is not None and other.error.type == "api_error"


def test_queued_prompt_under_the_spinner_keeps_it_busy() -> None:
    rows = screen("""
        |❯ hello

        |●

        |✻ Gusting… (4s · ↓ 12 tokens)

        |❯ and then this, queued
    """ + BUSY_BOX)
    assert detect(rows).state == "Generating"


@pytest.mark.parametrize("line, description, elapsed, tokens", [
    ("✳ Creating… (esc to interrupt)", "Creating", None, None),
    ("✽ Gusting…  thinking", "Gusting", None, None),
    ("✳ Enchanting… (ctrl+c to interrupt · 3m 17s · ↓ 3.1k tokens)", "Enchanting", 197, 3100),
    ("✢ Running tests… (ctrl+c to interrupt · ctrl+t to hide todos · 2m 54s · ↓ 2.5k tok", "Running tests", 174, None),
    ("* Nucleating… (2s · ↓ 1,234 tokens · thinking with medium effort)", "Nucleating", 2, 1234),
])
def test_spinner_grammar(line: str, description: str, elapsed: int | None, tokens: int | None) -> None:
    spinner = parse_spinner(line)
    assert spinner is not None
    assert (spinner.description, spinner.elapsed_s, spinner.tokens) == (description, elapsed, tokens)


@pytest.mark.parametrize("line", ["✻ Brewed for 16s · done 10:14 PM", "● Sure…", "❯ ✻ Gusting… (3s)", "Gusting…"])
def test_not_spinners(line: str) -> None:
    assert parse_spinner(line) is None


# ---------------------------------------------------------------- dialogs


BASH_DIALOG = """
    |❯ now use bash please

    |● I will run a command.

    |  Creating a demo directory
    |  ⎿  $ mkdir -p demo && ls demo

    |──
    | Bash command
    | Create a demo directory
    |╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌
    | mkdir -p demo && ls demo
    |╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌
    | Do you want to proceed?
    | ❯ 1. Yes
    |   2. Yes, and don't ask again for mkdir commands in /tmp/work
    |   3. No

    | Esc to cancel · Tab to amend
"""


def test_bash_permission_prompt() -> None:
    rows = screen(BASH_DIALOG)
    d = detect(rows)
    assert (d.state, d.rule, d.tool) == ("AwaitingConfirmation", "permission-dialog", "Bash")
    assert d.line == "Do you want to proceed?"
    assert d.confirmation == Confirmation(prompt="Do you want to proceed?", options=[
        "1. Yes", "2. Yes, and don't ask again for mkdir commands in /tmp/work", "3. No"])
    assert DETECTOR.identify(ctx(rows)) >= 0.5


def test_cursor_on_a_later_option_keeps_every_option() -> None:
    rows = screen(BASH_DIALOG.replace("❯ 1. Yes", "  1. Yes").replace("  3. No", "❯ 3. No"))
    d = detect(rows)
    assert d.confirmation is not None and d.confirmation.options[0] == "1. Yes"
    assert len(d.confirmation.options) == 3


@pytest.mark.parametrize("title, tool_line, question, tool", [
    ("Edit file", "● Update(hello.txt)", "Do you want to make this edit to hello.txt?", "Edit"),
    ("Create file", "● Write(new_file.txt)", "Do you want to create new_file.txt?", "Write"),
    ("Tool use", "● Update(hello.txt)", "Do you want to proceed?", "Edit"),  # title says nothing: the tool line does
])
def test_file_permission_prompts(title: str, tool_line: str, question: str, tool: str) -> None:
    d = detect(screen(f"""
        |❯ please edit hello.txt

        |{tool_line}

        |──
        | {title}
        | hello.txt
        |╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌
        | 1 -hello world
        | 1 +hey there world
        |╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌
        | {question}
        | ❯ 1. Yes
        |   2. Yes, and switch to accept edits for this session (shift+tab)
        |   3. No

        | Esc to cancel · Tab to amend
    """))
    assert (d.state, d.tool) == ("AwaitingConfirmation", tool)
    assert d.confirmation is not None and d.confirmation.prompt == question


def test_older_boxed_permission_prompt() -> None:
    d = detect(screen("""
        |╭──────────────────────────────────────────────────────╮
        |│ Bash command                                         │
        |│                                                      │
        |│   ls /home | grep -E "(slug|branch)" | head -10      │
        |│   Check for the script                               │
        |│                                                      │
        |│ Do you want to proceed?                              │
        |│ ❯ 1. Yes                                             │
        |│   2. No, and tell Claude what to do differently (esc)│
        |╰──────────────────────────────────────────────────────╯
    """))
    assert (d.state, d.tool) == ("AwaitingConfirmation", "Bash")
    assert d.confirmation == Confirmation(prompt="Do you want to proceed?", options=[
        "1. Yes", "2. No, and tell Claude what to do differently (esc)"])


TRUST_DIALOG = """
    |user@vm:/tmp/work# claude
    |──
    | Accessing workspace:

    | /tmp/work

    | Quick safety check: Is this a project you created or one you trust? (Like your
    | own code, or work from your team). If not, review this folder first.

    | Claude Code'll be able to read, edit, and execute files here.

    | ❯ No, exit
    |   Yes, I trust this folder

    | Enter to confirm · Esc to cancel
"""


def test_folder_trust_dialog() -> None:
    rows = screen(TRUST_DIALOG)
    d = detect(rows)
    assert (d.state, d.rule, d.tool) == ("AwaitingConfirmation", "confirm-dialog", None)
    assert d.confirmation == Confirmation(
        prompt="Quick safety check: Is this a project you created or one you trust?",
        options=["No, exit", "Yes, I trust this folder"])
    assert DETECTOR.identify(ctx(rows)) >= 0.5


def test_quitting_from_the_trust_dialog_is_exited() -> None:
    rows = screen(TRUST_DIALOG, "|user@vm:/tmp/work#")
    assert DETECTOR.identify(ctx(rows)) >= 0.5
    assert detect(rows).state == "Exited"


def test_api_key_dialog() -> None:
    d = detect(screen("""
        |──
        |  Detected a custom API key in your environment

        |  ANTHROPIC_API_KEY: sk-ant-...dummy-key-0000

        |  Do you want to use this API key?

        |    Yes
        |  ❯ No (recommended)

        |  Enter to confirm · Esc to cancel
    """))
    assert d.state == "AwaitingConfirmation"
    assert d.confirmation == Confirmation(prompt="Do you want to use this API key?",
                                          options=["Yes", "No (recommended)"])


def test_question_picker_awaits_input() -> None:
    d = detect(screen("""
        |❯ ask me a question

        |● I need a decision from you.
        |──
        | ☐ Greeting

        |Which greeting style should I use?

        |❯ 1. Formal
        |     Hello, world.
        |  2. Casual
        |     Hey there!
        |  3. Type something.
        |──
        |  4. Chat about this

        |Enter to select · ↑/↓ to navigate · Esc to cancel
    """))
    assert (d.state, d.rule, d.tool) == ("AwaitingInput", "question-dialog", "AskUserQuestion")
    assert d.confirmation == Confirmation(prompt="Which greeting style should I use?", options=[
        "1. Formal", "2. Casual", "3. Type something.", "4. Chat about this"])


def test_cursor_on_the_last_option_of_the_picker() -> None:
    d = detect(screen("""
        |──
        | ☐ Greeting

        |Which greeting style should I use?

        |  1. Formal
        |     Hello, world.
        |  2. Casual
        |──
        |❯ 3. Chat about this

        |Enter to select · ↑/↓ to navigate · Esc to cancel
    """))
    assert d.state == "AwaitingInput"
    assert d.confirmation == Confirmation(prompt="Which greeting style should I use?",
                                          options=["1. Formal", "2. Casual", "3. Chat about this"])


def test_a_dialog_taller_than_the_pane_is_still_a_confirmation() -> None:
    # A 50x16 pane: the dialog's title and top rule are cut off above the first row.
    rows = screen("""
        | Tip: auto mode handles these prompts for you —
        | choose "switch to auto mode" below
        | Create a demo directory
        |╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌
        | mkdir -p demo_dir && sleep 2 && ls demo_dir
        |╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌
        | Do you want to proceed?
        | ❯ 1. Yes
        |   2. Yes, and always allow access to
        |      /tmp/work from this project
        |   3. Yes, and switch to auto mode · auto mode
        |      handles these prompts for you
        |   4. No
        | ↑ 2 more lines
        | Esc to cancel · Tab to amend
    """)
    d = detect(rows)
    assert (d.state, d.line, d.tool) == ("AwaitingConfirmation", "Do you want to proceed?", None)
    assert d.confirmation is not None and d.confirmation.options[0] == "1. Yes"
    assert d.confirmation.options[-1] == "4. No"
    # Its title would name the tool; the tool the agent was starting stands in for it.
    running = AgentState(pane_id="%1", activity=Activity(state="ToolUse"), tool="Bash")
    assert DETECTOR.detect(ctx(rows), running).tool == "Bash"


def test_key_hints_without_a_dialog_are_not_a_confirmation() -> None:
    d = detect(screen("""
        |● Which file? Tell me and I will look.

        |❯ can you fix the one that says "Esc to cancel"?

        |  Esc to cancel · Tab to amend
    """))
    assert (d.state, d.rule) == ("Unknown", "no-prompt-box")  # no prompt box on screen either


def test_panel_without_a_question_is_not_a_confirmation() -> None:
    d = detect(screen("""
        |──
        | Select model
        | Switch between Claude models.

        | ❯ 1. Default (recommended)   Opus 5.5
        |   2. Sonnet                  Sonnet 5

        | Enter to confirm · Esc to exit
    """))
    # A picker holds the keys, not the prompt: not Idle either.
    assert (d.state, d.rule) == ("Unknown", "no-prompt-box")


# ---------------------------------------------------------------- region rule


def test_conversation_text_never_decides() -> None:
    rows = screen("""
        |❯ what does "Do you want to proceed?" mean, and "esc to interrupt"?

        |● Claude shows these lines:
        |    Do you want to proceed?
        |    ❯ 1. Yes
        |      2. No
        |    ✻ Gusting… (3s · ↓ 5 tokens)
        |    esc to interrupt
        |  Esc to cancel · Tab to amend

        |❯ ✻ Gusting… (3s · ↓ 5 tokens)

        |● Do you want to proceed? Esc to cancel

        |✻ Worked for 3s
    """ + IDLE_BOX)
    d = detect(rows)
    assert (d.state, d.rule) == ("Idle", "turn-done")
    assert d.confirmation is None and d.description is None


def test_answer_quoting_a_dialog_just_above_the_box_stays_idle() -> None:
    rows = screen("""
        |❯ show me a permission prompt

        |● It looks like this:
        |    Do you want to proceed?
        |    ❯ 1. Yes
        |      2. No
        |    Esc to cancel · Tab to amend
        |──
        |❯ Do you want to proceed? esc to interrupt
        |──
        |  ⏸ manual mode on · ? for shortcuts
    """)
    d = detect(rows)
    assert (d.state, d.rule) == ("Idle", "prompt-idle")
    assert d.confirmation is None


# ---------------------------------------------------------------- exit


def test_exit_output_under_a_shell_prompt_is_exited() -> None:
    rows = screen("""
        |user@vm:/tmp/work# claude

        |Resume this session with:
        |claude --resume 16312712-611a-4076-8c10-778c97470c56
        |user@vm:/tmp/work#
    """)
    assert DETECTOR.identify(ctx(rows)) >= 0.5
    d = detect(rows)
    assert (d.state, d.rule, d.session_id) == ("Exited", "exit-output", "16312712-611a-4076-8c10-778c97470c56")


def test_shell_work_after_the_exit_is_not_claude() -> None:
    rows = screen("""
        |Resume this session with:
        |claude --resume 16312712-611a-4076-8c10-778c97470c56
        |user@vm:/tmp/work# ls
        |a.txt  b.txt  c.txt
        |user@vm:/tmp/work# pwd
        |/tmp/work
        |user@vm:/tmp/work#
    """)
    assert DETECTOR.identify(ctx(rows)) < 0.5


def test_exited_pane() -> None:
    assert detect(FRESH, exited=True).state == "Exited"


# ---------------------------------------------------------------- tools seen


def test_tools_seen_in_screen_order() -> None:
    d = detect(screen("""
        |❯ go

        |● Bash(git status)
        |  ⎿  On branch main

        |● Update(src/app.py)
        |  ⎿  Added 1 line

        |  Read 2 files, ran 1 shell command (ctrl+o to expand)

        |● Done.

        |✻ Worked for 9s · done 10:15 PM
    """ + IDLE_BOX))
    assert d.tools_seen == [
        ToolSighting("Bash", "Bash(git status)"),
        ToolSighting("Edit", "Update(src/app.py)"),
        ToolSighting("Read", "Read 2 files, ran 1 shell command"),
        ToolSighting("Read", "Read 2 files, ran 1 shell command"),
        ToolSighting("Bash", "Read 2 files, ran 1 shell command"),
    ]


def test_each_tool_use_is_counted_once_across_frames() -> None:
    clock = [0.0]
    runner = DetectorRunner("%1", [DETECTOR], clock=lambda: clock[0])
    head = "|❯ please use bash\n|\n|● I will run a command.\n|"
    frames = [
        busy(head, "|● Running 1 shell command…"),
        busy(head, "|  Running 1 shell command…"),  # the bullet blinks
        busy(head, "|● Creating a demo directory\n|  ⎿  $ mkdir demo"),
        busy(head, "|  Ran 1 shell command"),
        busy(head, "|  Ran 1 shell command\n|\n|●"),
        screen(head, "|  Ran 1 shell command\n|\n|● Done.\n|\n|✻ Worked for 9s", IDLE_BOX),
    ]
    for rows in frames:
        for _ in range(2):  # twice: the runner publishes a state once a second frame confirms it
            clock[0] += 0.2
            runner.run(ctx(rows, process_name="claude", process_argv=["claude"]))
    assert runner.state.recent_tools == ["Bash"]
    assert runner.state.activity.state == "Idle"


# ---------------------------------------------------------------- robustness


def garbage_screens() -> list[list[str]]:
    rng = random.Random(7)
    pieces = ["❯", "─" * 30, "●", "⎿  $ x", "✻ Gusting… (", "Do you want to proceed?", "❯ 1. Yes",
              "Esc to cancel", "│", "╰" + "─" * 30, "user@h:~$", "Resume this session with:", "(", "…", " ", ""]
    junk = [bytes(rng.randrange(256) for _ in range(rng.randrange(200))).decode("latin-1") for _ in range(20)]
    screens: list[list[str]] = [[], [""], [" "] * 40, ["x"] * 40, ["─"] * 40, ["❯"] * 40, ["?"] * 3, junk,
                                ["─" * 5000, "❯ " + "x" * 100_000, "─" * 5000],
                                [RULE, "❯", RULE] * 50]
    for _ in range(200):
        screens.append([" " * rng.randrange(3) + rng.choice(pieces) + rng.choice(pieces)
                        for _ in range(rng.randrange(1, 30))])
    return screens


def test_never_raises_on_garbage() -> None:
    for rows in garbage_screens():
        for columns in (1, 60):
            context = ScreenContext(lines=rows, columns=columns)
            assert 0.0 <= DETECTOR.identify(context) <= 1.0
            assert isinstance(DETECTOR.detect(context, None), Detection)


def test_model_while_the_logo_animates() -> None:
    rows = screen("""
    | ▂   ▂    Claude Code v2.1.330
    |▂   ▂    Opus 5.5 · API Usage Billing
    |  ▂▂      /tmp/work
    """, "|", IDLE_BOX)
    assert detect(rows).model == "Opus 5.5"


# ---------------------------------------------------------------- the text in the prompt box


def box_with(*rows: str) -> list[str]:
    return screen(BANNER, "|", "|──\n" + "\n".join(f"|{row}" for row in rows) + "\n|──\n|  ⏸ manual mode on · ? for shortcuts")


def test_input_text_is_what_the_prompt_box_holds() -> None:
    assert detect(FRESH).input_text is None
    d = detect(box_with("❯ hello there, please say something"))
    assert (d.state, d.input_text) == ("Idle", "hello there, please say something")
    assert detect(box_with('❯ Try "fix lint errors"')).input_text is None  # the placeholder


def test_input_text_joins_wrapped_rows_and_keeps_typed_lines() -> None:
    # As Claude Code draws a draft in a 70-column pane: the first row wrapped, then Ctrl-J.
    rows = ["─" * 70, "❯ hello world this is a rather long message that should wrap around", "  the box edge",
            "  second line", "    indented", "─" * 70, "  ⏵⏵ auto mode on (shift+tab to cycle)"]
    d = DETECTOR.detect(ScreenContext(lines=rows, columns=70), None)
    assert d.input_text == ("hello world this is a rather long message that should wrap around the box edge\n"
                            "second line\n  indented")


def test_no_input_text_while_busy() -> None:
    assert detect(busy("|❯ do it")).input_text is None


def test_the_status_panel_gives_the_session_id() -> None:
    # /status replaces the prompt box (the keys are the panel's: Unknown, not Idle).
    d = detect(screen("""
        |  Settings  Status   Config   Usage   Stats

        |  Version:                    2.1.330
        |  Session name:               /rename to add a name
        |  Session ID:                 6a22dd4c-f722-4b42-a3e3-f230d57d1b8c
        |  Session kind:               interactive

        |  ←/→ to switch · Esc to close
    """))
    assert (d.state, d.session_id) == ("Unknown", "6a22dd4c-f722-4b42-a3e3-f230d57d1b8c")


def test_a_shell_prompt_left_alone_is_claude_gone_but_not_its_own_prompt_glyph() -> None:
    gone = detect(screen(BANNER, "|", "|user@host:~/src$"))
    assert (gone.state, gone.rule) == ("Exited", "shell-prompt")
    half_drawn = detect(screen(BANNER, "|", "|──", "|❯"))
    assert half_drawn.state == "Unknown"


def test_a_turn_streaming_with_no_spinner_row_is_not_idle():
    # Fullscreen mode: a long answer fills the screen and the spinner row is not drawn, but the
    # footer still offers to interrupt the turn.
    lines = screen("|❯ write a long answer", "|", "|⏺ Paragraph one of a long answer that goes on", "|", BUSY_BOX)
    found = ClaudeDetector().detect(ctx(lines), None)
    assert (found.state, found.rule) == ("Generating", "footer-interrupt")
