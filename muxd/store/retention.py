"""How much execution history to keep: the config defaults, overridden by the environment.

    MUXD_HISTORY_KEEP_DAYS     ended executions older than this are pruned (days, ≥ 1)
    MUXD_HISTORY_KEEP_ROWS     and those beyond the newest this many (rows, ≥ 1)
    MUXD_TRANSCRIPT_MAX_BYTES  raw output bytes kept per execution (0 keeps none)
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from muxd.config import (EXECUTIONS_KEEP_DAYS, EXECUTIONS_KEEP_ROWS, TRANSCRIPT_MAX_BYTES,
                         TRANSCRIPT_MAX_BYTES_MAX)
from muxd.errors import BadRequest

ENV_KEEP_DAYS = "MUXD_HISTORY_KEEP_DAYS"
ENV_KEEP_ROWS = "MUXD_HISTORY_KEEP_ROWS"
ENV_TRANSCRIPT_MAX_BYTES = "MUXD_TRANSCRIPT_MAX_BYTES"
SECONDS_PER_DAY = 86_400


class Retention(msgspec.Struct, frozen=True):
    keep_days: int = EXECUTIONS_KEEP_DAYS
    keep_rows: int = EXECUTIONS_KEEP_ROWS
    transcript_max_bytes: int = TRANSCRIPT_MAX_BYTES

    def older_than(self, now: float) -> float:
        """The epoch second before which ended executions are pruned."""
        return now - self.keep_days * SECONDS_PER_DAY


def whole_number(env: Mapping[str, str], name: str, default: int, low: int, high: int | None,
                 unit: str) -> int:
    """The whole number `env[name]` gives (unset or empty: `default`); bad_request out of bounds."""
    text = env.get(name, "").strip().replace("_", "")
    if not text:
        return default
    try:
        value = int(text)
    except ValueError:
        raise BadRequest(f"{name} must be a whole number of {unit}, got {env[name]!r}") from None
    if value < low or (high is not None and value > high):
        bounds = f"at least {low}" if high is None else f"in {low}..{high}"
        raise BadRequest(f"{name} must be {bounds} {unit}, got {value}")
    return value


def retention_from_env(env: Mapping[str, str]) -> Retention:
    """The retention `env` asks for (unset or empty: the defaults); bad_request names the variable."""
    return Retention(
        keep_days=whole_number(env, ENV_KEEP_DAYS, EXECUTIONS_KEEP_DAYS, 1, None, "days"),
        keep_rows=whole_number(env, ENV_KEEP_ROWS, EXECUTIONS_KEEP_ROWS, 1, None, "rows"),
        transcript_max_bytes=whole_number(env, ENV_TRANSCRIPT_MAX_BYTES, TRANSCRIPT_MAX_BYTES, 0,
                                           TRANSCRIPT_MAX_BYTES_MAX, "bytes"),
    )
