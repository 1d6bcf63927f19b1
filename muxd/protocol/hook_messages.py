"""An agent CLI's own report of what it does: one hook event, handed over by `muxd hook` from
inside the agent's pane (its token, its pane as the target)."""

from __future__ import annotations

from typing import Annotated

import msgspec

from muxd.config import HOOK_PAYLOAD_MAX_CHARS
from muxd.protocol.fields import Name, Target
from muxd.protocol.pane_messages import _Message

HookPayload = Annotated[str, msgspec.Meta(max_length=HOOK_PAYLOAD_MAX_CHARS)]


class HookEvent(_Message, tag="hook-event"):
    id: int
    agent: Name                 # whose hook fired: "claude", "codex", "gemini", "qwen"
    payload: HookPayload        # the event's JSON, as the agent wrote it on the hook's stdin
    target: Target | None = None  # the pane the agent runs in (its token's own)
