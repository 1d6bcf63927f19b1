"""A fake agent that no Python detector knows, read by an agent manifest alone
(tests/agent_manifests/mini.toml; the README's "Adding an agent with a manifest"): a banner,
the conversation, a `mini>` prompt over a status row naming the model and the tokens, a
spinner row `⠋ Pondering (3s · esc to stop)` while it thinks, `⚙ bash: ls demo (1s · esc to
stop)` while a tool runs, `✓ bash: ls demo` in the conversation once it ran, and a numbered
question `? Run bash: ls demo` before it does."""

from __future__ import annotations

from muxd.testing.fake_agents._terminal import Terminal

MODEL = "mini-1"
SPINNER_GLYPHS = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
THINK_S = 1.5
TOOL_RUN_S = 1.2
COMMAND = "ls demo"
CONVERSATION_ROWS_MAX = 10
APPROVE_ANSWERS = frozenset({"", "1", "y"})
TOKENS_A_TURN = 1234


class FakeMini:
    echoes_input = False

    def __init__(self, terminal: Terminal) -> None:
        self.terminal = terminal
        self.conversation: list[str] = []
        self.tokens = 0

    def status(self, hint: str) -> str:
        return f" model {MODEL} · {self.tokens:,} tokens · {hint}"

    def frame(self, *rows: str, hint: str = "enter to send") -> list[str]:
        self.conversation = self.conversation[-CONVERSATION_ROWS_MAX:]
        return ["Mini 0.1, a fake agent", "", *self.conversation, "", *rows, "mini> ", self.status(hint)]

    def idle(self) -> None:
        self.terminal.draw(self.frame())

    def spin(self, seconds: float, row: str) -> None:
        """`row` (with `{glyph}` and `{elapsed}`) above the prompt for `seconds`."""
        def frame(number: int, elapsed: float) -> list[str]:
            glyph = SPINNER_GLYPHS[number % len(SPINNER_GLYPHS)]
            return self.frame(row.format(glyph=glyph, elapsed=int(elapsed)), hint="esc to stop")
        self.terminal.animate(seconds, frame)

    def start(self) -> None:
        self.idle()

    def think(self, prompt: str) -> None:
        self.conversation += [f"> {prompt}"]
        self.spin(THINK_S, "{glyph} Pondering ({elapsed}s · esc to stop)")
        self.tokens += TOKENS_A_TURN
        self.conversation += ["An answer, from mini."]
        self.idle()

    def tool(self, prompt: str) -> None:
        self.conversation += [f"> {prompt}"]
        self.spin(THINK_S / 2, "{glyph} Pondering ({elapsed}s · esc to stop)")
        self.terminal.draw(self.conversation[-CONVERSATION_ROWS_MAX:] + [
            "", f"? Run bash: {COMMAND}", "  1. Yes", "  2. No", "  (type 1 or 2, then enter)"])
        if self.terminal.read_line(cancellable=True) in APPROVE_ANSWERS:
            self.spin(TOOL_RUN_S, "⚙ bash: " + COMMAND + " ({elapsed}s · esc to stop)")
            self.conversation += [f"✓ bash: {COMMAND}", "  x.txt"]
        else:
            self.conversation += ["(declined)"]
        self.tokens += TOKENS_A_TURN
        self.idle()

    def quit(self) -> None:
        self.terminal.draw(["Bye from mini.", ""])
