"""Fake agent CLIs drawing what Claude Code, Codex CLI, Gemini CLI and Aider draw, for fast
end-to-end tests of detection: what the detectors see is what a real pane would show; and
`mini`, an agent no Python detector knows, for agent manifests (fake_agents/mini.py).

    python -m muxd.testing.fake_agents [claude|codex|gemini|aider|mini]

Each reads one command per line, with the pty's echo off (the agent draws its own input):

- `think` — a turn: the agent thinks for a while, then streams an answer;
- `tool` (or `bash`) — the model asks to run a shell command that needs approval; the
  agent's approve answer (`1`, `y`, or an empty line: Enter on the highlighted default)
  runs it, anything else declines;
- `quit` — the agent prints its exit screen and exits;
- any other text is a prompt answered like `think`; an empty line does nothing.

`$FAKE_AGENT_INPUT_DELAY_S` makes it take each line that long after it arrives, drawing nothing
meanwhile: a CLI slow to take a prompt on a loaded machine. `$FAKE_AGENT_SWALLOW_ENTERS=N` makes
it take the first N Enters after typed text as part of the typing (the text stays in its input
box), as Codex does with an Enter that reaches it in the same read as the text.
`$FAKE_AGENT_PROMPT_LOG=FILE` appends each line it takes to FILE as `<epoch seconds> <line>`: when
a prompt reached the agent (benchmarks/bench_remote_send.py).
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from typing import Protocol

from muxd.testing.fake_agents._terminal import Terminal
from muxd.testing.fake_agents.aider import FakeAider
from muxd.testing.fake_agents.claude import FakeClaude
from muxd.testing.fake_agents.codex import FakeCodex
from muxd.testing.fake_agents.gemini import FakeGemini
from muxd.testing.fake_agents.mini import FakeMini


class FakeAgent(Protocol):
    echoes_input: bool  # a line editor (Aider) shows what is typed; TUIs draw it themselves

    def start(self) -> None:
        """Draw the screen the CLI starts on."""

    def think(self, prompt: str) -> None:
        """Run one turn for `prompt` and come back to the input prompt."""

    def tool(self, prompt: str) -> None:
        """Ask to run a command, read the answer with `Terminal.read_line`, act on it."""

    def quit(self) -> None:
        """Draw the exit screen."""


FAKE_AGENTS: dict[str, Callable[[Terminal], FakeAgent]] = {
    "claude": FakeClaude, "codex": FakeCodex, "gemini": FakeGemini, "aider": FakeAider, "mini": FakeMini,
}
TOOL_COMMANDS = frozenset({"tool", "bash"})


def run(agent: FakeAgent, terminal: Terminal) -> None:
    """Start `agent`, then obey commands until `quit` (or the end of input)."""
    agent.start()
    delay = float(os.environ.get("FAKE_AGENT_INPUT_DELAY_S") or 0)
    terminal.enters_to_swallow = int(os.environ.get("FAKE_AGENT_SWALLOW_ENTERS") or 0)
    prompt_log = os.environ.get("FAKE_AGENT_PROMPT_LOG")
    while True:
        command = terminal.read_line(echo=agent.echoes_input)
        if prompt_log and command:
            with open(prompt_log, "a", encoding="utf-8") as log:
                log.write(f"{time.time():.6f} {command}\n")
        time.sleep(delay)
        if command == "quit":
            agent.quit()
            return
        # A task muxd dispatches arrives as "Task: <title>" (daemon/work/task_dispatch.py).
        if command.removeprefix("Task: ") in TOOL_COMMANDS:
            agent.tool(command.removeprefix("Task: "))
        elif command:
            agent.think(command)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m muxd.testing.fake_agents",
                                     description="a fake agent CLI screen, for detection tests")
    parser.add_argument("agent", nargs="?", default="claude", choices=sorted(FAKE_AGENTS))
    args = parser.parse_args(argv)
    terminal = Terminal()
    with terminal.keys():
        run(FAKE_AGENTS[args.agent](terminal), terminal)
    return 0
