"""Hook events from the agents in the panes (`muxd hook`): rate-limited per pane, decoded with
their nesting bounded, and handed to the pane's detection, which fuses them with the screen.

The request has already passed access control (a pane's own token reaches only its pane) and
the protocol's size cap; what is left is the payload: JSON text from a program in the pane."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import msgspec

from muxd.config import HOOK_EVENTS_BURST, HOOK_EVENTS_PER_S, HOOK_JSON_DEPTH_MAX
from muxd.errors import BadRequest
from muxd.json_depth import nests_deeper
from muxd.rate_limit import RateLimiter

if TYPE_CHECKING:
    from muxd.daemon.panes.detection import PaneDetection

Clock = Callable[[], float]
_decoder = msgspec.json.Decoder()


def hook_payload(text: str) -> dict[str, Any]:
    """The event a hook's JSON text holds; BadRequest in one line when it is not a JSON object."""
    data = text.encode("utf-8", "surrogatepass")
    if nests_deeper(data, HOOK_JSON_DEPTH_MAX):
        raise BadRequest(f"hook payload nests deeper than {HOOK_JSON_DEPTH_MAX} levels")
    try:
        event = _decoder.decode(data)
    except msgspec.DecodeError as exc:
        raise BadRequest(f"hook payload is not JSON: {exc}") from None
    if not isinstance(event, dict):
        raise BadRequest(f"hook payload is a JSON {type(event).__name__}, not an object")
    return event


class HookIntake:
    """Where every pane's hook events come in."""

    def __init__(self, detections: Mapping[str, PaneDetection], *, clock: Clock = time.monotonic,
                 wall_clock: Clock = time.time) -> None:
        self._detections = detections
        self._wall_clock = wall_clock
        self._rates = RateLimiter(HOOK_EVENTS_PER_S, HOOK_EVENTS_BURST, clock)  # a bucket per pane

    def receive(self, pane_id: str, agent: str, payload: str) -> None:
        """Take one event of `agent` in pane `pane_id` (RateLimited, BadRequest: nothing kept)."""
        self._rates.check(pane_id, f"hook events of pane {pane_id}")
        event = hook_payload(payload)
        detection = self._detections.get(pane_id)
        if detection is not None:  # none: detection is off (MUXD_DETECTION=0), or the pane is gone
            detection.hook(agent, event, self._wall_clock())

    def forget(self, pane_id: str) -> None:
        """The pane is gone: its rate goes with it."""
        self._rates.forget(pane_id)
