"""Codex CLI's rollout (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl`)
read into `TurnFacts`.

Every line is `{"timestamp", "type", "payload"}`. What 0.169 appends for a turn (written by
its app-server process, which keeps the file open):
- `event_msg` `task_started`, then `turn_context` (`model`, `cwd`);
- `response_item` `message` role `user` (the environment context and the prompt alike) and
  `event_msg` `item_completed` with a `UserMessage` item: the prompt as typed;
- `response_item` `reasoning`, `message` role `assistant` (`output_text` blocks: the answer),
  `function_call` (`name`, JSON `arguments`, `call_id`), `custom_tool_call` (`input`),
  `function_call_output`;
- `event_msg` `item_completed` with `CommandExecution` / `FileChange` items (`changes`:
  absolute path -> add/update/delete) once a command or patch ran;
- `token_usage_record` per model response (`response_id`, `usage`, the turn's running
  `turn_token_usage`) and `event_msg` `token_count` (`last_token_usage`, `total_token_usage`);
- `event_msg` `task_complete` (`last_agent_message`, and `error` {message, codex_error_info}
  when the turn failed), or `turn_aborted` (`reason: interrupted`) after Esc.
The first line of the file, `session_meta`, holds the thread id and the cwd.
Older releases wrote `event_msg` `user_message` / `agent_message` / `error` /
`patch_apply_end` instead of some of these; they are read too.
"""

from __future__ import annotations

import re

from collections.abc import Mapping
from typing import Any

import msgspec

from muxd.detectors._agent_cli import error_kind
from muxd.executions.session_logs._records import (json_value, jsonl_records, joined, mapping, patch_paths,
                                                   render_call, text_of, unique)
from muxd.executions.session_logs.facts import TokenTally, TurnError, TurnFacts, count

PATCH_TOOL = "apply_patch"


class _Turn:
    def __init__(self, prompt: str | None, last_total: object = None) -> None:
        self.prompt = prompt
        self.answer: dict[str, str] = {}      # response item id -> its text (items can be rewritten)
        self.agent_messages: list[str] = []   # the same answer from events, for logs without response items
        self.last_message: str | None = None  # task_complete's last_agent_message
        self.calls: dict[str, str] = {}       # call id -> rendered call
        self.written: list[str] = []
        self.usage: dict[str, Mapping[str, Any]] = {}  # response id -> its usage
        self.counts: list[Mapping[str, Any]] = []      # token_count events' last_token_usage, when new
        self.last_total = last_total  # the session's token total last counted (carried across turns)
        self.error: TurnError | None = None
        self.ended = False
        self.interrupted = False


def parse_turn(data: bytes) -> TurnFacts:
    """The facts of the last turn in `data` (bytes appended to a Codex rollout file)."""
    facts = _parse(data)
    windows = _CONTEXT_WINDOW.findall(data)  # token_count events name the model's window
    return msgspec.structs.replace(facts, context_max=int(windows[-1])) if windows else facts


_CONTEXT_WINDOW = re.compile(rb'"model_context_window"\s*:\s*(\d+)')


def _parse(data: bytes) -> TurnFacts:
    turn = _Turn(None)
    session_id: str | None = None
    model: str | None = None
    numbered = False
    for record in jsonl_records(data):
        kind, payload = record.get("type"), mapping(record.get("payload"))
        numbered = numbered or "ordinal" in record
        session_id = _session_id(kind, payload) or session_id
        if kind == "turn_context":
            model = text_of(payload.get("model")) or model
        elif kind == "response_item":
            _on_item(turn, payload)
        elif kind == "token_usage_record" and isinstance(payload.get("usage"), dict):
            turn.usage[str(payload.get("response_id") or len(turn.usage))] = payload["usage"]
        elif kind == "event_msg":
            prompt = _prompt(payload)
            if prompt is not None:
                turn = _Turn(prompt, turn.last_total)
            else:
                model = _on_event(turn, payload) or model
    return _facts(turn, session_id, model, numbered)


def _session_id(kind: object, payload: Mapping[str, Any]) -> str | None:
    if kind == "session_meta":
        return text_of(payload.get("id")) or text_of(payload.get("session_id"))
    return text_of(payload.get("session_id")) or text_of(payload.get("thread_id"))


def _prompt(event: Mapping[str, Any]) -> str | None:
    kind = event.get("type")
    if kind == "user_message":
        return text_of(event.get("message"))
    item = mapping(event.get("item"))
    if kind == "item_completed" and item.get("type") == "UserMessage":
        content = item.get("content")
        parts = [text_of(mapping(p).get("text")) or "" for p in content] if isinstance(content, list) else []
        return "\n".join(p for p in parts if p)
    return None


