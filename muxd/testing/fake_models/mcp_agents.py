"""A real Claude Code, Codex or Gemini CLI in a muxd pane that calls muxd's own MCP tools,
through the `muxd mcp` it starts as its MCP server, driven by a scripted fake model server.

`muxd mcp` reaches the test daemon (`-L NAME` and its socket directory) and presents the
pane's own `MUXD_TOKEN`, which the CLI passes on to it: the daemon sees `agent:%N`, so the
tools answer as that pane's agent may see (its own pane, its grants) and the audit names it.
The CLI calls the tools without asking (see `launch.with_mcp_server`).

The model's side is a script of tool calls whose arguments are known before the turn plays
(a task id created beforehand; the pane's id once the pane is started, added with
`fake.script.extend` before the prompt is submitted; each CLI names the tools its own way, so
`mcp_turns(..., cli=)` says which); what the CLI sent back is read from the fake's recorded
requests:

    fake = AnthropicFake()         # OpenAIResponsesFake() for Codex, GeminiFake() for Gemini CLI
    with fake:
        pane = start_mcp_agent(muxd_server, "claude", fake, tmp_path)
        try:
            fake.script.extend(mcp_turns(("agent_summary", {"pane_id": pane.pane_id}),
                                         ("claim_task", {"task_id": task_id}), done="All done."))
            pane.run_turn("work on the queue", "All done.")
            summary, claimed = tool_results(fake)
            assert summary.data["pane_id"] == pane.pane_id and not claimed.is_error
        finally:
            pane.close()

`CliPanes.start(cli, fake, mcp=True)` does the same for tests that start several CLIs.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from muxd.errors import ERROR_CODES
from muxd.testing.fake_models import launch
from muxd.testing.fake_models._http import FakeModelServer
from muxd.testing.fake_models.agent_pane import PANE_HEIGHT, PANE_WIDTH, STATE_TIMEOUT_S, AgentPane
from muxd.testing.fake_models.script import Call, Say, Turn
from muxd.testing.patience import Deadline
from muxd.testing.server import MuxdTestServer

CALL_DELAY_S = 0.02
RESULTS_TIMEOUT_S = 20.0
# Codex puts its own line before an MCP tool's output.
_CODEX_PREAMBLE = re.compile(r"\AWall time: [\d.]+ seconds\nOutput:\n?")
_ERROR_PREFIX = "Error executing tool "  # the MCP SDK's text for a tool that raised (not muxd's)
# Gemini CLI: the parts holding calls and results; the wrapper round a tool's output.
_GEMINI_PARTS = ("functionCall", "functionResponse")
_GEMINI_END = "</untrusted_context>"
_GEMINI_ESCAPED_END = "&lt;/untrusted_context&gt;"  # how Gemini CLI escapes the end tag inside
_GEMINI_UNTRUSTED = re.compile(r"<untrusted_context>\n?(.*?)\n?</untrusted_context>", re.DOTALL)
_GEMINI_QUOTED = " with response: "
# How each CLI names an MCP server's tools to its model.
_TOOL_PREFIXES = {"claude": f"mcp__{launch.MUXD_MCP_NAME}__", "codex": f"mcp__{launch.MUXD_MCP_NAME}__",
                  "gemini": f"mcp_{launch.MUXD_MCP_NAME}_"}
# muxd's tool errors start with their stable code: "not_found: can't find pane: %9".
_MUXD_ERROR = re.compile(r"(?:" + "|".join(map(re.escape, sorted(ERROR_CODES))) + r"): ")


class CliNotInstalled(Exception):
    """The CLI is not installed; the message says why (what .ci/install-agents noted)."""


def tool_name(tool: str, cli: str = "claude") -> str:
    """The name `cli`'s model calls muxd's `tool` by: `mcp__muxd__<tool>` (Codex: that
    namespace), Gemini CLI's `mcp_muxd_<tool>`."""
    return _TOOL_PREFIXES.get(cli, _TOOL_PREFIXES["claude"]) + tool


