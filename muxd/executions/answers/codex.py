"""Codex CLI's turn, read from its rows:

    › please list the files                 <- the echo (its wrapped rest indented)

    • I will list the files first.          <- answer cell: `•` at column 0, rest indented 2
      second paragraph of the same cell

    • Explored                              <- tool cell (codex_tools.TOOL_CELL), its items
      └ List ls -a                             and output indented under it

    • The listing is done.                  <- another answer cell

      Worked for 3s • 11:02                 <- the turn is over
    › Ask Codex to do anything              <- the composer and its footer

A cell starts at column 0 (codex.starts_cell); only `• text` that is not a tool cell is an
answer. Approvals (`✔ You approved …`), errors (`■ …`) and warnings (`⚠ …`) are Codex's own.
"""

from __future__ import annotations

from muxd.detectors.codex import composer_row, is_turn_done, is_user_message, starts_cell
from muxd.detectors.codex_tools import TOOL_CELL
from muxd.executions.answers._reader import AnswerBlocks, Echo, read_echoes

ECHO_MARK = "› "
ANSWER_MARK = "• "
# Rows Codex hangs under a cell: a tool's output, a status detail, a tip. Never answer text.
DETAIL_MARK = "└ "


class CodexReader:
    # On its alternate screen (the default) Codex keeps no scrollback: a turn taller than the
    # pane has its echo scrolled away for good, and the rows shown are the end of this turn.
    needs_echo = False

    def conversation_end(self, rows: list[str]) -> int:
        return _conversation_end(rows)

    def echoes(self, rows: list[str], end: int) -> list[Echo]:
        return read_echoes(rows, end, _echo_text, lambda line: not starts_cell(line), ECHO_MARK)

    def answer(self, rows: list[str], start: int, end: int) -> list[str]:
        blocks = AnswerBlocks()
        for line in rows[start:end]:
            if is_turn_done(line) or line.startswith(ECHO_MARK):
                break
            if not starts_cell(line):
                if not line.lstrip().startswith(DETAIL_MARK):  # a tip or a status detail
                    blocks.row(line.strip())  # the cell's wrapped rest or next paragraph, or a blank
            elif line.startswith(ANSWER_MARK) and not TOOL_CELL.match(line):
                blocks.answer(line[len(ANSWER_MARK):].strip())
            else:
                blocks.other()
        return blocks.texts()


def _echo_text(line: str) -> str | None:
    return line[len(ECHO_MARK):].strip() if line.startswith(ECHO_MARK) and is_user_message(line) else None


def _conversation_end(rows: list[str]) -> int:
    composer = composer_row(rows)
    return len(rows) if composer is None else composer


READER = CodexReader()
