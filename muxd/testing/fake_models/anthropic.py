"""Fake Anthropic Messages API (Claude Code): `POST /v1/messages` streamed as SSE,
`POST /v1/messages/count_tokens`, `GET /v1/models`."""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable
from typing import Any

from muxd.testing.fake_models._http import Exchange, FakeModelServer
from muxd.testing.fake_models.script import Call, Fail, Pause, Say, Step, Think

MODEL_ID = "claude-opus-4-5"
ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 429: "rate_limit_error",
               500: "api_error", 503: "api_error", 529: "overloaded_error"}


class AnthropicFake(FakeModelServer):
    """Main-loop requests (streaming, with tools) play the script; side requests (titles,
    quota checks) get a one-word answer and never take a turn."""

    api = "anthropic"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._ids = itertools.count(1)

    def route(self, exchange: Exchange) -> Callable[[Exchange], None] | None:
        path = exchange.path.rstrip("/")
        if exchange.method == "POST" and path == "/v1/messages/count_tokens":
            return lambda ex: ex.send_json(200, {"input_tokens": _estimate_tokens(ex.body)})
        if exchange.method == "POST" and path == "/v1/messages":
            return self._messages
        if exchange.method == "GET" and path == "/v1/models":
            return _models
        return None

    def _messages(self, ex: Exchange) -> None:
        body = ex.body if isinstance(ex.body, dict) else {}
        is_main = bool(body.get("stream")) and bool(body.get("tools"))
        steps: list[Step] = ex.take_turn() if is_main else [Say("OK", delay_s=0)]
        fail = ex.failure(steps)
        if fail is not None:
            error = {"type": fail.code or ERROR_TYPES.get(fail.status, "api_error"), "message": fail.message}
            headers = fail.headers if fail.resets_in_s is None else {**limit_headers(fail, time.time()), **fail.headers}
            ex.send_json(fail.status, {"type": "error", "error": error}, headers=headers)
            return
        message_id = f"msg_fake_{next(self._ids)}"
        model = body.get("model") or MODEL_ID
        if not body.get("stream"):
            text = "".join(c for s in steps if isinstance(s, Say) for c in s.chunks())
            ex.send_json(200, {"id": message_id, "type": "message", "role": "assistant", "model": model,
                               "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
                               "stop_sequence": None, "usage": {"input_tokens": _estimate_tokens(body),
                                                                "output_tokens": len(text) // 4 + 1}})
            return
        self._stream(ex, steps, message_id, model, _estimate_tokens(body))

    def _stream(self, ex: Exchange, steps: list[Step], message_id: str, model: str,
                input_tokens: int) -> None:
        ex.start_events()

        def send(name: str, payload: dict[str, Any]) -> None:
            ex.event({"type": name, **payload}, name=name)

        send("message_start", {"message": {
            "id": message_id, "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": 1,
                      "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}})
        index, output_tokens, stop_reason = 0, 1, "end_turn"
        for step in steps:
            if isinstance(step, Pause):
                ex.sleep(step.seconds)
                continue
            if isinstance(step, Think):
                send("content_block_start", {"index": index,
                                             "content_block": {"type": "thinking", "thinking": "", "signature": ""}})
                for piece in step.chunks():
                    ex.sleep(step.delay_s)
                    send("content_block_delta", {"index": index,
                                                 "delta": {"type": "thinking_delta", "thinking": piece}})
                    output_tokens += 1
                send("content_block_delta", {"index": index,
                                             "delta": {"type": "signature_delta", "signature": "fake-signature"}})
            elif isinstance(step, Say):
                send("content_block_start", {"index": index, "content_block": {"type": "text", "text": ""}})
                for piece in step.chunks():
                    ex.sleep(step.delay_s)
                    send("content_block_delta", {"index": index, "delta": {"type": "text_delta", "text": piece}})
                    output_tokens += 1
            elif isinstance(step, Call):
                call_id = step.call_id or f"toolu_fake_{next(self._ids)}"
                send("content_block_start", {"index": index, "content_block": {
                    "type": "tool_use", "id": call_id, "name": step.name, "input": {}}})
                for piece in step.json_chunks():
                    ex.sleep(step.delay_s)
                    send("content_block_delta", {"index": index,
                                                 "delta": {"type": "input_json_delta", "partial_json": piece}})
                    output_tokens += 2
                stop_reason = "tool_use"
            send("content_block_stop", {"index": index})
            index += 1
        # Recorded before the CLI can see the end, so a test that saw the turn end finds it.
        ex.record.usage = {"input_tokens": input_tokens, "output_tokens": output_tokens,
                           "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        send("message_delta", {"delta": {"stop_reason": stop_reason, "stop_sequence": None},
                               "usage": {"output_tokens": output_tokens}})
        send("message_stop", {})


def limit_headers(fail: Fail, now: float) -> dict[str, str]:
    """The headers of a subscription's usage limit as Claude Code reads them: the unified limit
    `rejected`, when it resets (epoch seconds), which limit it is (`five_hour`; a `Fail`'s own
    headers may say `seven_day`…) and `retry-after` in seconds."""
    seconds = max(0, math.ceil(fail.resets_in_s or 0))
    return {"retry-after": str(seconds), "anthropic-ratelimit-unified-status": "rejected",
            "anthropic-ratelimit-unified-reset": str(int(now) + seconds),
            "anthropic-ratelimit-unified-representative-claim": "five_hour"}


def _models(ex: Exchange) -> None:
    ex.send_json(200, {"data": [{"type": "model", "id": MODEL_ID, "display_name": "Claude Opus (fake)",
                                 "created_at": "2025-01-01T00:00:00Z"}],
                       "has_more": False, "first_id": MODEL_ID, "last_id": MODEL_ID})


def _estimate_tokens(body: Any) -> int:
    """About four characters a token, as the real APIs count roughly."""
    return max(1, len(str(body)) // 4)
