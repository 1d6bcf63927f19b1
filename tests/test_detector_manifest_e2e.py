"""An agent added by a manifest alone, end to end: the fake agent `mini` (no Python detector
knows it) runs in a real daemon's pane, its manifest in the user's config directory beside a
broken one, and muxd follows it Idle -> Thinking -> Idle -> AwaitingConfirmation (answered with
the keys its manifest names) -> ToolUse -> Idle -> Exited, each state traced to the manifest's
rule that read it."""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path

import pytest

from muxd.detectors.confirm_keys import confirmation_keys
from muxd.protocol.messages import AgentStateChanged, Subscribe
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import async_wait_until, wait_until

MANIFESTS = Path(__file__).parent / "agent_manifests"
STEP_TIMEOUT_S = 20


@pytest.fixture
def manifest_server(tmp_path, monkeypatch):
    agents = tmp_path / "config" / "muxd" / "agents"
    agents.mkdir(parents=True)
    shutil.copy(MANIFESTS / "mini.toml", agents / "mini.toml")
    (agents / "broken.toml").write_text('name = "broken"\n[identify]\nprocess_names = ["broken"]\n\n'
                                        '[[rules]]\nname = "prompt"\nstate = "Idle"\npattern = "(unclosed"\n')
    server = MuxdTestServer(env={"XDG_CONFIG_HOME": str(tmp_path / "config")}).start()
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # where confirmation_keys reads it too
    try:
        yield server, agents
    finally:
        server.stop()


def test_a_manifest_defined_agent_is_followed_through_a_whole_turn(manifest_server):
    s, agents = manifest_server
    states = []

    async def drive():
        client = await s.client(on_event=lambda e: states.append(e.state) if isinstance(e, AgentStateChanged) else None)

        def seen(state):
            async def found():
                return next((st for st in states if st.activity.state == state), None)
            return found

        async def step(keys, state):
            states.clear()
            if keys:
                s.cli("send-keys", "-t", "mini", *keys, check=True)
            return await async_wait_until(seen(state), timeout=STEP_TIMEOUT_S, message=f"mini {state}")
        try:
            await client.call(Subscribe)
            s.cli("new-session", "-d", "-s", "mini", "--", sys.executable, "-m", "muxd.testing.fake_agent", "mini",
                  check=True)
            idle = await step(None, "Idle")
            thinking = await step(["think", "Enter"], "Thinking")
            again = await async_wait_until(seen("Idle"), timeout=STEP_TIMEOUT_S, message="mini idle after a turn")
            asking = await step(["tool", "Enter"], "AwaitingConfirmation")
            running = await step(confirmation_keys(asking, True), "ToolUse")  # the keys its manifest names
            after = await async_wait_until(seen("Idle"), timeout=STEP_TIMEOUT_S, message="mini idle after the tool")
            exited = await step(["quit", "Enter"], "Exited")
            return idle, thinking, again, asking, running, after, exited
        finally:
            await client.close()

    idle, thinking, again, asking, running, after, exited = asyncio.run(drive())
    assert (idle.agent_type, idle.is_agent, idle.evidence.detector, idle.evidence.rule) == ("mini", True, "mini",
                                                                                          "prompt")
    assert idle.session.model == "mini-1" and idle.session.tokens_used == 0
    # Provenance per field: the state from the rule that decided, the model from the status row.
    assert idle.sources["state"].source == "screen" and idle.sources["state"].detail == "prompt"
    assert idle.sources["model"].detail == "status-row" and idle.confidence == "screen"
    assert (thinking.activity.description, thinking.evidence.rule) == ("Pondering", "spinner")
    assert thinking.activity.elapsed_s is not None and thinking.sources["state"].detail == "spinner"
    assert again.session.tokens_used == 1234
    assert asking.confirmation.prompt == "Run bash: ls demo" and asking.confirmation.options == ["1. Yes", "2. No"]
    assert asking.tool == "bash" and asking.sources["confirmation"].detail == "run-question"
    assert (running.tool, running.activity.description, running.evidence.rule) == ("bash", "ls demo",
                                                                                   "tool-running")
    assert after.recent_tools == ["bash"] and after.sources["recent_tools"].source == "screen"
    assert exited.agent_type == "mini" and exited.evidence.rule == "pane-exited"
    # The broken manifest beside it was said once, by file and line, and stopped nothing.
    log = wait_until(lambda: (lambda text: text if "broken.toml" in text else None)(s.log_path.read_text()),
                     message="the broken manifest in the daemon's log")
    assert f"{agents / 'broken.toml'}:8: rules[0].pattern is not an RE2 regex" in log
