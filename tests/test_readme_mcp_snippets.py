"""The README's MCP client snippets, taken from the README itself and run as a client would run
them: each names the server with `-L`, and the `muxd mcp` it starts reaches that server (the
test's, whose name replaces `work`) and lists its panes. A snippet in a shape its client does
not read (VS Code wants `servers` with a `type`) fails here, not on a user's machine."""

from __future__ import annotations

import asyncio
import json
import re
import shlex
import sys
import tomllib
from pathlib import Path

import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from muxd.testing.mcp_stdio import call_ok

README = Path(__file__).resolve().parents[1] / "README.md"
SNIPPET_SERVER = "work"  # the server name the README's snippets use
FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.M | re.S)


def _mcp_section() -> str:
    text = README.read_text()
    start = text.index("## For orchestrating agents: MCP")
    return text[start:text.index("\n## ", start + 1)]


def _snippets() -> list[tuple[str, str, list[str]]]:
    """(where, command, args) of every MCP server the section's code blocks configure."""
    found = []
    for language, body in FENCE.findall(_mcp_section()):
        if language == "json":
            config = json.loads(body)
            for key in ("mcpServers", "servers"):
                for name, entry in config.get(key, {}).items():
                    if key == "servers":  # VS Code reads no entry without its transport
                        assert entry.get("type") == "stdio", entry
                    found.append((f"json {key}.{name}", entry["command"], entry["args"]))
        elif language == "toml":
            for name, entry in tomllib.loads(body).get("mcp_servers", {}).items():
                found.append((f"toml mcp_servers.{name}", entry["command"], entry["args"]))
        elif language == "sh":
            for line in body.splitlines():
                argv = shlex.split(line.split("#")[0])
                if line.startswith("claude mcp add") and "--" in argv:  # stdio (not --transport http)
                    command = argv[argv.index("--") + 1:]
                    found.append((f"claude mcp add {shlex.join(command[1:])}", command[0], command[1:]))
    return found


SNIPPETS = _snippets()


def test_the_section_configures_each_client_on_a_named_server():
    assert {where.split(".")[0].split(" -L")[0] for where, _, _ in SNIPPETS} >= {
        "claude mcp add", "json mcpServers", "json servers", "toml mcp_servers"}
    for where, command, args in SNIPPETS:
        assert command == "muxd" and args[:3] == ["-L", SNIPPET_SERVER, "mcp"], where


@pytest.mark.parametrize(("where", "command", "args"), SNIPPETS, ids=[s[0] for s in SNIPPETS])
def test_a_snippet_reaches_the_server_it_names(muxd_server, where, command, args):
    muxd_server.cli("new-session", "-d", "-s", "snippet", "--", "bash", "--norc", check=True)
    muxd = str(Path(sys.executable).with_name(command))  # the clone's muxd, as on the user's PATH
    named = [muxd_server.name if arg == SNIPPET_SERVER else arg for arg in args]

    async def panes() -> list[str]:
        params = StdioServerParameters(command=muxd, args=named, env=muxd_server.env)
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            listed = await call_ok(session, "list_panes")
            return [pane["session"] for pane in listed["panes"]]

    assert asyncio.run(panes()) == ["snippet"]
