"""Claude Code, Codex and Gemini CLI for real in a muxd pane, calling muxd's own MCP tools
through the `muxd mcp` they start, scripted by a fake model server: the calls run without a
prompt and go through with the pane's own token, so the daemon answers as `agent:%N` may see
(its own pane only, in a daemon with another pane) and its audit names that principal.
Needs `.ci/install-agents`; skips a CLI that is not installed.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import shlex
from collections.abc import Callable, Iterator

import pytest

from muxd.testing.fake_models import AnthropicFake, GeminiFake, OpenAIResponsesFake, launch
from muxd.testing.fake_models._http import FakeModelServer
from muxd.testing.fake_models.agent_pane import AgentPane
from muxd.testing.fake_models.mcp_agents import (
    CliNotInstalled, mcp_turns, start_mcp_agent, tool_name, wait_for_tool_results,
)
from muxd.testing.mcp_stdio import call_ok, mcp_session
from muxd.testing.wait import wait_until

pytestmark = pytest.mark.agents

FAKES = {"claude": AnthropicFake, "codex": OpenAIResponsesFake, "gemini": GeminiFake}
DONE = "All done with muxd."
TURN_TIMEOUT_S = 60  # a turn of a few calls takes ~3 s alone, ~20 s with four workers on two cores


def offered_tools(body: dict) -> set[str]:
    """The tool names a request offers the model: Anthropic's `tools`, Gemini's declarations."""
    return {t["name"] for t in body["tools"] if "name" in t} | {
        d["name"] for t in body["tools"] for d in t.get("functionDeclarations", [])}


@pytest.fixture
def other_pane(muxd_server) -> str:
    """A pane the agent's token may not use: a shell in a session of its own, started first."""
    muxd_server.cli("new-session", "-d", "-s", "other", "--", *launch.SHELL_ARGV, check=True)
    return json.loads(muxd_server.cli("list-panes", "-t", "other", "--json", check=True).stdout)[0]["id"]


@pytest.fixture
def mcp_agent(muxd_server, tmp_path) -> Iterator[Callable[..., tuple[AgentPane, FakeModelServer]]]:
    """`start(cli, session, mcp_server)`: the CLI in a new session, its fake, all closed after the
    test; every CLI gets the same HOME (tmp_path), as one user's CLIs do."""
    panes: list[AgentPane] = []
    fakes: list[FakeModelServer] = []

    def start(cli: str, session: str = "agent", mcp_server: launch.McpServer | None = None,
              ) -> tuple[AgentPane, FakeModelServer]:
        fakes.append(fake := FAKES[cli]())
        fake.start()
        try:
            panes.append(start_mcp_agent(muxd_server, cli, fake, tmp_path, session=session, mcp_server=mcp_server))
        except CliNotInstalled as exc:
            pytest.skip(str(exc))
        return panes[-1], fake

    yield start
    for pane in panes:
        pane.close()
    for fake in fakes:
        fake.stop()


@pytest.mark.parametrize("cli", sorted(FAKES))
def test_agent_calls_muxd_tools_without_a_prompt_as_its_own_pane(cli, mcp_agent, muxd_server, other_pane):
    pane, fake = mcp_agent(cli)
    agent = f"agent:{pane.pane_id}"
    # Arguments known once the pane runs: added to the script before the prompt is submitted.
    fake.script.extend(mcp_turns(
        ("list_panes", {}),
        ("agent_summary", {"pane_id": pane.pane_id}),
        ("agent_summary", {"pane_id": other_pane}),
        ("kill_pane", {"pane_id": other_pane}),   # dangerous: no prompt, and refused by the daemon
        done=DONE, cli=cli))
    mark = pane.mark()
    pane.run_turn("use muxd", DONE, timeout=TURN_TIMEOUT_S)

    listed, own, other, kill = wait_for_tool_results(fake, 4)
    with pane.explained("the tool results the CLI sent back", mark):
        assert [r.tool for r in (listed, own, other, kill)] == ["list_panes", "agent_summary", "agent_summary",
                                                                "kill_pane"]
        assert own.arguments == {"pane_id": pane.pane_id}
        # Two panes in the daemon; the pane's token sees its own.
        assert not listed.is_error and [p["id"] for p in listed.data["panes"]] == [pane.pane_id], listed
        assert not own.is_error and own.data["pane_id"] == pane.pane_id and own.data["agent_type"] == cli, own
        assert other.is_error and "forbidden" in other.text and agent in other.text, other
        assert kill.is_error and "forbidden" in kill.text and agent in kill.text, kill
        assert muxd_server.cli("has-session", "-t", "other").returncode == 0
        if cli in ("claude", "gemini"):  # no ToolSearch: the tools and their schemas come with each request
            offered = offered_tools(fake.main_requests()[-1].body)
            assert tool_name("list_panes", cli) in offered and tool_name("kill_pane", cli) in offered

    async def audited() -> list[dict]:
        async with mcp_session(muxd_server) as session:
            return (await call_ok(session, "get_tool_history", principal=agent))["calls"]

    calls = asyncio.run(audited())
    # The daemon's audit: one row per MCP call, by the pane's agent (and the refused protocol request).
    # (Claude Code also opens an event stream as it connects, `listen_events`: its own, not the prompt's.)
    prompted = [c for c in reversed(calls) if c["kind"] == "mcp" and c["tool"] != "listen_events"]
    assert [(c["tool"], c["status"]) for c in prompted] == [
        ("list_panes", "ok"), ("agent_summary", "ok"), ("agent_summary", "denied"), ("kill_pane", "denied")], calls


