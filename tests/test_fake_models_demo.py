"""`python -m muxd.testing.fake_models AGENT`, as the README tells a new user to try muxd with no
API key: the real CLI in a session of the user's server, answering from a fake model, until
Ctrl-C stops both. The CLI test needs `.ci/install-agents` and skips (with why) without it."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from muxd.testing.fake_models import launch
from muxd.testing.fake_models.__main__ import DEMO_REPLY
from muxd.testing.patience import stretched
from muxd.testing.wait import wait_for_screen, wait_until

START_TIMEOUT_S = 60.0  # a CLI's first start on a loaded machine


def _demo(server, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "muxd.testing.fake_models", *args, "-L", server.name],
                            env={**server.env, **(env or {})}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def test_a_missing_cli_is_one_line_naming_install_agents(muxd_server, tmp_path):
    demo = _demo(muxd_server, "codex", env={launch.AGENTS_DIR_ENV: str(tmp_path)})
    out, err = demo.communicate(timeout=stretched(30))
    assert demo.returncode == 1, (out, err)
    assert err.count("\n") == 1 and "codex not installed" in err and "bash .ci/install-agents" in err, err
    assert muxd_server.cli("ls", "-F", "#{session_name}").stdout == ""


@pytest.mark.agents
def test_claude_answers_from_the_fake_model_and_ctrl_c_ends_the_session(muxd_server):
    if launch.find_cli("claude")[0] is None:
        pytest.skip(launch.find_cli("claude")[1])
    demo = _demo(muxd_server, "claude", "-s", "try")
    try:
        first = demo.stdout.readline()
        assert first.startswith("claude runs in session 'try' against a fake model at http://127.0.0.1:"), first
        wait_until(lambda: muxd_server.cli("list-panes", "-t", "try", "-F", "#{agent_state}").stdout.strip() == "Idle",
                   timeout=START_TIMEOUT_S, message="claude Idle at its prompt")
        assert muxd_server.cli("submit", "-t", "try", "hello").returncode == 0
        wait_for_screen(lambda: muxd_server.cli("capture-pane", "-p", "-t", "try").stdout,
                        lambda screen: DEMO_REPLY in screen, timeout=START_TIMEOUT_S,
                        message="the fake model's reply", screen_name="the try pane")
        demo.send_signal(signal.SIGINT)
        assert demo.wait(timeout=stretched(30)) == 0
        assert "try" not in muxd_server.cli("ls", "--sessions", "-F", "#{session_name}").stdout.split()
    finally:
        demo.kill()
        demo.wait()
