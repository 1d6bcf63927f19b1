"""opencode's packaged manifest (muxd/detectors/manifests/opencode.toml) on small screens built
from opencode's public TUI source and issue quotes (the rows under the input box and the
permission prompt), and on 1.18.33's own screens from tests/test_answers_real.py's session."""

from __future__ import annotations

import pytest

from muxd.detectors.base import ScreenContext
from muxd.testing.screens import assert_survives_garbage, margin_rows
from muxd.detectors.registry import PACKAGED_MANIFEST_DIR, load_manifests
from muxd.detectors.state import AgentError, Confirmation

DETECTOR = next(d for d in load_manifests(PACKAGED_MANIFEST_DIR)[0] if d.name == "opencode")


def screen(text: str) -> list[str]:
    return margin_rows(text)


def ctx(rows: list[str], **kwargs: object) -> ScreenContext:
    return ScreenContext(lines=rows, columns=100, **kwargs)  # type: ignore[arg-type]


INPUT = """
    |┃  Ask anything... "What is the tech stack of this project?"
    |┃
    |┃  Build  Big Pickle  OpenCode Zen
"""
IDLE = screen(INPUT + "    |                                                   tab agents  ctrl+p commands")
BUSY = screen(INPUT + "    | ⠋ esc interrupt                                   tab agents  ctrl+p commands")
PERMISSION = screen("""
    |△ Permission required
    |  # Shell command
    |  $ rm -rf build
    |
    |  Allow once   Allow always   Reject
    |  ⇆ select  enter confirm
""")


@pytest.mark.parametrize("name, argv", [
    ("opencode", ["opencode"]),
    ("node", ["node", "/usr/lib/node_modules/opencode-ai/bin/opencode"]),
    ("npx", ["npx", "-y", "opencode-ai@latest"]),
    (".opencode", ["/home/u/.npm/lib/node_modules/opencode-ai/node_modules/opencode-linux-x64/bin/.opencode"]),
])
def test_identify_by_process(name: str, argv: list[str]) -> None:
    assert DETECTOR.identify(ctx([], process_name=name, process_argv=argv)) == 1.0


@pytest.mark.parametrize("rows", [IDLE, BUSY, PERMISSION], ids=["idle", "busy", "permission"])
def test_identify_by_screen(rows: list[str]) -> None:
    assert DETECTOR.identify(ctx(rows)) >= 0.5


@pytest.mark.parametrize("rows", [
    screen("|user@host:~$ ls\n|a b\n|user@host:~$"),
    screen("|● Done.\n|────\n|❯\n|────\n|  ⏸ manual mode on · esc to interrupt"),
    screen("|› Ask Codex to do anything\n\n|  gpt-5-codex default · /tmp/work"),
    screen("|△ Permission required\n|~\n|\"notes.md\" 2L, 40B                     1,1   All"),
], ids=["shell", "claude", "codex", "vim"])
def test_other_screens_are_not_opencode(rows: list[str]) -> None:
    assert DETECTOR.identify(ctx(rows)) < 0.5


def test_idle_with_model() -> None:
    d = DETECTOR.detect(ctx(IDLE), None)
    assert (d.agent_type, d.state, d.rule, d.model) == ("opencode", "Idle", "input-footer", "Big Pickle")


def test_idle_when_a_narrow_pane_wraps_the_status_row() -> None:
    # opencode 1.18 in a 50-column pane with a long working directory (a real screen)
    rows = screen("""
        |  ┃  Build · Fake Model Fake
        |  ╹▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀
        |   /tmp/pytest-of-root/pytest- 2.5K ctrl+p
        |   132/                             commands
        |   test_the_answer_read_from_the
        |   _1/work
    """)
    assert DETECTOR.detect(ctx(rows), None).state == "Idle"


def test_busy_while_esc_interrupt_shows() -> None:
    d = DETECTOR.detect(ctx(BUSY), None)
    assert (d.state, d.rule) == ("Thinking", "esc-interrupt")
    again = screen(INPUT + "    | ⠙ esc again to interrupt                          tab agents  ctrl+p commands")
    assert DETECTOR.detect(ctx(again), None).state == "Thinking"


def test_retry_is_thinking_with_the_error() -> None:
    rows = screen(INPUT + "    | ⠋ Provider is overloaded [retrying in 5s attempt #2]                 esc interrupt")
    d = DETECTOR.detect(ctx(rows), None)
    assert (d.state, d.rule) == ("Thinking", "retrying")
    assert d.error == AgentError(type="overloaded", message="Provider is overloaded")


def test_usage_gives_context_and_cost() -> None:
    rows = screen(INPUT + "    |                                      12,345 (5%) · $0.02  ctrl+p commands")
    d = DETECTOR.detect(ctx(rows), None)
    assert (d.state, d.context_left_pct, d.cost_usd) == ("Idle", 95.0, 0.02)


