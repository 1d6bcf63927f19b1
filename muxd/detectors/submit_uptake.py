"""A prompt just sent that the agent's screen does not show taken yet.

Some agents keep a screen that looks exactly like their prompt at rest for a while after Enter
(Kilo: up to ~2 s before its busy bar), so a reading of that screen says Idle while the turn is
starting. A detector (or a manifest, `submit_uptake_s`) that knows its agent does this sets
`submit_uptake_s`; the runner then reads such an Idle as Unknown until the screen shows
something else (a busy or asking state), or the window is over (an Enter on an empty prompt,
a slash command that draws nothing: the agent is at rest after all). The daemon looks at a
pane as soon as an Enter is written to it, and the runner tells this Unknown at that first
look (the Enter, not a flickering screen, made it: no second look to confirm it).

Pure: the facts are the frame's (`ScreenContext.last_input`, `input_at`, `now`) and the state
published before it.
"""

from __future__ import annotations

import msgspec

from muxd.detectors.base import ScreenContext
from muxd.detectors.state import AgentState, Detection

SUBMIT_UPTAKE_RULE = "submitted-not-taken"
SUBMIT_UPTAKE_MAX_S = 10.0  # the longest window a detector or manifest may ask for
_ENTER = (b"\r", b"\n")


def submitted_at(ctx: ScreenContext) -> float | None:
    """When the last input was sent (wall clock), if it ended with Enter; else None."""
    if ctx.input_at is None or not ctx.last_input.endswith(_ENTER):
        return None
    return ctx.input_at


def awaiting_uptake(ctx: ScreenContext, prev: AgentState | None, within_s: float) -> bool:
    """True while a prompt sent less than `within_s` ago has not been seen taken: no state
    since the Enter other than the rest it was sent from (Idle) or this same wait (Unknown)."""
    sent = submitted_at(ctx)
    if within_s <= 0 or sent is None or not 0 <= ctx.now - sent < within_s:
        return False
    if prev is None:
        return True
    state, since = prev.activity.state, prev.activity.since
    if state == "Unknown":
        return True
    return state == "Idle" and (since is None or since <= sent)


def held(detection: Detection, ctx: ScreenContext, prev: AgentState | None, within_s: float) -> Detection | None:
    """`detection` as Unknown when it says Idle while a prompt just sent awaits its uptake;
    None when it stands as it is."""
    if detection.state != "Idle" or not awaiting_uptake(ctx, prev, within_s):
        return None
    return msgspec.structs.replace(detection, state="Unknown", rule=SUBMIT_UPTAKE_RULE)
