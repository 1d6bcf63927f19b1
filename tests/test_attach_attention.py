"""The attached terminal tells a person at once: `muxd attach` in a real outer terminal (a pane of
a private tmux server) while fake agents ask for a yes and panes ring bells.

What the outer terminal received is read three ways: its screen (`capture-pane`), the raw bytes
(`pipe-pane -O` into muxd.testing.byte_stamps, which stamps each read), and the outer tmux's own
bell flag (a BEL reached it). When the daemon published an event comes from a subscribed
connection (muxd.testing.event_tap). The 250 ms of the done-when is measured by
benchmarks/bench_alert_latency.py; here the bound is loose (a loaded 2-core machine), and the
order of things is what is asserted.
"""

from __future__ import annotations

import re
import shlex
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from muxd.testing.byte_stamps import arrival, received
from muxd.testing.event_tap import EventTap
from muxd.testing.fake_agent_panes import FAKE_AGENT, agent_state, start_fake_agent
from muxd.testing.outer_terminal import OuterTerminal, attach_in, outer_terminals, status_line
from muxd.testing.patience import stretched
from muxd.testing.tmux_oracle import TmuxOracle
from muxd.testing.wait import wait_until

SHELL = ["--", "bash", "--norc", "--noprofile"]
LINES = 30
# The event to the bytes at the outer terminal, on a machine as loaded as CI's: far above what
# the benchmark measures (tens of ms), far below what a person would call "at once".
LOOSE_LATENCY_S = 2.0


@pytest.fixture
def outer(muxd_server):
    with outer_terminals(muxd_server) as make:
        yield make


def tapped(terminal: OuterTerminal, path) -> None:
    """Everything the outer terminal's program writes, stamped, into `path`."""
    command = shlex.join([sys.executable, "-m", "muxd.testing.byte_stamps", str(path)])
    terminal.tmux("pipe-pane", "-O", "-t", "outer", command)


@contextmanager
def attached(server, outer, session: str, path) -> Iterator[tuple[OuterTerminal, EventTap]]:
    """An outer terminal attached to `session`, its bytes stamped into `path` from now on, and
    the daemon's events heard meanwhile."""
    term = outer(lines=LINES)
    tap = EventTap(server)
    try:
        attach_in(term, server, session)
        tapped(term, path)
        yield term, tap
    finally:
        tap.close()


def wait_status(terminal: OuterTerminal, pattern: str, timeout: float = 20.0) -> str:
    return status_line(terminal.wait_for(lambda sc: re.search(pattern, status_line(sc, LINES)), timeout=timeout),
                       LINES)


def osc9(text: str) -> bytes:
    return b"\x1b]9;" + text.encode()


def test_an_agent_waiting_in_another_session_shows_its_count_and_notifies_the_terminal(muxd_server, outer, tmp_path):
    s = muxd_server
    s.cli("new-session", "-d", "-s", "work", *SHELL, check=True)
    far = start_fake_agent(s, "far")
    with attached(s, outer, "work", tmp_path / "bytes") as (term, tap):
        s.cli("send-keys", "-t", far, "tool", "Enter", check=True)
        waiting = tap.wait_for("agent-waiting", far)
        line = wait_status(term, r"1 waiting")
        notice = osc9(f"muxd: claude {far} (far:0) waits")
        at = wait_until(lambda: arrival(tmp_path / "bytes", notice), timeout=10, message="OSC 9 at the terminal")
    assert line.rstrip().endswith("1 waiting"), line  # the right side; no agent in this session's pane
    # After the daemon published it, and soon: the measured figure is the benchmark's.
    assert waiting.at <= at < waiting.at + stretched(LOOSE_LATENCY_S), (waiting.at, at)
    data = received(tmp_path / "bytes")
    sent = data[data.index(notice):]
    text = sent[:sent.index(b"\x07")].decode()
    assert waiting.question and waiting.question.split()[0] in text  # the question, on one line
    assert sent[len(text.encode()):].startswith(b"\x07\x07")  # the OSC's end, then the bell
    # The bell reached the outer terminal as a bell: tmux flags its window (no client on it).
    wait_until(lambda: term.tmux("display", "-p", "-t", "outer", "#{window_bell_flag}").strip() == "1",
               timeout=10, message="the outer tmux heard a bell")
    # The count is of other sessions' agents: as a format too, 0 for the asker's own session.
    shown = s.cli("display", "-p", "-t", "work", "#{agents_waiting}|#{agent_attention}", check=True).stdout
    assert shown == "1|1 waiting\n"
    assert s.cli("display", "-p", "-t", "far", "#{agents_waiting}", check=True).stdout == "0\n"


