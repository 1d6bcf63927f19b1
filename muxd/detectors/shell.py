"""The fallback detector: no agent recognised. Reports whether a shell waits at its prompt:
a shell in the foreground, or, where no process is known (a replayed recording), a shell
prompt as the screen's last row."""

from __future__ import annotations

from muxd.detectors._lazy_re import lazy_compile
from muxd.detectors._text import LineMemo
from muxd.detectors.base import ScreenContext
from muxd.detectors.shell_names import SHELLS
from muxd.detectors.state import AgentState, Detection


# A bare shell prompt: `root@vm:/work#`, `user@host:~$`, `bash-5.1$`, `~/src ❯`, `$`.
# `>` is not a prompt end here: Aider's own prompt is `> `.
_SHELL_PROMPT = lazy_compile(r"^(?:\(\S+\)\s+)?(?:\S*[@:~/]\S*\s?[$#%❯]|[A-Za-z][\w.\-]*[$#%]|[$#%❯➜λ])\s*$")


def is_shell_prompt(line: str) -> bool:
    return _SHELL_PROMPTS[line]


# By row text: the last row is asked about by every identify and detect of a frame.
_SHELL_PROMPTS = LineMemo(lambda line: bool(_SHELL_PROMPT.match(line.strip())))


class ShellDetector:
    name = "shell"

    def identify(self, ctx: ScreenContext) -> float:
        return 1.0 if (ctx.process_name or "") in SHELLS else 0.1

    def detect(self, ctx: ScreenContext, prev: AgentState | None) -> Detection:
        if ctx.exited:
            return Detection(agent_type=None, state="Exited", rule="pane-exited")
        if (ctx.process_name or "") in SHELLS:
            return Detection(agent_type="shell", state="Idle", rule="shell-in-foreground")
        if ctx.process_name is None:
            last = next((line for line in reversed(ctx.lines) if line.strip()), None)
            if last is not None and is_shell_prompt(last):
                return Detection(agent_type="shell", state="Idle", rule="shell-prompt", line=last.strip())
        return Detection(agent_type=None, state="Unknown", rule="no-agent")
