"""Fake OpenAI Responses API (Codex CLI): `POST /v1/responses` streamed as SSE, `GET /v1/models`.

Codex reads each event's `type` field; the items it keeps come from
`response.output_item.done`. A `Call` becomes a `function_call` item, e.g. `exec_command`
with `sandbox_permissions: "require_escalated"` for the approval prompt. Codex offers an MCP
server's tools as one `namespace` tool, `mcp__<server>`, and takes a call of one of them as a
`function_call` naming the tool and that namespace: a `Call("mcp__<server>__<tool>", …)` is
sent so, which lets one script serve Claude Code (which names the tool so) and Codex.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable
from typing import Any

from muxd.testing.fake_models._http import Exchange, FakeModelServer
from muxd.testing.fake_models.script import Call, Fail, Pause, Say, Step, Think

MODEL_ID = "gpt-5-codex"
TITLE = "Run the scripted task"
# Codex maps these codes to its own messages (server_is_overloaded → "high demand").
ERROR_CODES = {429: "rate_limit_exceeded", 500: "internal_error", 503: "server_is_overloaded",
               529: "server_is_overloaded"}


class OpenAIResponsesFake(FakeModelServer):
    api = "openai-responses"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._ids = itertools.count(1)

    def route(self, exchange: Exchange) -> Callable[[Exchange], None] | None:
        path = exchange.path.rstrip("/")
        if exchange.method == "POST" and path == "/v1/responses":
            return self._responses
        if exchange.method == "GET" and path == "/v1/models":
            return lambda ex: ex.send_json(200, {"object": "list", "data": [
                {"id": MODEL_ID, "object": "model", "created": 0, "owned_by": "fake"}]})
        return None

    def _responses(self, ex: Exchange) -> None:
        body = ex.body if isinstance(ex.body, dict) else {}
        # Side requests (the thread title) come without tools, alongside the main turn.
        steps: list[Step] = ex.take_turn() if body.get("tools") else [Say(TITLE, delay_s=0)]
        model = body.get("model") or MODEL_ID
        fail = ex.failure(steps)
        if fail is not None:
            error = {"message": fail.message, "type": "server_error",
                     "code": fail.code or ERROR_CODES.get(fail.status, "server_error"), "param": None}
            if fail.resets_in_s is not None:
                error = usage_limit_error(fail, time.time())
            if not fail.in_stream:
                ex.send_json(fail.status, {"error": error}, headers=fail.headers)
                return
            ex.start_events()
            response_id = f"resp_fake_{next(self._ids)}"
            ex.event({"type": "response.created", "response": {"id": response_id, "status": "in_progress"}},
                     name="response.created")
            ex.event({"type": "response.failed", "response": {
                "id": response_id, "object": "response", "model": model, "status": "failed", "output": [],
                "error": error}}, name="response.failed")
            return
        self._stream(ex, steps, model, max(1, len(str(body)) // 4))

    def _stream(self, ex: Exchange, steps: list[Step], model: str, input_tokens: int) -> None:
        response_id = f"resp_fake_{next(self._ids)}"
        ex.start_events()

        def send(name: str, payload: dict[str, Any]) -> None:
            ex.event({"type": name, **payload}, name=name)

        send("response.created", {"response": {"id": response_id, "object": "response", "model": model,
                                                "status": "in_progress", "output": []}})
        output_tokens = 0
        for index, step in enumerate(steps):
            item_id = f"item_fake_{next(self._ids)}"
            if isinstance(step, Pause):
                ex.sleep(step.seconds)
            elif isinstance(step, Think):
                send("response.output_item.added", {"output_index": index, "item": {
                    "type": "reasoning", "id": item_id, "summary": []}})
                send("response.reasoning_summary_part.added", {"item_id": item_id, "output_index": index,
                                                               "summary_index": 0,
                                                               "part": {"type": "summary_text", "text": ""}})
                summary = ""
                for piece in step.chunks():
                    ex.sleep(step.delay_s)
                    summary += piece
                    send("response.reasoning_summary_text.delta", {"item_id": item_id, "output_index": index,
                                                                   "summary_index": 0, "delta": piece})
                    output_tokens += 1
                send("response.reasoning_summary_text.done", {"item_id": item_id, "output_index": index,
                                                              "summary_index": 0, "text": summary})
                send("response.output_item.done", {"output_index": index, "item": {
                    "type": "reasoning", "id": item_id,
                    "summary": [{"type": "summary_text", "text": summary.strip()}]}})
            elif isinstance(step, Say):
                send("response.output_item.added", {"output_index": index, "item": {
                    "type": "message", "id": item_id, "role": "assistant", "status": "in_progress",
                    "content": []}})
                send("response.content_part.added", {"item_id": item_id, "output_index": index,
                                                     "content_index": 0,
                                                     "part": {"type": "output_text", "text": "", "annotations": []}})
                for piece in step.chunks():
                    ex.sleep(step.delay_s)
                    send("response.output_text.delta", {"item_id": item_id, "output_index": index,
                                                        "content_index": 0, "delta": piece})
                    output_tokens += 1
                send("response.output_text.done", {"item_id": item_id, "output_index": index,
                                                   "content_index": 0, "text": step.text})
                send("response.output_item.done", {"output_index": index, "item": {
                    "type": "message", "id": item_id, "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": step.text, "annotations": []}]}})
            elif isinstance(step, Call):
                call_id = step.call_id or f"call_fake_{next(self._ids)}"
                item = {"type": "function_call", "id": item_id, "call_id": call_id, **_function_name(step.name),
                        "arguments": "", "status": "in_progress"}
                send("response.output_item.added", {"output_index": index, "item": item})
                for piece in step.json_chunks():
                    ex.sleep(step.delay_s)
                    send("response.function_call_arguments.delta", {"item_id": item_id, "output_index": index,
                                                                    "delta": piece})
                    output_tokens += 2
                send("response.function_call_arguments.done", {"item_id": item_id, "output_index": index,
                                                               "arguments": step.arguments_json()})
                send("response.output_item.done", {"output_index": index, "item": {
                    **item, "arguments": step.arguments_json(), "status": "completed"}})
        usage = {"input_tokens": input_tokens, "input_tokens_details": {"cached_tokens": 0},
                 "output_tokens": output_tokens, "output_tokens_details": {"reasoning_tokens": 0},
                 "total_tokens": input_tokens + output_tokens}
        ex.record.usage = usage  # before the CLI can see the end, so a test that saw it end finds it
        send("response.completed", {"response": {
            "id": response_id, "object": "response", "model": model, "status": "completed", "output": [],
            "usage": usage}})


def usage_limit_error(fail: Fail, now: float) -> dict[str, Any]:
    """The body's `error` of a ChatGPT plan's usage limit as Codex reads it: type
    `usage_limit_reached`, the plan, and when the limit resets (`resets_at`, epoch seconds, and
    `resets_in_seconds`)."""
    seconds = max(0, math.ceil(fail.resets_in_s or 0))
    return {"type": "usage_limit_reached", "message": fail.message, "plan_type": "plus",
            "resets_at": int(now) + seconds, "resets_in_seconds": seconds}


def _function_name(name: str) -> dict[str, str]:
    """`name`, or for `mcp__<server>__<tool>` the tool and its namespace `mcp__<server>`."""
    server, sep, tool = name.removeprefix("mcp__").partition("__")
    if name.startswith("mcp__") and server and sep and tool:
        return {"name": tool, "namespace": f"mcp__{server}"}
    return {"name": name}
