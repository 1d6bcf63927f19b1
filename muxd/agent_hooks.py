"""The lifecycle hooks muxd asks each agent CLI to call, and the settings that ask it: per run
(the flags the daemon gives an agent it starts) and in the user's own configuration (`muxd hooks
install`). Every hook runs `<muxd> hook --agent <name>`, which reads the CLI's JSON on stdin and
hands it to the daemon for the pane in $MUXD_PANE (muxd/cli/hook_command.py).

Measured on Claude Code 2.1.330, Codex 0.169.0, Gemini CLI 0.61.0, Qwen Code 0.15.10 and Cline 3.0.65 (README,
"Hooks"):
- Claude Code takes `--settings <json>`, merged over the user's own; every source's hooks run.
- Codex takes `-c hooks.<Event>=[…]`, but runs a hook only once it is trusted: the trust
  (`hooks.state.<key>.trusted_hash`) is given in the same `-c` layer, for muxd's hooks alone.
- Gemini CLI has no per-run way: its override files load only when root owns them and their
  whole path, so it gets muxd's hooks from `muxd hooks install` only.
- Qwen Code has Claude's events and payloads in Gemini's settings file, and no per-run way either:
  it reads hooks from the user's settings and the (trusted) project's only, never from its
  system files, so it too gets muxd's hooks from `muxd hooks install`.
- Cline 3.0.65 runs one executable per event from `~/.cline/hooks` (and the project's
  `.clinerules/hooks`), the payload on stdin. Its `--hooks-dir` is parsed but read by nothing,
  so it too gets muxd's hooks from `muxd hooks install`: files of muxd's own beside the user's.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import sys
from pathlib import Path

HOOK_AGENTS = ("claude", "codex", "gemini", "qwen", "cline")

# The events muxd listens to, in each CLI's own names. Left out: the per-chunk ones (Claude's
# MessageDisplay, Gemini's AfterModel) and compaction, which would cost a process each for
# nothing the state needs.
HOOK_EVENTS: dict[str, tuple[str, ...]] = {
    "claude": ("SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse",
               "PostToolUseFailure", "Notification", "Stop", "StopFailure", "SubagentStart", "SubagentStop",
               "SessionEnd"),
    # 0.169 has neither Notification nor StopFailure (a failed turn fires no Stop).
    "codex": ("SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse", "Stop",
              "SubagentStart", "SubagentStop", "Interrupt", "SessionEnd"),
    "gemini": ("SessionStart", "BeforeAgent", "BeforeTool", "AfterTool", "Notification", "AfterAgent", "SessionEnd"),
    "qwen": ("SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse",
             "PostToolUseFailure", "Notification", "Stop", "StopFailure", "SubagentStart", "SubagentStop",
             "SessionEnd"),
    # The names of its hook files; the payloads name the events agent_start, tool_call, …
    "cline": ("TaskStart", "TaskResume", "TaskCancel", "TaskComplete", "TaskError", "PreToolUse", "PostToolUse",
              "UserPromptSubmit", "SessionShutdown"),
}

# How long a CLI lets the hook command run. The hooks are synchronous, so that the daemon gets
# the events in the order they happened; `muxd hook` gives up on the daemon well before these.
CLAUDE_HOOK_TIMEOUT_S = 10
CODEX_HOOK_TIMEOUT_S = 10
CODEX_SHORT_HOOK_EVENTS = ("SessionEnd", "Interrupt")  # Codex holds these to 1..3 s
CODEX_SHORT_HOOK_MAX_S = 3
GEMINI_HOOK_TIMEOUT_MS = 10_000
GEMINI_HOOK_NAME = "muxd"  # what Gemini's (and Qwen's) /hooks panel calls muxd's hooks
QWEN_HOOK_TIMEOUT_MS = 10_000  # Qwen's schema says seconds, but its runner waits this many ms

# The config layer of Codex's `-c` flags, as its hook-state keys name it.
CODEX_SESSION_FLAGS_SOURCE = "/<session-flags>/config.toml"
_HOOK_SUBCOMMAND = re.compile(r"(?:^|[\s'/])(?:muxd'?|-m muxd) hook --agent (\w+)")


def muxd_argv() -> list[str]:
    """This install's `muxd`, by absolute path (a PATH without it still works); `python -m muxd`
    when the console script is missing (muxd run from a source tree)."""
    script = Path(sys.executable).parent / "muxd"
    return [str(script)] if os.access(script, os.X_OK) else [sys.executable, "-m", "muxd"]


def hook_argv(agent: str) -> list[str]:
    """The hook command of `agent`, as an argv."""
    return [*muxd_argv(), "hook", "--agent", agent]


def guarded_hook_command(agent: str) -> str:
    """The hook command for the user's own configuration, as a shell line: it runs `muxd hook`
    only inside a muxd pane (elsewhere the agent pays for a shell test, not a Python start), and
    never fails the agent, even once muxd is gone."""
    return f'[ -z "${{MUXD_PANE:-}}" ] || {shlex.join(hook_argv(agent))} || true'


def hook_command_agent(command: str) -> str | None:
    """The agent a hook command line runs `muxd hook` for, None if it is not muxd's: how
    uninstall knows muxd's entries, wherever muxd was installed when they were written."""
    found = _HOOK_SUBCOMMAND.search(command) if "MUXD_PANE" in command else None
    return found.group(1) if found else None


