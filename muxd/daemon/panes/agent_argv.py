"""An agent CLI the daemon starts as a pane's program gets muxd's hooks for that run: the flags
of muxd/agent_hooks.py go right after the program's name, and the user's own settings files are
left alone. Only the argv that is launched changes: the pane's command stays what was asked
(`list-panes`, respawn-pane). A CLI typed at a shell in a pane is not rewritten: that is what
`muxd hooks install` is for."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping

from muxd.agent_hook_files import installed
from muxd.agent_hooks import claude_run_flags, codex_run_flags

# The per-run flags of each CLI muxd can give them to (Gemini CLI has no per-run way).
_RUN_FLAGS: dict[str, Callable[[], list[str]]] = {"claude": claude_run_flags, "codex": codex_run_flags}
# First words that make a run no agent session (a management command): left as they are.
_NOT_A_SESSION: dict[str, frozenset[str]] = {
    "claude": frozenset({"agents", "attach", "auth", "auto-mode", "doctor", "gateway", "import", "install", "logs",
                         "mcp", "plugin", "plugins", "purge", "respawn", "rm", "setup-token", "stop", "kill",
                         "ultrareview", "update", "upgrade", "-v", "--version", "-h", "--help"}),
    "codex": frozenset({"login", "logout", "mcp", "mcp-server", "plugin", "app-server", "remote-control",
                        "completion", "update", "doctor", "sandbox", "debug", "apply", "a", "queue", "archive",
                        "delete", "migrate-rollouts", "migrate-nfs-db", "unarchive", "cloud", "exec-server",
                        "features", "help", "agents", "-V", "--version", "-h", "--help"}),
}
# "0" in a pane's environment (or the server's, which every pane inherits): start Claude Code and
# Codex without muxd's hooks for that run (the screen alone then tells their state).
ENV_AGENT_HOOKS = "MUXD_AGENT_HOOKS"
_ENV_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_ENV_FLAGS_WITH_VALUE = frozenset({"-u", "--unset", "-C", "--chdir"})
_ENV_FLAGS = frozenset({"-i", "--ignore-environment", "-"})


def with_agent_hooks(argv: list[str], env: Mapping[str, str]) -> list[str]:
    """`argv` with muxd's hook flags when it starts Claude Code or Codex for a session (also
    behind `env [-i] [-u NAME] [NAME=VALUE]…`); unchanged otherwise, and when the user's own
    configuration (as `env`'s HOME says where) already has muxd's hooks: they would fire twice,
    and when the pane's environment says MUXD_AGENT_HOOKS=0."""
    at = _program_index(argv)
    if at is None or env.get(ENV_AGENT_HOOKS) == "0":
        return argv
    program, rest = os.path.basename(argv[at]), argv[at + 1:]
    flags = _RUN_FLAGS.get(program)
    if flags is None or (rest and rest[0] in _NOT_A_SESSION[program]) or installed(program, env):
        return argv
    return [*argv[:at + 1], *flags(), *rest]


def _program_index(argv: list[str]) -> int | None:
    """Where the program stands in `argv`: 0, or after `env` and its options; None when `env`
    is given options this does not follow (-S splits a string: no telling the program)."""
    if not argv or os.path.basename(argv[0]) != "env":
        return 0 if argv else None
    at = 1
    while at < len(argv):
        word = argv[at]
        if word == "--":
            at += 1
            break
        if word in _ENV_FLAGS_WITH_VALUE:
            at += 2
        elif (word in _ENV_FLAGS or _ENV_ASSIGNMENT.match(word) or word.startswith(("--unset=", "--chdir="))
              or (word.startswith(("-u", "-C")) and not word.startswith("--"))):
            at += 1
        elif word.startswith("-"):
            return None
        else:
            break
    return at if at < len(argv) else None
