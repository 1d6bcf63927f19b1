"""`hook_fact`: one lifecycle hook payload of an agent CLI, in muxd's words (a `HookFact`).

Pure and forgiving: the payload is whatever JSON the CLI sent. An event muxd has no use for,
or an agent it does not know, gives None; a field of the wrong type costs that field, never
the fact. The shapes, as the CLIs installed here send them:

- Claude Code 2.1.330: every hook gets `session_id`, `transcript_path`, `cwd`,
  `hook_event_name` (and `agent_id` when a subagent fired it). `UserPromptSubmit` {prompt},
  `PreToolUse` / `PostToolUse` / `PostToolUseFailure` {tool_name, tool_input, error,
  is_interrupt}, `PermissionRequest` {tool_name, tool_input}, `Notification` {message,
  notification_type: "permission_prompt", "idle_prompt", …}, `Stop` {last_assistant_message,
  background_tasks: [in-flight work]}, `StopFailure` {error: "rate_limit", "overloaded", …,
  error_details}, `SubagentStart` / `SubagentStop` {agent_id}, `SessionStart` {source},
  `SessionEnd` {reason}.
- Codex 0.169.0: hooks shaped like Claude's (`UserPromptSubmit`, `PreToolUse`,
  `PermissionRequest`, `PostToolUse`, `Stop`, `SessionStart`, `SessionEnd`, `SubagentStart`,
  `SubagentStop`, `Interrupt`, …). The older `notify` program's {"type":
  "agent-turn-complete", …} is not used: it fires for side threads too.
- Gemini CLI 0.61.0: `BeforeAgent` {prompt}, `AfterAgent` {prompt, prompt_response},
  `BeforeTool` / `AfterTool` {tool_name, tool_input}, `Notification` {notification_type:
  "ToolPermission", message, details}, `SessionStart` {source}, `SessionEnd` {reason}; plus
  `session_id`, `cwd`, `hook_event_name`, `timestamp`.
- Qwen Code 0.15.10: Claude's events and fields (`UserPromptSubmit` {prompt}, `PreToolUse` …,
  `Notification` {notification_type: "permission_prompt", "idle_prompt", …}, `Stop`
  {last_assistant_message}, `StopFailure`, `SubagentStart` {agent_id}, …), with Qwen's own tool
  names (`run_shell_command`, `write_file`, …).
- Cline 3.0.65: one executable per event in a hooks directory (`~/.cline/hooks/PreToolUse`, …),
  the payload on stdin, named by `hookName`: `agent_start` / `agent_resume` (a run begins),
  `prompt_submit` {userPromptSubmit: {prompt}}, `tool_call` {tool_call: {name, input}},
  `tool_result` {tool_result: {name, input, output, error}}, `agent_end` {turn: {outputText}},
  `agent_error` {error: {name, message}}, `agent_abort` {reason}, `session_shutdown`; plus
  `taskId`, `sessionContext.rootSessionId`, `agent_id` and `parent_agent_id` (set for a subagent).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Literal

import msgspec

from muxd.detectors._agent_cli import error_kind
from muxd.detectors.codex_tools import EXEC_TOOL

HOOK_AGENTS = ("claude", "codex", "gemini", "qwen", "cline")
# muxd's names for what a hook says happened.
HookEventKind = Literal[
    "prompt_submitted", "tool_started", "tool_finished", "permission_requested", "idle_notified",
    "stopped", "stop_failed", "interrupted", "subagent_started", "subagent_stopped",
    "session_started", "session_ended",
]
TOOL_INPUT_MAX_CHARS = 200   # a tool's input, as one short line
TEXT_MAX_CHARS = 16_000      # a prompt or an answer (the payload itself is capped at 64 KiB)
LINE_MAX_CHARS = 500         # a message, an error's details, a session id
# The keys of a tool's input that say best what it does, most telling first.
TOOL_INPUT_KEYS = ("command", "cmd", "commands", "file_path", "absolute_path", "path", "pattern", "url", "query",
                   "description", "prompt", "subagent_type", "skill", "name")


class HookFact(msgspec.Struct, frozen=True, kw_only=True):
    """One hook event, normalised: what happened (`event`), when muxd got it (`observed_at`),
    and what it told."""

    agent: str                      # "claude", "codex", "gemini", "qwen", "cline"
    event: HookEventKind
    hook_event: str                 # the CLI's own name: "PreToolUse", "agent-turn-complete", …
    observed_at: float              # wall-clock seconds the daemon received it
    session_id: str | None = None
    subagent_id: str | None = None  # set when a subagent, not the main conversation, fired it
    tool: str | None = None
    tool_input: str | None = None   # short, one line
    prompt: str | None = None
    answer: str | None = None       # the turn's last assistant message
    error_type: str | None = None   # StopFailure's error in muxd's words: "rate_limited", "usage_limit", …
    message: str | None = None      # a notification's text, an error's details, a session's source/reason
    background: int | None = None   # background work still in flight (Claude's Stop)


def hook_fact(agent: str, payload: Mapping[str, Any], received_at: float) -> HookFact | None:
    """The fact `payload` (a hook's JSON, decoded) tells about `agent`'s pane, or None when
    muxd has no use for it or does not know the agent. Never raises."""
    if not isinstance(agent, str) or not isinstance(payload, Mapping):
        return None
    read = _READERS.get(agent.strip().lower())
    if read is None:
        return None
    try:
        return read(payload, float(received_at))
    except (TypeError, ValueError):  # received_at not a number
        return None


# ------------------------------------------------------------------ per agent

def _claude(p: Mapping[str, Any], at: float, agent: str = "claude") -> HookFact | None:
    """Claude Code's hooks, and those of the CLIs that copy them event for event (Qwen Code)."""
    name = _text(p, "hook_event_name", LINE_MAX_CHARS)
    if name == "Notification":
        kind = _text(p, "notification_type", LINE_MAX_CHARS)
        event = {"permission_prompt": "permission_requested", "idle_prompt": "idle_notified"}.get(kind or "")
        if event is None:
            return None
        return _fact(agent, event, name, p, at, message=_text(p, "message", LINE_MAX_CHARS))
    if name == "PostToolUseFailure" and p.get("is_interrupt") is True:
        return _fact(agent, "interrupted", name, p, at, message=_text(p, "error", LINE_MAX_CHARS))
    return _common(agent, name, p, at)


def _qwen(p: Mapping[str, Any], at: float) -> HookFact | None:
    return _claude(p, at, "qwen")


def _codex(p: Mapping[str, Any], at: float) -> HookFact | None:
    if "type" in p and "hook_event_name" not in p:
        # The `notify` program's payload (agent-turn-complete): it fires for Codex's side
        # threads too (the turn's title, written while the turn still runs), so it would read
        # as a Stop in the middle of a turn. The Stop hook tells the turn's end exactly.
        return None
    name = _text(p, "hook_event_name", LINE_MAX_CHARS)
    if name == "Interrupt":
        return _fact("codex", "interrupted", name, p, at)
    fact = _common("codex", name, p, at)
    if fact is not None and fact.tool in _CODEX_TOOLS:
        # Codex's hooks use Claude's name for its shell; its screen and log name the tool itself.
        fact = msgspec.structs.replace(fact, tool=_CODEX_TOOLS[fact.tool])
    return fact


_CODEX_TOOLS = {"Bash": EXEC_TOOL}


_GEMINI_EVENTS: dict[str, HookEventKind] = {
    "BeforeAgent": "prompt_submitted", "AfterAgent": "stopped", "BeforeTool": "tool_started",
    "AfterTool": "tool_finished", "SessionStart": "session_started", "SessionEnd": "session_ended",
}


def _gemini(p: Mapping[str, Any], at: float) -> HookFact | None:
    name = _text(p, "hook_event_name", LINE_MAX_CHARS)
    if name == "Notification":
        if _text(p, "notification_type", LINE_MAX_CHARS) != "ToolPermission":
            return None
        details = p.get("details")
        details = details if isinstance(details, Mapping) else {}
        tool = _text(details, "toolName", LINE_MAX_CHARS) or _text(details, "rootCommand", LINE_MAX_CHARS)
        return _fact("gemini", "permission_requested", name, p, at, message=_text(p, "message", LINE_MAX_CHARS),
                     tool=tool or _text(details, "title", LINE_MAX_CHARS),
                     tool_input=_one_line(_text(details, "command", TEXT_MAX_CHARS)
                                          or _text(details, "filePath", TEXT_MAX_CHARS), TOOL_INPUT_MAX_CHARS))
    event = _GEMINI_EVENTS.get(name or "")
    if event is None:
        return None
    if event == "stopped":
        return _fact("gemini", event, name or "", p, at, prompt=_text(p, "prompt", TEXT_MAX_CHARS),
                     answer=_text(p, "prompt_response", TEXT_MAX_CHARS))
    return _common("gemini", name, p, at, event)


_CLINE_EVENTS: dict[str, HookEventKind] = {
    "agent_start": "prompt_submitted", "agent_resume": "prompt_submitted", "prompt_submit": "prompt_submitted",
    "tool_call": "tool_started", "tool_result": "tool_finished", "agent_end": "stopped",
    "agent_error": "stop_failed", "agent_abort": "interrupted", "session_shutdown": "session_ended",
}


def _cline(p: Mapping[str, Any], at: float) -> HookFact | None:
    """Cline's hooks: a run's start says a turn began (the prompt comes in `prompt_submit`), its
    end, error or abort that it ended. Every agent has an `agent_id`; a subagent's also has its
    parent's."""
    name = _text(p, "hookName", LINE_MAX_CHARS)
    event = _CLINE_EVENTS.get(name or "")
    if event is None or name is None:
        return None
    fields: dict[str, Any] = {}
    if event in ("tool_started", "tool_finished"):
        call = _mapping(p, "tool_call" if event == "tool_started" else "tool_result")
        fields["tool"] = _text(call, "name", LINE_MAX_CHARS)
        fields["tool_input"] = tool_input_text(call.get("input"))
        if event == "tool_finished":
            fields["message"] = _one_line(_text(call, "error", LINE_MAX_CHARS), LINE_MAX_CHARS)
    elif event == "prompt_submitted":
        fields["prompt"] = _text(_mapping(p, "userPromptSubmit"), "prompt", TEXT_MAX_CHARS)
    elif event == "stopped":
        fields["answer"] = _text(_mapping(p, "turn"), "outputText", TEXT_MAX_CHARS)
    elif event == "stop_failed":
        fields["message"] = _one_line(_text(_mapping(p, "error"), "message", LINE_MAX_CHARS), LINE_MAX_CHARS)
        fields["error_type"] = _error_type(None, fields["message"])
    elif event == "interrupted":
        fields["message"] = _text(p, "reason", LINE_MAX_CHARS)
    session = (_text(_mapping(p, "sessionContext"), "rootSessionId", LINE_MAX_CHARS)
               or _text(p, "taskId", LINE_MAX_CHARS))
    subagent = _text(p, "agent_id", LINE_MAX_CHARS) if _text(p, "parent_agent_id", LINE_MAX_CHARS) else None
    return HookFact(agent="cline", event=event, hook_event=name, observed_at=at, session_id=session,
                    subagent_id=subagent, **fields)


# The events Claude Code, Codex and Qwen Code share (same names, same fields).
_COMMON_EVENTS: dict[str, HookEventKind] = {
    "UserPromptSubmit": "prompt_submitted", "PreToolUse": "tool_started", "PostToolUse": "tool_finished",
    "PostToolUseFailure": "tool_finished", "PermissionRequest": "permission_requested", "Stop": "stopped",
    "StopFailure": "stop_failed", "SubagentStart": "subagent_started", "SubagentStop": "subagent_stopped",
    "SessionStart": "session_started", "SessionEnd": "session_ended",
}


def _common(agent: str, name: str | None, p: Mapping[str, Any], at: float,
            event: HookEventKind | None = None) -> HookFact | None:
    event = event or _COMMON_EVENTS.get(name or "")
    if event is None or name is None:
        return None
    fields: dict[str, Any] = {}
    if event in ("tool_started", "tool_finished", "permission_requested"):
        fields["tool"] = _text(p, "tool_name", LINE_MAX_CHARS)
        fields["tool_input"] = tool_input_text(p.get("tool_input"))
        if event == "tool_finished":
            fields["message"] = _text(p, "error", LINE_MAX_CHARS)
    elif event == "prompt_submitted":
        fields["prompt"] = _text(p, "prompt", TEXT_MAX_CHARS)
    elif event == "stopped":
        fields["answer"] = _text(p, "last_assistant_message", TEXT_MAX_CHARS)
        fields["background"] = _in_flight(p.get("background_tasks"))
    elif event == "stop_failed":
        fields["answer"] = _text(p, "last_assistant_message", TEXT_MAX_CHARS)
        fields["message"] = _text(p, "error_details", LINE_MAX_CHARS) or _one_line(fields["answer"], LINE_MAX_CHARS)
        fields["error_type"] = _error_type(_text(p, "error", LINE_MAX_CHARS), fields["message"])
    elif event == "session_started":
        fields["message"] = _text(p, "source", LINE_MAX_CHARS)
    elif event == "session_ended":
        fields["message"] = _text(p, "reason", LINE_MAX_CHARS)
    return _fact(agent, event, name, p, at, **fields)


def _fact(agent: str, event: HookEventKind, name: str, p: Mapping[str, Any], at: float, **fields: Any) -> HookFact:
    return HookFact(agent=agent, event=event, hook_event=name, observed_at=at,
                    session_id=_text(p, "session_id", LINE_MAX_CHARS),
                    subagent_id=_text(p, "agent_id", LINE_MAX_CHARS), **fields)


_READERS: dict[str, Callable[[Mapping[str, Any], float], HookFact | None]] = {
    "claude": _claude, "codex": _codex, "gemini": _gemini, "qwen": _qwen, "cline": _cline,
}

# ------------------------------------------------------------------ fields


def tool_input_text(value: object, limit: int = TOOL_INPUT_MAX_CHARS) -> str | None:
    """A tool's input in one short line: its most telling field (the command, the file, the
    pattern…), else the whole input as compact JSON; cut at `limit` characters."""
    if isinstance(value, str):
        return _one_line(value, limit)
    if not isinstance(value, Mapping) or not value:
        return None
    for key in TOOL_INPUT_KEYS:
        found = value.get(key)
        if isinstance(found, str) and found.strip():
            return _one_line(found, limit)
        if key in ("command", "cmd") and isinstance(found, list) and all(isinstance(a, str) for a in found):
            return _one_line(" ".join(found), limit)  # an argv
        if key == "commands" and isinstance(found, list) and found and all(isinstance(a, str) for a in found):
            return _one_line("; ".join(found), limit)  # Cline's run_commands: shell lines, in order
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (TypeError, ValueError):  # keys that are not strings, a circle
        return None
    return _one_line(text, limit)


# Claude Code's StopFailure categories muxd's error types say alike; the others ("billing_error",
# "invalid_request", "unknown", …) are read from the error's words as the screen's and the
# session log's are, so one failure gets one type (and one pattern) whichever source told it.
_STOP_FAILURE_TYPES = {"rate_limit": "rate_limited", "overloaded": "overloaded",
                       "authentication_failed": "auth_error", "server_error": "server_error"}


def _error_type(category: str | None, message: str | None) -> str:
    known = _STOP_FAILURE_TYPES.get(category or "")
    if known == "rate_limited" and message and error_kind(message) == "usage_limit":
        return "usage_limit"  # a plan's limit ("You've hit your 5-hour limit"), as the screen types it
    if known is not None:
        return known
    return error_kind(message) if message else "unknown"


def _in_flight(tasks: object) -> int | None:
    """How many of Claude's `background_tasks` still run (each {id, type, status, …})."""
    if not isinstance(tasks, list):
        return None
    done = ("completed", "failed", "killed", "stopped", "cancelled")
    return sum(1 for t in tasks if isinstance(t, Mapping) and t.get("status") not in done)


def _mapping(p: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = p.get(key)
    return value if isinstance(value, Mapping) else {}


def _text(p: Mapping[str, Any], key: str, limit: int) -> str | None:
    value = p.get(key)
    return _cut(value, limit) if isinstance(value, str) and value else None


def _cut(text: str | None, limit: int) -> str | None:
    if not text:
        return None
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _one_line(text: str | None, limit: int) -> str | None:
    if not text:
        return None
    return _cut(" ".join(text.split()), limit)
