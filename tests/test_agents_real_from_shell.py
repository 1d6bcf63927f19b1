"""The real CLIs typed at a shell, as a person starts them, in a pane of a size no other test
uses (70x20: rows wrap, the first frames differ), then quit back to that shell.

Asserted: no Idle is published before the CLI's prompt is drawn (every Idle comes from a rule
that saw the prompt) and nothing busy while it loads; a two-line draft typed at the prompt
without Enter reads back as typed (checked in this process on the captured screen, as
`DetectorRunner.typed_input` keeps it: the daemon keeps typed text out of its protocol); once
the CLI quits the pane reports the shell, never the agent, and nothing says Exited (the pane's
own program, the shell, runs on). Aider is quit with Ctrl-C twice: its `^C KeyboardInterrupt`
row is its exit, not a reply.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from muxd.testing.fake_models import AnthropicFake, GeminiFake, OpenAIChatFake, OpenAIResponsesFake, Turn, launch
from muxd.testing.fake_models._http import FakeModelServer
from muxd.testing.fake_models.agent_pane import STATE_TIMEOUT_S, AgentPane
from muxd.testing.wait import wait_until

pytestmark = pytest.mark.agents

PANE_SIZE = (70, 20)
# A draft typed without Enter: one row every CLI wraps at PANE_SIZE, then a second line.
DRAFT_LINES = ("please look at the failing test in the parser module and then explain the cause", "and a fix")
DRAFT = "\n".join(DRAFT_LINES)
BUSY = ("Generating", "Thinking", "ToolUse")


class Cli:
    """How to start one CLI and drive it here."""

    def __init__(self, fake: Callable[[list[Turn]], FakeModelServer], prompt_rules: set[str], new_line: str,
                 quit_command: str | None, *args: str) -> None:
        self.fake = fake
        self.prompt_rules = frozenset(prompt_rules)  # the rules that read Idle off its own prompt
        self.new_line = new_line                     # the key that starts a second line in the draft
        self.quit_command = quit_command             # None: Ctrl-C twice
        self.args = args


CLIS = {
    "claude": Cli(AnthropicFake, {"prompt-idle", "turn-done", "interrupted"}, "C-j", "/exit"),
    "codex": Cli(OpenAIResponsesFake, {"composer", "composer-popup", "turn-done", "turn-ended",
                                       "slash-command-output"}, "C-j", "/quit"),
    "gemini": Cli(GeminiFake, {"input-box"}, "C-j", "/quit"),
    "aider": Cli(OpenAIChatFake, {"prompt"}, "M-Enter", None, "notes.txt"),
}


@pytest.fixture
def from_shell(request, muxd_server, tmp_path) -> Iterator[tuple[AgentPane, Cli]]:
    agent, cli = request.param, CLIS[request.param]
    bin_dir, why = launch.find_cli(agent)
    if bin_dir is None:
        pytest.skip(why)
    fake = cli.fake([])  # no turn: nothing is sent
    with fake:
        pane = AgentPane(muxd_server, getattr(launch, agent)(tmp_path, fake.url, bin_dir, *cli.args),
                         session=agent, size=PANE_SIZE)
        try:
            yield pane.start(from_shell=True), cli
        finally:
            pane.close()


def quit_cli(pane: AgentPane, cli: Cli) -> None:
    if cli.quit_command is None:
        # Aider: `^C again to exit` and a new prompt, then `^C KeyboardInterrupt` and exit.
        pane.press("C-c")
        wait_until(lambda: "^C again to exit" in pane.screen(), timeout=10, message="first Ctrl-C")
        pane.press("C-c")
        return
    pane.press("C-c")  # clears the draft
    wait_until(lambda: DRAFT_LINES[1] not in pane.screen(), timeout=10, message="draft cleared")
    pane.submit(cli.quit_command)


@pytest.mark.parametrize("from_shell", list(CLIS), indirect=True)
def test_started_from_a_shell_then_quit_leaves_the_shell(from_shell):
    pane, cli = from_shell
    agent = pane.session
    pane.wait_for("Idle", lambda s: s["agent_type"] == agent, timeout=60, what=f"{agent} at its prompt")
    with pane.explained("before the prompt"):
        for state in pane.states.since(0)[:pane.cursor]:
            if state["agent_type"] != agent:
                continue
            rule = state["evidence"]["rule"]
            assert state["activity"]["state"] != "Idle" or rule in cli.prompt_rules, f"Idle from {rule}"
            assert state["activity"]["state"] not in (*BUSY, "Exited"), f"{state['activity']['state']} from {rule}"

    pane.type(DRAFT_LINES[0])
    wait_until(lambda: "cause" in pane.screen(), timeout=STATE_TIMEOUT_S, message="the first line typed")
    pane.press(cli.new_line)
    pane.type(DRAFT_LINES[1])
    try:
        wait_until(lambda: pane.typed_input() == DRAFT, timeout=STATE_TIMEOUT_S, message="the draft")
    except AssertionError:
        raise AssertionError(pane.report(f"the draft read back as {pane.typed_input()!r}", pane.cursor)) from None

    mark = pane.mark()
    quit_cli(pane, cli)
    pane.wait_for("Idle", lambda s: s["agent_type"] == "shell", timeout=30, what="the shell back")
    with pane.explained("after quitting", mark):
        quitting = pane.states.since(mark)[:pane.cursor - 1 - mark]
        lies = [s for s in quitting if s["agent_type"] == agent and (
            s["activity"]["state"] in (*BUSY, "Exited")
            or s["activity"]["state"] == "Idle" and s["evidence"]["rule"] not in cli.prompt_rules)]
        assert lies == [], "only the pane's own program exits; the shell runs on"
        assert all(s["agent_type"] == "shell" for s in pane.states.since(pane.cursor))
        assert pane.agent()["agent_type"] == "shell" and pane.states.exit_code is None
        if cli.quit_command is None:
            assert "^C KeyboardInterrupt" in pane.screen()
