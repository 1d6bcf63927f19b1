"""Gemini CLI 0.61.0 for real in a muxd pane, against a scripted fake Gemini API.

What is asserted is what shared/corpus/real/labels.tsv says this CLI shows: Idle at
`>   Type your message` with `Auto` under /model; Thinking under
`⠏ Thinking... (esc to cancel, Ns)`; Generating once `✦` text streams; AwaitingConfirmation
on `Allow execution of [Shell]?` (`● 1. Allow once`); a 503 retried silently under
Thinking, with no error on screen; Exited after /quit. Enter goes as its own write.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from muxd.testing.fake_models import Call, Fail, GeminiFake, Say, Think, launch
from muxd.testing.fake_models.agent_pane import PANE_SIZES, PANE_SIZE_IDS, AgentPane

pytestmark = pytest.mark.agents

ANSWER = ("Sure! Here is a slowly streamed answer from the fake model server. Each word arrives after a "
          "short pause so that the spinner stays on screen for a while.")
COMMAND = "mkdir -p gem_demo && sleep 2 && ls gem_demo"
FOOTER_MODEL = "Auto"
UUID = re.compile(r"[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}")
STATS_BOX_ROWS = 30  # the /stats box, the input box and its footer


@pytest.fixture
def gemini(muxd_server, tmp_path, pane_size) -> Iterator[tuple[AgentPane, GeminiFake]]:
    bin_dir, why = launch.find_cli("gemini")
    if bin_dir is None:
        pytest.skip(why)
    fake = GeminiFake([
        [Think(8, 0.25), Say(ANSWER, 0.08)],
        [Call("run_shell_command", {"command": COMMAND, "description": "Create a demo directory"})],
        [Say("The command finished. Done.", 0.05)],
        [Fail(503, "The model is overloaded. Please try again later.", times=1), Say("Recovered.", 0.05)],
    ])
    with fake:
        pane = AgentPane(muxd_server, launch.gemini(tmp_path, fake.url, bin_dir), size=pane_size)
        try:
            yield pane.start(), fake
        finally:
            pane.close()


# A short pane too: there the finished tool box scrolls away within a look or two.
@pytest.mark.parametrize(*PANE_SIZES, ids=PANE_SIZE_IDS)
def test_gemini_states_through_a_session(gemini):
    pane, fake = gemini

    idle = pane.wait_for("Idle", lambda s: s["session"]["model"], what="Idle with the footer's model")
    with pane.explained("first Idle"):
        assert idle["agent_type"] == "gemini" and idle["is_agent"] is True
        assert idle["is_awaiting_input"] is True
        assert idle["session"]["model"] == FOOTER_MODEL
        assert pane.agent()["activity"]["state"] == "Idle"

    mark = pane.mark()
    pane.submit("hello there, please think then say something")
    thinking = pane.wait_for("Thinking", lambda s: s["activity"]["elapsed_s"] is not None,
                             what="Thinking with elapsed time")
    with pane.explained("Thinking", mark):
        assert thinking["activity"]["description"] == "Thinking..."
    generating = pane.wait_for("Generating")
    with pane.explained("Generating", mark):
        assert generating["activity"]["description"] == "Thinking..."
    pane.wait_for("Idle", what="Idle after the answer")

    # run_shell_command: the Shell confirmation box; "Allow once" runs it.
    mark = pane.mark()
    pane.submit("please run a shell command")
    asking = pane.wait_for("AwaitingConfirmation")
    with pane.explained("Shell confirmation", mark):
        assert asking["is_awaiting_confirmation"] is True and asking["is_awaiting_input"] is False
        assert asking["tool"] == "Shell"
        assert asking["confirmation"]["prompt"] == "Allow execution of [Shell]?"
        assert asking["confirmation"]["options"][0] == "1. Allow once", asking["confirmation"]
        assert pane.summary()["confirmation"]["tool"] == "Shell"
        assert pane.agent()["activity"]["state"] == "AwaitingConfirmation"
    mark = pane.mark()
    pane.press("Enter")  # "● 1. Allow once" is selected
    done = pane.wait_for("Idle", timeout=30, what="Idle after the command")
    with pane.explained("after the command", mark):
        assert (pane.launch.cwd / "gem_demo").is_dir()
        assert "The command finished. Done." in pane.screen()
        assert done["recent_tools"].count("Shell") == 1, done["recent_tools"]

    # A 503: Gemini retries without a word; the pane stays Thinking until the answer comes.
    mark = pane.mark()
    before = len(fake.main_requests())
    pane.submit("overload test")
    pane.wait_for("Thinking", what="Thinking while the 503 is retried")
    first_busy = pane.cursor - 1
    pane.wait_for("Idle", timeout=40, what="Idle after the silent retry")
    with pane.explained("silent retry", mark):
        assert len(fake.main_requests()) - before == 2, "one 503, then the retry that succeeded"
        busy = pane.states.since(first_busy)[:pane.cursor - 1 - first_busy]
        assert all(s["activity"]["state"] in ("Thinking", "Generating") for s in busy)
        assert all(s["error"] is None for s in busy), "the CLI shows no error while it retries"
        assert "Recovered." in pane.screen()

    # The session id, from the /stats box (taller than a 16-row pane: its first rows scroll away).
    session_id = None
    if pane.size[1] >= STATS_BOX_ROWS:
        session_id = pane.session_id_shown_by("/stats")
        with pane.explained("session id"):
            assert UUID.fullmatch(session_id), session_id

    mark = pane.mark()
    pane.submit("/quit")
    exited = pane.wait_for("Exited")
    with pane.explained("Exited", mark):
        assert exited["agent_type"] == "gemini"
        assert exited["is_awaiting_input"] is False
        if session_id is not None:
            assert exited["session"]["id"] == session_id, "the goodbye box names the same session"
