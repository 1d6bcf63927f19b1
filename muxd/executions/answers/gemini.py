"""Gemini CLI's turn, read from its rows:

     > please list the files                <- the echo (its wrapped rest indented)

    ✦ I will list the files first.          <- answer block: `✦`, rest indented 2
      second paragraph of the same block

      ✓  ReadFolder  . → Directory is empty. <- a tool's one-row summary
    ╭──────────────────────────────╮        <- or a tool box
    │ ✓  Shell ls -a               │
    ╰──────────────────────────────╯

    ✦ The listing is done.                  <- another answer block
                          ? for shortcuts   <- hints, a spinner: above the input box
    ────────────────────────────────────    <- the input box's rule, composer, footer

Anything else at column 0 (`ℹ`, `✕`, `⚠`, a box row) is Gemini's own, not the answer.
"""

from __future__ import annotations

from muxd.detectors.gemini import input_rule_row, is_status_row, is_tool_row, is_user_prompt
from muxd.executions.answers._reader import AnswerBlocks, Echo, read_echoes

ANSWER_MARK = "✦"
ECHO_MARK = ">"
# The hint Gemini right-aligns on the row above its input box (beside a spinner, or alone).
SHORTCUTS_HINT = "? for shortcuts"


class GeminiReader:
    needs_echo = True

    def conversation_end(self, rows: list[str]) -> int:
        return _conversation_end(rows)

    def echoes(self, rows: list[str], end: int) -> list[Echo]:
        return read_echoes(rows, end, _echo_text, lambda line: line[:1].isspace()
                           and not is_user_prompt(line) and not is_tool_row(line))

    def answer(self, rows: list[str], start: int, end: int) -> list[str]:
        blocks = AnswerBlocks()
        for line in rows[start:end]:
            if is_user_prompt(line):
                break
            if line.startswith(ANSWER_MARK):
                blocks.answer(line[len(ANSWER_MARK):].strip())
            elif is_tool_row(line) or (line and not line[:1].isspace()):
                blocks.other()
            else:
                blocks.row(line.strip())
        return blocks.texts()


def _echo_text(line: str) -> str | None:
    return line.strip()[len(ECHO_MARK):].strip() if is_user_prompt(line) else None


def _conversation_end(rows: list[str]) -> int:
    """The first row below the conversation: the input box's rule, with the spinner, hints and
    blank rows above it."""
    rule = input_rule_row(rows)
    end = len(rows) if rule is None else rule
    while end > 0 and (is_status_row(rows[end - 1]) or rows[end - 1].strip().endswith(SHORTCUTS_HINT)):
        end -= 1
    return end


READER = GeminiReader()
