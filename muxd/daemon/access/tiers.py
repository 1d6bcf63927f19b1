"""Permission tiers and risk levels (seed 004), and the one rule that joins them.

Pure: the daemon (every protocol request) and the MCP server (every tool, failing fast) both
ask `check_tier`, so a tool and the request behind it can never disagree.
"""

from __future__ import annotations

from typing import Literal

from muxd.errors import BadRequest, Forbidden

Tier = Literal["view_only", "execute_basic", "execute_advanced", "admin"]
TIERS: tuple[Tier, ...] = ("view_only", "execute_basic", "execute_advanced", "admin")
# "admin" risk: server and token administration, for unscoped admins only.
Risk = Literal["safe", "moderate", "dangerous", "admin"]
UNKNOWN_RISK: Risk = "dangerous"

_TIER_FOR_RISK: dict[str, Tier] = {
    "safe": "execute_basic",
    "moderate": "execute_advanced",
    "dangerous": "admin",
    "admin": "admin",
}


def parse_tier(value: str) -> Tier:
    if value not in TIERS:
        raise BadRequest(f"unknown tier {value!r}: use one of {', '.join(TIERS)}", field="tier")
    return value  # type: ignore[return-value]


def tier_rank(tier: str) -> int:
    return TIERS.index(tier) if tier in TIERS else -1  # type: ignore[arg-type]


def tier_needed(risk: str, read_only: bool = False) -> Tier:
    """The lowest tier allowed to do something of `risk`; read-only views need only view_only."""
    if read_only and risk == "safe":
        return "view_only"
    return _TIER_FOR_RISK.get(risk, "admin")


def check_tier(principal: str, tier: str, what: str, risk: str, read_only: bool = False) -> None:
    """Return when `tier` may do `what`; else Forbidden naming the tier it needs."""
    needed = tier_needed(risk, read_only)
    if tier_rank(tier) < tier_rank(needed):
        raise Forbidden(f"{what} is {risk}: it needs tier {needed} or higher; {principal} has {tier}",
                        needed_tier=needed, tier=tier, risk=risk, action=what)