# ------------------------------------------------------------ per run

def claude_run_settings() -> dict[str, object]:
    """The `--settings` of a Claude Code muxd starts: muxd's hook on every event, in exec form
    (no shell between the CLI and `muxd hook`)."""
    command, *args = hook_argv("claude")
    handler = {"type": "command", "command": command, "args": args, "timeout": CLAUDE_HOOK_TIMEOUT_S}
    return {"hooks": {event: [{"hooks": [handler]}] for event in HOOK_EVENTS["claude"]}}


def claude_run_flags() -> list[str]:
    return ["--settings", json.dumps(claude_run_settings(), separators=(",", ":"))]


def codex_run_flags() -> list[str]:
    """The `-c` flags of a Codex muxd starts: muxd's hook on every event, and the trust of those
    hooks (theirs only: the user's untrusted hooks stay untrusted)."""
    command = shlex.join(hook_argv("codex"))
    flags: list[str] = []
    trusted: list[str] = []
    for event in HOOK_EVENTS["codex"]:
        handler = f'{{type="command",command={_toml(command)},timeout={codex_hook_timeout_s(event)}}}'
        flags += ["-c", f"hooks.{event}=[{{hooks=[{handler}]}}]"]
        key = codex_hook_key(CODEX_SESSION_FLAGS_SOURCE, event, 0)
        trusted.append(f"{_toml(key)}={{trusted_hash={_toml(codex_trusted_hash(event, command))}}}")
    # One table: a dotted `-c hooks.state."<key>".trusted_hash=…` is split at the key's own dots.
    return [*flags, "-c", "hooks.state={" + ",".join(trusted) + "}"]


# ------------------------------------------------------------ Codex's hook trust

def codex_event_label(event: str) -> str:
    """Codex's name of an event in hook-state keys and hashes: PreToolUse -> pre_tool_use."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


def codex_hook_key(source: str, event: str, group: int, handler: int = 0) -> str:
    """The hook-state key of the `handler`-th hook of the `group`-th matcher group of `event` in
    the config file `source`."""
    return f"{source}:{codex_event_label(event)}:{group}:{handler}"


def codex_hook_timeout_s(event: str) -> int:
    """The timeout muxd gives its hook of `event`, as Codex normalizes it (and hashes it)."""
    return CODEX_SHORT_HOOK_MAX_S if event in CODEX_SHORT_HOOK_EVENTS else CODEX_HOOK_TIMEOUT_S


def codex_trusted_hash(event: str, command: str) -> str:
    """The hash Codex trusts muxd's command hook of `event` by (one handler, no matcher): sha256
    of the canonical JSON of the hook's normalized identity, as codex-rs/hooks/src/engine/
    discovery.rs builds it (checked against the hashes Codex 0.169 writes when a person trusts)."""
    identity = {"event_name": codex_event_label(event),
                "hooks": [{"type": "command", "command": command, "timeout": codex_hook_timeout_s(event),
                           "async": False}]}
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


def _toml(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's)."""
    return json.dumps(text, ensure_ascii=False)