def agent_window(server, session: str, name: str) -> str:
    """A background window of `session` whose pane runs a fake Claude, once idle; the pane's id."""
    pane = server.cli("new-window", "-d", "-P", "-F", "#{pane_id}", "-t", session, "-n", name, "--name", name,
                      "--", *FAKE_AGENT, "claude", check=True).stdout.strip()
    wait_until(lambda: agent_state(server, pane) == "Idle", timeout=20, message=f"{name} idle")
    return pane


def test_agents_of_the_same_session_flag_their_windows_and_the_pane_in_view_never_notifies(muxd_server, outer,
                                                                                            tmp_path):
    s = muxd_server
    front = s.cli("new-session", "-d", "-P", "-F", "#{pane_id}", "-s", "work", "-n", "front", "--name", "front",
                  "--", *FAKE_AGENT, "claude", check=True).stdout.strip()
    wait_until(lambda: agent_state(s, front) == "Idle", timeout=20, message="front idle")
    back = agent_window(s, "work", "back")
    s.cli("set-option", "-g", "notify-finished", "on", check=True)  # the last notice below marks the end
    with attached(s, outer, "work", tmp_path / "bytes") as (term, tap):
        s.cli("send-keys", "-t", back, "tool", "Enter", check=True)
        tap.wait_for("agent-waiting", back)
        line = wait_status(term, r"1:back\?")
        assert "waiting" not in line  # the count is of other sessions: this one's is on its tabs
        wait_until(lambda: arrival(tmp_path / "bytes", osc9(f"muxd: claude {back} (work:1) waits")), timeout=10,
                   message="the background window's notice")
        # The pane in view asks too: its window is flagged, and this terminal is told nothing.
        s.cli("send-keys", "-t", front, "tool", "Enter", check=True)
        tap.wait_for("agent-waiting", front)
        wait_status(term, r"0:front\*\?")
        s.cli("send-keys", "-t", back, "1", "Enter", check=True)  # the back one goes on and finishes
        tap.wait_for("agent-idle", back)
        wait_until(lambda: arrival(tmp_path / "bytes", osc9(f"muxd: claude {back} (work:1) finished")), timeout=10,
                   message="the finished notice")
        assert osc9(f"muxd: claude {front}").decode() not in received(tmp_path / "bytes").decode(errors="replace")
        wait_status(term, r"1:back\+")  # finished, and nobody has looked
        term.keys("C-b", "1")
        line = wait_status(term, r"1:back\*(?!\S)")  # looked at: the + goes
        assert re.search(r"0:front-\?", line), line  # still waiting, in the window left
        shown = s.cli("list-windows", "-t", "work", "-F", "#{window_index}:#{window_flags}:#{window_agent_flags}",
                      check=True).stdout
        assert shown == "0:-?:?\n1:*:\n"


def flags(run, target: str) -> str:
    return run("list-windows", "-t", target, "-F", "#{window_index}:#{window_flags}").replace("\n", " ").strip()


