"""The fake model servers the real-CLI tests drive, checked on their own (no CLI needed):
the event shapes each API streams, scripted failures, side requests and recording."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from typing import Any

import pytest

from muxd.testing.fake_models import (
    AnthropicFake, Call, Fail, GeminiFake, OpenAIChatFake, OpenAIResponsesFake, Pause, Say, Think,
)
from muxd.testing.fake_models.mcp_agents import mcp_turns, tool_results
from muxd.testing.patience import stretched


def post(url: str, body: dict[str, Any]) -> tuple[int, str]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(),
                                      headers={"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=stretched(10)) as reply:
            return reply.status, reply.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def events(text: str) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in text.splitlines()
            if line.startswith("data: ") and line != "data: [DONE]"]


def test_anthropic_streams_thinking_text_and_tool_use_then_fails_as_scripted():
    fake = AnthropicFake([[Think(2, 0), Say("Hi there", 0), Call("Bash", {"command": "ls"}, 0)],
                          [Fail(529, "Overloaded", times=1), Say("ok", 0)]])
    with fake as port:
        url = f"http://127.0.0.1:{port}/v1/messages?beta=true"
        status, text = post(url, {"stream": True, "tools": [{"name": "Bash"}], "messages": []})
        assert status == 200
        kinds = [e["type"] for e in events(text)]
        assert kinds[0] == "message_start" and kinds[-2:] == ["message_delta", "message_stop"]
        deltas = [e["delta"]["type"] for e in events(text) if e["type"] == "content_block_delta"]
        assert {"thinking_delta", "text_delta", "input_json_delta"} <= set(deltas)
        tool_json = "".join(e["delta"].get("partial_json", "") for e in events(text) if "delta" in e)
        assert json.loads(tool_json) == {"command": "ls"}
        assert events(text)[-2]["delta"]["stop_reason"] == "tool_use"
        # The usage it reported, kept for tests to compare a CLI's own record with.
        start, delta = events(text)[0]["message"]["usage"], events(text)[-2]["usage"]
        assert fake.main_requests()[0].usage == {**start, **delta}
        # A side request (no tools) never takes a turn; the main one fails once, then answers.
        assert post(url, {"stream": False, "messages": []})[0] == 200
        status, text = post(url, {"stream": True, "tools": [{"name": "Bash"}], "messages": []})
        assert status == 529 and json.loads(text)["error"]["type"] == "overloaded_error"
        assert post(url, {"stream": True, "tools": [{"name": "Bash"}], "messages": []})[0] == 200
        assert [r.turn for r in fake.main_requests()] == [0, 1, 1]
        assert post(f"http://127.0.0.1:{port}/v1/messages/count_tokens", {"messages": []})[0] == 200


def test_responses_streams_reasoning_and_a_function_call_and_fails_in_stream():
    call = Call("exec_command", {"cmd": "ls", "sandbox_permissions": "require_escalated"}, 0)
    fake = OpenAIResponsesFake([[Think(2, 0), call], [Fail(500, "boom", in_stream=True)]])
    with fake as port:
        url = f"http://127.0.0.1:{port}/v1/responses"
        text = post(url, {"stream": True, "tools": [{"name": "exec_command"}], "input": []})[1]
        kinds = [e["type"] for e in events(text)]
        assert "response.reasoning_summary_text.delta" in kinds and kinds[-1] == "response.completed"
        assert fake.main_requests()[0].usage == events(text)[-1]["response"]["usage"]
        done = [e["item"] for e in events(text) if e["type"] == "response.output_item.done"]
        assert done[-1]["type"] == "function_call" and json.loads(done[-1]["arguments"]) == call.args
        title = post(url, {"stream": True, "tools": [], "input": []})[1]  # side request: a title
        assert events(title)[-1]["type"] == "response.completed"
        failed = events(post(url, {"stream": True, "tools": [{"name": "x"}], "input": []})[1])
        assert failed[-1]["type"] == "response.failed" and failed[-1]["response"]["error"]["code"]


def test_responses_calls_an_mcp_tool_in_its_server_namespace_as_codex_does():
    fake = OpenAIResponsesFake([[Call("mcp__muxd__list_panes", {}, 0), Call("exec_command", {"cmd": "ls"}, 0)]])
    with fake as port:
        text = post(f"http://127.0.0.1:{port}/v1/responses", {"stream": True, "tools": [{"name": "x"}], "input": []})[1]
        calls = [e["item"] for e in events(text) if e["type"] == "response.output_item.done"]
        assert [(c["name"], c.get("namespace")) for c in calls] == [("list_panes", "mcp__muxd"), ("exec_command", None)]


def test_tool_results_reads_back_what_claude_code_sent_once_each():
    fake = AnthropicFake()
    fake.script.extend(mcp_turns(("list_panes", {}), ("kill_pane", {"pane_id": "%0"})))
    assert len(fake.script.turns) == 3
    calls = [{"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "mcp__muxd__list_panes",
                                                "input": {}}]},
             {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": '{"panes": []}'}]},
             {"role": "assistant", "content": [{"type": "tool_use", "id": "t2", "name": "mcp__muxd__kill_pane",
                                                "input": {"pane_id": "%0"}}]},
             {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2", "is_error": True, "content": [
                 {"type": "text", "text": "Error executing tool kill_pane: x"}]}]}]
    with fake as port:
        for upto in (2, 4):  # each request repeats the conversation so far
            post(f"http://127.0.0.1:{port}/v1/messages", {"stream": True, "tools": [{"name": "x"}],
                                                          "messages": calls[:upto]})
    listed, killed = tool_results(fake)
    assert (listed.tool, listed.data, listed.is_error) == ("list_panes", {"panes": []}, False)
    assert (killed.name, killed.arguments, killed.is_error) == ("mcp__muxd__kill_pane", {"pane_id": "%0"}, True)
    assert killed.text == "Error executing tool kill_pane: x" and killed.data is None


def test_tool_results_reads_back_what_codex_sent_without_its_wall_time():
    items = [{"type": "function_call", "call_id": "c1", "name": "agent_summary", "namespace": "mcp__muxd",
              "arguments": '{"pane_id": "%1"}'},
             {"type": "function_call", "call_id": "c2", "name": "exec_command", "arguments": "{}"},
             {"type": "function_call_output", "call_id": "c1",
              "output": 'Wall time: 0.0062 seconds\nOutput:\n{"pane_id": "%1"}'},
             {"type": "function_call_output", "call_id": "c2", "output": [
                 {"type": "input_text", "text": "Wall time: 0.0070 seconds\nOutput:"},
                 {"type": "input_text", "text": "Error executing tool exec_command: no"}]}]
    fake = OpenAIResponsesFake()
    with fake as port:
        post(f"http://127.0.0.1:{port}/v1/responses", {"stream": True, "tools": [{"name": "x"}], "input": items})
    summary, command = tool_results(fake)
    assert (summary.tool, summary.arguments, summary.data, summary.is_error) == (
        "agent_summary", {"pane_id": "%1"}, {"pane_id": "%1"}, False)
    assert (command.name, command.tool, command.is_error) == ("exec_command", None, True)
    assert command.text == "Error executing tool exec_command: no"


def test_tool_results_reads_back_what_gemini_cli_sent_unwrapped():
    """Gemini CLI 0.61's shapes: the output in an `<untrusted_context>` wrapper (its end tag
    escaped inside), a tool error as its own sentence quoting the MCP result, an unknown tool."""
    refused = {"name": "kill_pane", "response": {"content": [
        {"type": "text", "text": "forbidden: kill_pane is dangerous: agent:%1 has execute_advanced"}], "isError": True}}
    error = ('MCP tool \'kill_pane\' reported tool error for function call: {"name":"kill_pane","args":'
             '{"pane_id":"%0 with response: "}} with response: ' + json.dumps([{"functionResponse": refused}]))
    contents = [
        {"role": "user", "parts": [{"text": "use muxd"}]},
        {"role": "model", "parts": [{"text": "Calling."}, {"functionCall": {
            "id": "g1", "name": "mcp_muxd_list_panes", "args": {}}}, {"functionCall": {
            "id": "g2", "name": "mcp_muxd_kill_pane", "args": {"pane_id": "%0 with response: "}}}, {"functionCall": {
            "id": "g3", "name": "mcp_muxd_nope", "args": {}}}]},
        {"role": "user", "parts": [
            {"functionResponse": {"id": "g1", "name": "mcp_muxd_list_panes", "response": {
                "output": '<untrusted_context>\n{"panes": [], "note": "&lt;/untrusted_context&gt;"}\n</untrusted_context>'}}},
            {"functionResponse": {"id": "g2", "name": "mcp_muxd_kill_pane", "response": {"error": error}}},
            {"functionResponse": {"id": "g3", "name": "mcp_muxd_nope", "response": {
                "error": 'Tool "mcp_muxd_nope" not found.'}}}]}]
    fake = GeminiFake()
    with fake as port:
        post(f"http://127.0.0.1:{port}/v1beta/models/m:streamGenerateContent?alt=sse", {"contents": contents})
    listed, killed, unknown = tool_results(fake)
    assert (listed.tool, listed.data, listed.is_error) == (
        "list_panes", {"panes": [], "note": "</untrusted_context>"}, False)
    assert (killed.tool, killed.arguments, killed.is_error) == ("kill_pane", {"pane_id": "%0 with response: "}, True)
    assert killed.text == "forbidden: kill_pane is dangerous: agent:%1 has execute_advanced"
    assert (unknown.tool, unknown.text, unknown.is_error) == ("nope", 'Tool "mcp_muxd_nope" not found.', True)


def test_chat_completions_stream_ends_with_usage_and_done():
    fake = OpenAIChatFake([[Say("Hello world", 0)], [Fail(500, "down")]])
    with fake as port:
        url = f"http://127.0.0.1:{port}/v1/chat/completions"
        status, text = post(url, {"stream": True, "messages": []})
        assert status == 200 and text.rstrip().endswith("data: [DONE]")
        chunks = events(text)
        assert "".join(c["choices"][0]["delta"].get("content", "") for c in chunks) == "Hello world"
        assert chunks[-1]["choices"][0]["finish_reason"] == "stop" and chunks[-1]["usage"]["total_tokens"]
        assert fake.main_requests()[0].usage == chunks[-1]["usage"]
        assert post(url, {"stream": True, "messages": []})[0] == 500


@pytest.mark.parametrize("action", ["generateContent", "countTokens"])
def test_gemini_side_requests_answer_json(action):
    with GeminiFake([]) as port:
        schema = {"type": "object", "properties": {"reasoning": {"type": "string"},
                                                   "next_speaker": {"type": "string", "enum": ["user", "model"]}}}
        status, text = post(f"http://127.0.0.1:{port}/v1beta/models/m:{action}",
                            {"contents": [], "generationConfig": {"responseJsonSchema": schema}})
        assert status == 200
        if action == "generateContent":
            answer = json.loads(json.loads(text)["candidates"][0]["content"]["parts"][0]["text"])
            assert answer == {"reasoning": "fake", "next_speaker": "user"}


def test_gemini_streams_text_and_a_function_call():
    fake = GeminiFake([[Say("Hi there", 0), Call("run_shell_command", {"command": "ls"}, 0)]])
    with fake as port:
        text = post(f"http://127.0.0.1:{port}/v1beta/models/m:streamGenerateContent?alt=sse", {"contents": []})[1]
        parts = [p for e in events(text) for p in e["candidates"][0]["content"]["parts"]]
        assert "".join(p.get("text", "") for p in parts) == "Hi there"
        assert {"functionCall": {"name": "run_shell_command", "args": {"command": "ls"}}} in parts
        assert events(text)[-1]["candidates"][0]["finishReason"] == "STOP"
        assert fake.main_requests()[0].usage == events(text)[-1]["usageMetadata"]


def test_a_second_conversation_plays_its_own_script_whatever_the_order():
    # A lead and the teammate it spawned share one server; their requests interleave.
    fake = AnthropicFake([[Say("lead one", 0)], [Say("lead two", 0)]])
    fake.converse("BRIEF-7", [[Say("teammate one", 0)]])
    with fake as port:
        url = f"http://127.0.0.1:{port}/v1/messages"

        def ask(first: str) -> str:
            body = {"stream": True, "tools": [{"name": "Agent"}],
                    "messages": [{"role": "user", "content": [{"type": "text", "text": first}]},
                                 {"role": "user", "content": "BRIEF-7 quoted later does not count"}]}
            return "".join(e["delta"].get("text", "") for e in events(post(url, body)[1]) if "delta" in e)

        assert ask("hello") == "lead one"
        assert ask("<teammate-message>BRIEF-7: go</teammate-message>") == "teammate one"
        assert ask("hello") == "lead two"
        assert [(r.conversation, r.turn) for r in fake.main_requests()] == [("", 0), ("BRIEF-7", 0), ("", 1)]
        assert [r.turn for r in fake.main_requests("BRIEF-7")] == [0]


@pytest.mark.parametrize("fake, path", [
    (AnthropicFake, "/v1/messages"), (OpenAIResponsesFake, "/v1/responses"),
    (OpenAIChatFake, "/v1/chat/completions"), (GeminiFake, "/v1beta/models/m:streamGenerateContent"),
])
def test_a_rate_limit_answers_with_its_headers(fake: type, path: str) -> None:
    # A 429 with the time to wait and the limit's reset, as the real APIs send them.
    headers = {"retry-after": "8", "anthropic-ratelimit-unified-reset": "1790000000"}
    server = fake([[Fail(429, "Rate limited", headers=headers), Say("ok", 0)]])
    with server as port:
        request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method="POST", data=json.dumps(
            {"stream": True, "tools": [{"name": "x", "type": "function"}], "messages": [], "input": [],
             "contents": []}).encode(), headers={"Content-Type": "application/json"})
        with pytest.raises(urllib.error.HTTPError) as failed:
            urllib.request.urlopen(request, timeout=stretched(10))
        assert failed.value.code == 429
        assert {key: failed.value.headers[key] for key in headers} == headers


def limited_reply(fake: type, path: str) -> tuple[float, urllib.error.HTTPError]:
    """(when it was asked, the 429) of a fake whose first answer is a usage limit resetting in 90 s."""
    server = fake([[Fail(429, "The usage limit has been reached", resets_in_s=90), Say("ok", 0)]])
    with server as port:
        request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method="POST", data=json.dumps(
            {"stream": True, "tools": [{"name": "x", "type": "function"}], "messages": [], "input": [],
             "contents": []}).encode(), headers={"Content-Type": "application/json"})
        asked = time.time()
        with pytest.raises(urllib.error.HTTPError) as failed:
            urllib.request.urlopen(request, timeout=stretched(10))
        return asked, failed.value


def test_a_usage_limit_says_its_reset_as_each_provider_does() -> None:
    # Anthropic (Claude Code reads the unified limit's headers)
    asked, reply = limited_reply(AnthropicFake, "/v1/messages")
    assert reply.code == 429 and json.loads(reply.read())["error"]["type"] == "rate_limit_error"
    assert reply.headers["anthropic-ratelimit-unified-status"] == "rejected"
    assert reply.headers["retry-after"] == "90"
    assert abs(int(reply.headers["anthropic-ratelimit-unified-reset"]) - (asked + 90)) <= 2
    # OpenAI Responses (Codex reads the error's type and resets_at)
    asked, reply = limited_reply(OpenAIResponsesFake, "/v1/responses")
    error = json.loads(reply.read())["error"]
    assert (reply.code, error["type"], error["resets_in_seconds"]) == (429, "usage_limit_reached", 90)
    assert abs(error["resets_at"] - (asked + 90)) <= 2 and error["plan_type"]
    # Gemini (RESOURCE_EXHAUSTED, the quota broken, RetryInfo's delay, said in the message too)
    _, reply = limited_reply(GeminiFake, "/v1beta/models/m:streamGenerateContent")
    error = json.loads(reply.read())["error"]
    assert (reply.code, error["status"]) == (429, "RESOURCE_EXHAUSTED") and "Please retry in 90s." in error["message"]
    kinds = {detail["@type"].rsplit(".", 1)[1]: detail for detail in error["details"]}
    assert kinds["RetryInfo"]["retryDelay"] == "90s"
    assert kinds["QuotaFailure"]["violations"][0]["quotaId"].startswith("GenerateRequestsPerMinute")


def test_a_failure_after_a_pause_comes_that_late() -> None:
    fake = GeminiFake([[Pause(0.5), Fail(429, "slow refusal", times=1), Say("ok", 0)]])
    with fake as port:
        url = f"http://127.0.0.1:{port}/v1beta/models/m:streamGenerateContent"
        asked = time.monotonic()
        assert post(url, {"contents": []})[0] == 429
        assert time.monotonic() - asked >= 0.5
        assert post(url, {"contents": []})[0] == 200  # then the turn plays (its pause too)
