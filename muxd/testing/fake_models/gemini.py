"""Fake Gemini API (Gemini CLI): `POST /v1beta/models/<m>:streamGenerateContent?alt=sse`
(the main loop, as SSE), `:generateContent` (side requests that want JSON: next-speaker
checks, model routing), `:countTokens`."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from muxd.testing.fake_models._http import Exchange, FakeModelServer
from muxd.testing.fake_models.script import Call, Fail, Pause, Say, Step, Think

ERROR_STATUSES = {400: "INVALID_ARGUMENT", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE",
                  529: "UNAVAILABLE"}
DAILY_QUOTA_S = 3600  # a quota that resets this far ahead is a daily one
# Answers for the JSON side requests, by property name; others get a value of their type.
SIDE_ANSWERS: dict[str, Any] = {"next_speaker": "user", "reasoning": "fake", "model_choice": "flash"}


class GeminiFake(FakeModelServer):
    """`Think` is a silent pause here: the CLI keeps showing "Thinking..." while it waits,
    as in the corpus recordings (thought parts would put a thought subject there instead)."""

    api = "gemini"

    def route(self, exchange: Exchange) -> Callable[[Exchange], None] | None:
        if exchange.method != "POST" or ":" not in exchange.path:
            return None
        action = exchange.path.rsplit(":", 1)[1]
        if action == "streamGenerateContent":
            return self._stream_generate
        if action == "generateContent":
            return _generate
        if action == "countTokens":
            return lambda ex: ex.send_json(200, {"totalTokens": _estimate_tokens(ex.body)})
        return None

    def _stream_generate(self, ex: Exchange) -> None:
        steps = ex.take_turn()
        fail = ex.failure(steps)
        if fail is not None:
            error = {"code": fail.status, "message": fail.message,
                     "status": fail.code or ERROR_STATUSES.get(fail.status, "INTERNAL")}
            if fail.resets_in_s is not None:
                error = quota_error(fail, _model_of(ex.path))
            ex.send_json(fail.status, {"error": error}, headers=fail.headers)
            return
        self._stream(ex, steps, _model_of(ex.path), _estimate_tokens(ex.body))

    def _stream(self, ex: Exchange, steps: list[Step], model: str, prompt_tokens: int) -> None:
        ex.start_events()
        output_tokens = 0

        def send(parts: list[dict[str, Any]], finish: str | None = None) -> None:
            candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
            if finish:
                candidate["finishReason"] = finish
            ex.chunk("data: " + json.dumps({
                "candidates": [candidate], "modelVersion": model,
                "usageMetadata": {"promptTokenCount": prompt_tokens, "candidatesTokenCount": output_tokens,
                                  "totalTokenCount": prompt_tokens + output_tokens}}) + "\r\n\r\n")

        for step in steps:
            if isinstance(step, Pause):
                ex.sleep(step.seconds)
            elif isinstance(step, Think):
                ex.sleep(step.tokens * step.delay_s)
            elif isinstance(step, Say):
                for piece in step.chunks():
                    ex.sleep(step.delay_s)
                    output_tokens += 1
                    send([{"text": piece}])
            elif isinstance(step, Call):
                ex.sleep(step.delay_s)
                output_tokens += 5
                send([{"functionCall": {"name": step.name, "args": step.args}}])
        ex.record.usage = {"promptTokenCount": prompt_tokens, "candidatesTokenCount": output_tokens,
                           "totalTokenCount": prompt_tokens + output_tokens}
        send([{"text": ""}], finish="STOP")


def quota_error(fail: Fail, model: str) -> dict[str, Any]:
    """The `error` of a 429 quota as the Gemini API words it: RESOURCE_EXHAUSTED, the quota
    broken (`QuotaFailure`: a daily one when the wait is DAILY_QUOTA_S or more, else one per
    minute) and the wait (`RetryInfo.retryDelay`, also said in the message's last line)."""
    seconds = max(0, math.ceil(fail.resets_in_s or 0))
    period = "PerDay" if seconds >= DAILY_QUOTA_S else "PerMinute"
    message = (f"{fail.message}\n* Quota exceeded for metric: generativelanguage.googleapis.com/"
               f"generate_content_free_tier_requests, limit: 10, model: {model}\nPlease retry in {seconds}s.")
    return {"code": 429, "message": message, "status": "RESOURCE_EXHAUSTED", "details": [
        {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{
            "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
            "quotaId": f"GenerateRequests{period}PerProjectPerModel-FreeTier",
            "quotaDimensions": {"location": "global", "model": model}, "quotaValue": "10"}]},
        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{seconds}s"}]}


def _generate(ex: Exchange) -> None:
    body = ex.body if isinstance(ex.body, dict) else {}
    config = body.get("generationConfig") or body.get("config") or {}
    schema = config.get("responseJsonSchema") or config.get("responseSchema")
    text = json.dumps(_answer(schema)) if schema else "OK"
    ex.send_json(200, {"candidates": [{"content": {"parts": [{"text": text}], "role": "model"},
                                       "finishReason": "STOP", "index": 0}],
                       "modelVersion": _model_of(ex.path),
                       "usageMetadata": {"promptTokenCount": _estimate_tokens(body), "candidatesTokenCount": 10,
                                         "totalTokenCount": _estimate_tokens(body) + 10}})


def _answer(schema: dict[str, Any], name: str = "") -> Any:
    """A value matching `schema` (JSON Schema or Gemini's upper-case variant)."""
    if name in SIDE_ANSWERS and (not schema.get("enum") or SIDE_ANSWERS[name] in schema["enum"]):
        return SIDE_ANSWERS[name]
    if schema.get("enum"):
        return schema["enum"][0]
    kind = str(schema.get("type", "object")).lower()
    if kind == "object":
        return {key: _answer(sub, key) for key, sub in (schema.get("properties") or {}).items()}
    if kind == "array":
        return []
    if kind == "boolean":
        return False
    if kind in ("integer", "number"):
        return 0
    return "fake"


def _model_of(path: str) -> str:
    return path.rsplit("/", 1)[-1].split(":", 1)[0]


def _estimate_tokens(body: Any) -> int:
    return max(1, len(str(body)) // 4)