def _on_item(turn: _Turn, item: Mapping[str, Any]) -> None:
    kind = item.get("type")
    call_id = str(item.get("call_id") or item.get("id") or len(turn.calls))
    if kind == "message" and item.get("role") == "assistant":
        content = item.get("content")
        blocks = [mapping(b) for b in content] if isinstance(content, list) else []
        text = "".join(text_of(b.get("text")) or "" for b in blocks if b.get("type") == "output_text")
        turn.answer[str(item.get("id") or len(turn.answer))] = text
    elif kind == "function_call":
        name = str(item.get("name") or "?")
        args = _arguments(item.get("arguments"))
        patch = text_of(args.get("input"))
        turn.calls[call_id] = _patch_call(patch) if name == PATCH_TOOL and patch else render_call(name, args)
    elif kind == "custom_tool_call":
        name, text = str(item.get("name") or "?"), text_of(item.get("input")) or ""
        turn.calls[call_id] = _patch_call(text) if name == PATCH_TOOL else render_call(name, {"input": text})
    elif kind == "local_shell_call":
        turn.calls[call_id] = render_call("shell", mapping(item.get("action")))


def _patch_call(patch: str) -> str:
    return f"{PATCH_TOOL}({', '.join(patch_paths(patch))})"


def _arguments(raw: object) -> Mapping[str, Any]:
    """A function call's arguments: a JSON object in a string (or already decoded)."""
    if isinstance(raw, str):
        value = json_value(raw)
        return mapping(value) if value is not None else {"input": raw}
    return mapping(raw)


def _on_event(turn: _Turn, event: Mapping[str, Any]) -> str | None:
    """Take in one event_msg; returns a model it names (thread settings), if any."""
    kind = event.get("type")
    if kind == "item_completed":
        item = mapping(event.get("item"))
        if item.get("type") == "AgentMessage":
            content = item.get("content")
            blocks = [mapping(b) for b in content] if isinstance(content, list) else []
            turn.agent_messages.append("".join(text_of(b.get("text")) or "" for b in blocks))
        elif item.get("type") == "FileChange" and item.get("status") == "completed":
            turn.written += [str(path) for path in mapping(item.get("changes"))]
    elif kind == "agent_message":
        turn.agent_messages.append(text_of(event.get("message")) or "")
    elif kind == "patch_apply_end" and event.get("success"):
        turn.written += [str(path) for path in mapping(event.get("changes"))]
    elif kind == "token_count":
        info = mapping(event.get("info"))
        total = mapping(info.get("total_token_usage")).get("total_tokens")
        # The same totals are sent again with each rate-limit update: count a call once.
        if isinstance(info.get("last_token_usage"), dict) and total != turn.last_total:
            turn.counts.append(info["last_token_usage"])
            turn.last_total = total
    elif kind == "error":
        turn.error = _error(event)
    elif kind == "task_complete":
        turn.ended = True
        turn.last_message = text_of(event.get("last_agent_message"))
        if isinstance(event.get("error"), dict):
            turn.error = _error(event["error"])
    elif kind == "turn_aborted":
        turn.interrupted = True
    elif kind == "thread_settings_applied":
        return text_of(mapping(event.get("thread_settings")).get("model"))
    return None


def _error(error: Mapping[str, Any]) -> TurnError:
    message = text_of(error.get("message")) or str(error.get("codex_error_info") or "error")
    return TurnError(type=error_kind(message), message=message)


def _facts(turn: _Turn, session_id: str | None, model: str | None, numbered: bool) -> TurnFacts:
    tally = TokenTally()
    # Rollouts that number their lines (0.169) write a token_usage_record per response, and
    # repeat stale token_count events (after an interrupt, say): only the records count there.
    # Older rollouts have the token_count events alone.
    for usage in turn.usage.values() if numbered or turn.usage else turn.counts:
        tally.add(count(usage.get("input_tokens")), count(usage.get("output_tokens")),
                  count(usage.get("cached_input_tokens")), count(usage.get("cache_write_input_tokens")))
    texts = list(turn.answer.values()) or turn.agent_messages or ([turn.last_message] if turn.last_message else [])
    return TurnFacts(prompt=turn.prompt, response=joined(texts), **tally.fields(),  # type: ignore[arg-type]
                     tool_calls=list(turn.calls.values()), files_written=unique(turn.written),
                     session_id=session_id, model=model, error=turn.error,
                     complete=turn.ended and not turn.interrupted, interrupted=turn.interrupted)
