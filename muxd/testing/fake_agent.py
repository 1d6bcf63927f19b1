"""A fake agent CLI that draws Claude Code's screens, for fast end-to-end tests of detection.

    python -m muxd.testing.fake_agent [--columns 80]

Reads one command per line (echo off): `think` (a spinner for a while, then an answer),
`bash` (asks permission to run a command; `1` approves, `3` denies), `quit`. Every frame is
drawn whole, as TUIs redraw, so what the detectors see is what a real pane would show.
"""

from __future__ import annotations

import argparse
import os
import sys
import termios
import time

SPINNER_GLYPHS = "·✢✳✶✻✽"
FRAME_INTERVAL_S = 0.1
THINK_S = 1.5


class FakeClaude:
    def __init__(self, columns: int) -> None:
        self.columns = columns
        self.conversation: list[str] = []
        self.started = time.monotonic()

    # ------------------------------------------------------------ drawing

    def rule(self) -> str:
        return "─" * self.columns

    def banner(self) -> list[str]:
        return [" ▐▛███▛█   Claude Code v2.1.330", "▝▜██████▀  Opus 5.5 · API Usage Billing",
                " ▝▝   ▝▝   /tmp/work", ""]

    def prompt_box(self, footer: str) -> list[str]:
        return [self.rule(), "❯ ", self.rule(), f"  ⏸ manual mode on · {footer}"]

    def draw(self, rows: list[str]) -> None:
        sys.stdout.write("\x1b[H\x1b[2J" + "\r\n".join(rows))
        sys.stdout.flush()

    def idle(self) -> None:
        self.draw(self.banner() + self.conversation + [""] + self.prompt_box("? for shortcuts"))

    def spin(self, seconds: float, verb: str) -> None:
        start = time.monotonic()
        frame = 0
        while time.monotonic() - start < seconds:
            elapsed = int(time.monotonic() - start) + 1
            glyph = SPINNER_GLYPHS[frame % len(SPINNER_GLYPHS)]
            spinner = f"{glyph} {verb}… ({elapsed}s · ↓ {12 + 7 * frame} tokens)"
            self.draw(self.banner() + self.conversation + ["", spinner, "  ⎿  Tip: try /help", ""]
                      + self.prompt_box("esc to interrupt"))
            frame += 1
            time.sleep(FRAME_INTERVAL_S)

    def permission(self, command: str) -> None:
        self.draw(self.banner() + self.conversation + [
            "", f"  ⎿  $ {command}", "", self.rule(), " Bash command", f" {command}", "",
            " Do you want to proceed?", " ❯ 1. Yes",
            "   2. Yes, and don't ask again for mkdir commands in /tmp/work", "   3. No", "",
            " Esc to cancel · Tab to amend"])

    # ------------------------------------------------------------ behaviour

    def handle(self, command: str) -> bool:
        if command == "quit":
            self.draw([])
            sys.stdout.write("\x1b[H\x1b[2JResume this session with:\r\nclaude --resume 1234\r\n")
            sys.stdout.flush()
            return False
        self.conversation += [f"❯ {command}", ""]
        if command == "think":
            self.spin(THINK_S, "Gusting")
            self.conversation += ["● Here is my answer.", "", "✻ Brewed for 2s"]
        elif command == "bash":
            self.spin(0.5, "Nucleating")
            self.permission("mkdir -p demo")
            answer = read_line()
            if answer == "1":
                self.conversation += ["● Bash(mkdir -p demo)", "  ⎿  (No content)", ""]
                self.spin(0.5, "Nucleating")
                self.conversation += ["● Made the directory.", "", "✻ Worked for 1s"]
            else:
                self.conversation += ["  ⎿  Interrupted · What should Claude do instead?"]
        self.conversation = self.conversation[-12:]
        self.idle()
        return True


def read_line() -> str:
    chars = []
    while True:
        char = os.read(0, 1)
        if not char or char in b"\r\n":
            return b"".join(chars).decode("utf-8", "replace").strip()
        chars.append(char)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="a fake Claude Code screen")
    parser.add_argument("--columns", type=int, default=80)
    args = parser.parse_args(argv)
    attrs = termios.tcgetattr(0)
    quiet = list(attrs)
    quiet[3] &= ~(termios.ECHO | termios.ICANON)  # no echo: the agent draws its own input
    termios.tcsetattr(0, termios.TCSANOW, quiet)
    try:
        agent = FakeClaude(args.columns)
        agent.idle()
        while agent.handle(read_line()):
            pass
    finally:
        termios.tcsetattr(0, termios.TCSANOW, attrs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
