"""Cost where the agent shows none: the session log's per-call token counts priced with
genai-prices (muxd/executions/pricing.py), marked `estimate` with the model and the price date;
the agent's own figure stays `agent`; an unknown model stays unknown. Expected figures are
computed here from the genai-prices package itself, request by request."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest
from genai_prices import Usage, calc_price

from muxd.daemon.work import execution_finish
from muxd.daemon.work.execution_finish import TurnSnapshot
from muxd.daemon.work.session_log_finder import SessionLogs
from muxd.detectors.state import Activity, AgentState, AgentSession
from muxd.executions.pricing import estimate_cost
from muxd.executions.record import Execution, new_execution_id
from muxd.executions.session_logs import PARSERS, SessionLogCursor
from muxd.executions.session_logs.facts import CallTokens
from muxd.executions.tracker import ExecutionTracker, Finish
from muxd.testing.patience import stretched

DATA = Path(__file__).parent / "session_log_data"
LOGS = {"claude": "claude.jsonl", "codex": "codex.jsonl", "gemini": "gemini.jsonl", "aider": "aider.chat.history.md"}
NOV_1 = dt.datetime(2026, 11, 1, 12, tzinfo=dt.timezone.utc)


def priced(model: str, calls: list[CallTokens], when: dt.datetime) -> Decimal:
    """What genai-prices says `calls` cost, each request on its own."""
    return sum((calc_price(Usage(input_tokens=c.input, output_tokens=c.output, cache_read_tokens=c.cache_read,
                                 cache_write_tokens=c.cache_write), model, genai_request_timestamp=when).total_price
                for c in calls), Decimal(0))


# ---------------------------------------------------------------- pricing.estimate_cost

@pytest.mark.parametrize("model", ["claude-opus-5-5", "gpt-5-codex", "gemini-3.1-pro-preview"])
def test_an_estimate_is_the_price_tables_figure_for_each_call(model):
    calls = [CallTokens(input=13_863, output=11), CallTokens(input=20_000, output=900, cache_read=12_000),
             CallTokens(input=5_000, output=40, cache_write=4_000)]
    got = estimate_cost(model, calls, NOV_1.timestamp())
    assert got is not None and got.cost_usd > 0
    assert got.cost_usd == pytest.approx(float(priced(model, calls, NOV_1)), abs=1e-6)
    assert (got.model, got.price_date) == (model, "2026-11-01")


def test_cache_reads_cost_less_than_fresh_input():
    fresh = estimate_cost("claude-opus-4-5", [CallTokens(input=1_000_000)], NOV_1.timestamp())
    cached = estimate_cost("claude-opus-4-5", [CallTokens(input=1_000_000, cache_read=1_000_000)], NOV_1.timestamp())
    assert fresh is not None and cached is not None
    assert cached.cost_usd < fresh.cost_usd / 5  # Anthropic bills a cache read at a tenth of fresh input


def test_each_call_is_priced_alone_so_a_long_context_tier_applies_per_request():
    """Two 150k-token requests are not one 300k request: the over-200k tier must not apply."""
    two = [CallTokens(input=150_000), CallTokens(input=150_000)]
    got = estimate_cost("gemini-2.5-pro", two, NOV_1.timestamp())
    one = estimate_cost("gemini-2.5-pro", [CallTokens(input=300_000)], NOV_1.timestamp())
    assert got is not None and one is not None
    assert got.cost_usd == pytest.approx(float(priced("gemini-2.5-pro", two, NOV_1)))
    assert got.cost_usd < one.cost_usd


def test_prices_are_those_in_force_on_the_day_of_the_execution():
    """claude-sonnet-4-6's long-context surcharge ended on 2026-03-13 (genai-prices' history)."""
    call = [CallTokens(input=300_000, output=1_000)]
    before = dt.datetime(2026, 3, 1, tzinfo=dt.timezone.utc)
    after = dt.datetime(2026, 4, 1, tzinfo=dt.timezone.utc)
    early, late = (estimate_cost("claude-sonnet-4-6", call, t.timestamp()) for t in (before, after))
    assert early is not None and late is not None
    assert (early.price_date, late.price_date) == ("2026-03-01", "2026-04-01")
    assert early.cost_usd == pytest.approx(float(priced("claude-sonnet-4-6", call, before)))
    assert late.cost_usd == pytest.approx(float(priced("claude-sonnet-4-6", call, after)))
    assert early.cost_usd > late.cost_usd


def test_each_call_is_priced_as_the_model_that_answered_it():
    """A subagent on a cheaper model, or Gemini routing a request to Flash: that call at its model's prices."""
    calls = [CallTokens(input=40_000, output=500), CallTokens(input=40_000, output=500, model="claude-haiku-4-5")]
    got = estimate_cost("claude-opus-4-5", calls, NOV_1.timestamp())
    want = priced("claude-opus-4-5", calls[:1], NOV_1) + priced("claude-haiku-4-5", calls[1:], NOV_1)
    assert got is not None and got.cost_usd == pytest.approx(float(want), abs=1e-6)
    assert got.cost_usd < float(priced("claude-opus-4-5", [CallTokens(input=40_000, output=500)] * 2, NOV_1))
    assert estimate_cost("claude-opus-4-5", [calls[0], CallTokens(input=1, model="fake-model")],
                         NOV_1.timestamp()) is None  # one call unpriceable: the turn's cost is unknown


