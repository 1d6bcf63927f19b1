"""Usage limits with the real CLIs in muxd panes, against scripted model servers that answer 429
with the provider's reset (issue 26): the agent hits its limit, muxd publishes UsageLimited with
the limit's words and its reset, and the execution of that prompt fails with `usage_limit`; with
the `limit-resume` option on, muxd sends the agent its resume prompt once the limit resets.

Claude Code runs as a subscriber (an OAuth token: to an API key the limit is a plain 429).
Needs `.ci/install-agents`; skips a CLI that is not installed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from muxd.config import EXECUTION_WAIT_MAX_S
from muxd.testing.fake_models import AnthropicFake, Fail, GeminiFake, OpenAIResponsesFake, Pause, Say
from muxd.testing.fake_models._http import FakeModelServer
from muxd.testing.fake_models.agent_pane import AgentPane, CliPanes
from muxd.testing.patience import stretched
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until

pytestmark = pytest.mark.agents

START_TIMEOUT_S = 60.0
TURN_WAIT_S = 30.0
SUBSCRIBER = {"CLAUDE_CODE_OAUTH_TOKEN": "sk-ant-oat01-fake", "ANTHROPIC_API_KEY": ""}
MINUTE_S = 60.0  # the CLIs show a reset to the minute, rounded down


@pytest.fixture
def agent(muxd_server, tmp_path) -> Iterator[Callable[..., AgentPane]]:
    panes = CliPanes(muxd_server, tmp_path, timeout=START_TIMEOUT_S)

    def run(cli: str, fake: FakeModelServer, *args: str, env: dict[str, str] | None = None) -> AgentPane:
        pane = panes.start(cli, fake, *args, env=env)
        if pane is None:
            pytest.skip(panes.missing)
        return pane

    yield run
    panes.close()


def submit(server: MuxdTestServer, pane: AgentPane, message: str) -> dict[str, Any]:
    """`muxd submit --wait`: the execution of `message`, once it ended."""
    out = server.cli("submit", "-t", pane.pane_id, message, "--wait", "--wait-timeout",
                     f"{min(stretched(TURN_WAIT_S), EXECUTION_WAIT_MAX_S):.0f}", "--json")
    execution: dict[str, Any] = json.loads(out.stdout)
    assert execution["status"] not in ("pending", "running"), pane.report(f"{message!r} still {execution['status']}")
    return execution


def ended_by(server: MuxdTestServer, trigger: str) -> dict[str, Any]:
    """The newest execution triggered by `trigger`, once one has ended (`muxd history`)."""
    def ended() -> dict[str, Any] | None:
        out = server.cli("history", "--by", trigger, "--json", check=True).stdout
        done = [e for e in json.loads(out)["executions"] if e["status"] not in ("pending", "running")]
        return done[0] if done else None

    found: dict[str, Any] = wait_until(ended, timeout=TURN_WAIT_S, interval=0.2, message=f"a {trigger} execution ended")
    return found


def announced_reset(fake: FakeModelServer, resets_in_s: float) -> float:
    """The reset the server announced with its first 429 (epoch seconds)."""
    return int(fake.main_requests()[0].at) + resets_in_s


def limited(pane: AgentPane, mark: int, *, with_reset: bool) -> dict[str, Any]:
    pane.cursor = mark
    return pane.wait_for("UsageLimited", lambda s: s["limit"] and (s["limit"]["resets_at"] is not None) == with_reset,
                         timeout=TURN_WAIT_S, what="UsageLimited")


def close_to(resets_at: float, reset: float, answered_after_s: float = 0.0) -> bool:
    """The reset the screen said, to the minute it shows, is the one the server announced. An agent
    that counts the reset from the 429's arrival (Gemini's retryDelay) may see it up to
    `answered_after_s` later: the server's pause before it answered."""
    return reset - MINUTE_S - 1 <= resets_at <= reset + answered_after_s


