"""A fake Gemini CLI 0.61, as its Ink UI fills a pane from the top: banner and tips, ` > prompt`,
`✦ answer`, tool boxes (`? Shell` asking, `⊶` running, `✓` done); under them the spinner row
` ⠏ Thinking... (esc to cancel, Ns)` (`? for shortcuts` when idle), the input box rule, the
` >   Type your message or @path/to/file` composer and the footer naming the model. The
confirmation box takes the input box's place; `/quit` ends with the session summary box."""

from __future__ import annotations

from muxd.testing.fake_agents._layout import box, columns, flush_right, words_so_far, wrap
from muxd.testing.fake_agents._terminal import Terminal

MODEL = "gemini-2.5-pro"
CWD = "/tmp/work"
COMMAND = "mkdir -p demo && touch demo/x.txt && ls demo"
SESSION_ID = "5faf9945-2fdd-4ec3-99c3-2e96801fb298"
ANSWER = ("Sure! Here is a slowly streamed answer. Each word arrives after a short pause, so the "
          "streaming state stays on screen for a while.")
TOOL_ANSWER = "The tool finished. I looked at the result and everything seems fine. Done."
SPINNER_GLYPHS = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
THINK_S = 1.2
ANSWER_S = 1.0
SHORT_THINK_S = 0.6
TOOL_RUN_S = 0.8
FOOTER_MIDDLE_AT = 0.53  # where the footer's sandbox column starts, as a share of the width
APPROVE_ANSWERS = frozenset({"", "1", "2"})


def banner() -> list[str]:
    return ["", " ▝▜▄     Gemini CLI v0.61.0", "   ▝▜▄", "  ▗▟▀    Authenticated with gemini-api-key /auth",
            " ▝▀", "", "", "Tips for getting started:", "1. Create GEMINI.md files to customize your interactions",
            "2. /help for more information", "3. Ask coding questions, edit code or run commands",
            "4. Be specific for the best results", ""]


class FakeGemini:
    echoes_input = False

    def __init__(self, terminal: Terminal) -> None:
        self.terminal = terminal
        self.history = banner()
        self.requests = 0
        self.tools = 0

    # ------------------------------------------------------------ drawing

    @property
    def width(self) -> int:
        return self.terminal.columns

    def input_box(self, spinner: str = "") -> list[str]:
        middle = int(self.width * FOOTER_MIDDLE_AT)
        return [flush_right(spinner, "? for shortcuts", self.width - 1), "─" * self.width,
                " Shift+Tab to accept edits", "", " >   Type your message or @path/to/file", "",
                columns([" workspace (/directory)", "sandbox", "/model"], [0, middle], self.width - 1),
                columns([f" {CWD}", "no sandbox", MODEL], [0, middle], self.width - 1)]

    def answer(self, text: str) -> list[str]:
        return wrap(text, self.width, "✦ ", "  ")

    def tool_box(self, glyph: str, *output: str) -> list[str]:
        return box([f"{glyph}  Shell {COMMAND}", "", *output], self.width - 2)

    def confirmation(self) -> list[str]:
        inner = self.width - 4
        return box([f"? Shell  {COMMAND}", *box([COMMAND], inner), "Allow execution of [Shell]?", "",
                    "● 1. Allow once", "  2. Allow for this session", "  3. No, suggest changes (esc)"], self.width)

    def idle(self) -> None:
        self.terminal.draw(self.history + ["", ""] + self.input_box())

    def busy(self, seconds: float, extra: list[str] | None = None, stream: str | None = None) -> None:
        """The spinner for `seconds` (its clock from zero, as Gemini restarts it per request),
        below `extra` rows and, if given, an answer streaming in."""
        self.requests += 1

        def frame(number: int, elapsed: float) -> list[str]:
            glyph = SPINNER_GLYPHS[number % len(SPINNER_GLYPHS)]
            spinner = f" {glyph} Thinking... (esc to cancel, {int(elapsed)}s)"
            rows = self.history + (extra or [])
            if stream is not None:
                rows = rows + self.answer(words_so_far(stream, elapsed / seconds))
            return rows + ["", ""] + self.input_box(spinner)
        self.terminal.animate(seconds, frame)

    # ------------------------------------------------------------ behaviour

    def start(self) -> None:
        self.idle()

    def think(self, prompt: str) -> None:
        self.history += [f" > {prompt}", ""]
        self.busy(THINK_S)
        self.busy(ANSWER_S, stream=ANSWER)
        self.history += [*self.answer(ANSWER), ""]
        self.idle()

    def tool(self, prompt: str) -> None:
        self.history += [f" > {prompt}", ""]
        self.busy(SHORT_THINK_S)
        self.terminal.draw(self.history + [""] + self.confirmation())
        self.tools += 1
        if self.terminal.read_line(cancellable=True) not in APPROVE_ANSWERS:
            self.history += ["", *self.tool_box("-"), "", "ℹ Request cancelled.", ""]
            self.idle()
            return
        self.busy(TOOL_RUN_S, extra=["", *self.tool_box("⊶")])
        self.history += ["", *self.tool_box("✓", "x.txt", ""), ""]
        self.busy(SHORT_THINK_S)
        self.busy(ANSWER_S, stream=TOOL_ANSWER)
        self.history += [*self.answer(TOOL_ANSWER), ""]
        self.idle()

    def quit(self) -> None:
        rule = "─" * (self.width - 8)
        summary = ["", " Agent powering down. Goodbye!", "", " Interaction Summary",
                   f" Session ID:                 {SESSION_ID}",
                   f" Tool Calls:                 {self.tools} ( ✓ {self.tools} x 0 )", "",
                   " Model Usage", "",
                   " Model                           Reqs  Input Tokens   Cache Reads Output Tokens", f" {rule}",
                   f" {MODEL:<30}{self.requests:>6}{self.requests * 2345:>14,}{0:>14}{self.requests * 24:>14}",
                   f" To resume this session: gemini --resume {SESSION_ID}"]
        self.terminal.draw(self.history + [" > /quit", "", *box(summary, self.width), ""])