def test_claude_codes_log_names_each_calls_model_subagents_included():
    def line(**record: object) -> bytes:
        return json.dumps({"sessionId": "s1", **record}).encode() + b"\n"

    def answer(message_id: str, model: str, text: str, **extra: object) -> bytes:
        return line(type="assistant", message={"id": message_id, "model": model, "stop_reason": "end_turn",
                                               "content": [{"type": "text", "text": text}],
                                               "usage": {"input_tokens": 100, "output_tokens": 10}}, **extra)

    data = (line(type="user", message={"role": "user", "content": "explore"})
            + answer("m1", "claude-haiku-4-5", "found it", isSidechain=True)
            + answer("m2", "claude-opus-4-5", "Done.")
            + line(type="system", subtype="turn_duration"))
    facts = PARSERS["claude"](data)
    assert facts.model == "claude-opus-4-5" and facts.response == "Done."
    assert [call.model for call in facts.call_tokens] == ["claude-haiku-4-5", "claude-opus-4-5"]


@pytest.mark.parametrize("model,calls", [
    ("fake-model", [CallTokens(input=100, output=10)]),          # a model the table does not know
    ("openai/fake-model", [CallTokens(input=100, output=10)]),
    (None, [CallTokens(input=100, output=10)]),                  # the log named no model
    ("", [CallTokens(input=100, output=10)]),
    ("claude-opus-5-5", []),                                     # no call with usage
])
def test_no_estimate_where_it_would_be_a_guess(model, calls):
    assert estimate_cost(model, calls, NOV_1.timestamp()) is None


# ---------------------------------------------------------------- the parsers' per-call counts

def captured_turns(agent: str) -> list[bytes]:
    """Each turn's bytes of a real CLI's captured session log (tests/session_log_data)."""
    data = (DATA / LOGS[agent]).read_bytes()
    starts = [t["start"] for t in json.loads((DATA / f"{agent}.turns.json").read_text())["turns"]]
    return [data[start:end] for start, end in zip(starts, starts[1:] + [len(data)])]


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini"])
def test_the_logs_of_real_clis_give_each_calls_tokens_and_the_model(agent):
    answered = [facts for data in captured_turns(agent) if (facts := PARSERS[agent](data)).api_calls]
    assert answered
    for facts in answered:
        assert facts.model and len(facts.call_tokens) == facts.api_calls
        assert sum(c.input for c in facts.call_tokens) == facts.input_tokens
        assert sum(c.output for c in facts.call_tokens) == facts.output_tokens
        assert estimate_cost(facts.model, facts.call_tokens, NOV_1.timestamp()) is not None


