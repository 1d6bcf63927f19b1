"""Claude Code's turn, read from its rows:

    ❯ please list the files                  <- the echo (its wrapped rest indented)

    ● I will list the files first.           <- answer block: `●` (or `⏺`), rest indented 2
      second paragraph of the same block

    ● Bash(ls -a)                            <- tool call, its output under `⎿`
      ⎿  notes.txt
      Listed 1 directory (ctrl+o to expand)  <- a collapsed tool group, no bullet

    ● The listing is done.                   <- another answer block

    ✻ Baked for 3s · done 11:01 AM           <- the turn is over
    ────────────────────────────────────     <- the prompt box and its footer

Blocks are told apart by claude_lines.classify_block, the detector's own reading.
"""

from __future__ import annotations

from muxd.detectors.claude_lines import BULLETS, classify_block, is_done_line, parse_spinner, split_blocks
from muxd.detectors.claude_screen import find_dialog, find_prompt_box, has_banner, is_rule
from muxd.executions.answers._reader import AnswerBlocks, Echo, read_echoes

ECHO_MARK = "❯"
TOOL_OUTPUT_MARK = "⎿"
# Claude right-aligns some status (`◐ medium · /effort`) on the row above its prompt box; no
# row of the conversation starts this far in.
RIGHT_ALIGNED_MIN_COLUMN = 20


class ClaudeReader:
    needs_echo = False  # the fullscreen renderer scrolls it off with the answer's start

    def conversation_end(self, rows: list[str]) -> int:
        return _conversation_end(rows)

    def echoes(self, rows: list[str], end: int) -> list[Echo]:
        # the wrapped rest of a message is indented; `⎿ Interrupted …` under it is Claude's
        return read_echoes(rows, end, _echo_text,
                           lambda line: line[:1].isspace() and not _is_child(line), ECHO_MARK)

    def answer(self, rows: list[str], start: int, end: int) -> list[str]:
        blocks = AnswerBlocks()
        for block in split_blocks(rows[start:end]):
            head = block[0]
            if _ends_turn(head):
                break
            stripped = head.strip()
            bullet = stripped[:1] in BULLETS
            # (Only a bulleted or an indented block can be answer text: others are not classified.)
            text = (bullet or head[:1].isspace()) and classify_block(block).kind == "text"
            if text and bullet:
                blocks.answer(stripped[1:].strip())
            elif text and not _is_child(head) and not has_banner(block):
                blocks.row("")  # another paragraph of the open block, if it is an answer
                blocks.row(stripped)
            else:
                blocks.other()  # a tool call, a collapsed tool group, a thought, the banner
                continue
            for line in block[1:]:
                if _is_child(line) or is_rule(line):
                    break  # `⎿ Interrupted …` under the text; a dialog's rule right below it
                blocks.row(line.strip())
        return blocks.texts()


def _echo_text(line: str) -> str | None:
    return line[len(ECHO_MARK):].strip() if line.startswith(ECHO_MARK) else None


def _is_child(line: str) -> bool:
    return line.lstrip().startswith(TOOL_OUTPUT_MARK)


def _ends_turn(line: str) -> bool:
    """The next prompt's echo, the turn-done line or a spinner: the answer is above."""
    return line.startswith(ECHO_MARK) or is_done_line(line) or parse_spinner(line) is not None


def _conversation_end(rows: list[str]) -> int:
    """The first row below the conversation: the prompt box (or a dialog in its place), with
    the right-aligned status rows above it."""
    box = find_prompt_box(rows)
    if box is not None:
        end = box.top
    else:
        dialog = find_dialog(rows)
        end = dialog.top if dialog is not None else len(rows)
    while end > 0 and (not rows[end - 1].strip()
                       or len(rows[end - 1]) - len(rows[end - 1].lstrip()) >= RIGHT_ALIGNED_MIN_COLUMN):
        end -= 1
    return end


READER = ClaudeReader()
