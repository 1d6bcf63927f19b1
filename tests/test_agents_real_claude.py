"""Claude Code 2.1.330 for real in a muxd pane, against a scripted fake Anthropic API.

What is asserted is what shared/corpus/real/labels.tsv says this CLI shows: Idle at its
prompt with the banner's model; Thinking under `<glyph> <Verb>… (Ns · ↓ N tokens · thinking)`;
Generating with the same verb once the answer bullet appears; AwaitingConfirmation on
`Do you want to proceed?` / `Do you want to create X?` with the tool named; ToolUse while
`Running 1 shell command…`; the 529 retry line as a Thinking description; Exited.
Needs `.ci/install-agents`; skips when the CLI is not installed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from muxd.testing.fake_models import AnthropicFake, Call, Fail, Say, Think, launch
from muxd.testing.fake_models.agent_pane import PANE_SIZE_IDS, PANE_SIZES, PANE_WIDTH, AgentPane
from muxd.testing.wait import wait_until

pytestmark = pytest.mark.agents

ANSWER = ("Sure! Here is a slowly streamed answer from the fake model server. Each word arrives after a "
          "short pause so that the spinner and the token counter stay on screen for a while.")
BASH_COMMAND = "mkdir -p demo_dir && sleep 2 && ls demo_dir"
VERB = re.compile(r"[A-Z][^\W\d_]+(?:-[^\W\d_]+)*'?")  # "Transmogrifying", "Fiddle-faddling", "Beboppin'"
RETRY = re.compile(r"(529 Overloaded|API error) · retrying in \d+s · attempt \d+/\d+")
UUID = re.compile(r"[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}")
BANNER_MODEL = "Opus 5.5"  # what this version's banner shows for its default model


@pytest.fixture
def claude(muxd_server, tmp_path, pane_size) -> Iterator[tuple[AgentPane, AnthropicFake]]:
    bin_dir, why = launch.find_cli("claude")
    if bin_dir is None:
        pytest.skip(why)
    work = tmp_path / "work"
    fake = AnthropicFake([
        [Think(12, 0.25), Say(ANSWER, 0.08)],
        [Say("I will run a command.", 0.05),
         Call("Bash", {"command": BASH_COMMAND, "description": "Create a demo directory"})],
        [Say("The tool finished. Done.", 0.05)],
        [Fail(529, "Overloaded", times=2), Say("Recovered after the overload.", 0.05)],
        [Say("I will create a file.", 0.05),
         Call("Write", {"file_path": str(work / "new_file.txt"), "content": "hello from the fake model\n"})],
    ])
    with fake:
        pane = AgentPane(muxd_server, launch.claude(tmp_path, fake.url, bin_dir, "--permission-mode", "default"),
                         size=pane_size)
        try:
            yield pane.start(), fake
        finally:
            pane.close()


# A narrow pane too: there the permission dialog is taller than the screen and loses its title.
@pytest.mark.parametrize(*PANE_SIZES, ids=PANE_SIZE_IDS)
def test_claude_code_states_through_a_session(claude):
    pane, fake = claude

    idle = pane.wait_for("Idle", lambda s: s["session"]["model"], what="Idle with the banner's model")
    with pane.explained("first Idle"):
        assert idle["agent_type"] == "claude" and idle["is_agent"] is True
        assert idle["is_awaiting_input"] is True and idle["is_awaiting_confirmation"] is False
        assert idle["session"]["model"] == BANNER_MODEL
        assert pane.agent()["activity"]["state"] == "Idle"  # `list-panes --json` agrees
        summary = pane.summary()
        assert summary["agent_type"] == "claude" and summary["activity"]["state"] == "Idle"

    # Thinking: the spinner's verb, elapsed seconds and token count, then Generating, same verb.
    # Claude leaves the count out of a spinner line too long for the pane: at 50 columns a long
    # verb ("Discombobulating… (2s · thinking)") hides it, so there it may come only later.
    counted = pane.size[0] >= PANE_WIDTH
    mark = pane.mark()
    pane.submit("please think hard about this")
    thinking = pane.wait_for(
        "Thinking", lambda s: (s["session"]["tokens_used"] or not counted) and s["activity"]["elapsed_s"] is not None,
        what="Thinking with elapsed time and tokens")
    verb = thinking["activity"]["description"]
    with pane.explained("Thinking", mark):
        assert verb and VERB.fullmatch(verb), verb
        assert thinking["is_awaiting_input"] is False
        assert not counted or thinking["session"]["tokens_used"] > 0
    generating = pane.wait_for("Generating")
    with pane.explained("Generating", mark):
        assert generating["activity"]["description"] == verb
    if not (thinking["session"]["tokens_used"] or generating["session"]["tokens_used"]):
        pane.wait_for("Generating", lambda s: s["session"]["tokens_used"], what="Generating with tokens")
    pane.wait_for("Idle", what="Idle after the answer")

    # A Bash permission prompt; approved, the command runs (ToolUse) and the turn ends.
    mark = pane.mark()
    pane.submit("please use bash to make a dir")
    asking = pane.wait_for("AwaitingConfirmation")
    with pane.explained("Bash permission prompt", mark):
        assert asking["is_awaiting_confirmation"] is True and asking["is_awaiting_input"] is False
        assert asking["tool"] == "Bash"
        assert asking["confirmation"]["prompt"] == "Do you want to proceed?"
        options = asking["confirmation"]["options"]
        assert options[0] == "1. Yes" and any(o.endswith(". No") for o in options), options
        listed = pane.agent()
        assert listed["activity"]["state"] == "AwaitingConfirmation" and listed["tool"] == "Bash"
        assert pane.summary()["confirmation"] == {"prompt": "Do you want to proceed?", "options": options,
                                                  "tool": "Bash"}
    mark = pane.mark()
    pane.press("Enter")  # "1. Yes" is selected
    running = pane.wait_for("ToolUse", what="ToolUse while the approved command runs")
    with pane.explained("ToolUse", mark):
        assert running["tool"] == "Bash" and running["is_awaiting_confirmation"] is False
    done = pane.wait_for("Idle", what="Idle after the tool turn")
    with pane.explained("after the tool", mark):
        assert done["recent_tools"].count("Bash") == 1, done["recent_tools"]
        tool_reply = fake.wait_for_main_requests(3)[2].body["messages"][-1]["content"]
        assert any(part.get("type") == "tool_result" for part in tool_reply), tool_reply

    # 529 twice: the retry line is the Thinking description, then the answer comes through.
    mark = pane.mark()
    pane.submit("server overload test")
    retrying = pane.wait_for("Thinking", lambda s: RETRY.search(s["activity"]["description"] or ""), what="Thinking with the 529 retry line")
    with pane.explained("retrying", mark):
        assert RETRY.fullmatch(retrying["activity"]["description"])
        assert retrying["error"] is not None, "the retry line is an API error"
    recovered = pane.wait_for("Idle", what="Idle after recovering")
    with pane.explained("recovered", mark):
        assert recovered["error"] is None
        # The Stop hook reports the turn's end while Claude Code may still be drawing its last
        # frame (the answer above "running Stop hook"): the answer shows within moments.
        wait_until(lambda: "Recovered after the overload." in pane.screen(), timeout=10,
                   message="the recovered answer on screen")

    # A Write permission prompt, denied with Esc: back at the prompt.
    mark = pane.mark()
    pane.submit("please write a new file")
    asking = pane.wait_for("AwaitingConfirmation")
    with pane.explained("Write permission prompt", mark):
        assert asking["tool"] == "Write"
        assert asking["confirmation"]["prompt"] == "Do you want to create new_file.txt?"
    mark = pane.mark()
    pane.press("Escape")
    denied = pane.wait_for("Idle", what="Idle after denying")
    with pane.explained("denied", mark):
        assert denied["is_awaiting_confirmation"] is False and denied["confirmation"] is None
        assert not (pane.launch.cwd / "new_file.txt").exists()

    # The session id, as /status shows it; kept once the panel is closed.
    session_id = pane.session_id_shown_by("/status")
    with pane.explained("session id"):
        assert UUID.fullmatch(session_id), session_id
    # The hooks may have named the session before the panel is drawn: Esc waits for the panel,
    # and the next keys for it to close (keys typed while it is up go to the panel).
    pane.server.wait_for_text(pane.pane_id, "Session ID")
    pane.press("Escape")
    wait_until(lambda: "Session ID" not in pane.screen(), timeout=10, message="the /status panel closed")
    pane.settles_at("Idle", what="Idle once /status is closed")
    assert pane.summary()["session"]["id"] == session_id

    mark = pane.mark()
    pane.submit("/exit")
    exited = pane.wait_for("Exited")
    with pane.explained("Exited", mark):
        assert exited["is_awaiting_input"] is False and exited["is_awaiting_confirmation"] is False
        assert exited["agent_type"] == "claude", "the pane ran claude; its exit screen says `claude --resume …`"
