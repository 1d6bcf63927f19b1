"""`muxd` starts lean: a one-shot command imports neither asyncio nor rich, nor the modules of the
commands it does not run. A guard on what is imported, not a timing: a module that creeps onto
this path costs every `muxd ls` (benchmarks/bench_cli_start.py measures the time itself)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from muxd.testing.server import MuxdTestServer

# Modules a one-shot command has no use for, each costing milliseconds to import.
NEVER_ON_THE_FAST_PATH = (
    "asyncio", "rich", "subprocess", "dataclasses", "mcp",
    "muxd.client.connection",                                      # the async client
    "muxd.protocol.messages", "muxd.protocol.codec",              # every message of every union
    "muxd.protocol.execution_messages", "muxd.protocol.task_messages",
    "muxd.cli.history_commands", "muxd.cli.task_commands", "muxd.cli.mcp_commands",
)


def imported_by(server: MuxdTestServer, *args: str) -> set[str]:
    """The modules `muxd -L NAME args…` imports, as `python -X importtime` lists them."""
    result = subprocess.run([sys.executable, "-X", "importtime", "-m", "muxd", "-L", server.name, *args],
                            env=server.env, capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    return {line.rsplit("|", 1)[1].strip() for line in result.stderr.splitlines()
            if line.startswith("import time:")}


@pytest.fixture(scope="module")
def server_with_a_pane():
    server = MuxdTestServer().start()
    try:
        server.cli("new-session", "-d", "-s", "lean", "--", "sleep", "600", check=True)
        yield server
    finally:
        server.stop()


@pytest.mark.parametrize("args", [
    ("ls",), ("ls", "--json"), ("ls", "--sessions"), ("list-windows",), ("has-session", "-t", "lean"),
    ("capture-pane", "-p", "-t", "lean"), ("send-keys", "-t", "lean", ""), ("summary", "-t", "lean"),
])
def test_one_shot_commands_import_neither_asyncio_nor_rich(server_with_a_pane, args):
    modules = imported_by(server_with_a_pane, *args)
    assert "muxd.client.blocking" in modules  # it did talk to the daemon
    assert not modules & set(NEVER_ON_THE_FAST_PATH)
    assert not any(m.startswith(("rich.", "asyncio.", "mcp.")) for m in modules)


def test_version_imports_no_command_and_no_protocol(muxd_unstarted):
    modules = imported_by(muxd_unstarted, "--version")
    assert not modules & set(NEVER_ON_THE_FAST_PATH)
    assert not any(m.startswith(("muxd.cli.", "muxd.client", "muxd.protocol", "msgspec"))
                   for m in modules - {"muxd.cli.main", "muxd.cli.table"})
