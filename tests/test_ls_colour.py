"""`muxd ls` colours the agent states on a terminal (a real PTY here): an agent waiting for a yes
stands out from one at rest, a pane that failed is red; piped, under NO_COLOR or with
--color=never it writes no SGR at all, and --color=always colours a pipe too."""

from __future__ import annotations

import subprocess
import sys

import pytest

from muxd.cli.colour import NEED_STYLES, RESET
from muxd.testing.fake_agent_panes import ask, start_fake_agent
from muxd.testing.patience import stretched
from muxd.testing.pty_run import run_in_pty
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until

WAITING = NEED_STYLES["waiting"] + "AwaitingConfirmation" + RESET
FAILED = NEED_STYLES["failed"] + "exited (3)" + RESET
LS_TIMEOUT_S = 60.0


def ls_in_a_terminal(server: MuxdTestServer, *args: str, **env: str) -> str:
    """`muxd ls ARGS` with stdout on a real PTY (200 columns, TERM xterm-256color): what it wrote."""
    environment = {**server.env, "TERM": "xterm-256color", **env}
    if "NO_COLOR" not in env:
        environment.pop("NO_COLOR", None)
    status, written = run_in_pty([sys.executable, "-m", "muxd", "-L", server.name, "ls", *args], environment,
                                 columns=200, timeout=LS_TIMEOUT_S, styles=True)
    assert status == 0, written
    return written


@pytest.fixture
def asking_and_failed(muxd_server):
    s = muxd_server
    calm = start_fake_agent(s, "calm")
    asker = start_fake_agent(s, "asker")
    ask(s, asker)
    s.cli("new-session", "-d", "-s", "failed", "--", "sh", "-c", "exit 3", check=True)
    wait_until(lambda: s.panes("failed")[0]["exit_code"] == 3, timeout=20, message="the failed pane exited")
    return s, calm, asker


def row_of(text: str, pane: str) -> str:
    return next(line for line in text.splitlines() if f" {pane}" in line)


def test_a_terminal_sees_the_states_in_colour(asking_and_failed):
    s, calm, asker = asking_and_failed
    shown = ls_in_a_terminal(s)
    assert WAITING in row_of(shown, asker)
    assert "Idle" in row_of(shown, calm) and "\x1b[" not in row_of(shown, calm)  # at rest: no colour
    assert FAILED in shown
    # The columns still line up: the styles take no room.
    plain = [line for line in shown.replace(WAITING, "AwaitingConfirmation").splitlines() if line.strip()]
    heading = plain[0].replace("\x1b[1m", "").replace(RESET, "")
    state_at = heading.index("STATE")
    assert row_of("\n".join(plain), asker)[state_at:].startswith("AwaitingConfirmation")


@pytest.mark.parametrize("how", ["NO_COLOR", "--color=never"])
def test_no_color_and_never_write_no_state_colour(asking_and_failed, how):
    s, _, asker = asking_and_failed
    shown = ls_in_a_terminal(s, "--color=never") if how.startswith("--") else ls_in_a_terminal(s, NO_COLOR="1")
    body = shown.splitlines()[1:]  # the heading stays bold, as rich shows it: not a colour
    assert "AwaitingConfirmation" in row_of(shown, asker)
    assert not any("\x1b[" in line for line in body)


def test_a_pipe_gets_no_colour_unless_always(asking_and_failed):
    s, _, asker = asking_and_failed
    piped = s.cli("ls", check=True).stdout
    assert "AwaitingConfirmation" in piped and "\x1b[" not in piped
    assert "\x1b[" not in s.cli("list-panes", "-a", check=True).stdout
    forced = s.cli("ls", "--color=always", check=True).stdout
    assert WAITING in row_of(forced, asker) and FAILED in forced
    # NO_COLOR yields to a colour asked for on the command line (no-color.org).
    asked = subprocess.run([sys.executable, "-m", "muxd", "-L", s.name, "list-panes", "-a", "--color=always"],
                           env={**s.env, "NO_COLOR": "1"}, capture_output=True, text=True, timeout=stretched(LS_TIMEOUT_S))
    assert WAITING in asked.stdout, asked.stderr
    # FORCE_COLOR hands the table to rich (plain_table declines): the styles pass through it.
    rich = subprocess.run([sys.executable, "-m", "muxd", "-L", s.name, "ls", "--color=always"],
                          env={**s.env, "FORCE_COLOR": "1"}, capture_output=True, text=True, timeout=stretched(LS_TIMEOUT_S))
    assert "AwaitingConfirmation" in row_of(rich.stdout, asker) and "\x1b[" in row_of(rich.stdout, asker)
