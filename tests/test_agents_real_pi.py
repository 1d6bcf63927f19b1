"""pi 0.73.1 (the pi coding agent) for real in a muxd pane, against a scripted fake Chat
Completions API configured in ~/.pi/agent/models.json, with PI_OFFLINE=1.

What is asserted is what tests/detector_data/issue32 shows this CLI draws: Idle at its editor
between two rules, the footer's model, tokens (↑in ↓out), cost and context; Thinking under
`⠋ Working...` (pi shows no elapsed time there); ToolUse while its bash tool runs, with the
tool's own `Elapsed Ns`; Idle with `Error: 400 …` once a request fails for good (a retried
one, under `Retrying (1/3) in 2s...`, is in the corpus); Exited when pi quits. pi asks before no tool.
Never Idle between a prompt's Enter and its first busy state (pi's editor looks at rest
for ~1 s: its detector's submit_uptake_s).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from muxd.detectors._text import parse_count
from muxd.testing.fake_models import Call, Fail, OpenAIChatFake, Pause, Say, launch
from muxd.testing.fake_models.agent_pane import AgentPane, assert_no_idle_before_busy

pytestmark = pytest.mark.agents

COMMAND = "for i in 1 2 3 4; do echo step $i; sleep 1; done"
ANSWER = "Hello from the fake model. All done."
_FOOTER = re.compile(r"↑(\S+) ↓(\S+) \$([\d.]+) ([\d.]+)%/128k")


@pytest.fixture
def pi(muxd_server, tmp_path) -> Iterator[tuple[AgentPane, OpenAIChatFake]]:
    bin_dir, why = launch.find_cli("pi")
    if bin_dir is None:
        pytest.skip(why)
    fake = OpenAIChatFake([
        [Pause(2), Say(ANSWER, 0.05)],
        [Say("I will count.", 0.05), Call("bash", {"command": COMMAND})],
        [Say("Counted to four.", 0.05)],
        [Fail(400, "fake bad request", times=None)],
    ])
    with fake:
        pane = AgentPane(muxd_server, launch.pi(tmp_path, fake.url, bin_dir), size=(100, 30))
        try:
            yield pane.start(), fake
        finally:
            pane.close()


def footer(screen: str) -> tuple[int, float, float]:
    """(tokens in + out, cost, context used %) as pi's footer shows them."""
    found = _FOOTER.findall(screen)
    assert found, screen
    up, down, cost, used = found[-1]
    return (parse_count(up) or 0) + (parse_count(down) or 0), float(cost), float(used)


def test_pi_states_through_a_session(pi):
    pane, fake = pi

    idle = pane.wait_for("Idle", lambda s: s["session"]["model"], timeout=40, what="Idle with the footer's model")
    with pane.explained("first Idle"):
        assert idle["agent_type"] == "pi" and idle["is_awaiting_input"] is True
        assert idle["session"]["model"] == "fake-model"

    mark = pane.mark()
    pane.submit("hello there")
    thinking = pane.wait_for("Thinking")
    assert_no_idle_before_busy(pane, mark)
    with pane.explained("Thinking", mark):
        assert thinking["activity"]["description"] == "Working..."
    answered = pane.wait_for("Idle", lambda s: s["session"]["tokens_used"], what="Idle with the footer's tokens")
    tokens, cost, used = footer(pane.screen())
    with pane.explained("Idle after the answer", mark):
        assert answered["session"]["tokens_used"] == tokens
        assert answered["session"]["cost_usd"] == cost
        assert answered["session"]["context_left_pct"] == pytest.approx(100 - used)

    mark = pane.mark()
    pane.submit("please count in the shell")
    running = pane.wait_for("ToolUse", lambda s: s["activity"]["elapsed_s"] is not None, what="ToolUse with elapsed")
    with pane.explained("ToolUse", mark):
        assert running["tool"] == "bash"
    done = pane.wait_for("Idle", lambda s: "Counted to four." in pane.screen(), timeout=40)
    with pane.explained("Idle after the tool", mark):
        assert done["recent_tools"] == ["bash"] and done["error"] is None

    mark = pane.mark()
    pane.submit("one more thing")
    failed = pane.wait_for("Idle", lambda s: s["error"], what="Idle with the error")
    with pane.explained("error", mark):
        assert failed["error"]["message"].startswith("400 fake bad request")

    mark = pane.mark()
    pane.submit("/quit")
    exited = pane.wait_for("Exited")
    with pane.explained("Exited", mark):
        assert exited["agent_type"] == "pi"
