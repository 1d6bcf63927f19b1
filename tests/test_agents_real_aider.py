"""Aider 0.86.2 for real in a muxd pane, against a scripted fake Chat Completions API.

What is asserted is what shared/corpus/real/labels.tsv says this CLI shows: Idle at `> `
with `openai/fake-model` from the startup lines; Thinking under the
`█░ Waiting for openai/fake-model` bar (also while litellm's errors are retried); Generating
while the reply streams; AwaitingConfirmation on `Create new file? (Y)es/(N)o [Yes]:` with
the turn's `Tokens: N sent, M received.` as N+M; Idle after it; Exited after /exit.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from muxd.testing.fake_models import Fail, OpenAIChatFake, Pause, Say, launch
from muxd.testing.fake_models.agent_pane import AgentPane, screen_number

pytestmark = pytest.mark.agents

MODEL = launch.AIDER_MODEL
WAITING = f"Waiting for {MODEL}"
CREATE_REPLY = 'I will create a new file.\n\nhello_fake.py\n```\nprint("hello from the fake model")\n```\n'


@pytest.fixture
def aider(muxd_server, tmp_path) -> Iterator[tuple[AgentPane, OpenAIChatFake]]:
    bin_dir, why = launch.find_cli("aider")
    if bin_dir is None:
        pytest.skip(why)
    fake = OpenAIChatFake([
        [Pause(3), Say(CREATE_REPLY, 0.08)],
        [Fail(500, "fake overload", times=3), Say("Recovered after the overload.", 0.05)],
    ])
    with fake:
        pane = AgentPane(muxd_server, launch.aider(tmp_path, fake.url, bin_dir, "notes.txt"))
        try:
            yield pane.start(), fake
        finally:
            pane.close()


def turn_tokens(screen: str) -> int | None:
    """N+M from the last `Tokens: N sent, M received.` line on the screen."""
    lines = [line for line in screen.splitlines() if line.startswith("Tokens: ")]
    if not lines:
        return None
    sent = screen_number(r"Tokens: ([\d,]+) sent", lines[-1])
    received = screen_number(r"([\d,]+) received", lines[-1])
    return None if sent is None or received is None else sent + received


def test_aider_states_through_a_session(aider):
    pane, fake = aider

    idle = pane.wait_for("Idle", lambda s: s["session"]["model"], timeout=40,
                         what="Idle with the model from the startup lines")
    with pane.explained("first Idle"):
        assert idle["agent_type"] == "aider" and idle["is_agent"] is True
        assert idle["is_awaiting_input"] is True
        assert idle["session"]["model"] == MODEL
        assert pane.agent()["activity"]["state"] == "Idle"

    # Waiting bar, streamed reply, then the create-file question carrying the turn's tokens.
    mark = pane.mark()
    pane.submit("hello there, make a file")
    # Thinking from Enter on (nothing drawn yet), then under the bar
    waiting = pane.wait_for("Thinking", lambda s: s["activity"]["description"], what="Thinking under the bar")
    with pane.explained("Thinking", mark):
        assert waiting["activity"]["description"] == WAITING
    pane.wait_for("Generating")
    asking = pane.wait_for("AwaitingConfirmation")
    tokens = turn_tokens(pane.screen())
    with pane.explained("create-file question", mark):
        assert asking["is_awaiting_confirmation"] is True and asking["is_awaiting_input"] is False
        assert asking["confirmation"]["prompt"] == "Create new file? (Y)es/(N)o [Yes]:"
        assert tokens and asking["session"]["tokens_used"] == tokens
        assert pane.agent()["activity"]["state"] == "AwaitingConfirmation"
    mark = pane.mark()
    pane.type("y")
    pane.press("Enter")
    done = pane.wait_for("Idle", what="Idle after answering yes")
    with pane.explained("after creating the file", mark):
        assert (pane.launch.cwd / "hello_fake.py").read_text().strip() == 'print("hello from the fake model")'
        assert done["session"]["tokens_used"] == tokens
        assert done["is_awaiting_confirmation"] is False and done["confirmation"] is None

    # litellm's InternalServerError, retried three times under the waiting bar.
    mark = pane.mark()
    pane.submit("overload test")
    pane.wait_for("Thinking", lambda s: s["activity"]["description"] == WAITING)
    first_busy = pane.cursor - 1
    pane.wait_for("Idle", timeout=30, what="Idle after the retries")
    with pane.explained("retried API error", mark):
        assert len(fake.main_requests()) == 1 + 4, "three 500s, then the answer"
        busy = pane.states.since(first_busy)[:pane.cursor - 1 - first_busy]
        assert all(s["activity"]["state"] in ("Thinking", "Generating") for s in busy)
        assert any(s["error"] for s in busy), "litellm.InternalServerError is on screen while it retries"
        assert "Recovered after the overload." in pane.screen()

    mark = pane.mark()
    pane.submit("/exit")
    exited = pane.wait_for("Exited")
    with pane.explained("Exited", mark):
        assert exited["agent_type"] == "aider" and exited["is_awaiting_input"] is False
