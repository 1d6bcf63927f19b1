"""What every CLI's turn reader gives: the prompt echoes on the rows, and the answer text
after one of them. Plus the one piece of bookkeeping they share: gathering answer rows into
blocks while the conversation's cells go by."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import msgspec


class Echo(msgspec.Struct, frozen=True):
    """A prompt the user sent, as the CLI echoes it in the conversation."""

    row: int                # its first row
    parts: tuple[str, ...]  # its text on that row (the CLI's mark taken off), then on each row
                            # below that may hold its wrapped rest

    def end(self, message: str | None) -> int | None:
        """The row after the echo if it shows `message` (any message when None), else None.

        Which rows below the first are the message's wrapped rest is told by the message:
        a row of the answer may follow with no blank row between (Codex pins the prompt
        above an answer cut off by its own scrolling)."""
        if message is None:
            return self.row + len(self.parts)
        wanted = " ".join(message.split())
        shown = ""
        for count, part in enumerate(self.parts, 1):
            shown = " ".join(f"{shown} {part}".split())
            # a CLI may cut a long message short with an ellipsis: its start still tells
            if shown == wanted or (shown.endswith("…") and wanted.startswith(shown[:-1].rstrip())):
                return self.row + count
            if not wanted.startswith(shown):
                return None
        return None


class TurnReader(Protocol):
    # Whether an answer is read only after a prompt echo. Not for a CLI that may scroll the
    # echo out of its own alternate screen while the answer's rest is still shown.
    needs_echo: bool

    def conversation_end(self, rows: list[str]) -> int:
        """The first row below the conversation (the CLI's input box, its status rows), else
        len(rows): found once for a turn's rows, which echoes and answer both read above."""
        ...

    def echoes(self, rows: list[str], end: int) -> list[Echo]:
        """Every prompt echo in the conversation above row `end` (never the live input line),
        top to bottom."""
        ...

    def answer(self, rows: list[str], start: int, end: int) -> list[str]:
        """The answer blocks of the turn whose first row after the echo is `start`, top to
        bottom, their CLI markers (bullets, indentation) taken off; not yet normalised."""
        ...


def read_echoes(rows: list[str], end: int, echo_text: Callable[[str], str | None],
                continues: Callable[[str], bool], mark: str = "") -> list[Echo]:
    """Every echo above row `end`: a row `echo_text` finds a message on, with the non-blank
    rows under it that `continues` takes for the wrapped rest of one. `mark`: what every row
    `echo_text` finds a message on starts with (the others are passed over in one scan)."""
    found: list[Echo] = []
    after = 0  # the row after the last echo found
    for row in [number for number in range(end) if rows[number].startswith(mark)] if mark else range(end):
        if row < after:
            continue  # the wrapped rest of an echo
        first = echo_text(rows[row])
        if first is None:
            continue
        parts = [first]
        after = row + 1
        while after < end and (rest := rows[after].strip()) and continues(rows[after]):
            parts.append(rest)
            after += 1
        found.append(Echo(row, tuple(parts)))
    return found


class AnswerBlocks:
    """Answer rows gathered cell by cell: `answer(first)` opens an answer cell, `other()` a
    cell that is not one (a tool, a note), `row(text)` continues the open cell, and rows of a
    cell that is not an answer are dropped. Before any cell the rows continue an answer whose
    start is above the first row (cut off by the caller or by the CLI's own scrolling)."""

    def __init__(self) -> None:
        self.blocks: list[list[str]] = [[]]
        self.reading = True

    def answer(self, first: str) -> None:
        self.blocks.append([first])
        self.reading = True

    def other(self) -> None:
        self.reading = False

    def row(self, text: str) -> None:
        if self.reading:
            self.blocks[-1].append(text)

    def text(self, text: str) -> None:
        """A row of answer text where the CLI marks no start of a block: it continues the open
        answer, or opens one after a cell that was not."""
        if self.reading:
            self.row(text)
        else:
            self.answer(text)

    def texts(self) -> list[str]:
        return [text for text in ("\n".join(block).strip() for block in self.blocks) if text]
