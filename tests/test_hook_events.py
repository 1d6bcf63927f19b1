"""`hook_fact` (muxd/detectors/hook_events.py): each CLI's hook payloads in muxd's words, and
odd payloads costing a field or the fact, never an exception.

The payloads follow the shapes the installed CLIs send (Claude Code 2.1.330's hook input
schemas, Codex 0.169.0's `*.command.input` schemas and `notify` payload, Gemini CLI 0.61.0's
HookEventHandler); real captures, where there are some, are in hook_payload_data/."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from muxd.detectors.hook_events import TOOL_INPUT_MAX_CHARS, HookFact, hook_fact, tool_input_text

AT = 1000.0
CLAUDE_BASE = {"session_id": "0b7c-claude", "transcript_path": "/tmp/t.jsonl", "cwd": "/work",
               "permission_mode": "default"}
CODEX_BASE = {"session_id": "019a-codex", "transcript_path": None, "cwd": "/work", "model": "gpt-5",
              "permission_mode": "default", "turn_id": "t1"}
GEMINI_BASE = {"session_id": "gem-1", "transcript_path": "", "cwd": "/work",
               "timestamp": "2026-11-28T14:00:00.000Z"}
CAPTURES = Path(__file__).parent / "hook_payload_data"


def claude(name: str, **fields) -> HookFact | None:
    return hook_fact("claude", {**CLAUDE_BASE, "hook_event_name": name, **fields}, AT)


def codex(name: str, **fields) -> HookFact | None:
    return hook_fact("codex", {**CODEX_BASE, "hook_event_name": name, **fields}, AT)


def gemini(name: str, **fields) -> HookFact | None:
    return hook_fact("gemini", {**GEMINI_BASE, "hook_event_name": name, **fields}, AT)


def test_claude_turn_from_prompt_to_stop():
    fact = claude("UserPromptSubmit", prompt="Fix the failing test\nin tests/", source="user")
    assert fact == HookFact(agent="claude", event="prompt_submitted", hook_event="UserPromptSubmit",
                            observed_at=AT, session_id="0b7c-claude", prompt="Fix the failing test\nin tests/")
    started = claude("PreToolUse", tool_name="Bash", tool_use_id="toolu_1",
                     tool_input={"command": "pytest -q  tests/", "description": "Run the tests"})
    assert (started.event, started.tool, started.tool_input) == ("tool_started", "Bash", "pytest -q tests/")
    finished = claude("PostToolUse", tool_name="Read", tool_input={"file_path": "/work/a.py"},
                      tool_response={"ok": True}, tool_use_id="toolu_2", duration_ms=12)
    assert (finished.event, finished.tool, finished.tool_input) == ("tool_finished", "Read", "/work/a.py")
    stop = claude("Stop", stop_hook_active=False, last_assistant_message="Done: 3 tests fixed.",
                  background_tasks=[{"id": "b1", "type": "subagent", "status": "running", "description": "x"},
                                    {"id": "b2", "type": "shell", "status": "completed", "description": "y"}])
    assert (stop.event, stop.answer, stop.background) == ("stopped", "Done: 3 tests fixed.", 1)
    assert claude("Stop", stop_hook_active=False).background is None  # no list: not known


def test_claude_notifications_say_asking_or_idle_and_the_rest_nothing():
    asking = claude("Notification", message="Claude needs your permission to use Bash",
                    notification_type="permission_prompt")
    assert (asking.event, asking.message) == ("permission_requested", "Claude needs your permission to use Bash")
    assert claude("Notification", message="Claude is waiting for your input",
                  notification_type="idle_prompt").event == "idle_notified"
    assert claude("Notification", message="Claude Code login successful", notification_type="auth_success") is None
    request = claude("PermissionRequest", tool_name="Write", tool_input={"file_path": "/work/new.py", "content": "x"})
    assert (request.event, request.tool, request.tool_input) == ("permission_requested", "Write", "/work/new.py")


def test_claude_failures_interrupts_subagents_and_sessions():
    failed = claude("StopFailure", error="rate_limit", error_details="429 · resets at 3pm")
    assert (failed.event, failed.error_type, failed.message) == ("stop_failed", "rate_limited", "429 · resets at 3pm")
    assert claude("StopFailure").error_type == "unknown"
    # A category muxd has no word for is read from the error's words, as the session log's is.
    billing = claude("StopFailure", error="billing_error",
                     last_assistant_message="API Error: 400 credit balance is too low")
    assert (billing.error_type, billing.message) == ("api_error", "API Error: 400 credit balance is too low")
    tool_failed = claude("PostToolUseFailure", tool_name="Bash", tool_input={"command": "false"},
                         tool_use_id="t", error="exit 1")
    assert (tool_failed.event, tool_failed.message) == ("tool_finished", "exit 1")
    interrupted = claude("PostToolUseFailure", tool_name="Bash", tool_input={"command": "sleep 99"},
                         tool_use_id="t", error="interrupted", is_interrupt=True)
    assert interrupted.event == "interrupted"
    sub = claude("SubagentStop", stop_hook_active=False, agent_id="a1", agent_transcript_path="", agent_type="Explore")
    assert (sub.event, sub.subagent_id) == ("subagent_stopped", "a1")
    assert claude("SubagentStart", agent_id="a1", agent_type="Explore").event == "subagent_started"
    inner = claude("PreToolUse", tool_name="Grep", tool_input={"pattern": "TODO"}, tool_use_id="t", agent_id="a1")
    assert inner.subagent_id == "a1" and inner.tool_input == "TODO"
    start = claude("SessionStart", source="startup", model="claude-opus-4-5")
    assert (start.event, start.session_id, start.message) == ("session_started", "0b7c-claude", "startup")
    assert claude("SessionEnd", reason="prompt_input_exit").event == "session_ended"
    assert claude("PreCompact", trigger="auto", custom_instructions=None) is None


def test_codex_hooks_and_its_notify_program():
    assert codex("UserPromptSubmit", prompt="add a README").prompt == "add a README"
    started = codex("PreToolUse", tool_name="Bash", tool_use_id="c1", tool_input={"command": "ls -la"})
    assert (started.event, started.tool, started.tool_input, started.session_id) == (
        "tool_started", "exec_command", "ls -la", "019a-codex")  # Codex's own name for its shell
    assert codex("PermissionRequest", tool_name="Bash", tool_input={"command": "rm x"}).event == "permission_requested"
    assert codex("Stop", stop_hook_active=False, last_assistant_message="ok").answer == "ok"
    assert codex("Interrupt").event == "interrupted"
    # `notify` fires for Codex's side threads too (a turn's title, while the turn runs): no Stop.
    title = hook_fact("codex", {"type": "agent-turn-complete", "thread-id": "019a-side", "turn-id": "12",
                                "cwd": "/work", "input-messages": ["Generate a concise, single-line task title"],
                                "last-assistant-message": "Rename foo"}, AT)
    assert title is None
    assert hook_fact("codex", {"type": "approval-requested"}, AT) is None


def test_gemini_hooks_in_muxds_words():
    assert gemini("BeforeAgent", prompt="explain main.py").event == "prompt_submitted"
    started = gemini("BeforeTool", tool_name="run_shell_command", tool_input={"command": "npm test"})
    assert (started.event, started.tool, started.tool_input) == ("tool_started", "run_shell_command", "npm test")
    assert gemini("AfterTool", tool_name="read_file", tool_input={"absolute_path": "/w/a"},
                  tool_response={}).event == "tool_finished"
    done = gemini("AfterAgent", prompt="explain main.py", prompt_response="It parses args.", stop_hook_active=False)
    assert (done.event, done.answer, done.prompt) == ("stopped", "It parses args.", "explain main.py")
    asking = gemini("Notification", notification_type="ToolPermission",
                    message="Tool Shell requires execution",
                    details={"type": "exec", "title": "Shell", "command": "rm -rf build", "rootCommand": "rm"})
    assert (asking.event, asking.tool, asking.tool_input) == ("permission_requested", "rm", "rm -rf build")
    assert gemini("SessionStart", source="startup").session_id == "gem-1"
    for ignored in ("BeforeModel", "AfterModel", "BeforeToolSelection", "PreCompress"):
        assert gemini(ignored, llm_request={}) is None
    assert gemini("Notification", notification_type="Other", message="x") is None


def test_qwen_hooks_are_claudes_in_qwens_name():
    base = {"session_id": "qw-1", "transcript_path": "/h/.qwen/projects/w/chats/qw-1.jsonl", "cwd": "/work",
            "timestamp": "2026-11-29T17:38:30.245Z"}

    def qwen(name: str, **fields) -> HookFact | None:
        return hook_fact("qwen", {**base, "hook_event_name": name, **fields}, AT)

    asked = qwen("UserPromptSubmit", prompt="say hi")
    assert (asked.agent, asked.event, asked.prompt, asked.session_id) == ("qwen", "prompt_submitted", "say hi", "qw-1")
    started = qwen("PreToolUse", tool_name="run_shell_command", tool_input={"command": "ls"}, tool_use_id="c1",
                   permission_mode="yolo")
    assert (started.event, started.tool, started.tool_input) == ("tool_started", "run_shell_command", "ls")
    assert qwen("PermissionRequest", tool_name="write_file", tool_input={"file_path": "/w/a"}).event == \
        "permission_requested"
    assert qwen("PostToolUseFailure", tool_name="run_shell_command", tool_input={}, error="aborted",
                is_interrupt=True).event == "interrupted"
    done = qwen("Stop", stop_hook_active=False, last_assistant_message="hi there")
    assert (done.event, done.answer) == ("stopped", "hi there")
    assert qwen("Notification", notification_type="idle_prompt", message="waiting").event == "idle_notified"
    assert qwen("Notification", notification_type="auth_success", message="ok") is None
    assert qwen("SubagentStart", agent_id="sub-1", agent_type="general").subagent_id == "sub-1"
    assert qwen("BeforeAgent", prompt="Gemini's name") is None


@pytest.mark.parametrize("agent, payload", [
    ("aider", {"hook_event_name": "Stop"}),                 # an agent without hooks
    ("opencode", {"hook_event_name": "Stop"}),
    ("claude", {}),                                         # no event name
    ("claude", {"hook_event_name": "NoSuchEvent"}),
    ("claude", {"hook_event_name": 42}),
    ("claude", {"hook_event_name": ["Stop"]}),
    ("gemini", {"hook_event_name": None}),
    ("codex", {"type": 7}),
    (None, {"hook_event_name": "Stop"}),
    ("claude", ["Stop"]),                                   # not an object
    ("claude", "Stop"),
])
def test_what_muxd_has_no_use_for_is_none(agent, payload):
    assert hook_fact(agent, payload, AT) is None


def test_a_bad_field_costs_that_field_only():
    fact = claude("PreToolUse", tool_name=["Bash"], tool_input=17, session_id=3, agent_id={"x": 1})
    assert fact == HookFact(agent="claude", event="tool_started", hook_event="PreToolUse", observed_at=AT)
    stop = claude("Stop", last_assistant_message=None, background_tasks="many")
    assert stop.event == "stopped" and stop.answer is None and stop.background is None
    counted = claude("Stop", background_tasks=[None, "x", {"status": "running"}, {"status": "completed"}, {}])
    assert counted.background == 2  # a task with no status still runs, as far as anyone knows
    assert hook_fact("claude", {"hook_event_name": "Stop"}, "not a time") is None
    assert hook_fact(" Claude ", {"hook_event_name": "Stop"}, AT).agent == "claude"


def test_a_tool_input_in_one_short_line():
    assert tool_input_text({"command": "git  status\n--short"}) == "git status --short"
    assert tool_input_text({"cmd": ["bash", "-lc", "ls"]}) == "bash -lc ls"
    assert tool_input_text({"old_string": "a", "new_string": "b"}) == '{"old_string":"a","new_string":"b"}'
    assert tool_input_text("raw text") == "raw text"
    assert tool_input_text({}) is None and tool_input_text(None) is None and tool_input_text(3) is None
    long = tool_input_text({"command": "x" * 1000})
    assert len(long) == TOOL_INPUT_MAX_CHARS and long.endswith("…")
    assert tool_input_text({1: "not a string key", "a": object()}) is not None  # JSON of anything
    assert tool_input_text({"command": "", "file_path": "/w/f"}) == "/w/f"  # an empty field says nothing


def test_real_captures_read_as_labelled():
    """hook_payload_data/<agent>/<NN>_<event>.json: a payload a real CLI sent, named by the
    muxd event it must give ("none" for one muxd has no use for)."""
    captures = sorted(CAPTURES.glob("*/*.json")) if CAPTURES.is_dir() else []
    read = {f"{p.parent.name}/{p.name}": hook_fact(p.parent.name, json.loads(p.read_text()), AT) for p in captures}
    expected = {name: name.rsplit("/", 1)[1].split("_", 1)[1].removesuffix(".json") for name in read}
    assert {name: fact.event if fact else "none" for name, fact in read.items()} == expected


CLINE_BASE = {"taskId": "conv_1", "sessionContext": {"rootSessionId": "1795_tpg25"}, "agent_id": "agent_1",
              "parent_agent_id": None, "workspaceRoots": ["/work"]}


def cline(name: str, **fields) -> HookFact | None:
    return hook_fact("cline", {**CLINE_BASE, "hookName": name, **fields}, AT)


def test_cline_turn_from_run_start_to_end():
    start = cline("agent_start", taskStart={"taskMetadata": {}})
    assert start.event == "prompt_submitted" and start.session_id == "1795_tpg25" and start.subagent_id is None
    prompt = cline("prompt_submit", userPromptSubmit={"prompt": "run a command", "attachments": []})
    assert (prompt.event, prompt.prompt) == ("prompt_submitted", "run a command")
    tool = cline("tool_call", tool_call={"id": "c1", "name": "run_commands", "input": {"commands": ["echo hi"]}})
    assert (tool.event, tool.tool, tool.tool_input) == ("tool_started", "run_commands", "echo hi")
    done = cline("tool_result", tool_result={"name": "run_commands", "input": {"commands": ["echo hi"]},
                                             "output": "boom", "error": "exit\ncode 1"})
    assert (done.event, done.tool, done.message) == ("tool_finished", "run_commands", "exit code 1")
    end = cline("agent_end", turn={"outputText": "done now.", "status": "completed"})
    assert (end.event, end.answer, end.hook_event) == ("stopped", "done now.", "agent_end")


def test_cline_failed_aborted_and_ended_runs():
    failed = cline("agent_error", error={"name": "APICallError", "message": "429 rate limit exceeded"})
    assert failed.event == "stop_failed" and failed.message == "429 rate limit exceeded"
    assert failed.error_type == "rate_limited"
    aborted = cline("agent_abort", reason="Run aborted by user")
    assert (aborted.event, aborted.message) == ("interrupted", "Run aborted by user")
    assert cline("session_shutdown").event == "session_ended"
    assert cline("agent_resume").event == "prompt_submitted"


def test_cline_subagent_and_odd_payloads():
    sub = cline("tool_call", agent_id="agent_2", parent_agent_id="agent_1", tool_call={"name": "read_files"})
    assert sub.subagent_id == "agent_2" and sub.tool == "read_files" and sub.tool_input is None
    assert cline("pre_compact") is None
    assert hook_fact("cline", {"hookName": "tool_call", "tool_call": "not a mapping"}, AT).tool is None
    bare = hook_fact("cline", {"hookName": "agent_end", "turn": None, "sessionContext": 3}, AT)
    assert bare.event == "stopped" and bare.answer is None and bare.session_id is None
