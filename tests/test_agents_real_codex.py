"""OpenAI Codex CLI 0.169.0 for real in a muxd pane, against a scripted fake Responses API.

What is asserted is what shared/corpus/real/labels.tsv says this CLI shows: Idle at `›`
with the model from the footer; Thinking under `• <header> (Ns • esc to interrupt)`, the
header being `Working` or the reasoning summary; Generating while `• <text>` streams;
AwaitingConfirmation on `Would you like to run the following command?` for an
`exec_command` asking for `require_escalated`; Idle after `Worked for …`; a failed turn
(`■ We’re currently experiencing high demand…`) is Idle with the error; Exited with the
exit summary's token total. Codex leaves an app-server daemon behind: the fixture ends it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from muxd.testing.fake_models import Call, Fail, OpenAIResponsesFake, Say, Think, launch
from muxd.testing.fake_models.agent_pane import PANE_SIZES, PANE_SIZE_IDS, AgentPane, screen_number
from muxd.testing.fake_models.script import THINK_TEXT

pytestmark = pytest.mark.agents

ANSWER = ("Sure! Here is a slowly streamed answer from the fake model server. Each word arrives after a "
          "short pause so that the streaming state stays on screen for a while.")
COMMAND = "mkdir -p codex_demo && sleep 2 && ls codex_demo"
FOOTER_MODEL = launch.CODEX_MODEL
UUID = re.compile(r"[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}")
STATUS_COLUMNS = 80  # /status shows `Session:  <id>` on one row


SESSION_SCRIPT = [
    [Think(12, 0.25), Say(ANSWER, 0.08)],
    [Call("exec_command", {"cmd": COMMAND, "sandbox_permissions": "require_escalated",
                           "justification": "Create a demo directory outside the read-only sandbox"})],
    [Say("The command finished. Done.", 0.05)],
    [Fail(500, "Internal error")],  # Codex words this as "high demand"
]


@pytest.fixture
def codex(request, muxd_server, tmp_path, pane_size) -> Iterator[tuple[AgentPane, OpenAIResponsesFake]]:
    bin_dir, why = launch.find_cli("codex")
    if bin_dir is None:
        pytest.skip(why)
    fake = OpenAIResponsesFake(request.param)
    with fake:
        pane = AgentPane(muxd_server, launch.codex(tmp_path, fake.url, bin_dir), size=pane_size)
        try:
            yield pane.start(), fake
        finally:
            pane.close()  # also ends the app-server daemon Codex leaves running, by PID


# A narrow pane too: there an error row wraps, and Codex does not indent the rest of it.
@pytest.mark.parametrize(*PANE_SIZES, ids=PANE_SIZE_IDS)
@pytest.mark.parametrize("codex", [SESSION_SCRIPT], indirect=True, ids=["session"])
def test_codex_states_through_a_session(codex):
    pane, fake = codex

    idle = pane.wait_for("Idle", lambda s: s["session"]["model"], what="Idle with the footer's model")
    with pane.explained("first Idle"):
        assert idle["agent_type"] == "codex" and idle["is_agent"] is True
        assert idle["is_awaiting_input"] is True
        assert idle["session"]["model"] == FOOTER_MODEL
        assert pane.agent()["activity"]["state"] == "Idle"

    # Thinking under the status line, its header the reasoning summary; then the answer streams.
    mark = pane.mark()
    pane.submit("please think and then say something")
    thinking = pane.wait_for("Thinking", lambda s: s["activity"]["elapsed_s"] is not None,
                             what="Thinking with elapsed time")
    header = thinking["activity"]["description"] or ""
    with pane.explained("Thinking", mark):
        assert header == "Working" or THINK_TEXT.startswith(header.rstrip("…")), header
    pane.wait_for("Generating")
    pane.wait_for("Idle", what="Idle after `Worked for …`")

    # exec_command asking to leave the sandbox: the approval prompt; approved, it runs.
    mark = pane.mark()
    pane.submit("please run a shell command")
    asking = pane.wait_for("AwaitingConfirmation")
    with pane.explained("approval prompt", mark):
        assert asking["is_awaiting_confirmation"] is True and asking["is_awaiting_input"] is False
        assert asking["tool"] == "exec_command"
        assert asking["confirmation"]["prompt"] == "Would you like to run the following command?"
        assert asking["confirmation"]["options"][0].startswith("1. Yes, proceed"), asking["confirmation"]
        assert pane.agent()["activity"]["state"] == "AwaitingConfirmation"
        summary = pane.summary()["confirmation"]
        assert (summary["prompt"], summary["tool"]) == (asking["confirmation"]["prompt"], "exec_command")
    mark = pane.mark()
    pane.press("Enter")  # "Press enter to confirm"
    done = pane.wait_for("Idle", timeout=30, what="Idle after the approved command")
    with pane.explained("after the command", mark):
        assert (pane.launch.cwd / "codex_demo").is_dir()
        assert "The command finished. Done." in pane.screen()
        assert done["recent_tools"].count("exec_command") == 1, done["recent_tools"]

    # The model fails: the turn ends at the prompt with Codex's error line.
    mark = pane.mark()
    pane.submit("overload test")
    failed = pane.wait_for("Idle", lambda s: s["error"], what="Idle with the turn's error")
    with pane.explained("failed turn", mark):
        assert "high demand" in failed["error"]["message"], failed["error"]
        assert pane.summary()["error"] == failed["error"]

    # The session id, from /status's output (it stays in the history above the composer; a
    # narrow pane wraps the id under a label that scrolled away, and it cannot be read).
    mark = pane.mark()
    session_id = None
    if pane.size[0] >= STATUS_COLUMNS:
        session_id = pane.session_id_shown_by("/status")
        with pane.explained("session id"):
            assert UUID.fullmatch(session_id), session_id
    else:
        pane.submit("/status")
        pane.server.wait_for_text(pane.pane_id, "Token usage:")
    with pane.explained("/status's output is no turn", mark):
        pane.settles_at("Idle", since=mark)
        assert all(s["activity"]["state"] == "Idle" for s in pane.states.since(mark))

    mark = pane.mark()
    pane.press("C-c")
    exited = pane.wait_for("Exited")
    screen = pane.screen()
    with pane.explained("Exited", mark):
        total = screen_number(r"Token usage(?: so far)?: total=([\d,]+)", screen)  # the wording varies by exit path
        assert total, "Codex prints its token total at exit"
        assert exited["agent_type"] == "codex", "the pane ran codex; its exit screen says `codex resume …`"
        assert exited["session"]["tokens_used"] == total
        if session_id is not None:
            assert exited["session"]["id"] == session_id, "the resume hint names the same session"


@pytest.mark.parametrize("codex", [[[Say("Hi there, this one is quick.", 0.1)]]], indirect=True, ids=["quick"])
def test_codex_turn_done_in_under_a_second_ends_idle(codex):
    pane, _ = codex
    pane.wait_for("Idle", lambda s: s["session"]["model"], what="Idle with the footer's model")
    mark = pane.mark()
    pane.submit("say hi")
    pane.wait_for("Generating", what="Generating while the short answer streams")
    # `Worked for <1s` when the machine is quiet; a loaded one can stretch the turn to `1s`
    pane.server.wait_for_text(pane.pane_id, "Worked for ")
    pane.settles_at("Idle", since=mark, what="Idle after the quick turn's `Worked for …`")
