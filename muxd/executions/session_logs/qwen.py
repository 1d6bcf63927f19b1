"""Qwen Code's chat recording (`<QWEN_RUNTIME_DIR, QWEN_HOME or ~/.qwen>/projects/<cwd, each
non-alphanumeric character as "-">/chats/<session id>.jsonl`) read into `TurnFacts`.

What 0.15 appends, one JSON object a line, each with `sessionId`, `type` and `timestamp`:
`user` (the prompt, `message.parts` text), `assistant` (`message.parts` text and `functionCall`
{name, args}, `model`, `usageMetadata` {promptTokenCount, candidatesTokenCount,
thoughtsTokenCount, cachedContentTokenCount}), `tool_result` (the `functionResponse` sent back,
with `toolCallResult` {status}) and `system` records, among them `ui_telemetry` whose
`qwen-code.api_error` event holds a failed request's `error_message`. A turn is taken as over
when its last record is an answer without tool calls, or an error.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from muxd.detectors._agent_cli import error_kind
from muxd.executions.session_logs._records import jsonl_records, joined, mapping, render_call, text_of, unique
from muxd.executions.session_logs.facts import TokenTally, TurnError, TurnFacts, count

# Tools whose `file_path` argument the call writes (Gemini CLI's, which Qwen Code kept).
WRITING_TOOLS = frozenset({"write_file", "replace", "edit"})
TOOL_SUCCEEDED = "success"
API_ERROR_EVENT = "qwen-code.api_error"


def parse_turn(data: bytes) -> TurnFacts:
    """The facts of the last turn in `data` (bytes appended to a Qwen Code chat recording)."""
    records: list[Mapping[str, Any]] = []
    session_id: str | None = None
    for record in jsonl_records(data):
        session_id = text_of(record.get("sessionId")) or session_id
        records.append(record)
    start = max((i for i, r in enumerate(records) if r.get("type") == "user"), default=-1)
    prompt = _text(records[start]) if start >= 0 else None
    return _facts(prompt, records[start + 1:], session_id)


def _parts(record: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    parts = mapping(record.get("message")).get("parts")
    return [mapping(part) for part in parts] if isinstance(parts, list) else []


def _text(record: Mapping[str, Any]) -> str:
    return "".join(text_of(part.get("text")) or "" for part in _parts(record) if not part.get("thought"))


def _api_error(record: Mapping[str, Any]) -> TurnError | None:
    event = mapping(mapping(record.get("systemPayload")).get("uiEvent"))
    if record.get("subtype") != "ui_telemetry" or event.get("event.name") != API_ERROR_EVENT:
        return None
    message = text_of(event.get("error_message")) or "API error"
    return TurnError(type=error_kind(message), message=message)


def _facts(prompt: str | None, turn: list[Mapping[str, Any]], session_id: str | None) -> TurnFacts:
    tally = TokenTally()
    texts: list[str] = []
    calls: list[str] = []
    asked: dict[str, tuple[str, str | None]] = {}  # call id -> (tool, file it writes)
    written: list[str] = []
    model: str | None = None
    error: TurnError | None = None
    last: Mapping[str, Any] = {}
    for record in turn:
        kind = record.get("type")
        if kind == "system":
            error = _api_error(record) or error
            continue
        last = record
        if kind == "tool_result":
            result = mapping(record.get("toolCallResult"))
            tool, path = asked.get(str(result.get("callId")), ("", None))
            if tool in WRITING_TOOLS and path and result.get("status") == TOOL_SUCCEEDED:
                written.append(path)
            continue
        if kind != "assistant":
            continue
        error = None  # the model answered after all
        model = text_of(record.get("model")) or model
        usage = mapping(record.get("usageMetadata"))
        if usage:
            output = [v for key in ("candidatesTokenCount", "thoughtsTokenCount")
                      if (v := count(usage.get(key))) is not None]
            tally.add(count(usage.get("promptTokenCount")), sum(output) if output else None,
                      count(usage.get("cachedContentTokenCount")), model=text_of(record.get("model")))
        texts.append(_text(record))
        for part in _parts(record):
            call = mapping(part.get("functionCall"))
            if not call:
                continue
            name, args = str(call.get("name") or "?"), mapping(call.get("args"))
            calls.append(render_call(name, args))
            asked[str(call.get("id"))] = (name, text_of(args.get("file_path")))
    answered = last.get("type") == "assistant" and not any(part.get("functionCall") for part in _parts(last))
    return TurnFacts(prompt=prompt, response=joined(texts), **tally.fields(),  # type: ignore[arg-type]
                     tool_calls=calls, files_written=unique(written), session_id=session_id, model=model,
                     error=error, complete=error is not None or answered)