def test_claude_code_at_its_5_hour_limit(agent, muxd_server):
    resets_in_s = 3 * 3600
    fake = AnthropicFake([[Fail(429, "Rate limited", times=None, resets_in_s=resets_in_s)]])
    pane = agent("claude", fake, "--permission-mode", "default", env=SUBSCRIBER)
    mark = pane.mark()
    execution = submit(muxd_server, pane, "hello there")
    with pane.explained("Claude Code's limit", mark):
        assert execution["status"] == "failed" and execution["error"]["type"] == "usage_limit", execution
        assert execution["error"]["message"].startswith("You've hit your 5-hour limit · resets ")
        state = limited(pane, mark, with_reset=True)
        assert state["limit"]["message"].startswith("You've hit your 5-hour limit")
        assert close_to(state["limit"]["resets_at"], announced_reset(fake, resets_in_s))
        assert state["sources"]["limit"]["source"] in ("screen", "hook")
        summary = pane.summary()
        assert summary["activity"]["state"] == "UsageLimited" and summary["limit"] == pane.agent()["limit"]
        explained = muxd_server.cli("explain", "-t", pane.pane_id, check=True).stdout
        assert "UsageLimited" in explained and "You've hit your 5-hour limit" in explained
        assert "USAGE LIMIT · resets " in muxd_server.cli("summary", "-t", pane.pane_id, check=True).stdout


def test_codex_at_its_usage_limit_is_resumed_at_the_reset(agent, muxd_server):
    # The limit lifts 5 s after the 429; the next request gets the answer.
    fake = OpenAIResponsesFake([[Fail(429, "The usage limit has been reached", times=1, resets_in_s=5),
                                 Say("Back after the limit.", 0.03)]])
    pane = agent("codex", fake)
    muxd_server.cli("set-option", "-p", "-t", pane.pane_id, "limit-resume", "on", check=True)
    muxd_server.cli("set-option", "-p", "-t", pane.pane_id, "limit-resume-prompt", "carry on", check=True)
    mark = pane.mark()
    execution = submit(muxd_server, pane, "hello there")
    with pane.explained("Codex's limit", mark):
        assert execution["status"] == "failed" and execution["error"]["type"] == "usage_limit", execution
        assert "You’ve hit your usage limit" in execution["error"]["message"]
        state = limited(pane, mark, with_reset=True)
        assert "try again at" in state["limit"]["message"]
        assert close_to(state["limit"]["resets_at"], announced_reset(fake, 5))

        again = ended_by(muxd_server, "schedule")
        assert again["message"] == "carry on" and again["status"] == "success", again
        assert again["response"] == "Back after the limit." and again["principal"] == "system"
        assert len(fake.main_requests()) == 2


QUOTA_PAUSE_S = 3  # the Gemini server is slow to refuse, so that the turn is seen at work


def test_gemini_cli_at_its_quota_asks_what_to_do(agent, muxd_server):
    # Typed as a person would, the turn recorded as it is seen going (Gemini CLI has no hooks
    # here to say it started; a prompt muxd submits and sees nothing of for TURN_UNSEEN_S is
    # taken for answered, which a loaded machine can make of a slow screen). The server is slow
    # to refuse, so that the turn is seen at work.
    refusal = "You exceeded your current quota, please check your plan and billing details."
    fake = GeminiFake([[Pause(QUOTA_PAUSE_S), Fail(429, refusal, times=None, resets_in_s=400)]])
    pane = agent("gemini", fake)
    mark = pane.mark()
    pane.submit("hello there")
    with pane.explained("Gemini CLI's quota", mark):
        state = limited(pane, mark, with_reset=True)
        assert state["limit"]["message"] == "Usage limit reached for all Pro models."
        assert close_to(state["limit"]["resets_at"], announced_reset(fake, 400), answered_after_s=QUOTA_PAUSE_S + 1)
        assert state["confirmation"]["options"] == ["1. Keep trying", "2. Stop"]
        assert pane.summary()["confirmation"]["prompt"] == "Usage limit reached for all Pro models."
        execution = ended_by(muxd_server, "manual")
        assert execution["status"] == "failed" and execution["error"]["type"] == "usage_limit", execution
        # The prompt of a typed turn is the input box muxd last read before the turn went busy: on
        # a loaded machine the Enter can come before detection read the box (a known gap, without
        # hooks); what it records is never another text.
        assert execution["message"] in ("hello there", None), execution
