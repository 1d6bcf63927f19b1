"""The daemon writes an attached client's frames to its terminal itself (the client passes the
terminal over the socket, as tmux's do), unless MUXD_ATTACH_DIRECT=0 says to send them over the
socket; either way a detach or a client ending on a signal leaves the terminal restored."""

from __future__ import annotations

import os
import select
import signal

import pytest

from muxd.testing.outer_terminal import OuterTerminal, muxd_command, outer_terminals
from muxd.testing.proc import open_terminals
from muxd.testing.wait import wait_until

SHELL = ["--", "bash", "--norc", "--noprofile"]
COUNTER = ["--", "sh", "-c", 'i=0; while :; do i=$((i+1)); echo "tick $i"; sleep 0.05; done']


@pytest.fixture
def outer(muxd_server):
    with outer_terminals(muxd_server) as make:
        yield make


def daemon_terminals(server) -> set[str]:
    return open_terminals(server.pid)


def alternate_screen(term: OuterTerminal) -> bool:
    return term.tmux("display-message", "-p", "-t", "outer", "#{alternate_on}").strip() == "1"


def start_attach(term: OuterTerminal, server, tmp_path, env: str = "") -> None:
    term.type(f"stty -g > {tmp_path}/before; {env}" + muxd_command(server.name, "attach", "-t", "work")
              + f"; stty -g > {tmp_path}/after; echo attach-ended-$((6*7))", enter=True)
    term.wait_for("[work]")
    term.wait_for("tick")


def restored(term: OuterTerminal, tmp_path) -> None:
    term.wait_for("attach-ended-42")
    assert (tmp_path / "after").read_text() == (tmp_path / "before").read_text()  # modes restored
    assert not alternate_screen(term)  # the main screen again, the frames gone with the alternate


def test_a_local_attach_has_the_daemon_write_to_its_terminal(muxd_server, outer, tmp_path):
    s = muxd_server
    s.cli("new-session", "-d", "-s", "work", *COUNTER, check=True)
    term = outer()
    tty = term.tty()
    assert tty not in daemon_terminals(s)
    start_attach(term, s, tmp_path)
    assert tty in daemon_terminals(s)  # the daemon's own descriptor of the client's terminal
    first = term.wait_for("tick")
    term.wait_for(lambda screen: screen != first)  # frames go on arriving, from the daemon
    term.keys("C-b", "d")
    term.wait_for("[detached (from session work)]")
    restored(term, tmp_path)
    assert tty not in daemon_terminals(s)


def test_with_direct_off_frames_come_over_the_socket(muxd_server, outer, tmp_path):
    s = muxd_server
    s.cli("new-session", "-d", "-s", "work", *COUNTER, check=True)
    term = outer()
    start_attach(term, s, tmp_path, env="MUXD_ATTACH_DIRECT=0 ")
    first = term.wait_for("tick")
    term.wait_for(lambda screen: screen != first)
    assert term.tty() not in daemon_terminals(s)
    term.keys("C-b", "d")
    term.wait_for("[detached (from session work)]")
    restored(term, tmp_path)


def test_a_client_ending_on_a_signal_stops_the_daemon_writing_first(muxd_server, outer, tmp_path):
    s = muxd_server
    s.cli("new-session", "-d", "-s", "work", *COUNTER, check=True)
    term = outer()
    tty = term.tty()
    start_attach(term, s, tmp_path)
    client = term.pane_pid()
    attach_pids = [int(p) for p in os.popen(f"pgrep -P {client}").read().split()]
    assert len(attach_pids) == 1, attach_pids
    os.kill(attach_pids[0], signal.SIGTERM)
    screen = term.wait_for("attach-ended-42")
    assert "[terminated]" in screen
    restored(term, tmp_path)
    wait_until(lambda: tty not in daemon_terminals(s), timeout=5, message="the daemon closed the terminal")
    assert "tick" not in term.screen()  # no frame came after the restore (the main screen shows none)
    assert s.panes("work")  # the session lives on


def test_a_passed_descriptor_that_is_no_terminal_gets_the_frames_over_the_socket(muxd_server):
    """The daemon checks what it is handed: a pipe is refused, and the client is served as over
    ssh (its frames in AttachOutput messages) rather than not at all."""
    from muxd.client.attach import _open, _pass_terminal
    from muxd.protocol.messages import Attach, Attached, AttachOutput

    s = muxd_server
    s.cli("new-session", "-d", "-s", "work", *COUNTER, check=True)
    link = _open(s.socket_path, None)
    read_end, write_end = os.pipe()
    try:
        link.send(Attach(id=2, target="work", columns=80, lines=24, direct=True))
        attached = link.reply()
        assert isinstance(attached, Attached) and attached.direct  # the daemon asked for it
        _pass_terminal(link.sock, write_end)
        shown = bytearray()

        def frames() -> bool:
            if select.select([link.sock], [], [], 0.5)[0]:  # (bounded: wait_until's timeout holds)
                link.queued += link.read()
            for message in link.queued:
                if isinstance(message, AttachOutput):
                    shown.extend(message.data)
            link.queued = []
            return b"tick" in shown

        wait_until(frames, timeout=10, message="frames over the socket")
        os.set_blocking(read_end, False)
        with pytest.raises(BlockingIOError):
            os.read(read_end, 1)  # nothing went to the pipe
    finally:
        link.sock.close()
        os.close(read_end)
        os.close(write_end)
