"""A fake Claude Code in a real pane: the daemon publishes what the detectors read, live."""

import json
import sys

from muxd.testing.wait import wait_until


def agent(server):
    panes = json.loads(server.cli("list-panes", "-a", "--json", check=True).stdout)
    return panes[0]["agent"]


def wait_state(server, state, **fields):
    def matches():
        current = agent(server)
        if current["activity"]["state"] != state:
            return None
        return current if all(current.get(k) == v for k, v in fields.items()) else None
    return wait_until(matches, timeout=15, message=f"state {state} {fields}")


def test_fake_claude_through_a_turn_a_permission_prompt_and_exit(muxd_server):
    s = muxd_server
    s.cli("new-session", "-d", "-s", "c", "-x", "80", "-y", "30", "--", sys.executable, "-m",
          "muxd.testing.fake_agent", check=True)
    idle = wait_state(s, "Idle", agent_type="claude", is_agent=True, is_awaiting_input=True)
    assert idle["session"]["model"] == "Opus 5.5"

    s.cli("send-keys", "-t", "c", "think", "Enter", check=True)
    thinking = wait_state(s, "Thinking")
    assert thinking["activity"]["description"] == "Gusting"
    assert thinking["session"]["tokens_used"] >= 12 and thinking["activity"]["elapsed_s"] >= 1
    wait_state(s, "Idle")

    s.cli("send-keys", "-t", "c", "bash", "Enter", check=True)
    asking = wait_state(s, "AwaitingConfirmation", is_awaiting_confirmation=True, tool="Bash")
    assert asking["confirmation"]["prompt"] == "Do you want to proceed?"
    assert asking["confirmation"]["options"][0] == "1. Yes"
    summary = json.loads(s.cli("summary", "-t", "c", "--json", check=True).stdout)
    assert summary["context"]["is_awaiting_confirmation"] is True
    s.cli("send-keys", "-t", "c", "1", "Enter", check=True)
    done = wait_state(s, "Idle")
    wait_until(lambda: agent(s)["recent_tools"] == ["Bash"], message="Bash counted once")
    assert done["evidence"]["detector"] == "claude"

    s.cli("send-keys", "-t", "c", "quit", "Enter", check=True)
    wait_state(s, "Exited")
