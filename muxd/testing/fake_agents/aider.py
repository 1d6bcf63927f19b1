"""A fake Aider 0.86, printing as its line UI does (no redraws): the banner, a rule, the files
in the chat and the `> ` prompt (echoing what is typed), the bouncing `░█ Waiting for <model>`
bar rewritten in place, the reply streamed in, `Tokens: N sent, M received.`, and yes/no
questions such as `Create new file? (Y)es/(N)o [Yes]:`. With `$AIDER_CHAT_HISTORY_FILE` set it
also keeps Aider's chat history there (the prompt when it is taken, the answer and its
`Tokens:` line before the prompt comes back), for the history's session-log tests."""

from __future__ import annotations

import os

from muxd.testing.fake_agents._layout import wrap
from muxd.testing.fake_agents._terminal import FRAME_INTERVAL_S, Terminal

MODEL = "openai/fake-model"
CHAT_FILE = "notes.txt"
NEW_FILE = "hello.py"
ANSWER = ("Sure! Here is a slowly streamed answer. Each word arrives after a short pause, so the "
          "streaming state stays on screen for a while.")
EDIT_REPLY = f'I will create a new file.\n\n{NEW_FILE}\n\n\nprint("hello from the fake model")'
THINK_TOKENS = (732, 49)
EDIT_TOKENS = (651, 31)
THINK_S = 1.2
ANSWER_S = 1.0
SHORT_THINK_S = 0.6
BAR_WIDTH = 10
BAR_POSITIONS = list(range(BAR_WIDTH - 2)) + list(range(BAR_WIDTH - 2, 0, -1))
APPROVE_ANSWERS = frozenset({"", "y", "yes"})
HISTORY_ENV = "AIDER_CHAT_HISTORY_FILE"  # where the real Aider writes its chat history when set


def waiting_bar(number: int) -> str:
    """One frame of Aider's spinner: a two-cell bar bouncing across a field, then the text."""
    position = BAR_POSITIONS[number % len(BAR_POSITIONS)]
    rightward = number % len(BAR_POSITIONS) < BAR_WIDTH - 2
    return (" " * position + ("░█" if rightward else "█░")).ljust(BAR_WIDTH) + f" Waiting for {MODEL}"


class FakeAider:
    echoes_input = True

    def __init__(self, terminal: Terminal) -> None:
        self.terminal = terminal
        self.chat_files = [CHAT_FILE]

    def line(self, text: str = "") -> None:
        self.terminal.write(text + "\r\n")

    def prompt(self) -> None:
        self.line("─" * self.terminal.columns)
        self.line(" ".join(sorted(self.chat_files)))
        self.terminal.write("> ")

    def wait(self, seconds: float) -> None:
        """The waiting bar, rewritten in place, then erased for the reply."""
        self.line()
        self.terminal.tick(seconds, lambda number, _: self.terminal.write(f"\r{waiting_bar(number)}\x1b[K"))
        self.terminal.write("\r\x1b[K")

    def stream(self, reply: str) -> None:
        """The reply written as it arrives, word-wrapped to the screen as Aider's renderer does."""
        text = "\n".join(row for line in reply.split("\n") for row in wrap(line, self.terminal.columns))
        written = [0]

        def step(number: int, _: float) -> None:
            shown = int(len(text) * min(1.0, (number + 1) * FRAME_INTERVAL_S / ANSWER_S))
            self.terminal.write(text[written[0]:shown].replace("\n", "\r\n"))
            written[0] = shown
        self.terminal.tick(ANSWER_S, step)
        self.terminal.write(text[written[0]:].replace("\n", "\r\n"))

    def history(self, text: str) -> None:
        """Append `text` to the chat history, if one is named (as Aider: opened for each write)."""
        path = os.environ.get(HISTORY_ENV)
        if not path:
            return
        try:  # never waiting: a FIFO that nobody reads is skipped (the real Aider would hang)
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK, 0o644)
        except OSError:
            return
        try:
            os.write(fd, text.encode())
        finally:
            os.close(fd)

    def tokens(self, sent: int, received: int) -> None:
        """End the reply's last row; two blank rows, then the turn's token report."""
        self.line("\r\n\r\n" + f"Tokens: {sent} sent, {received} received.")

    # ------------------------------------------------------------ behaviour

    def start(self) -> None:
        for text in ("Aider v0.86.2", f"Model: {MODEL} with whole edit format", "Git repo: none",
                     "Repo-map: disabled", f"Added {CHAT_FILE} to the chat."):
            self.line(text)
        self.history("\n# aider chat started\n\n" + "".join(f"> {text}  \n" for text in (
            "Aider v0.86.2", f"Model: {MODEL} with whole edit format")) + "\n")
        self.prompt()

    def think(self, prompt: str) -> None:
        self.history(f"#### {prompt}  \n\n")
        self.wait(THINK_S)
        self.stream(ANSWER)
        self.tokens(*THINK_TOKENS)
        self.history(f"{ANSWER}\n\n> Tokens: {THINK_TOKENS[0]} sent, {THINK_TOKENS[1]} received.  \n\n")
        self.prompt()

    def tool(self, prompt: str) -> None:
        self.wait(SHORT_THINK_S)
        self.stream(EDIT_REPLY)
        self.tokens(*EDIT_TOKENS)
        self.line()
        self.line(NEW_FILE)
        self.terminal.write("Create new file? (Y)es/(N)o [Yes]: ")
        if self.terminal.read_line(echo=True, cancellable=True).lower() in APPROVE_ANSWERS:
            self.line(f"Applied edit to {NEW_FILE}")
            self.chat_files.append(NEW_FILE)
        else:
            self.line(f"Skipping edits to {NEW_FILE}")
        self.prompt()

    def quit(self) -> None:
        """Aider leaves without a word."""
