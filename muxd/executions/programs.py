"""Which programs a pane may run as one execution: not shells and not agent CLIs, which run
many executions of their own (command lines, prompts) for as long as they live."""

from __future__ import annotations

import os

from muxd.detectors.shell_names import SHELLS

AGENT_CLIS = frozenset({"claude", "codex", "gemini", "aider", "opencode", "qwen", "pi", "cline", "kilo"})


def is_one_execution(command: list[str]) -> bool:
    """True for `make test`, `pytest -x`, `sh -c '…'`; False for a shell or an agent CLI started bare."""
    if not command:
        return False
    program = os.path.basename(command[0])
    if program in AGENT_CLIS:
        return False
    if program in SHELLS:
        return "-c" in command[1:]  # `sh -c 'make test'` runs one command; `bash --norc` is a shell
    return True
