"""Cline's messages file (`<CLINE_SESSION_DATA_DIR or ~/.cline/data/sessions>/<session id>/
<session id>.messages.json`, found through its sessions database: see cline_store.py) read
into `TurnFacts`.

What 3.0.65 keeps is one JSON document, rewritten whole after each message: `sessionId` and
`messages`, each with a `role`: `user` (the prompt as a text part wrapped in
`<user_input mode="act">`, or `tool_result` parts {tool_use_id, name, content, is_error}) and
`assistant` (text and `tool_use` parts {id, name, input}, `modelInfo` {id}, `metrics`
{inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens}: each request's usage). A failed
request is an assistant message with `metadata.displayRole` "error" whose text is the error.
A turn is over once an assistant message has no tool use, or is an error.

Since the file is rewritten rather than appended to, a cursor remembers how many messages it
held (`message_count`) and the turn is read from those that came after (`since`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import msgspec

from muxd.config import SESSION_LOG_JSON_DEPTH_MAX
from muxd.detectors._agent_cli import error_kind
from muxd.executions.session_logs._records import joined, mapping, render_call, text_of, unique
from muxd.executions.session_logs.facts import TokenTally, TurnError, TurnFacts, count
from muxd.json_depth import nests_deeper

# Tools whose `path` argument the call writes.
WRITING_TOOLS = frozenset({"editor"})
ERROR_ROLE = "error"
COMMAND_SEPARATOR = "; "  # run_commands' several commands, as a shell would run them one after another
# The prompt as Cline wraps it before sending: `<user_input mode="act">say hello</user_input>`.
_USER_INPUT = re.compile(r"^\s*<user_input(?:\s[^>]*)?>(.*)</user_input>\s*$", re.DOTALL)

_decoder = msgspec.json.Decoder()


def messages(data: bytes) -> tuple[list[Mapping[str, Any]], str | None]:
    """The messages of a whole messages file and its session id ([] if it is not one: a file
    caught mid-write, or nested deeper than SESSION_LOG_JSON_DEPTH_MAX)."""
    if nests_deeper(data, SESSION_LOG_JSON_DEPTH_MAX):
        return [], None
    try:
        document = mapping(_decoder.decode(data))
    except (msgspec.DecodeError, RecursionError):
        return [], None
    found = document.get("messages")
    return [mapping(m) for m in found] if isinstance(found, list) else [], text_of(document.get("sessionId"))


def message_count(data: bytes) -> int | None:
    """How many messages the file holds (None if it is not whole)."""
    found, session_id = messages(data)
    return len(found) if found or session_id else None


def parse_turn(data: bytes, since: int = 0) -> TurnFacts:
    """The facts of the last turn among the messages after the first `since` of `data` (a
    whole messages file); all of them if there are fewer (the file was compacted)."""
    found, session_id = messages(data)
    if since > len(found):
        since = 0
    found = found[since:]
    start = max((i for i, m in enumerate(found) if m.get("role") == "user" and _prompt(m) is not None), default=-1)
    prompt = _prompt(found[start]) if start >= 0 else None
    return _facts(prompt, found[start + 1:], session_id)


def _parts(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [mapping(part) for part in content] if isinstance(content, list) else []


def _text(message: Mapping[str, Any]) -> str:
    return "".join(text_of(p.get("text")) or "" for p in _parts(message) if p.get("type") == "text")


def _prompt(message: Mapping[str, Any]) -> str | None:
    """A person's prompt, unwrapped; None for a message that only carries tool results."""
    if not any(p.get("type") == "text" for p in _parts(message)):
        return None
    text = _text(message)
    wrapped = _USER_INPUT.match(text)
    return wrapped.group(1) if wrapped else text


def _listed(args: Mapping[str, Any]) -> dict[str, Any]:
    """Cline's tools take lists (`commands`, `paths`): each as one string, as its screen shows them."""
    return {key: (COMMAND_SEPARATOR if key == "commands" else ", ").join(value)
            if isinstance(value, list) and value and all(isinstance(v, str) for v in value) else value
            for key, value in args.items()}


def _facts(prompt: str | None, turn: list[Mapping[str, Any]], session_id: str | None) -> TurnFacts:
    tally = TokenTally()
    texts: list[str] = []
    calls: list[str] = []
    asked: dict[str, tuple[str, str | None]] = {}  # tool use id -> (tool, path it writes)
    written: list[str] = []
    model: str | None = None
    error: TurnError | None = None
    last: Mapping[str, Any] = {}
    for message in turn:
        last = message
        if message.get("role") == "user":
            for part in _parts(message):
                tool, path = asked.get(str(part.get("tool_use_id")), ("", None))
                if part.get("type") == "tool_result" and tool in WRITING_TOOLS and path and not part.get("is_error"):
                    written.append(path)
            continue
        if message.get("role") != "assistant":
            continue
        if mapping(message.get("metadata")).get("displayRole") == ERROR_ROLE:
            text = _text(message) or "error"
            error = TurnError(type=error_kind(text), message=text)
            continue
        error = None  # a retry got through
        model = text_of(mapping(message.get("modelInfo")).get("id")) or model
        usage = mapping(message.get("metrics"))
        if usage:
            tally.add(count(usage.get("inputTokens")), count(usage.get("outputTokens")),
                      count(usage.get("cacheReadTokens")), count(usage.get("cacheWriteTokens")),
                      model=text_of(mapping(message.get("modelInfo")).get("id")))
        texts.append(_text(message))
        for part in _parts(message):
            if part.get("type") != "tool_use":
                continue
            name, args = str(part.get("name") or "?"), mapping(part.get("input"))
            calls.append(render_call(name, _listed(args)))
            asked[str(part.get("id"))] = (name, text_of(args.get("path")))
    answered = last.get("role") == "assistant" and not any(p.get("type") == "tool_use" for p in _parts(last))
    return TurnFacts(prompt=prompt, response=joined(texts), **tally.fields(),  # type: ignore[arg-type]
                     tool_calls=calls, files_written=unique(written), session_id=session_id, model=model,
                     error=error, complete=error is not None or (answered and bool(texts)))
