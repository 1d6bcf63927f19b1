"""The session-log parsers on real logs: what Claude Code 2.1.330, Codex 0.169, Gemini CLI 0.61,
Aider 0.86, Qwen Code 0.15 and pi 0.73 wrote while talking to the fake model servers
(tests/session_log_data, made by its capture.py, Qwen's and pi's by hand in a muxd pane; each
turn's byte range and the usage the fake reported, theirs left out, are in `<agent>.turns.json`)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from muxd.config import SESSION_LOG_JSON_DEPTH_MAX, SESSION_LOG_LINE_MAX_BYTES
from muxd.executions.session_logs import PARSERS, TurnError, TurnFacts, aider, claude, codex, gemini, pi, qwen
from muxd.executions.session_logs._records import json_value
from muxd.executions.session_logs.facts import CallTokens

DATA = Path(__file__).parent / "session_log_data"
LOGS = {"claude": "claude.jsonl", "codex": "codex.jsonl", "gemini": "gemini.jsonl", "aider": "aider.chat.history.md",
        "qwen": "qwen.jsonl", "pi": "pi.jsonl"}
ANSWER = "Hello there, this is the scripted answer."
CLAUDE_SESSION = "4e3a0430-04d7-4ef4-98a3-7934c4ec3c05"
CODEX_SESSION = "01a20d3f-c51c-7d03-998a-cf25152bad70"
CLAUDE_WORK = "/tmp/muxd-capture/claude/work"


def turns(agent: str) -> list[tuple[str, bytes, list[dict[str, Any]]]]:
    """(prompt, the bytes appended from its submission to the next one, the fake's usage)."""
    data = (DATA / LOGS[agent]).read_bytes()
    listed = json.loads((DATA / f"{agent}.turns.json").read_text())["turns"]
    ends = [t["start"] for t in listed[1:]] + [len(data)]
    return [(t["prompt"], data[t["start"]:end], t["fake_usage"]) for t, end in zip(listed, ends)]


def turn(agent: str, prompt: str) -> tuple[bytes, list[dict[str, Any]]]:
    return next((data, usage) for p, data, usage in turns(agent) if p == prompt)


# ---------------------------------------------------------------- token counts = the fake's usage

def fake_counts(agent: str, usage: list[dict[str, Any]]) -> tuple[int, int]:
    """(input, output) summed over what the fake reported, read as TurnFacts defines them."""
    if agent == "claude":
        return (sum(u["input_tokens"] + u["cache_creation_input_tokens"] + u["cache_read_input_tokens"] for u in usage),
                sum(u["output_tokens"] for u in usage))
    if agent == "codex":
        return sum(u["input_tokens"] for u in usage), sum(u["output_tokens"] for u in usage)
    return sum(u["promptTokenCount"] for u in usage), sum(u["candidatesTokenCount"] for u in usage)


@pytest.mark.parametrize("agent,prompt", [("claude", "say hello"), ("claude", "make a dir and a file"),
                                          ("claude", "overload please"), ("codex", "say hello"),
                                          ("codex", "make a dir and a file"), ("gemini", "say hello"),
                                          ("gemini", "run it and write")])
def test_token_counts_are_what_the_fake_server_reported(agent, prompt):
    data, usage = turn(agent, prompt)
    facts = PARSERS[agent](data)
    inputs, outputs = fake_counts(agent, usage)
    assert (facts.input_tokens, facts.output_tokens) == (inputs, outputs)
    assert facts.tokens_used == inputs + outputs
    assert facts.api_calls == len(usage), "each API call once, however many lines repeat its usage"


# ---------------------------------------------------------------- Claude Code

def test_claude_answer():
    data, usage = turn("claude", "say hello")
    assert claude.parse_turn(data) == TurnFacts(
        prompt="say hello", response=ANSWER, input_tokens=usage[0]["input_tokens"],
        output_tokens=usage[0]["output_tokens"], cache_read_tokens=0, cache_write_tokens=0,
        tokens_used=usage[0]["input_tokens"] + usage[0]["output_tokens"], api_calls=1,
        context_used=usage[0]["input_tokens"] + usage[0]["output_tokens"],  # one call: the whole conversation
        session_id=CLAUDE_SESSION, model="claude-opus-5-5", complete=True,
        call_tokens=[CallTokens(input=usage[0]["input_tokens"], output=usage[0]["output_tokens"],
                                model="claude-opus-5-5")])


def test_claude_tools_and_files():
    facts = claude.parse_turn(turn("claude", "make a dir and a file")[0])
    assert facts.response == "I will run a command.\n\nNow a file.\n\nAll done.\n\nSecond block."
    assert facts.tool_calls == ["Bash(mkdir -p demo)", f"Write({CLAUDE_WORK}/new.txt)"]
    assert facts.files_written == [f"{CLAUDE_WORK}/new.txt"]
    assert facts.complete and not facts.interrupted and facts.error is None


def test_claude_denied_write_is_not_a_file_written():
    facts = claude.parse_turn(turn("claude", "write another file")[0])
    assert facts.tool_calls == [f"Write({CLAUDE_WORK}/denied.txt)"]
    assert facts.files_written == []
    assert facts.interrupted and not facts.complete  # Esc on the dialog interrupts the turn


def test_claude_interrupted_mid_answer():
    facts = claude.parse_turn(turn("claude", "be slow")[0])
    assert facts.response == "Streaming slowly now." and facts.interrupted and not facts.complete


def test_claude_api_error_ends_the_turn():
    facts = claude.parse_turn(turn("claude", "fail please")[0])
    assert facts.error == TurnError(type="api_error", message="API Error: 400 Bad request thing")
    assert facts.complete and facts.response is None and facts.model is None


def test_claude_retried_overload_leaves_no_error():
    facts = claude.parse_turn(turn("claude", "overload please")[0])
    assert facts.response == "Recovered." and facts.error is None and facts.complete


def test_claude_last_turn_wins():
    data = (DATA / LOGS["claude"]).read_bytes()
    assert claude.parse_turn(data).prompt == "fail please"


def test_claude_slash_command_prompt():
    line = {"type": "user", "sessionId": CLAUDE_SESSION, "message": {"role": "user", "content":
            "<command-name>/review</command-name>\n<command-message>review</command-message>\n"
            "<command-args>main</command-args>"}}
    assert claude.parse_turn(json.dumps(line).encode() + b"\n").prompt == "/review main"


# ---------------------------------------------------------------- Codex

CODEX_CONTEXT_WINDOW = 258400  # what Codex 0.169's token_count events name for gpt-5-codex

def test_codex_answer():
    data, usage = turn("codex", "say hello")
    assert codex.parse_turn(data) == TurnFacts(
        prompt="say hello", response=ANSWER, input_tokens=usage[0]["input_tokens"],
        output_tokens=usage[0]["output_tokens"], cache_read_tokens=0, cache_write_tokens=0,
        tokens_used=usage[0]["total_tokens"], api_calls=1, session_id=CODEX_SESSION, model="gpt-5-codex",
        context_used=usage[0]["total_tokens"], context_max=CODEX_CONTEXT_WINDOW, complete=True,
        call_tokens=[CallTokens(input=usage[0]["input_tokens"], output=usage[0]["output_tokens"])])


def test_codex_tools_and_files():
    data, usage = turn("codex", "make a dir and a file")
    facts = codex.parse_turn(data)
    assert facts.response == "I will run a command.\n\nAll done.\n\nSecond block."
    assert facts.tool_calls == ["exec_command(mkdir -p demo && echo made)", "exec_command(apply_patch <<'EOF' …)"]
    assert facts.files_written == ["/tmp/muxd-capture/codex/work/hello.txt"]
    assert facts.tokens_used == sum(u["total_tokens"] for u in usage)


def test_codex_interrupted_counts_no_stale_tokens():
    facts = codex.parse_turn(turn("codex", "be slow")[0])
    assert facts.interrupted and not facts.complete and facts.response == "Streaming slowly now."
    assert facts.tokens_used is None, "the token_count repeated after Esc is the previous turn's"


def test_codex_failed_turn():
    facts = codex.parse_turn(turn("codex", "fail please")[0])
    assert facts.error == TurnError(
        type="overloaded", message="We’re currently experiencing high demand, which may cause temporary errors.")
    assert facts.complete and facts.response is None


def test_codex_older_rollout_lines():
    """Releases before token_usage_record: user_message/agent_message/patch_apply_end events,
    token_count events (the same totals again with a rate-limit update count once), custom
    apply_patch calls."""
    usage = {"input_tokens": 100, "cached_input_tokens": 40, "output_tokens": 7, "total_tokens": 107}
    events = [
        {"type": "user_message", "message": "patch it"},
        {"type": "token_count", "info": {"total_token_usage": {"total_tokens": 107}, "last_token_usage": usage}},
        {"type": "token_count", "info": {"total_token_usage": {"total_tokens": 107}, "last_token_usage": usage}},
        {"type": "patch_apply_end", "success": True, "changes": {"/w/a.txt": {"add": {"content": "x"}}}},
        {"type": "agent_message", "message": "Patched."},
        {"type": "task_complete", "last_agent_message": "Patched."},
    ]
    call = {"type": "custom_tool_call", "name": "apply_patch", "call_id": "c1",
            "input": "*** Begin Patch\n*** Update File: a.txt\n@@\n-x\n+y\n*** End Patch"}
    lines = [{"type": "event_msg", "payload": events[0]}, {"type": "response_item", "payload": call},
             *({"type": "event_msg", "payload": e} for e in events[1:])]
    facts = codex.parse_turn(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
    assert facts == TurnFacts(prompt="patch it", response="Patched.", input_tokens=100, output_tokens=7,
                              cache_read_tokens=40, tokens_used=107, api_calls=1, context_used=107,
                              tool_calls=["apply_patch(a.txt)"], files_written=["/w/a.txt"], complete=True,
                              call_tokens=[CallTokens(input=100, output=7, cache_read=40)])


# ---------------------------------------------------------------- Gemini CLI

def test_gemini_answer_and_tools():
    facts = gemini.parse_turn(turn("gemini", "run it and write")[0])
    assert facts.prompt == "run it and write" and facts.response == "Running.\n\nThe command finished."
    assert facts.tool_calls == ["run_shell_command(mkdir -p gdemo)", "write_file(/tmp/muxd-capture/gemini/work/g.txt)"]
    assert facts.files_written == ["/tmp/muxd-capture/gemini/work/g.txt"]
    assert facts.model == "gemini-3.1-pro-preview" and facts.complete


def test_gemini_error():
    facts = gemini.parse_turn(turn("gemini", "fail please")[0])
    assert facts.error is not None and facts.error.type == "api_error"
    assert '"message":"Bad request thing"' in facts.error.message and facts.complete


def test_gemini_session_id_is_in_the_header():
    assert gemini.parse_turn((DATA / LOGS["gemini"]).read_bytes()).session_id == "1b394265-c127-43fa-b99d-612d60062e91"


# ---------------------------------------------------------------- Aider

def test_aider_turns():
    facts = aider.parse_turn(turn("aider", "make a file")[0])
    reply = 'I will create a new file.\n\nhello_fake.py\n```\nprint("hello from the fake model")\n```'
    assert facts == TurnFacts(prompt="make a file", response=reply, input_tokens=666, output_tokens=23,
                              tokens_used=689, api_calls=1, context_used=689, files_written=["hello_fake.py"],
                              complete=True)
    whole = aider.parse_turn((DATA / LOGS["aider"]).read_bytes())
    assert whole.prompt == "fail please" and whole.model == "openai/fake-model"
    message = "litellm.AuthenticationError: AuthenticationError: OpenAIException - bad key"
    assert whole.error == TurnError(type="auth_error", message=message) and whole.complete


def test_aider_counts_are_its_own_rounded_ones():
    log = ("#### hi  \n\nHello.\n\n"
           "> Tokens: 12k sent, 2.3k cache hit, 1.1k received. Cost: $0.01 message, $0.02 session.  \n")
    facts = aider.parse_turn(log.encode())
    assert (facts.input_tokens, facts.cache_read_tokens, facts.output_tokens) == (12000, 2300, 1100)


# ---------------------------------------------------------------- Qwen Code and pi

QWEN_WORK = "/tmp/muxd-capture/qwen/work"


def test_qwen_tools_files_and_usage():
    facts = qwen.parse_turn(turn("qwen", "write a file and list it")[0])
    assert facts.response == "Writing.\n\nAll done." and facts.complete and facts.error is None
    assert facts.tool_calls == [f"write_file({QWEN_WORK}/new.txt)", f"list_directory({QWEN_WORK})"]
    assert facts.files_written == [f"{QWEN_WORK}/new.txt"]
    assert facts.api_calls == 3 and facts.tokens_used == sum(c.input + c.output for c in facts.call_tokens)
    assert facts.session_id == "11ab457d-9593-4f71-8d17-b7eda0c7945d" and facts.model == "fake-model"


def test_qwen_api_error_ends_the_turn():
    facts = qwen.parse_turn((DATA / LOGS["qwen"]).read_bytes())
    assert facts.prompt == "fail please" and facts.complete and facts.response is None
    assert facts.error == TurnError(type="api_error", message="400 Bad request thing")


def test_pi_tools_files_and_usage():
    facts = pi.parse_turn(turn("pi", "write a file and list it")[0])
    assert facts.response == "Writing.\n\nAll done." and facts.complete and facts.error is None
    assert facts.tool_calls == ["write(new.txt)", "bash(ls)"] and facts.files_written == ["new.txt"]
    assert facts.api_calls == 3 and facts.tokens_used == sum(c.input + c.output for c in facts.call_tokens)
    assert facts.model == "fake-model"


def test_pi_failed_request_ends_the_turn_with_its_error():
    facts = pi.parse_turn((DATA / LOGS["pi"]).read_bytes())
    assert facts.prompt == "fail please" and facts.complete and facts.response is None
    assert facts.error == TurnError(type="api_error", message="400 Bad request thing")
    assert facts.api_calls == 0, "a failed request's zero usage is no call"
    assert facts.session_id == "01a22841-129b-7401-9993-b2dbd2de9fab"


# ---------------------------------------------------------------- any log, any bytes

@pytest.mark.parametrize("agent", sorted(LOGS))
def test_a_partial_last_line_is_left_for_later(agent):
    prompt, data, _ = turns(agent)[1]
    whole = PARSERS[agent](data)
    cut = data.rstrip(b"\n").rfind(b"\n") + 1  # the start of the last line
    for end in (cut + 1, len(data) - 1):  # a few bytes of it, or all but its newline
        assert PARSERS[agent](data[:end]) == PARSERS[agent](data[:cut])
    assert whole.prompt == prompt


@pytest.mark.parametrize("agent", sorted(LOGS))
def test_any_slice_parses_without_raising(agent):
    data = (DATA / LOGS[agent]).read_bytes()
    rng = random.Random(agent)
    for _ in range(200):
        start = rng.randrange(len(data))
        facts = PARSERS[agent](data[start:start + rng.randrange(1, 4000)])
        assert isinstance(facts, TurnFacts)
    assert PARSERS[agent](b"") == TurnFacts()


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini", "qwen", "pi"])
def test_lines_that_are_not_the_logs_own_are_skipped(agent):
    assert PARSERS[agent](b'\x00\xff not json\n[1, 2]\n"a"\n{"type": 5, "message": []}\n') == TurnFacts()


DEEP_LINE = b"[" * 100_000 + b"]" * 100_000 + b"\n"


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini"])
def test_a_line_nested_too_deep_or_too_long_is_skipped_and_the_rest_kept(agent):
    """100,000 brackets made the decoder raise RecursionError, and the execution never ended."""
    _, data, _ = turns(agent)[0]
    first_line = data.index(b"\n") + 1
    object_deep = b'{"a":' * 100_000 + b"1" + b"}" * 100_000 + b"\n"
    long_prompt = "x" * SESSION_LOG_LINE_MAX_BYTES  # read, it would start a turn of its own
    too_long = json.dumps({"claude": {"type": "user", "message": {"content": long_prompt}},
                           "codex": {"type": "event_msg", "payload": {"type": "user_message", "message": long_prompt}},
                           "gemini": {"id": "long", "type": "user", "content": long_prompt}}[agent]).encode() + b"\n"
    hostile = data[:first_line] + DEEP_LINE + object_deep + data[first_line:] + too_long
    assert PARSERS[agent](hostile) == PARSERS[agent](data)


def test_nesting_inside_strings_is_not_depth():
    brackets = "[" * (SESSION_LOG_JSON_DEPTH_MAX * 10)
    line = json.dumps({"type": "x", "text": brackets, "quoted": '\\"[[[' + brackets}).encode()
    assert json_value(line) == json.loads(line)
    assert json_value(b"[" * SESSION_LOG_JSON_DEPTH_MAX + b"]" * SESSION_LOG_JSON_DEPTH_MAX) is not None
    assert json_value(b"[" * (SESSION_LOG_JSON_DEPTH_MAX + 1) + b"]" * (SESSION_LOG_JSON_DEPTH_MAX + 1)) is None


def test_codex_call_arguments_nested_too_deep_are_shown_as_text():
    """A function call's arguments are JSON in a string: decoded with the same bounds."""
    deep = "[" * 100_000 + "]" * 100_000
    lines = [{"type": "event_msg", "payload": {"type": "user_message", "message": "go"}},
             {"type": "response_item", "payload": {"type": "function_call", "name": "shell", "call_id": "c1",
                                                   "arguments": deep}},
             {"type": "event_msg", "payload": {"type": "task_complete", "last_agent_message": "Done."}}]
    facts = codex.parse_turn(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
    assert facts.complete and facts.response == "Done." and facts.tool_calls == [f"shell({deep[:159]}…)"]


def test_gemini_tool_calls_of_another_shape_are_ignored():
    lines = [{"id": "1", "type": "user", "content": "go"},
             {"id": "2", "type": "gemini", "content": "Done.", "toolCalls": 5}]
    facts = gemini.parse_turn(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
    assert facts.prompt == "go" and facts.response == "Done." and facts.tool_calls == []
