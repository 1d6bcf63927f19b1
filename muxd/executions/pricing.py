"""What a turn cost in dollars when the agent does not say: its API calls' exact token counts
(from the agent's session log) priced with `genai-prices`, a maintained table of model prices
that also keeps their history (a price that changed is applied as of the day of the call).

    estimate = estimate_cost("claude-sonnet-4-5", facts.call_tokens, started_at)
    # CostEstimate(cost_usd=0.0123, model="claude-sonnet-4-5", price_date="2026-11-28") or None

None whenever a figure would be a guess: no model named, a model (or provider) the table does
not know (for any of the calls), no call with usage. Each call is priced on its own, as the
model that answered it where the log says (a subagent's cheaper model, Gemini's routing): a
long-context tier applies to one request's prompt, not to a turn's sum.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Sequence

import msgspec

from muxd.executions.record import COST_DECIMALS
from muxd.executions.session_logs.facts import CallTokens

log = logging.getLogger(__name__)


class CostEstimate(msgspec.Struct, frozen=True, kw_only=True):
    cost_usd: float
    model: str        # the turn's model as the agent's log names it (its last answer's)
    price_date: str   # ISO date (UTC) whose prices were applied


def estimate_cost(model: str | None, calls: Sequence[CallTokens], at: float) -> CostEstimate | None:
    """The price of `calls` made to `model` on the day of `at` (epoch seconds), or None (see above)."""
    if not model or not calls:
        return None
    when = dt.datetime.fromtimestamp(at, dt.timezone.utc)
    try:
        from genai_prices import Usage, calc_price  # its price table is large: loaded on first use

        # genai-prices counts cache reads and writes inside input_tokens, as TurnFacts does.
        total = sum(calc_price(Usage(input_tokens=call.input, output_tokens=call.output,
                                     cache_read_tokens=call.cache_read, cache_write_tokens=call.cache_write),
                               call.model or model, genai_request_timestamp=when).total_price for call in calls)
    except LookupError:  # a model or provider the table does not know: unknown, not zero
        return None
    except Exception as exc:  # noqa: BLE001 - a broken price table must not fail the execution
        log.warning("no cost estimate for %s: the price table failed (%s)", model, exc)
        return None
    return CostEstimate(cost_usd=round(float(total), COST_DECIMALS), model=model, price_date=when.date().isoformat())
