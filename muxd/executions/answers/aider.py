"""Aider's turn, read from its rows (plain scrolling output, the reply drawn by Rich):

    ─────────────────────────────────       <- rule before each prompt
    notes.txt                               <- files in the chat
    > please explain                        <- the echo (one row once joined)

    The reply, wrapped at the pane's width,
    no indentation.
     • a list item                          <- Rich's bullet, and ` 1 one` for `1. one`

    Tokens: 651 sent, 31 received.          <- the reply is over
    ─────────────────────────────────       <- the next prompt

Aider's own lines after a reply (`Applied edit to …`, a `(Y)es/(N)o` question, litellm errors,
the waiting bar) are not the answer.

Rich's live area (the reply's last rows while it streams) is redrawn by a thread of its own
while the reply's settled rows are printed above it; when the two cross as the area grows,
rows it drew can stay on screen right above the same rows printed for good (a screen seen
once in CI under load: tests/answers_data/aider_50x16_long_live_repeat.txt). Such a run of
rows repeated at once is read once.
"""

from __future__ import annotations

import re

from muxd.detectors.aider import is_error_line, is_rule, is_status_line, is_token_report, prompt_rows, prompt_text
from muxd.executions.answers._reader import AnswerBlocks, Echo

# The live area's height (aider's MarkdownStream.live_window): the most rows a crossing repeats.
_LIVE_ROWS = 6
# Rich draws an ordered list's `1. one` as ` 1 one`: an indented number, no dot (a reply's
# own rows start at column 0).
_RICH_NUMBERED = re.compile(r"^\s+(\d+) (?=\S)")


class AiderReader:
    needs_echo = True

    def conversation_end(self, rows: list[str]) -> int:
        return len(rows)  # (its prompts and the rules above them end the answer: `answer`)

    def echoes(self, rows: list[str], end: int) -> list[Echo]:
        found: list[Echo] = []
        last = max((row for row, line in enumerate(rows) if line.strip()), default=-1)
        # A prompt is known by the rule above it, but the rows may start at the echo itself.
        for row in sorted({0, *prompt_rows(rows)}):
            text = prompt_text(rows[row]) if row < len(rows) else ""
            if text and row != last:  # the last row is the live input line, perhaps a draft
                found.append(Echo(row, (text,)))
        return found

    def answer(self, rows: list[str], start: int, end: int) -> list[str]:
        prompts = set(prompt_rows(rows))
        kept: list[str] = []
        for row in range(start, end):
            line = rows[row]
            if is_token_report(line) or is_rule(line) or row in prompts:
                break
            # below an API error, Aider's one-line explanation of it ("The API provider's …")
            explains_error = row > start and is_error_line(rows[row - 1]) and bool(line.strip())
            if not (is_status_line(line) or explains_error):
                kept.append(line)
                _drop_live_repeat(kept)
        blocks = AnswerBlocks()
        for line in kept:
            blocks.row(_RICH_NUMBERED.sub(r"\1. ", line).strip())
        return blocks.texts()


def _drop_live_repeat(lines: list[str]) -> None:
    """Take off the end of `lines` a run of two rows or more (not all blank) that repeats the
    run right above it: what a crossing of Rich's live area leaves (module docstring)."""
    for size in range(2, min(_LIVE_ROWS, len(lines) // 2) + 1):
        tail = lines[-size:]
        if tail == lines[-2 * size:-size] and sum(1 for line in tail if line.strip()) >= 2:
            del lines[-size:]
            return


READER = AiderReader()