def test_permission_prompt() -> None:
    d = DETECTOR.detect(ctx(PERMISSION), None)
    assert (d.state, d.tool) == ("AwaitingConfirmation", "bash")
    assert d.confirmation == Confirmation(prompt="Permission required",
                                          options=["Allow once", "Allow always", "Reject"])
    edit = screen("|△ Permission required\n|  → Edit src/app.ts\n|  Allow once   Allow always   Reject")
    assert DETECTOR.detect(ctx(edit), None).tool == "edit"


def test_conversation_text_above_the_input_does_not_trigger_states() -> None:
    rows = screen("""
        |  The footer says esc interrupt while busy; the dialog says △ Permission required.
        |  More text.
        |  More text.
        |  More text.
        |  More text.
        |  More text.
        |  More text.
        |  More text.
        |  More text.
        |  More text.
        |  More text.
        |  More text.
    """) + IDLE
    assert DETECTOR.detect(ctx(rows), None).state == "Idle"
    near = screen("|  Quoting the dialog: △ Permission required") + IDLE
    assert DETECTOR.detect(ctx(near), None).state == "Idle"


def test_garbage_never_raises() -> None:
    assert_survives_garbage(DETECTOR, "┃△⠋ esc interrupt ctrl+p commands tab agents Build  Allow once [retrying in 5s attempt #2]$#%→#", seed=3, widths=(1, 20, 100))
    assert DETECTOR.detect(ScreenContext(lines=[], exited=True), None).state == "Exited"


def test_input_text_is_the_draft_not_the_placeholder() -> None:
    assert DETECTOR.detect(ctx(IDLE), None).input_text is None
    typed = [row.replace('Ask anything... "What is the tech stack of this project?"', "add a --verbose flag")
             for row in IDLE]
    d = DETECTOR.detect(ctx(typed), None)
    assert (d.state, d.input_text) == ("Idle", "add a --verbose flag")


# opencode 1.18.33's own screens, as tests/test_answers_real.py's scripted session drew them in a
# 50-column pane: its layout is Kilo's (the `Build · model provider` row, the `⬝■` bar, answers'
# `▣` footers), so what Kilo's real screens taught is read here too.
SESSION_INPUT = """
    |  ┃
    |  ┃
    |  ┃
    |  ┃  Build · Fake Model Fake
    |  ╹▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀
"""
BUSY_ROW = "    |   ⬝⬝⬝■■■■■  esc interrupt 2.5K  ctrl+p commands\n"


@pytest.mark.parametrize("text, state, rule, description", [
    ("""
    |     I will run a command first.
    |
    |  ┃
    |  ┃  ⠸ echo hello from the tool
    |  ┃
    |
    |     ▣  Build · Fake Model
    |""" + SESSION_INPUT + BUSY_ROW, "ToolUse", "tool-running", "echo hello from the tool"),
    ("""
    |  ┃  please run a command
    |  ┃
    |
    |     I will run a command first.
    |
    |     ~ Writing command…
    |
    |     ▣  Build · Fake Model
    |""" + SESSION_INPUT + BUSY_ROW, "Generating", "answer-streaming", None),
    ("""
    |  ┃  please run a command
    |  ┃
    |
    |     ▣  Build · Fake Model
    |""" + SESSION_INPUT + BUSY_ROW, "Thinking", "esc-interrupt", None),
    ("""
    |     ▣  Build · Fake Model · 8.8s
    |
    |  ┃
    |  ┃  show some markdown
    |  ┃
    |""" + SESSION_INPUT + "    |   /tmp/work                  3.2K  ctrl+p commands\n", "Unknown", "message-unanswered", None),
    ("""
    |  ┃  show some markdown
    |  ┃
    |
    |     Some markdown.
    |
    |     ▣  Build · Fake Model · 8.8s
    |""" + SESSION_INPUT + "    |   /tmp/work                  3.2K  ctrl+p commands\n", "Idle", "input-footer", None),
], ids=["tool", "streaming", "busy", "unanswered", "answered"])
def test_a_118_session_as_kilos_screens_taught(text: str, state: str, rule: str, description: str | None) -> None:
    found = DETECTOR.detect(ctx(screen(text)), None)
    assert (found.state, found.rule, found.description) == (state, rule, description)
    assert found.model == "Fake Model"  # the answers' footers name it; the mode row adds the provider
    assert found.tokens in (2500, 3200)


def test_the_busy_bar_alone_when_a_narrow_pane_wraps_the_words_away() -> None:
    rows = screen(SESSION_INPUT + "    |   ■⬝⬝⬝⬝⬝⬝⬝\n    |             interrupt            commands")
    assert DETECTOR.detect(ctx(rows), None).state == "Thinking"


def test_a_118_draft_is_input() -> None:
    rows = screen("""
    |  ┃
    |  ┃  say hello
    |  ┃
    |  ┃  Build · Fake Model Fake
    |  ╹▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀
    |                     tab agents  ctrl+p commands
    """)
    found = DETECTOR.detect(ctx(rows), None)
    assert (found.state, found.input_text, found.model) == ("Idle", "say hello", None)
