"""Test support: fake agent CLIs (muxd.testing.fake_agents) started in panes of a test daemon."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from muxd.testing.patience import stretched
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until

FAKE_AGENT = [sys.executable, "-m", "muxd.testing.fake_agent"]
START_TIMEOUT_S = 20.0


def agent_state(server: MuxdTestServer, pane: str) -> str | None:
    """The published activity state of `pane`'s agent (None: no such pane). Asked in this process
    (`run_here`): waits poll it."""
    panes = json.loads(server.run_here("list-panes", "-a", "--json", check=True).stdout)
    return next((p["agent"]["activity"]["state"] for p in panes if p["id"] == pane), None)


def start_fake_agent(server: MuxdTestServer, name: str, agent: str = "claude", *, cwd: Path | None = None,
                     env: dict[str, str] | None = None) -> str:
    """A new session `name` whose pane (also named `name`) runs a fake `agent`, once Idle; its id.
    `cwd` and `env`: the pane's working directory and variables set for it (`-c`, `-e`)."""
    options = ["-c", str(cwd)] if cwd is not None else []
    for variable, value in (env or {}).items():
        options += ["-e", f"{variable}={value}"]
    pane = server.cli("new-session", "-d", "-P", "-s", name, "--name", name, *options, "--", *FAKE_AGENT, agent,
                      check=True).stdout.strip()
    wait_until(lambda: agent_state(server, pane) == "Idle", timeout=START_TIMEOUT_S, message=f"{name} idle")
    return pane


ASK_TIMEOUT_S = 30.0


def ask(server: MuxdTestServer, pane: str) -> None:
    """Have the fake agent in `pane` ask for a yes (its `tool` turn); back once it asks."""
    server.cli("send-keys", "-t", pane, "tool", "Enter", check=True)
    server.cli("watch", "--until", "agent-waiting", "-t", pane, "--timeout", f"{stretched(ASK_TIMEOUT_S):.1f}",
               check=True)
