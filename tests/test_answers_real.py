"""The answers of real agent CLIs, read back from their panes (muxd.executions.answers).

Each CLI runs in a muxd pane against a scripted fake model; each turn is submitted as a
person would, and once the agent is Idle again the pane's rows (scrollback, soft wraps
joined) are cut at the prompt's echo and read: the answer must be exactly what the fake
model streamed, normalised as `normalise_answer` documents. Turns: a plain answer (after
some thinking where the API has it), text / tool call / text, an answer longer than the
pane, and one with markdown. At the usual size and in a small pane.

Claude Code's fullscreen renderer, Codex's default alternate screen and opencode keep no
scrollback: there the long answer's start (and in the small pane, any turn's taller than
it) is gone for good, and what is read is its visible end.
Needs `.ci/install-agents`; skips when a CLI is not installed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

from muxd.executions.answers import extract_answer, normalise_answer, turn_start
from muxd.testing.fake_models import (
    AnthropicFake, Call, GeminiFake, OpenAIChatFake, OpenAIResponsesFake, Say, Think, launch,
)
from muxd.testing.fake_models.agent_pane import PANE_HEIGHT, PANE_SIZE_IDS, PANE_SIZES, AgentPane
from muxd.testing.fake_models.launch import AgentLaunch

pytestmark = pytest.mark.agents

SHORT = "Sure! Here is a short answer from the fake model server, streamed word by word."
BEFORE_TOOL = "I will run a command first."
AFTER_TOOL = "The command ran. Everything looks fine."
TOOL_COMMAND = "echo hello from the tool"
MARKDOWN = ("Here is a list:\n\n- first item with `code` in it\n- second item is **bold** text\n\n"
            "1. one\n2. two\n\nA final line with *emphasis* in it.")
_WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar "
          "papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu").split()


def _paragraph(number: int, words: int = 90) -> str:
    body = " ".join(_WORDS[(number * 7 + i) % len(_WORDS)] + ("," if i % 9 == 8 else "") for i in range(words))
    return f"Paragraph {number} begins here. {body} end of paragraph {number}."


# Six paragraphs: taller than a 120x40 pane, let alone a 50x16 one.
LONG = "\n\n".join(_paragraph(number) for number in range(1, 7))
LONG_DELAY_S = 0.005


@dataclasses.dataclass(frozen=True)
class Cli:
    agent: str
    fake: Callable[..., Any]
    start: Callable[..., AgentLaunch]
    tool: Call | None                   # a tool the CLI runs without asking, or None (Aider has none)
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    scrolls_away: bool = False          # drawn on the alternate screen: no scrollback to read


CLIS = [
    Cli("claude", AnthropicFake, launch.claude, Call("Bash", {"command": TOOL_COMMAND, "description": "Say hello"}),
        env=(("CLAUDE_CODE_DISABLE_ALTERNATE_SCREEN", "1"),)),
    Cli("claude", AnthropicFake, launch.claude, Call("Bash", {"command": TOOL_COMMAND, "description": "Say hello"}),
        scrolls_away=True),
    Cli("codex", OpenAIResponsesFake, launch.codex, Call("exec_command", {"cmd": TOOL_COMMAND}),
        args=("--no-alt-screen",)),
    Cli("codex", OpenAIResponsesFake, launch.codex, Call("exec_command", {"cmd": TOOL_COMMAND}), scrolls_away=True),
    Cli("gemini", GeminiFake, launch.gemini, Call("list_directory", {"dir_path": "."})),
    Cli("aider", OpenAIChatFake, lambda root, url, bin_dir: launch.aider(root, url, bin_dir, "notes.txt"), None),
    Cli("opencode", OpenAIChatFake, launch.opencode, Call("bash", {"command": TOOL_COMMAND, "description": "Say hello"}),
        scrolls_away=True),
]
CLI_IDS = ["claude-classic", "claude-fullscreen", "codex-inline", "codex-alt-screen", "gemini", "aider", "opencode"]


def turns(cli: Cli) -> list[tuple[str, list[Any], str]]:
    """(message, the scripted turns it plays, what the agent answers) for each turn."""
    found: list[tuple[str, list[Any], str]] = [
        ("say something short", [[Think(6, 0.05), Say(SHORT, 0.02)]], SHORT)]
    if cli.tool is not None:
        found.append(("please run a command", [[Say(BEFORE_TOOL, 0.02), cli.tool], [Say(AFTER_TOOL, 0.02)]],
                      f"{BEFORE_TOOL}\n\n{AFTER_TOOL}"))
    found.append(("write a long answer", [[Say(LONG, LONG_DELAY_S)]], LONG))
    found.append(("show some markdown", [[Say(MARKDOWN, 0.02)]], MARKDOWN))
    return found


def last_words(answer: str) -> str:
    return " ".join(answer.split()[-3:]).replace("*", "").replace("`", "")


@pytest.fixture
def agent(request, muxd_server, pane_size) -> Any:
    cli: Cli = request.param
    bin_dir, why = launch.find_cli(cli.agent)
    if bin_dir is None:
        pytest.skip(why)
    script = [turn for _, played, _ in turns(cli) for turn in played]
    fake = cli.fake(script)
    # A short root: opencode prints the working directory in its status row, which a 50-column
    # pane wraps past reading when the path is as long as pytest's (under xdist, longer still).
    root = Path(tempfile.mkdtemp(prefix="muxd-a-", dir="/tmp"))
    request.addfinalizer(lambda: shutil.rmtree(root, ignore_errors=True))
    with fake:
        started = cli.start(root, fake.url, bin_dir, *cli.args)
        started = dataclasses.replace(started, env={**started.env, **dict(cli.env)})
        pane = AgentPane(muxd_server, started, size=pane_size)
        try:
            yield cli, pane.start()
        finally:
            pane.close()


@pytest.mark.parametrize(*PANE_SIZES, ids=PANE_SIZE_IDS)
@pytest.mark.parametrize("agent", CLIS, ids=CLI_IDS, indirect=True)
def test_the_answer_read_from_the_pane_is_what_the_model_streamed(agent):
    cli, pane = agent
    pane.wait_for("Idle", timeout=60, what="Idle at the first prompt")
    for message, _, streamed in turns(cli):
        mark = pane.cursor
        rows = pane.run_turn(message, last_words(streamed))
        start = turn_start(cli.agent, rows, message)
        answer = extract_answer(cli.agent, rows[start or 0:], message)
        expected = normalise_answer(streamed)
        with pane.explained(f"the answer to {message!r}", mark):
            if cli.scrolls_away and (streamed is LONG or pane.size[1] < PANE_HEIGHT):
                # the turn may be taller than the pane, its start scrolled off the alternate
                # screen for good: the rows still shown end the answer
                assert answer and expected.endswith(answer), answer
            else:
                assert start is not None, "the prompt's echo is on the rows"
                assert answer == expected
