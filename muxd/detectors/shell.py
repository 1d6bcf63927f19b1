"""The fallback detector: no agent recognised. Reports whether a shell waits at its prompt."""

from __future__ import annotations

from muxd.detectors.base import ScreenContext
from muxd.detectors.state import AgentState, Detection

SHELLS = frozenset({"bash", "sh", "dash", "zsh", "fish", "ksh", "mksh", "tcsh", "csh", "ash", "busybox"})


class ShellDetector:
    name = "shell"

    def identify(self, ctx: ScreenContext) -> float:
        return 1.0 if (ctx.process_name or "") in SHELLS else 0.1

    def detect(self, ctx: ScreenContext, prev: AgentState | None) -> Detection:
        if ctx.exited:
            return Detection(agent_type=None, state="Exited", rule="pane-exited")
        if (ctx.process_name or "") in SHELLS:
            return Detection(agent_type="shell", state="Idle", rule="shell-in-foreground")
        return Detection(agent_type=None, state="Unknown", rule="no-agent")