def test_aiders_rounded_counts_are_not_priced():
    counted = [facts for data in captured_turns("aider") if (facts := PARSERS["aider"](data)).tokens_used]
    assert counted and all(facts.call_tokens == [] for facts in counted)


# ---------------------------------------------------------------- finalize: estimate or the agent's figure

@pytest.fixture
def logs() -> Iterator[SessionLogs]:
    logs = SessionLogs()
    yield logs
    logs.close()


def _claude_turn() -> bytes:
    """The first turn of the captured Claude Code log (`say hello`)."""
    return captured_turns("claude")[0]


def _finish(logs: SessionLogs, tmp_path: Path, **fields: object) -> Execution:
    log = tmp_path / "session.jsonl"
    log.write_bytes(b"")

    def mark() -> SessionLogCursor:
        cursor = SessionLogCursor(log, "claude")
        cursor.mark()
        return cursor

    marked = logs.lanes.submit("%1", mark)
    marked.result(timeout=stretched(10))
    log.write_bytes(_claude_turn())  # what the agent appended during the turn
    now = time.time()
    ended = Execution(id=new_execution_id(), pane_id="%1", pane_key="r/%1", agent_name="w", agent_type="claude",
                      status="success", started_at=now - 3, completed_at=now, message="say hello", **fields)
    shot = TurnSnapshot(agent_type="claude", pid=os.getpid(), marked_log=marked)
    return asyncio.run(execution_finish.finalize(ended, shot, logs))


def test_a_turn_without_the_agents_figure_gets_the_estimate(logs, tmp_path):
    done = _finish(logs, tmp_path)
    facts = PARSERS["claude"](_claude_turn())
    today = dt.datetime.fromtimestamp(done.started_at or 0, dt.timezone.utc)
    assert (done.cost_source, done.cost_model) == ("estimate", "claude-opus-5-5")
    assert done.cost_price_date == today.date().isoformat()
    assert done.cost_usd == pytest.approx(float(priced("claude-opus-5-5", facts.call_tokens, today)), abs=1e-6)
    assert done.cost_usd > 0 and done.sources["cost_usd"] == "session_log"


def test_the_agents_own_figure_is_kept(logs, tmp_path):
    done = _finish(logs, tmp_path, cost_usd=0.0421, cost_source="agent", sources={"cost_usd": "screen"})
    assert (done.cost_usd, done.cost_source, done.cost_model, done.cost_price_date) == (0.0421, "agent", None, None)
    assert done.sources["cost_usd"] == "screen"


def test_the_tracker_marks_a_cost_the_agent_showed_as_the_agents():
    """A session cost on screen (Aider's `$0.05 session`, Claude's /cost): the turn's share of it."""
    tracker = ExecutionTracker("%1")
    idle = AgentState(agent_type="aider", activity=Activity(state="Idle"), session=AgentSession(cost_usd=0.10))
    busy = AgentState(agent_type="aider", activity=Activity(state="Thinking"), session=AgentSession(cost_usd=0.10))
    after = AgentState(agent_type="aider", activity=Activity(state="Idle"), session=AgentSession(cost_usd=0.13))
    tracker.state_changed(idle, 0.0)
    tracker.submit(Execution(id="exec_1_00000000", pane_id="%1", pane_key="r/%1", agent_name="w",
                             message="go"), 1.0)
    tracker.state_changed(busy, 2.0)
    tracker.state_changed(after, 3.0)
    [finish] = [e for e in tracker.tick(60.0) if isinstance(e, Finish)]
    assert finish.execution.cost_usd == pytest.approx(0.03)
    assert (finish.execution.cost_source, finish.execution.sources["cost_usd"]) == ("agent", "screen")