def mcp_call(tool: str, args: dict[str, Any] | None = None, *, delay_s: float = CALL_DELAY_S,
             cli: str = "claude") -> Call:
    """A script step calling muxd's MCP `tool` with `args`, as `cli` names it."""
    return Call(tool_name(tool, cli), dict(args or {}), delay_s=delay_s)


def mcp_turns(*calls: tuple[str, dict[str, Any]], done: str = "Done.",
              delay_s: float = CALL_DELAY_S, cli: str = "claude") -> list[Turn]:
    """One turn per `(tool, args)` call, in order (each sees the previous result come back
    first), then a turn that says `done`: `run_turn(message, done)` waits for the lot."""
    turns: list[Turn] = [[Say(f"Calling {tool}.", delay_s), mcp_call(tool, args, delay_s=delay_s, cli=cli)]
                         for tool, args in calls]
    return [*turns, [Say(done, delay_s)]]


def mcp_launch(server: MuxdTestServer, cli: str, fake: FakeModelServer, root: Path, *args: str,
               mcp_server: launch.McpServer | None = None) -> launch.AgentLaunch:
    """How to start `cli` ("claude", "codex" or "gemini") against the started `fake` with
    muxd's MCP server (`mcp_server`: configured otherwise)."""
    bin_dir, why = launch.find_cli(cli)
    if bin_dir is None:
        raise CliNotInstalled(why)
    agent = launch.LAUNCHES[cli](root, fake.url, bin_dir, *args)
    return launch.with_mcp_server(agent, mcp_server or launch.muxd_mcp_server(server))


def start_mcp_agent(server: MuxdTestServer, cli: str, fake: FakeModelServer, root: Path, *args: str,
                    session: str = "agent", size: tuple[int, int] = (PANE_WIDTH, PANE_HEIGHT),
                    timeout: float = STATE_TIMEOUT_S, mcp_server: launch.McpServer | None = None) -> AgentPane:
    """`cli` started in a new session of `server` against the started `fake`, with muxd's MCP
    server (or `mcp_server`), once Idle with its model named (the pane is closed if it never
    is). The caller closes the pane. Raises CliNotInstalled."""
    pane = AgentPane(server, mcp_launch(server, cli, fake, root, *args, mcp_server=mcp_server),
                     session=session, size=size)
    try:
        pane.start().wait_for("Idle", lambda s: s["session"]["model"], timeout=timeout,
                              what="Idle with the model named")
    except BaseException:
        pane.close()
        raise
    return pane


def start_mcp_claude(server: MuxdTestServer, fake: FakeModelServer, root: Path, *args: str,
                     **options: Any) -> AgentPane:
    """Claude Code calling muxd's MCP tools (see start_mcp_agent)."""
    return start_mcp_agent(server, "claude", fake, root, *args, **options)


def start_mcp_codex(server: MuxdTestServer, fake: FakeModelServer, root: Path, *args: str,
                    **options: Any) -> AgentPane:
    """Codex calling muxd's MCP tools (see start_mcp_agent)."""
    return start_mcp_agent(server, "codex", fake, root, *args, **options)


@dataclass(frozen=True)
class ToolResult:
    """One tool result the CLI sent back to the model, with the call it answers."""

    call_id: str
    name: str                  # as the script's Call named it: `mcp__muxd__list_panes`, `Bash`
    arguments: dict[str, Any]
    text: str                  # the result's text (Codex's `Wall time: …` line taken off)
    is_error: bool
    data: Any = None           # `text` parsed, when it is JSON

    @property
    def tool(self) -> str | None:
        """muxd's tool name (`list_panes`), or None for a tool of the CLI or another server."""
        prefix = next((p for p in _TOOL_PREFIXES.values() if self.name.startswith(p)), None)
        return None if prefix is None else self.name[len(prefix):]


