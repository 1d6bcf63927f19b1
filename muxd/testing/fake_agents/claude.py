"""A fake Claude Code 2.1: banner, `❯` prompt box between rules, `<glyph> <Verb>… (Ns · ↓ N
tokens)` spinner, `Do you want to proceed?` permission prompt, `Resume this session` on exit."""

from __future__ import annotations

import os

from muxd.testing.fake_agents._terminal import Terminal

SPINNER_GLYPHS = "·✢✳✶✻✽"
THINK_S = float(os.environ.get("MUXD_FAKE_THINK_S", "1.5"))  # a benchmark's long turns set it
SHORT_SPIN_S = 0.5
COMMAND = "mkdir -p demo"
CONVERSATION_ROWS_MAX = 12
APPROVE_ANSWERS = frozenset({"", "1", "2"})


class FakeClaude:
    echoes_input = False

    def __init__(self, terminal: Terminal) -> None:
        self.terminal = terminal
        self.conversation: list[str] = []

    # ------------------------------------------------------------ drawing

    def rule(self) -> str:
        return "─" * self.terminal.columns

    def banner(self) -> list[str]:
        return [" ▐▛███▛█   Claude Code v2.1.330", "▝▜██████▀  Opus 5.5 · API Usage Billing",
                " ▝▝   ▝▝   /tmp/work", ""]

    def prompt_box(self, footer: str) -> list[str]:
        return [self.rule(), "❯ ", self.rule(), f"  ⏸ manual mode on · {footer}"]

    def idle(self) -> None:
        self.conversation = self.conversation[-CONVERSATION_ROWS_MAX:]
        self.terminal.draw(self.banner() + self.conversation + [""] + self.prompt_box("? for shortcuts"))

    def spin(self, seconds: float, verb: str) -> None:
        def frame(number: int, elapsed: float) -> list[str]:
            glyph = SPINNER_GLYPHS[number % len(SPINNER_GLYPHS)]
            spinner = f"{glyph} {verb}… ({int(elapsed) + 1}s · ↓ {12 + 7 * number} tokens)"
            return (self.banner() + self.conversation + ["", spinner, "  ⎿  Tip: try /help", ""]
                    + self.prompt_box("esc to interrupt"))
        self.terminal.animate(seconds, frame)

    def permission(self, command: str) -> None:
        self.terminal.draw(self.banner() + self.conversation + [
            "", f"  ⎿  $ {command}", "", self.rule(), " Bash command", f" {command}", "",
            " Do you want to proceed?", " ❯ 1. Yes",
            "   2. Yes, and don't ask again for mkdir commands in /tmp/work", "   3. No", "",
            " Esc to cancel · Tab to amend"])

    # ------------------------------------------------------------ behaviour

    def start(self) -> None:
        self.idle()

    def think(self, prompt: str) -> None:
        self.conversation += [f"❯ {prompt}", ""]
        self.spin(THINK_S, "Gusting")
        self.conversation += ["● Here is my answer.", "", "✻ Brewed for 2s"]
        self.idle()

    def tool(self, prompt: str) -> None:
        self.conversation += [f"❯ {prompt}", ""]
        self.spin(SHORT_SPIN_S, "Nucleating")
        self.permission(COMMAND)
        if self.terminal.read_line(cancellable=True) in APPROVE_ANSWERS:
            self.conversation += [f"● Bash({COMMAND})", "  ⎿  (No content)", ""]
            self.spin(SHORT_SPIN_S, "Nucleating")
            self.conversation += ["● Made the directory.", "", "✻ Worked for 1s"]
        else:
            self.conversation += ["  ⎿  Interrupted · What should Claude do instead?"]
        self.idle()

    def quit(self) -> None:
        self.terminal.draw(["Resume this session with:", "claude --resume 1234", ""])
