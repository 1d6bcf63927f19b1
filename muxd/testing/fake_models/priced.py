"""What the scripted fake model servers' usage costs by genai-prices: the figure muxd's
estimate of an execution must equal, request by request (the real-agent cost tests)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest
from genai_prices import Usage, calc_price

from muxd.testing.fake_models._http import FakeModelServer
from muxd.testing.fake_models.script import RecordedRequest


def usage_of(request: RecordedRequest) -> Usage:
    """The fake's reported usage in genai-prices' terms (input counts cache reads and writes)."""
    u: dict[str, Any] = request.usage or {}
    if "promptTokenCount" in u:  # Gemini
        return Usage(input_tokens=u["promptTokenCount"], output_tokens=u["candidatesTokenCount"])
    if "cache_creation_input_tokens" in u:  # Anthropic
        written, read = u["cache_creation_input_tokens"], u["cache_read_input_tokens"]
        return Usage(input_tokens=u["input_tokens"] + written + read, output_tokens=u["output_tokens"],
                     cache_read_tokens=read, cache_write_tokens=written)
    return Usage(input_tokens=u["input_tokens"], output_tokens=u["output_tokens"],  # OpenAI Responses
                 cache_read_tokens=u["input_tokens_details"]["cached_tokens"])


def expected_cost(requests: list[RecordedRequest], model: str, started_at: str) -> float:
    when = dt.datetime.fromisoformat(started_at.replace("Z", "+00:00"))
    return float(sum((calc_price(usage_of(r), model, genai_request_timestamp=when).total_price
                      for r in requests if r.usage), Decimal(0)))


def model_of(request: RecordedRequest) -> str:
    """The model the CLI asked the fake for (and the fake answered as)."""
    if isinstance(request.body, dict) and request.body.get("model"):
        return str(request.body["model"])
    return request.path.split("/models/")[1].split(":")[0]  # Gemini names it in the path


def assert_estimated(done: dict, fake: FakeModelServer, answer: str) -> None:
    """`done` (an execution's detail) succeeded with `answer`, priced as muxd's estimate of `fake`'s usage."""
    requests = fake.main_requests()
    model = model_of(requests[-1])
    assert done["status"] == "success" and done["response"] == answer, done
    assert (done["cost_source"], done["cost_model"]) == ("estimate", model), done
    assert done["cost_price_date"] == done["started_at"][:10]
    assert done["cost_usd"] > 0 and done["sources"]["cost_usd"] == "session_log"
    assert done["cost_usd"] == pytest.approx(expected_cost(requests, model, done["started_at"]), abs=1e-6)
