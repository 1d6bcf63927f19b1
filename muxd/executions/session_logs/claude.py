"""Claude Code's session log (`<config dir>/projects/<cwd slug>/<session id>.jsonl`) read
into `TurnFacts`.

What 2.1.330 appends for a turn, one JSON object a line (every line carries `sessionId`):
- `type: user` with `message.content` a string (or text blocks): the prompt. The same type
  carries tool results (`tool_result` blocks, `is_error` when the tool failed or was denied),
  `isMeta` reminders, and `[Request interrupted by user…]` after Esc.
- `type: assistant`, one line per content block (`thinking`, `text`, `tool_use`), written
  once the model's message is complete; the lines of one API call share `message.id` and
  repeat its `message.usage`. An API error the CLI gave up on is an assistant line with
  `isApiErrorMessage`, `apiErrorStatus` and the text shown (`API Error: 400 …`); retried
  errors (529) leave no line.
- `type: system, subtype: turn_duration` once the turn is over.
- bookkeeping (`attachment`, `api-request`, `file-history-snapshot`, `last-prompt`, …),
  ignored here.
A turn is complete at its `turn_duration` line, at an API error, or (for releases without
that line) at a message that stopped for good (`end_turn`…); the last can be seen between
two block lines of the final message, so read a turn once the screen says it ended.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from muxd.detectors._agent_cli import error_kind
from muxd.executions.session_logs._records import jsonl_records, joined, mapping, render_call, text_of, unique
from muxd.executions.session_logs.facts import TokenTally, TurnError, TurnFacts, count

# Tools whose `file_path` (or `notebook_path`) the call writes.
WRITING_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
# A message with one of these stop reasons is the model's last word for the turn.
FINAL_STOP_REASONS = frozenset({"end_turn", "stop_sequence", "max_tokens", "refusal"})
INTERRUPTED_PREFIX = "[Request interrupted by user"
# Output of a local slash command (`/model`, `/cost`), logged as user lines: not prompts.
_LOCAL_COMMAND_OUTPUT = ("<local-command-stdout>", "<local-command-stderr>", "<local-command-caveat>")
_COMMAND_NAME = re.compile(r"<command-name>(.*?)</command-name>", re.DOTALL)
_COMMAND_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.DOTALL)
SYNTHETIC_MODEL = "<synthetic>"  # the model Claude Code names on messages it made up itself


class _Turn:
    """What has been read since the last prompt."""

    def __init__(self, prompt: str | None) -> None:
        self.prompt = prompt
        self.texts: list[str] = []
        self.calls: list[str] = []
        self.writes: dict[str, str] = {}      # tool_use id -> the path it writes, until its result
        self.written: list[str] = []
        self.usage: dict[str, Mapping[str, Any]] = {}  # message id -> its usage (last line wins)
        self.models: dict[str, str] = {}      # message id -> the model that answered it
        self.error: TurnError | None = None
        self.last_stop: str | None = None     # stop reason of the last main-chain message line
        self.last_was_result = False          # a tool result came after the last assistant line
        self.ended = False                    # turn_duration seen
        self.interrupted = False


def parse_turn(data: bytes) -> TurnFacts:
    """The facts of the last turn in `data` (bytes appended to a Claude Code session log)."""
    turn = _Turn(None)
    session_id: str | None = None
    model: str | None = None
    for record in jsonl_records(data):
        session_id = text_of(record.get("sessionId")) or session_id
        kind = record.get("type")
        if kind == "user":
            prompt = _prompt(record)
            if prompt is not None:
                turn = _Turn(prompt)
            else:
                _on_user(turn, record)
        elif kind == "assistant":
            model = _on_assistant(turn, record) or model
        elif kind == "system" and record.get("subtype") == "turn_duration" and not record.get("isSidechain"):
            turn.ended = True
    return _facts(turn, session_id, model)


def _prompt(record: Mapping[str, Any]) -> str | None:
    """The prompt a user line carries, or None for tool results, reminders and notes."""
    if record.get("isMeta") or record.get("isSidechain") or record.get("isCompactSummary"):
        return None
    content = mapping(record.get("message")).get("content")
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        blocks = [mapping(b) for b in content]
        if any(b.get("type") == "tool_result" for b in blocks):
            return None
        text = "\n".join(t for b in blocks if b.get("type") == "text" and (t := text_of(b.get("text"))))
    else:
        return None
    if not text.strip() or text.startswith(INTERRUPTED_PREFIX) or text.startswith(_LOCAL_COMMAND_OUTPUT):
        return None
    name = _COMMAND_NAME.search(text)
    if name:  # a slash command: `/review main` as it was typed
        args = _COMMAND_ARGS.search(text)
        return " ".join(p for p in (name.group(1).strip(), args.group(1).strip() if args else "") if p)
    return text


def _on_user(turn: _Turn, record: Mapping[str, Any]) -> None:
    if record.get("isSidechain"):
        return
    content = mapping(record.get("message")).get("content")
    blocks = [mapping(b) for b in content] if isinstance(content, list) else []
    texts = [content] if isinstance(content, str) else [text_of(b.get("text")) or "" for b in blocks]
    if any(t.startswith(INTERRUPTED_PREFIX) for t in texts):
        turn.interrupted = True
    for block in blocks:
        if block.get("type") != "tool_result":
            continue
        turn.last_was_result = True
        path = turn.writes.pop(str(block.get("tool_use_id")), None)
        if path is not None and not block.get("is_error"):
            turn.written.append(path)


def _on_assistant(turn: _Turn, record: Mapping[str, Any]) -> str | None:
    """Take in one assistant line; returns the model that answered, if it names a real one."""
    message = mapping(record.get("message"))
    model = text_of(message.get("model"))
    usage = message.get("usage")
    message_id = text_of(message.get("id"))
    if isinstance(usage, dict) and message_id and model != SYNTHETIC_MODEL:
        # Subagent (sidechain) calls are spent during the turn too, so they count here.
        turn.usage[message_id] = usage
        if model:
            turn.models[message_id] = model
    if record.get("isSidechain"):
        return None
    turn.last_stop = text_of(message.get("stop_reason"))
    turn.last_was_result = False
    content = message.get("content")
    blocks = [mapping(b) for b in content] if isinstance(content, list) else []
    if record.get("isApiErrorMessage"):
        text = " ".join(t for b in blocks if (t := text_of(b.get("text")))) or str(record.get("error") or "")
        turn.error = TurnError(type=error_kind(text), message=text)
        return None
    turn.error = None  # the model answered after all
    for block in blocks:
        if block.get("type") == "text" and (text := text_of(block.get("text"))):
            turn.texts.append(text)
        elif block.get("type") == "tool_use":
            name, args = str(block.get("name") or "?"), mapping(block.get("input"))
            turn.calls.append(render_call(name, args))
            path = text_of(args.get("file_path")) or text_of(args.get("notebook_path"))
            if name in WRITING_TOOLS and path:
                turn.writes[str(block.get("id"))] = path
    return model if model and model != SYNTHETIC_MODEL else None


def _facts(turn: _Turn, session_id: str | None, model: str | None) -> TurnFacts:
    tally = TokenTally()
    for message_id, usage in turn.usage.items():
        fresh, written = count(usage.get("input_tokens")), count(usage.get("cache_creation_input_tokens"))
        read = count(usage.get("cache_read_input_tokens"))
        reads_any = fresh is not None or written is not None or read is not None
        tally.add((fresh or 0) + (written or 0) + (read or 0) if reads_any else None,
                  count(usage.get("output_tokens")), read, written, model=turn.models.get(message_id))
    final_message = turn.last_stop in FINAL_STOP_REASONS and not turn.last_was_result
    complete = not turn.interrupted and (turn.ended or turn.error is not None or final_message)
    return TurnFacts(prompt=turn.prompt, response=joined(turn.texts), **tally.fields(),  # type: ignore[arg-type]
                     tool_calls=turn.calls, files_written=unique(turn.written), session_id=session_id,
                     model=model, error=turn.error, complete=complete, interrupted=turn.interrupted)