def test_bell_activity_and_silence_flag_windows_as_tmux_does(muxd_server, outer, tmp_path, request):
    s = muxd_server
    s.cli("new-session", "-d", "-s", "work", *SHELL, check=True)
    s.cli("new-window", "-d", "-t", "work", *SHELL, check=True)
    term = outer(lines=LINES)
    attach_in(term, s, "work")
    tapped(term, tmp_path / "bytes")
    # The oracle: real tmux, the same windows and keystrokes (and no client: only background
    # windows are compared, where a client changes nothing).
    oracle = TmuxOracle()
    request.addfinalizer(oracle.close)
    oracle.run("new-session", "-d", "-s", "outer", "-x", "100", "-y", "30", "bash --norc --noprofile")
    oracle.run("new-window", "-d", "-t", "outer:", "bash --norc --noprofile")

    def ours(*args: str) -> str:
        return s.cli(*args, check=True).stdout

    both = ((ours, "work"), (oracle.run, "outer"))
    for run, session in both:
        run("send-keys", "-t", f"{session}:1", "printf '\\a'", "Enter")
    for run, session in both:
        wait_until(lambda: "1:!" in flags(run, session), timeout=10, message=f"{session}'s bell flag")
    assert flags(ours, "work") == flags(oracle.run, "outer") == "0:* 1:!"
    wait_status(term, r"1:bash!")
    assert b"\x07" in received(tmp_path / "bytes")  # bell-action any, visual-bell off: the terminal rings

    term.keys("C-b", "1")
    oracle.run("select-window", "-t", "outer:1")
    wait_status(term, r"1:bash\*")
    assert flags(ours, "work") == flags(oracle.run, "outer") == "0:- 1:*"

    for run, session in both:
        run("set-option", "-w", "-t", f"{session}:0", "monitor-activity", "on")
        run("send-keys", "-t", f"{session}:0", "echo moving", "Enter")
    for run, session in both:
        wait_until(lambda: "0:##-" in flags(run, session), timeout=10, message=f"{session}'s activity flag")
    wait_status(term, r"0:bash#-")
    for run, session in both:
        run("set-option", "-w", "-t", f"{session}:0", "monitor-silence", "1")
    for run, session in both:
        wait_until(lambda: "0:##~-" in flags(run, session), timeout=10, message=f"{session}'s silence flag")
    assert flags(ours, "work") == flags(oracle.run, "outer") == "0:##~- 1:*"
    assert ours("display", "-p", "-t", "work", "#{session_alerts}") == "0#~\n"
    wait_status(term, r"0:bash#~-")
    term.keys("C-b", "0")
    wait_status(term, r"0:bash\* 1:bash-")  # current again: flags cleared
    assert ours("display", "-p", "-t", "work", "#{session_alerts}|#{window_activity_flag}") == "|0\n"


def test_visual_bell_is_a_message_instead_of_a_bell_and_every_alert_is_an_event(muxd_server, outer, tmp_path):
    s = muxd_server
    s.cli("new-session", "-d", "-s", "work", *SHELL, check=True)
    s.cli("new-window", "-d", "-t", "work", *SHELL, check=True)
    s.cli("set-option", "-g", "visual-bell", "on", check=True)
    with attached(s, outer, "work", tmp_path / "bytes") as (term, tap):
        s.cli("send-keys", "-t", "work:1", "printf '\\a'", "Enter", check=True)
        term.wait_for("Bell in window 1")
        bell = tap.wait_for("alert-bell")
        # The message's frame is written: a bell would have gone in the same write, before it.
        assert b"\x07" not in received(tmp_path / "bytes")
        s.cli("set-option", "-g", "visual-bell", "both", check=True)
        s.cli("send-keys", "-t", "work:0", "printf '\\a'", "Enter", check=True)  # the current window
        term.wait_for("Bell in current window")
        wait_until(lambda: b"\x07" in received(tmp_path / "bytes"), timeout=10, message="both: a bell too")
    assert (bell.window_index, bell.session, bell.window_id) == (1, "work", "@1")
    # The current window with a client on it is not flagged; the other one is.
    assert flags(lambda *a: s.cli(*a, check=True).stdout, "work") == "0:* 1:!"
