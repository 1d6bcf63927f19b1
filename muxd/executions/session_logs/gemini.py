"""Gemini CLI's chat recording (`<home>/.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl`)
read into `TurnFacts`.

What 0.61 appends, one JSON object a line: a header (`sessionId`, `projectHash`,
`startTime`), `{"$set": {...}}` updates of the session's own fields (ignored), and messages
`{id, timestamp, type, content, …}`: `user` (the prompt as text parts, or the
`functionResponse` parts sent back after a tool ran), `gemini` (`content` the answer text,
`tokens` {input, output, cached, thoughts, tool, total}, `model`, `toolCalls` [{name, args,
status}] and `thoughts`), and `info` / `warning` / `error` notes. A message is appended again,
whole, when it changes (a `gemini` message gains its `toolCalls`): the last copy of an id wins.
Nothing marks the end of a turn: it is taken as complete when the last message is an answer
without tool calls, or an error. For the few milliseconds between an answer and the copy of
it that adds its tool calls that is wrong, so read a turn once the screen says it ended.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from muxd.detectors._agent_cli import error_kind
from muxd.executions.session_logs._records import jsonl_records, joined, mapping, render_call, text_of, unique
from muxd.executions.session_logs.facts import TokenTally, TurnError, TurnFacts, count

# Tools whose `file_path` argument the call writes.
WRITING_TOOLS = frozenset({"write_file", "replace", "edit"})
TOOL_SUCCEEDED = "success"


def parse_turn(data: bytes) -> TurnFacts:
    """The facts of the last turn in `data` (bytes appended to a Gemini CLI chat recording)."""
    messages: dict[str, Mapping[str, Any]] = {}  # id -> last copy, in the order ids first came
    session_id: str | None = None
    for record in jsonl_records(data):
        session_id = text_of(record.get("sessionId")) or session_id
        if "$set" in record or not isinstance(record.get("type"), str):
            continue
        messages[str(record.get("id") or len(messages))] = record
    ordered = list(messages.values())
    start = max((i for i, m in enumerate(ordered) if _prompt(m) is not None), default=-1)
    prompt = _prompt(ordered[start]) if start >= 0 else None
    return _facts(prompt, ordered[start + 1:], session_id)


def _prompt(message: Mapping[str, Any]) -> str | None:
    if message.get("type") != "user":
        return None
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts = [mapping(p) for p in content] if isinstance(content, list) else []
    if not parts or any("functionResponse" in p for p in parts):
        return None
    return "".join(text_of(p.get("text")) or "" for p in parts)


def _text(content: object) -> str:
    if isinstance(content, list):
        return "".join(text_of(mapping(p).get("text")) or "" for p in content)
    return content if isinstance(content, str) else ""


def _facts(prompt: str | None, turn: list[Mapping[str, Any]], session_id: str | None) -> TurnFacts:
    tally = TokenTally()
    texts: list[str] = []
    calls: list[str] = []
    written: list[str] = []
    model: str | None = None
    error: TurnError | None = None
    for message in turn:
        kind = message.get("type")
        if kind == "error":
            text = _text(message.get("content"))
            error = TurnError(type=error_kind(text), message=text)
        if kind != "gemini":
            continue
        error = None  # the model answered after all
        texts.append(_text(message.get("content")))
        model = text_of(message.get("model")) or model
        tokens = message.get("tokens")
        if isinstance(tokens, dict):
            # Gemini counts thoughts apart from the output, and tool-use prompt tokens apart from the input.
            tally.add(_sum(tokens, "input", "tool"), _sum(tokens, "output", "thoughts"), count(tokens.get("cached")),
                      model=text_of(message.get("model")))
        tool_calls = message.get("toolCalls")
        for call in tool_calls if isinstance(tool_calls, list) else []:
            call = mapping(call)
            name, args = str(call.get("name") or "?"), mapping(call.get("args"))
            calls.append(render_call(name, args))
            path = text_of(args.get("file_path"))
            if name in WRITING_TOOLS and path and call.get("status") == TOOL_SUCCEEDED:
                written.append(path)
    last = turn[-1] if turn else {}
    complete = error is not None or (last.get("type") == "gemini" and not last.get("toolCalls"))
    return TurnFacts(prompt=prompt, response=joined(texts), **tally.fields(),  # type: ignore[arg-type]
                     tool_calls=calls, files_written=unique(written), session_id=session_id, model=model,
                     error=error, complete=complete)


def _sum(tokens: Mapping[str, Any], *keys: str) -> int | None:
    values = [v for key in keys if (v := count(tokens.get(key))) is not None]
    return sum(values) if values else None