@pytest.mark.parametrize("cli", sorted(FAKES))
def test_two_agents_of_one_user_each_call_as_their_own_pane(cli, mcp_agent):
    """Two CLIs of the same HOME: each `muxd mcp` has its own pane's token (Codex would start
    them all from one background app-server, with the token of the pane that started it)."""
    first, second = mcp_agent(cli, "first"), mcp_agent(cli, "second")
    for pane, fake in (first, second):
        fake.script.extend(mcp_turns(("list_panes", {}), done=DONE, cli=cli))
        pane.run_turn("list the panes", DONE, timeout=TURN_TIMEOUT_S)
        [listed] = wait_for_tool_results(fake, 1)
        with pane.explained("what the pane's agent sees"):
            assert [p["id"] for p in listed.data["panes"]] == [pane.pane_id], listed


def test_gemini_not_told_to_keep_muxd_token_gets_no_muxd_tools_rather_than_every_pane(
        mcp_agent, muxd_server, other_pane, tmp_path):
    """Without `security.environmentVariableRedaction.allowed: ["MUXD_TOKEN"]` Gemini CLI starts
    `muxd mcp` with the pane's MUXD_PANE but not its token (its redaction drops *TOKEN*): `muxd
    mcp` refuses to serve as the socket's owner, so the model finds no muxd tool at all."""
    stderr = tmp_path / "muxd-mcp.err"  # what Gemini reads from the server and keeps to itself
    plain = launch.muxd_mcp_server(muxd_server)
    naive = dataclasses.replace(plain, secrets=(), argv=[
        "sh", "-c", f'exec "$0" "$@" 2>>{shlex.quote(str(stderr))}', *plain.argv])
    pane, fake = mcp_agent("gemini", mcp_server=naive)
    fake.script.extend(mcp_turns(("list_panes", {}), ("kill_pane", {"pane_id": other_pane}), done=DONE, cli="gemini"))
    mark = pane.mark()
    pane.run_turn("use muxd", DONE, timeout=TURN_TIMEOUT_S)

    listed, kill = wait_for_tool_results(fake, 2)
    with pane.explained("the tool results Gemini sent back", mark):
        for result in (listed, kill):
            assert result.is_error and f'Tool "{result.name}" not found' in result.text, result
        assert not {name for name in offered_tools(fake.main_requests()[-1].body) if name.startswith("mcp_muxd_")}
        assert muxd_server.cli("has-session", "-t", "other").returncode == 0
    wait_until(lambda: stderr.exists() and stderr.read_text().strip(), timeout=10, message="muxd mcp's refusal")
    refusal = f"muxd: mcp in pane {pane.pane_id} has no $MUXD_TOKEN and would act as the socket's owner"
    assert refusal in stderr.read_text(), stderr.read_text()

    async def audited() -> list[dict]:
        async with mcp_session(muxd_server) as session:
            return (await call_ok(session, "get_tool_history"))["calls"]

    assert [c for c in asyncio.run(audited()) if c["kind"] == "mcp" and c["tool"] != "get_tool_history"] == []
