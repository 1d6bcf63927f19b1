"""The guards' limits (rate, timeout, response size, waits), with units in their names.

Each guard limit can be lowered or raised for one `muxd mcp` process through an environment
variable (tests use them to hit a limit quickly); out-of-range values are a clear error.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from muxd.daemon.access.tiers import TIERS
from muxd.errors import BadRequest

# Token bucket per (principal, tool), after seed 003: 10 calls/s sustained, bursts of 20.
RATE_PER_S_DEFAULT = 10.0
RATE_BURST_DEFAULT = 20
# And per (principal, tool category), a budget a minute by the caller's tier, after seed 004's
# subscription tiers (its default is 100 a minute): a view_only token reads, an admin drives a fleet.
TIER_CALLS_PER_MIN_DEFAULT: dict[str, int] = {"view_only": 120, "execute_basic": 300, "execute_advanced": 600,
                                              "admin": 1200}
CATEGORY_CALLS_PER_MIN_DEFAULT: dict[str, int] = {}  # no category is capped below its tier's budget
CALLS_PER_MIN_MAX = 1_000_000
# Per-call timeout, after seed 004 (1 s - 5 min, default 30 s).
CALL_TIMEOUT_S_DEFAULT = 30.0
CALL_TIMEOUT_S_MIN = 1.0
CALL_TIMEOUT_S_MAX = 300.0
# Largest serialized tool result, after seed 003.
RESPONSE_MAX_BYTES_DEFAULT = 1024 * 1024
RESPONSE_MAX_BYTES_MIN = 1024

# wait_for
WAIT_TIMEOUT_S_DEFAULT = 30.0
WAIT_TIMEOUT_S_MIN = 0.1
WAIT_TIMEOUT_S_MAX = 300.0
# A wait without a timeout of its own ends this long before the per-call timeout would cancel it.
WAIT_CALL_MARGIN_S = 0.5
# The screen has no change events: a regex wait re-reads it this often (and on every state event).
WAIT_SCREEN_POLL_S = 0.2
WAIT_PATTERN_MAX_CHARS = 1000
# A wait's regex runs on RE2 (linear time; screen_pattern.py). Its cost per screen character
# grows with the compiled program, capped here: everyday patterns compile to 5-100 steps, and
# at the cap the worst patterns measured take ~0.1 s over WAIT_SCREEN_MAX_CHARS.
WAIT_PATTERN_PROGRAM_MAX = 500
WAIT_PATTERN_MEMORY_BYTES = 2 * 1024 * 1024  # RE2's budget per pattern being matched (program, DFA cache)
# RE2's budget when a pattern is first checked: far above WAIT_PATTERN_PROGRAM_MAX steps, and
# small enough that compiling a huge program gives up at once instead of taking ~1 s.
WAIT_PATTERN_COMPILE_MEMORY_BYTES = 64 * 1024
WAIT_SCREEN_MAX_CHARS = 64 * 1024  # of the bottom of the screen, per check
WAIT_MATCH_THREADS = 2  # threads matching waits' patterns, off the event loop, at most at once
WAIT_STATES_MAX = 16
WAIT_TARGETS_MAX = 100  # panes or executions one wait_for may name
# Progress notifications of a wait (to a caller that sent a progress token): one this often,
# and one after a state change, but never two closer than the gap; this many panes are named.
WAIT_PROGRESS_EVERY_S = 5.0
WAIT_PROGRESS_GAP_S = 0.5
WAIT_PROGRESS_PANES_SHOWN = 5

# The event stream (event_streams.py, event_resources.py).
EVENT_STREAMS_MAX = 64  # streams open at once on one MCP server, each one a daemon connection
EVENT_STREAM_BACKLOG_MAX = 1024  # notifications a stream holds for a client that is slow to read
EVENT_URIS_MAX = 100  # resources one stream or session may subscribe to
EVENTS_READ_MAX = 100  # events a read of muxd://events returns
PANE_EVENTS_READ_MAX = 20  # events a read of a pane's attention returns

ENV_RATE = "MUXD_MCP_RATE"  # calls per second per (principal, tool)
ENV_BURST = "MUXD_MCP_BURST"
ENV_TIMEOUT = "MUXD_MCP_TIMEOUT_S"
ENV_MAX_RESPONSE = "MUXD_MCP_MAX_RESPONSE_BYTES"
ENV_TIER_RATES = "MUXD_MCP_TIER_RATES"  # "view_only=60,admin=2000": calls a minute per category
ENV_CATEGORY_RATES = "MUXD_MCP_CATEGORY_RATES"  # "tasks=30": a category's cap a minute, whatever the tier


@dataclass(frozen=True, kw_only=True)
class GuardLimits:
    """The limits every tool call is held to."""

    rate_per_s: float = RATE_PER_S_DEFAULT
    burst: int = RATE_BURST_DEFAULT
    call_timeout_s: float = CALL_TIMEOUT_S_DEFAULT
    response_max_bytes: int = RESPONSE_MAX_BYTES_DEFAULT
    tier_calls_per_min: dict[str, int] = field(default_factory=lambda: dict(TIER_CALLS_PER_MIN_DEFAULT))
    category_calls_per_min: dict[str, int] = field(default_factory=lambda: dict(CATEGORY_CALLS_PER_MIN_DEFAULT))

    def __post_init__(self) -> None:
        for name, budgets in (("tier_calls_per_min", self.tier_calls_per_min),
                              ("category_calls_per_min", self.category_calls_per_min)):
            for key, count in budgets.items():
                if not 1 <= count <= CALLS_PER_MIN_MAX:
                    raise BadRequest(f"{name}: {key} must be 1..{CALLS_PER_MIN_MAX} calls a minute, got {count}",
                                     field=name)
        unknown = sorted(set(self.tier_calls_per_min) - set(TIERS))
        if unknown or not self.tier_calls_per_min:
            raise BadRequest(f"tier_calls_per_min: tiers are {', '.join(TIERS)}, got {', '.join(unknown) or 'none'}",
                             field="tier_calls_per_min")
        if not self.rate_per_s > 0:
            raise BadRequest(f"rate must be > 0 calls/s, got {self.rate_per_s}", field="rate_per_s")
        if self.burst < 1:
            raise BadRequest(f"burst must be >= 1, got {self.burst}", field="burst")
        if not CALL_TIMEOUT_S_MIN <= self.call_timeout_s <= CALL_TIMEOUT_S_MAX:
            raise BadRequest(f"call timeout must be between {CALL_TIMEOUT_S_MIN} and {CALL_TIMEOUT_S_MAX} s, "
                             f"got {self.call_timeout_s}", field="call_timeout_s")
        if self.response_max_bytes < RESPONSE_MAX_BYTES_MIN:
            raise BadRequest(f"response cap must be >= {RESPONSE_MAX_BYTES_MIN} bytes, "
                             f"got {self.response_max_bytes}", field="response_max_bytes")

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> GuardLimits:
        """The defaults, overridden by MUXD_MCP_RATE / _BURST / _TIMEOUT_S / _MAX_RESPONSE_BYTES /
        _TIER_RATES / _CATEGORY_RATES."""
        env = dict(os.environ) if env is None else env

        def number(name: str, default: float) -> float:
            raw = env.get(name)
            if raw is None or raw == "":
                return default
            try:
                return float(raw)
            except ValueError as exc:
                raise BadRequest(f"{name} must be a number, got {raw!r}", field=name) from exc

        return cls(rate_per_s=number(ENV_RATE, RATE_PER_S_DEFAULT),
                   burst=int(number(ENV_BURST, RATE_BURST_DEFAULT)),
                   call_timeout_s=number(ENV_TIMEOUT, CALL_TIMEOUT_S_DEFAULT),
                   response_max_bytes=int(number(ENV_MAX_RESPONSE, RESPONSE_MAX_BYTES_DEFAULT)),
                   tier_calls_per_min={**TIER_CALLS_PER_MIN_DEFAULT, **per_minute(env, ENV_TIER_RATES)},
                   category_calls_per_min={**CATEGORY_CALLS_PER_MIN_DEFAULT, **per_minute(env, ENV_CATEGORY_RATES)})


def per_minute(env: dict[str, str], name: str) -> dict[str, int]:
    """"view_only=60, admin=2000" from variable `name` as {key: calls a minute}; a bad_request naming it."""
    found: dict[str, int] = {}
    for item in filter(None, (part.strip() for part in env.get(name, "").split(","))):
        key, sep, count = item.partition("=")
        if not sep or not key.strip() or not count.strip().isdigit():
            raise BadRequest(f"{name} wants NAME=CALLS_PER_MINUTE[,…], got {item!r}", field=name)
        found[key.strip()] = int(count)
    return found
