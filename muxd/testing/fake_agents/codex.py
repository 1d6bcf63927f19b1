"""A fake OpenAI Codex CLI 0.169, as its inline TUI draws an 80–120 column pane: history from
the top (banner, `› prompt`, `• answer`, `• Ran cmd`, `Worked for Ns • HH:MM`) and the bottom
pane pinned to the last rows — the `• Working (Ns • esc to interrupt)` status line, the
`›` composer and its model footer, or the approval dialog in its place."""

from __future__ import annotations

import time

from muxd.testing.fake_agents._layout import pin_bottom, words_so_far, wrap
from muxd.testing.fake_agents._terminal import Terminal

MODEL = "gpt-5-codex"
CWD = "/tmp/work"
COMMAND = "mkdir -p demo && touch demo/x.txt && ls demo"
COMMAND_PREFIX = "mkdir -p demo"  # what option 2 offers to allow from now on
REASON = "Create a demo directory outside the read-only sandbox"
SESSION_ID = "01a20030-2792-7b83-8de4-a1add6a4bd03"
ANSWER = ("Sure! Here is a slowly streamed answer. Each word arrives after a short pause, so the "
          "streaming state stays on screen for a while.")
TOOL_ANSWER = "The command finished. I looked at the output and everything seems fine. Done."
REASONING_HEADER = "Let me think about this"  # the status line's header once reasoning is summarised
THINK_S = 1.2
ANSWER_S = 1.0
SHORT_THINK_S = 0.6
TOOL_RUN_S = 0.8
BLINK_FRAMES = 5  # the status bullet alternates • and ◦ every this many frames
TOKENS_PER_TURN = 3_564
OUTPUT_SHARE = 40  # one token in this many is output
APPROVE_ANSWERS = frozenset({"", "y", "1", "p", "2"})


def header() -> list[str]:
    return ["", "  >_ OpenAI Codex (v0.169.0)", f"     {CWD}", "",
            "  To get started, describe a task or try one of these commands:", "",
            "  /init - create an AGENTS.md file with instructions for Codex",
            "  /status - show current session configuration",
            "  /permissions - choose what Codex is allowed to do",
            "  /model - choose what model and reasoning effort to use",
            "  /review - review any changes and find issues", ""]


def status_line(header_text: str, number: int, elapsed: float) -> str:
    bullet = "•◦"[(number // BLINK_FRAMES) % 2]
    return f"{bullet} {header_text} ({int(elapsed)}s • esc to interrupt)"


class FakeCodex:
    echoes_input = False

    def __init__(self, terminal: Terminal) -> None:
        self.terminal = terminal
        self.history = header()
        self.turn_started = time.monotonic()
        self.tokens = 0

    # ------------------------------------------------------------ drawing

    def cell(self, text: str) -> list[str]:
        """A history cell: `• text` wrapped, continuation rows indented by two."""
        return wrap(text, self.terminal.columns, "• ", "  ")

    def composer(self) -> list[str]:
        return ["› Ask Codex to do anything", "", f"  {MODEL} default · {CWD}", "  ← for agents · ? for shortcuts"]

    def approval(self) -> list[str]:
        return ["", "  Would you like to run the following command?", "", "  Environment: local", "",
                f"  Reason: {REASON}", "", f"  $ {COMMAND}", "", "",
                "› 1. Yes, proceed (y)",
                f"  2. Yes, and don't ask again for commands that start with `{COMMAND_PREFIX}` (p)",
                "  3. No, and tell Codex what to do differently (esc)", "",
                "  Press enter to confirm or esc to cancel"]

    def draw(self, extra: list[str] | None = None, bottom: list[str] | None = None) -> None:
        self.terminal.draw(pin_bottom(self.history + (extra or []), bottom or self.composer(), self.terminal.rows))

    def working(self, seconds: float, header_text: str = "Working", extra: list[str] | None = None) -> None:
        """The status line above the composer for `seconds`; its clock counts from the turn's start."""
        offset = time.monotonic() - self.turn_started

        def frame(number: int, elapsed: float) -> list[str]:
            bottom = [status_line(header_text, number, offset + elapsed), "", "", *self.composer()]
            return pin_bottom(self.history + (extra or []), bottom, self.terminal.rows)
        self.terminal.animate(seconds, frame)

    def stream(self, text: str) -> None:
        """The answer growing word by word, with no status line (as Codex streams)."""
        self.terminal.animate(ANSWER_S, lambda number, elapsed: pin_bottom(
            self.history + ["", *self.cell(words_so_far(text, elapsed / ANSWER_S))],
            self.composer(), self.terminal.rows))
        self.history += ["", *self.cell(text)]

    def user_message(self, prompt: str) -> None:
        self.history += ["", f"› {prompt}", ""]
        self.turn_started = time.monotonic()

    def turn_done(self) -> None:
        worked = max(1, int(time.monotonic() - self.turn_started))
        self.history += ["", f"  Worked for {worked}s • {time.strftime('%H:%M')}", ""]
        self.tokens += TOKENS_PER_TURN
        self.draw()

    # ------------------------------------------------------------ behaviour

    def start(self) -> None:
        self.draw()

    def think(self, prompt: str) -> None:
        self.user_message(prompt)
        self.working(THINK_S)
        self.stream(ANSWER)
        self.turn_done()

    def tool(self, prompt: str) -> None:
        self.user_message(prompt)
        self.working(SHORT_THINK_S, REASONING_HEADER)
        self.draw(["", *self.cell(f"Running {COMMAND}")], self.approval())
        if self.terminal.read_line(cancellable=True) not in APPROVE_ANSWERS:
            self.history += ["", f"✗ You canceled the request to run {COMMAND}", "",
                             *wrap("■ Conversation interrupted - tell the model what to do differently. Something "
                                   "went wrong? Hit `/feedback` to report the issue.", self.terminal.columns, "", "  ")]
            self.tokens += TOKENS_PER_TURN
            self.draw()
            return
        self.history += ["", f"✔ You approved codex to run {COMMAND} this time"]
        self.working(TOOL_RUN_S, extra=["", *self.cell(f"Running {COMMAND}")])
        self.history += ["", *self.cell(f"Ran {COMMAND}"), "  └ x.txt"]
        self.working(SHORT_THINK_S)
        self.stream(TOOL_ANSWER)
        self.turn_done()

    def quit(self) -> None:
        # Codex leaves the inline viewport: the history stays, the exit summary follows it.
        output = self.tokens // OUTPUT_SHARE
        self.terminal.draw(self.history + [
            "", f"Token usage: total={self.tokens:,} input={self.tokens - output:,} output={output:,}",
            f"To continue this session, run codex resume {SESSION_ID}"])