def tool_results(fake: FakeModelServer) -> list[ToolResult]:
    """Every tool result the CLI has sent to `fake` so far, in order, each once (every request
    repeats the conversation): Anthropic `tool_result` blocks, Responses `function_call_output`s,
    Gemini `functionResponse` parts."""
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    results: dict[str, ToolResult] = {}
    for request in fake.main_requests():
        body = request.body if isinstance(request.body, dict) else {}
        blocks = [b for m in body.get("messages") or [] if isinstance(m.get("content"), list) for b in m["content"]]
        parts = [p for c in body.get("contents") or [] if isinstance(c, dict) for p in c.get("parts") or []]
        for item in [*blocks, *(body.get("input") or []), *parts]:
            kind = item.get("type") or next((k for k in _GEMINI_PARTS if k in item), None)
            if kind == "tool_use":
                calls[item["id"]] = (item["name"], item.get("input") or {})
            elif kind == "function_call":
                name = f"{item['namespace']}__{item['name']}" if item.get("namespace") else item["name"]
                calls[item["call_id"]] = (name, _json_or_none(item.get("arguments")) or {})
            elif kind == "functionCall":
                call = item[kind]
                calls[str(call.get("id"))] = (call["name"], call.get("args") or {})
            elif kind in ("tool_result", "function_call_output", "functionResponse") and _call_id(item) not in results:
                call_id = _call_id(item)
                name, arguments = calls.get(call_id, ("", {}))
                text, is_error = _result_text(item)
                results[call_id] = ToolResult(call_id, name, arguments, text, is_error, _json_or_none(text))
    return list(results.values())


def wait_for_tool_results(fake: FakeModelServer, count: int, *,
                          timeout: float = RESULTS_TIMEOUT_S) -> list[ToolResult]:
    """`tool_results(fake)` once there are at least `count`."""
    deadline = Deadline(timeout)
    while len(found := tool_results(fake)) < count:
        if deadline.expired():
            raise AssertionError(f"{fake.api}: {len(found)} tool results in {deadline.describe()}, "
                                 f"expected {count}: {found}")
        time.sleep(0.05)
    return found


def _call_id(item: dict[str, Any]) -> str:
    if "functionResponse" in item:
        return str(item["functionResponse"].get("id"))
    return str(item.get("tool_use_id") or item.get("call_id"))


def _result_text(item: dict[str, Any]) -> tuple[str, bool]:
    """The text of a result and whether it is an error. Codex does not flag errors: there an
    error is a text starting with muxd's error code (or the MCP SDK's `Error executing tool`)."""
    if "functionResponse" in item:
        return _gemini_result(item["functionResponse"].get("response") or {})
    content = item.get("content") if item.get("type") == "tool_result" else item.get("output")
    if isinstance(content, list):
        content = "\n".join(str(block.get("text", "")) for block in content if isinstance(block, dict))
    text = _CODEX_PREAMBLE.sub("", str(content or ""), count=1).strip()
    if item.get("type") == "tool_result":
        return text, bool(item.get("is_error"))
    return text, text.startswith(_ERROR_PREFIX) or _MUXD_ERROR.match(text) is not None


def _gemini_result(response: dict[str, Any]) -> tuple[str, bool]:
    """Gemini CLI's `response`: `output`, the tool's text in an `<untrusted_context>` wrapper;
    or `error`, its own sentence quoting the MCP result as JSON after `with response: ` (muxd's
    text is taken from there), or a plain sentence (an unknown tool)."""
    if "error" not in response:
        wrapped = _GEMINI_UNTRUSTED.fullmatch(str(response.get("output", "")).strip())
        text = wrapped.group(1) if wrapped else str(response.get("output", ""))
        return text.replace(_GEMINI_ESCAPED_END, _GEMINI_END).strip(), False
    error = str(response["error"])
    for quoted in error.split(_GEMINI_QUOTED)[1:]:
        parts = _json_or_none(quoted)
        if isinstance(parts, list):
            blocks = [b for p in parts if isinstance(p, dict)
                      for b in ((p.get("functionResponse") or {}).get("response") or {}).get("content") or []]
            return "\n".join(str(b.get("text", "")) for b in blocks if isinstance(b, dict)).strip(), True
    return error.strip(), True


def _json_or_none(text: Any) -> Any:
    if not isinstance(text, str):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None
