"""Aider's chat history (`.aider.chat.history.md` in the repository root, or the cwd without
git) read into `TurnFacts`.

It is Markdown, appended as the session goes: `#### ` before each line of a prompt, the
model's answer as streamed, and `> ` before each line Aider printed for itself (startup
lines such as `> Model: openai/fake-model with whole edit format`, `> Tokens: 646 sent, 5
received.`, `> Applied edit to notes.txt`, API errors). There are no session ids, no
tool calls and no exact token counts: the counts are Aider's own (with the fake server it
printed 646 sent where the API's usage said 759), rounded from 1000 on (`2.3k`, `12k`).
Paths are relative to Aider's root. A turn is complete once its `Tokens:` line is there
(edits are applied after it), or on an API error Aider does not retry.
"""

from __future__ import annotations

import re

from muxd.detectors._agent_cli import error_kind
from muxd.executions.session_logs._records import unique
from muxd.executions.session_logs.facts import TokenTally, TurnError, TurnFacts

PROMPT_PREFIX = "#### "
NOTE_PREFIX = "> "
# `Tokens: 2.3k sent, 1.1k cache write, 5k cache hit, 120 received. Cost: …`
_TOKENS = re.compile(r"^Tokens: (?P<sent>[\d.,]+k?) sent"
                     r"(?:, (?P<write>[\d.,]+k?) cache write)?(?:, (?P<hit>[\d.,]+k?) cache hit)?"
                     r", (?P<received>[\d.,]+k?) received\.")
_APPLIED = re.compile(r"^Applied edit to (.+?)\s*$")
_MODEL = re.compile(r"^(?:Main )?[Mm]odel: (\S+)")
# What Aider prints when the API failed: litellm's exception, or its own words for one.
_ERROR = re.compile(r"^(?:litellm\.\w+(?:Error|Exception)\b.*|.*\bAPI provider's servers are down.*|"
                    r"(?:Unexpected|Fatal) error.*)$")
_RETRYING = re.compile(r"^Retrying in [\d.]+ seconds")


def parse_turn(data: bytes) -> TurnFacts:
    """The facts of the last turn in `data` (bytes appended to an Aider chat history)."""
    end = data.rfind(b"\n")
    lines = data[:end].decode("utf-8", "replace").split("\n") if end >= 0 else []
    model: str | None = None
    start = -1  # index of the last prompt's first line
    for i, line in enumerate(lines):
        if line.startswith(PROMPT_PREFIX) and (i == 0 or not lines[i - 1].startswith(PROMPT_PREFIX)):
            start = i
        elif line.startswith(NOTE_PREFIX) and (found := _MODEL.match(_note(line))):
            model = found.group(1)
    prompt_lines: list[str] = []
    i = max(start, 0)
    while start >= 0 and i < len(lines) and lines[i].startswith(PROMPT_PREFIX):
        prompt_lines.append(lines[i][len(PROMPT_PREFIX):].rstrip())
        i += 1
    return _facts("\n".join(prompt_lines) if start >= 0 else None, lines[i:], model)


def _note(line: str) -> str:
    return line[len(NOTE_PREFIX):].rstrip()


def _facts(prompt: str | None, lines: list[str], model: str | None) -> TurnFacts:
    tally = TokenTally(exact=False)  # Aider's own rounded count: not priced (Aider shows its cost)
    answer: list[str] = []
    written: list[str] = []
    error: TurnError | None = None
    for line in lines:
        if not line.startswith(NOTE_PREFIX) and line.rstrip() != ">":
            answer.append(line)
            continue
        note = _note(line)
        if tokens := _TOKENS.match(note):
            tally.add(_count(tokens["sent"]), _count(tokens["received"]), _count(tokens["hit"]),
                      _count(tokens["write"]))
            error = None  # an answer came after all
        elif applied := _APPLIED.match(note):
            written.append(applied.group(1))
        elif _ERROR.match(note):
            error = TurnError(type=error_kind(note), message=note)
        elif _RETRYING.match(note) and error is not None:
            error = None  # Aider tries again: not the end of the turn
    response = "\n".join(answer).strip("\n") or None
    return TurnFacts(prompt=prompt, response=response, **tally.fields(),  # type: ignore[arg-type]
                     files_written=unique(written), model=model, error=error,
                     complete=tally.calls > 0 or error is not None)


def _count(text: str | None) -> int | None:
    """`646` -> 646, `2.3k` -> 2300, `12k` -> 12000 (Aider's rounding is lost for good)."""
    if not text:
        return None
    text = text.replace(",", "")
    try:
        return round(float(text[:-1]) * 1000) if text.endswith("k") else int(text)
    except ValueError:
        return None
