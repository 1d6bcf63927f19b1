"""An agent's answer in one turn, read from its pane's rows.

    extract_answer("claude", rows, "say hello")  -> "Hello! How can I help?"
    turn_start("codex", rows, "say hello")       -> index of the `› say hello` row

`rows` are the pane's plain-text rows from where the turn started (the prompt was submitted;
that row may hold the prompt's echo) to the bottom of the screen once the agent is back at its
prompt, with soft-wrapped rows joined (`capture-pane -J`). Each CLI has a reader here
(claude.py, codex.py, gemini.py, aider.py, opencode.py) that knows, through its detector's classifiers,
which rows are the prompt's echo, the answer, tool calls and their output, and the CLI's own
status lines. The answer comes back normalised (normalise.py): one line per paragraph,
paragraphs and answer blocks parted by one blank line, markdown styles taken out.

What a screen cannot give: a CLI drawn on the alternate screen (Claude Code's fullscreen
renderer, Codex without `--no-alt-screen`, opencode) keeps no scrollback, so of a turn taller
than the pane only the rows still shown can be read; then the echo is gone too and
`turn_start` finds nothing (Codex pins the prompt above the cut, so there it is found).
"""

from __future__ import annotations

from collections.abc import Sequence

from muxd.executions.answers import aider, claude, codex, gemini, opencode
from muxd.executions.answers._reader import Echo, TurnReader
from muxd.executions.answers.normalise import normalise_answer

__all__ = ["Echo", "TurnReader", "extract_answer", "normalise_answer", "read_turn", "turn_start", "READERS"]

READERS: dict[str, TurnReader] = {"claude": claude.READER, "codex": codex.READER, "gemini": gemini.READER,
                                  "aider": aider.READER, "opencode": opencode.READER}


def turn_start(agent_type: str | None, lines: Sequence[str], message: str | None) -> int | None:
    """Index in `lines` of the last row echoing `message` as a prompt the user sent (any
    prompt when `message` is None); None when no such row is there or the agent is unknown."""
    reader = READERS.get(agent_type or "")
    if reader is None:
        return None
    rows = _clean(lines)
    found = _echo_of(reader.echoes(rows, reader.conversation_end(rows)), message)
    return None if found is None else found[0]


def extract_answer(agent_type: str | None, lines: Sequence[str], message: str | None) -> str | None:
    """What the agent answered in this turn, as the person saw it, normalised (normalise.py);
    None when it answered nothing or its CLI is not one read here."""
    return read_turn(agent_type, lines, message)[1]


def read_turn(agent_type: str | None, lines: Sequence[str], message: str | None) -> tuple[int | None, str | None]:
    """(index in `lines` of the turn's echo, the answer) in one reading: `extract_answer`'s
    answer, and the row the turn's own rows start at (None: no echo found, or the CLI is not
    one read here)."""
    reader = READERS.get(agent_type or "")
    if reader is None:
        return None, None
    rows = _clean(lines)
    end = reader.conversation_end(rows)
    echoes = reader.echoes(rows, end)
    # The message's own echo; else the last echo there is (a CLI may show a pasted message
    # as "[Pasted text #1]"); else none: the rows start inside the turn, where the CLI
    # scrolled the echo away (see TurnReader.needs_echo).
    found = _echo_of(echoes, message) or _echo_of(echoes, None)
    if found is None and reader.needs_echo:
        return None, None
    blocks = reader.answer(rows, found[1] if found else 0, end)
    text = normalise_answer("\n\n".join(blocks))
    return (found[0] if found else None), text or None


def _echo_of(echoes: Sequence[Echo], message: str | None) -> tuple[int, int] | None:
    """(first row, row after) of the last echo showing `message` (any, when None)."""
    for echo in reversed(echoes):
        end = echo.end(message)
        if end is not None:
            return echo.row, end
    return None


def _clean(lines: Sequence[str]) -> list[str]:
    # A captured row may end in spaces (at a joined wrap) or hold no-break spaces some CLIs
    # draw: neither means anything here.
    return [line.replace("\xa0", " ").rstrip() for line in lines]
