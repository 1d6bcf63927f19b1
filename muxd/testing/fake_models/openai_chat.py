"""Fake OpenAI Chat Completions API (Aider, through litellm): `POST /v1/chat/completions`
streamed as chat-chunk SSE ending in `[DONE]`, or one JSON reply when not streaming."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from typing import Any

from muxd.testing.fake_models._http import Exchange, FakeModelServer
from muxd.testing.fake_models.script import Call, Pause, Say, Step, Think

MODEL_ID = "fake-model"
ERROR_TYPES = {429: "rate_limit_error", 500: "server_error", 503: "server_error", 529: "server_error"}


# The model a CLI is told to use for its side requests (opencode's session titles): those
# get a one-line answer and never take a turn.
SIDE_MODEL = "fake-small"
SIDE_REPLY = "Scripted session"


class OpenAIChatFake(FakeModelServer):
    """Every completion request takes a turn (Aider has no side requests in a short session),
    but for SIDE_MODEL's. `Think` is a silent pause here (Aider shows its waiting spinner
    until text arrives)."""

    api = "openai-chat"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._ids = itertools.count(1)

    def route(self, exchange: Exchange) -> Callable[[Exchange], None] | None:
        path = exchange.path.rstrip("/")
        if exchange.method == "POST" and path in ("/v1/chat/completions", "/chat/completions"):
            return self._completions
        if exchange.method == "GET" and path in ("/v1/models", "/models"):
            return lambda ex: ex.send_json(200, {"object": "list", "data": [
                {"id": MODEL_ID, "object": "model", "created": 0, "owned_by": "fake"}]})
        return None

    def _completions(self, ex: Exchange) -> None:
        side = isinstance(ex.body, dict) and ex.body.get("model") == SIDE_MODEL
        steps: list[Step] = [Say(SIDE_REPLY, delay_s=0)] if side else ex.take_turn()
        fail = ex.failure(steps)
        if fail is not None:
            ex.send_json(fail.status, {"error": {"message": fail.message,
                                                 "type": fail.code or ERROR_TYPES.get(fail.status, "server_error"),
                                                 "param": None, "code": None}}, headers=fail.headers)
            return
        body = ex.body if isinstance(ex.body, dict) else {}
        model = body.get("model") or MODEL_ID
        prompt_tokens = max(1, len(str(body.get("messages", ""))) // 4)
        completion_id = f"chatcmpl-fake{next(self._ids)}"
        if body.get("stream"):
            self._stream(ex, steps, completion_id, model, prompt_tokens)
            return
        text = "".join(s.text for s in steps if isinstance(s, Say))
        ex.send_json(200, {"id": completion_id, "object": "chat.completion", "created": int(time.time()),
                           "model": model, "choices": [{"index": 0, "finish_reason": "stop",
                                                        "message": {"role": "assistant", "content": text}}],
                           "usage": _usage(prompt_tokens, len(text.split()))})

    def _stream(self, ex: Exchange, steps: list[Step], completion_id: str, model: str,
                prompt_tokens: int) -> None:
        ex.start_events()
        created = int(time.time())

        def send(delta: dict[str, Any], finish: str | None = None, usage: dict[str, int] | None = None) -> None:
            chunk: dict[str, Any] = {"id": completion_id, "object": "chat.completion.chunk", "created": created,
                                     "model": model, "choices": [{"index": 0, "delta": delta,
                                                                  "finish_reason": finish}]}
            if usage is not None:
                chunk["usage"] = usage
            ex.event(chunk)

        send({"role": "assistant", "content": ""})
        completion_tokens, finish = 0, "stop"
        for step in steps:
            if isinstance(step, Pause):
                ex.sleep(step.seconds)
            elif isinstance(step, Think):
                ex.sleep(step.tokens * step.delay_s)
            elif isinstance(step, Say):
                for piece in step.chunks():
                    ex.sleep(step.delay_s)
                    send({"content": piece})
                    completion_tokens += 1
            elif isinstance(step, Call):
                call_id = step.call_id or f"call_fake_{next(self._ids)}"
                send({"tool_calls": [{"index": 0, "id": call_id, "type": "function",
                                      "function": {"name": step.name, "arguments": ""}}]})
                for piece in step.json_chunks():
                    ex.sleep(step.delay_s)
                    send({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
                    completion_tokens += 2
                finish = "tool_calls"
        ex.record.usage = _usage(prompt_tokens, completion_tokens)
        send({}, finish, ex.record.usage)
        ex.event("[DONE]")


def _usage(prompt: int, completion: int) -> dict[str, int]:
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
