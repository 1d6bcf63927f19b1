"""A turn stopped by a usage limit, as the detectors and the hooks tell it: which errors say so
(`LIMIT_KINDS`), the `UsageLimit` an error's words give (`usage_limit`), and a detection of an
agent at rest turned into one stopped by its limit (`limited`).

A rate limit the agent gave up retrying (HTTP 429, "Rate limited") stops the turn as a plan's
usage limit does ("You've hit your 5-hour limit", "exhausted your daily quota"): the agent
waits, and what it is given before the limit lifts fails the same way. Both are UsageLimited;
the error's type (`rate_limited`, `usage_limit`) tells them apart.
"""

from __future__ import annotations

from msgspec.structs import replace

from muxd.detectors._agent_cli import error_kind
from muxd.detectors.reset_time import reset_at
from muxd.detectors.state import LIMIT_KINDS, AgentError, Confirmation, Detection, UsageLimit


def usage_limit(message: str, now: float, *elsewhere: str | None) -> UsageLimit | None:
    """The limit `message` (an error the agent shows, one line) says stopped the agent, with
    the reset it names (or the first of the lines `elsewhere` that names one), else None."""
    if error_kind(message) not in LIMIT_KINDS:
        return None
    resets_at = next((at for text in (message, *elsewhere) if text and (at := reset_at(text, now)) is not None), None)
    return UsageLimit(message=message, resets_at=resets_at)


def limited(found: Detection, limit: UsageLimit, rule: str, *,
            confirmation: Confirmation | None = None) -> Detection:
    """`found` (the agent at rest, or a dialog) as the agent stopped by `limit`: UsageLimited,
    with the limit as its error too (so that a reader of errors alone still sees why)."""
    return replace(found, state="UsageLimited", rule=rule, line=limit.message, limit=limit,
                   error=AgentError(type=error_kind(limit.message), message=limit.message),
                   confirmation=confirmation if confirmation is not None else found.confirmation)
