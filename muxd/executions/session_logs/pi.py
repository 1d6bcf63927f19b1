"""pi's session file (`<PI_CODING_AGENT_DIR or ~/.pi/agent>/sessions/--<cwd, "/" as "-">--/
<time>_<session id>.jsonl`) read into `TurnFacts`.

What 0.73 appends, one JSON object a line: a `session` header (`id`, `cwd`), `model_change`
and `thinking_level_change` entries, and `message` entries whose `message` has a `role`:
`user` (the prompt as text parts), `assistant` (text and `toolCall` parts {name, arguments},
`model`, `usage` {input, output, cacheRead, cacheWrite, cost}, `stopReason` "stop", "toolUse",
"error" (with `errorMessage`) or "aborted") and `toolResult` (`toolName`, `isError`). Each
retried request that failed is an assistant message of its own with `stopReason` "error".
A turn is over once an assistant message stops for anything but a tool use.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from muxd.detectors._agent_cli import error_kind
from muxd.executions.session_logs._records import jsonl_records, joined, mapping, render_call, text_of, unique
from muxd.executions.session_logs.facts import TokenTally, TurnError, TurnFacts, count

# Tools whose `path` argument the call writes.
WRITING_TOOLS = frozenset({"write", "edit"})


def parse_turn(data: bytes) -> TurnFacts:
    """The facts of the last turn in `data` (bytes appended to a pi session file)."""
    messages: list[Mapping[str, Any]] = []
    session_id: str | None = None
    for record in jsonl_records(data):
        if record.get("type") == "session":
            session_id = text_of(record.get("id")) or session_id
        elif record.get("type") == "message":
            messages.append(mapping(record.get("message")))
    start = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    prompt = _text(messages[start].get("content")) if start >= 0 else None
    return _facts(prompt, messages[start + 1:], session_id)


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    parts = [mapping(p) for p in content] if isinstance(content, list) else []
    return "".join(text_of(p.get("text")) or "" for p in parts if p.get("type") == "text")


def _facts(prompt: str | None, turn: list[Mapping[str, Any]], session_id: str | None) -> TurnFacts:
    tally = TokenTally()
    texts: list[str] = []
    calls: list[str] = []
    asked: dict[str, tuple[str, str | None]] = {}  # tool call id -> (tool, path it writes)
    written: list[str] = []
    model: str | None = None
    error: TurnError | None = None
    stop: str | None = None
    for message in turn:
        if message.get("role") == "toolResult":
            tool, path = asked.get(str(message.get("toolCallId")), ("", None))
            if tool in WRITING_TOOLS and path and not message.get("isError"):
                written.append(path)
            continue
        if message.get("role") != "assistant":
            continue
        stop = text_of(message.get("stopReason"))
        model = text_of(message.get("model")) or model
        usage = mapping(message.get("usage"))
        if usage and stop != "error":  # a failed request's usage is all zeros
            tally.add(count(usage.get("input")), count(usage.get("output")), count(usage.get("cacheRead")),
                      count(usage.get("cacheWrite")), model=text_of(message.get("model")))
        if stop == "error":
            text = text_of(message.get("errorMessage")) or "error"
            error = TurnError(type=error_kind(text), message=text)
            continue
        error = None  # a retry got through
        texts.append(_text(message.get("content")))
        for part in message.get("content") if isinstance(message.get("content"), list) else []:
            part = mapping(part)
            if part.get("type") != "toolCall":
                continue
            name, args = str(part.get("name") or "?"), mapping(part.get("arguments"))
            calls.append(render_call(name, args))
            asked[str(part.get("id"))] = (name, text_of(args.get("path")))
    return TurnFacts(prompt=prompt, response=joined(texts), **tally.fields(),  # type: ignore[arg-type]
                     tool_calls=calls, files_written=unique(written), session_id=session_id, model=model,
                     error=error, complete=stop is not None and stop != "toolUse",
                     interrupted=stop == "aborted")
