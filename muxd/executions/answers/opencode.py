"""opencode's turn, read from its rows (opentui, drawn on the alternate screen):

      ┃
      ┃  please run a command               <- the echo, in a bar box
      ┃

         I will run a command first.        <- answer text: indented, no mark

      ┃  $ echo hello from the tool         <- a tool, in a bar box too: its title has an
      ┃                                        icon (`$` a shell command, `→` a read, …)
      ┃  hello from the tool
      ┃

         The command ran.                   <- more answer text

         ▣  Build · Fake Model · 2.3s       <- the turn is over
      ┃                                     <- the input box, its bottom edge `╹▀▀▀`
      ┃  Build · Fake Model Fake
      ╹▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀

No scrollback: of a turn taller than the pane only its end is on the rows, perhaps without
the echo (so an answer is read without one, as for Claude Code's fullscreen renderer).
"""

from __future__ import annotations

import re

from muxd.executions.answers._reader import AnswerBlocks, Echo

BAR = "┃"
BOX_BOTTOM = "╹"
TURN_DONE_MARK = "▣"
# A tool box's title starts with its icon: `$ cmd`, `→ Read a.py`, `← Edit a.py`, `✱ Grep …`,
# `% WebFetch …` (the detector's permission titles use the same set).
_TOOL_TITLE = re.compile(r"^[$#→←✱%◈◇⟳⚙]\s")


class OpencodeReader:
    needs_echo = False

    def conversation_end(self, rows: list[str]) -> int:
        return _conversation_end(rows)

    def echoes(self, rows: list[str], end: int) -> list[Echo]:
        found: list[Echo] = []
        row = 0
        while row < end:
            if not _is_bar(rows[row]):
                row += 1
                continue
            box = row
            while row < end and _is_bar(rows[row]):
                row += 1
            texts = [(index, _bar_text(rows[index])) for index in range(box, row)]
            texts = [(index, text) for index, text in texts if text]
            if texts and not _TOOL_TITLE.match(texts[0][1]):
                found.append(Echo(texts[0][0], tuple(text for _, text in texts)))
        return found

    def answer(self, rows: list[str], start: int, end: int) -> list[str]:
        blocks = AnswerBlocks()
        for line in rows[start:end]:
            if line.strip().startswith(TURN_DONE_MARK):
                break
            if _is_bar(line):
                blocks.other()  # the rest of the echo's box, or a tool's
            elif not line.strip():
                blocks.row("")
            else:
                blocks.text(line.strip())
        return blocks.texts()


def _is_bar(line: str) -> bool:
    return line.lstrip().startswith(BAR)


def _bar_text(line: str) -> str:
    return line.lstrip()[len(BAR):].strip()


def _conversation_end(rows: list[str]) -> int:
    """The input box's top row (the bar rows above its bottom edge `╹▀▀▀`), else the end."""
    bottom = next((row for row in range(len(rows) - 1, -1, -1) if rows[row].lstrip().startswith(BOX_BOTTOM)), None)
    if bottom is None:
        return len(rows)
    top = bottom
    while top > 0 and _is_bar(rows[top - 1]):
        top -= 1
    return top


READER = OpencodeReader()
