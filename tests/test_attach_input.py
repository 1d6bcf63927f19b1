"""Typing and pasting into attached clients: a paste outside bracketed-paste mode is one write
per message, not one per byte; keys the prefix, prompts, copy mode and the help view need are
still seen one by one."""

from __future__ import annotations

import json
import socket
import time

from muxd.config import ATTACH_INPUT_MAX_BYTES, PROTOCOL_VERSION
from muxd.protocol.codec import decode_server_message, encode
from muxd.protocol.framing import FrameDecoder
from muxd.protocol.messages import Attach, Attached, AttachInput, Detached, Hello, Welcome
from muxd.testing.outer_terminal import muxd_command, outer_terminals
from muxd.testing.patience import Deadline, stretched
from muxd.testing.proc import peak_rss_kib
from muxd.testing.wait import wait_until

PASTE_BYTES = 4 * 1024 * 1024
# The pane reads its input raw (no line limit, no echo) and says how much it got.
COUNTING_PANE = ("sh", "-c", f"stty raw -echo; head -c {PASTE_BYTES} | wc -c; exec sleep 600")
SHELL = ("bash", "--norc", "--noprofile")
PASTE_TIMEOUT_S = 120  # the broken daemon took ~16 s; a hang must still end the test


def _paste_bytes() -> bytes:
    line = b"the quick brown fox jumps over the lazy dog 0123456789\n"
    return (line * (PASTE_BYTES // len(line) + 1))[:PASTE_BYTES]


def _attached_link(server, session: str) -> socket.socket:
    link = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    link.settimeout(stretched(10))
    link.connect(str(server.socket_path))
    link.sendall(encode(Hello(id=1, protocol_version=PROTOCOL_VERSION, client="test"))
                 + encode(Attach(id=2, target=session, columns=100, lines=30)))
    decoder, replies = FrameDecoder(), []
    while len(replies) < 2:
        replies += [m for m in map(decode_server_message, decoder.feed(link.recv(1 << 20))) if hasattr(m, "id")]
    assert isinstance(replies[0], Welcome) and isinstance(replies[1], Attached), replies
    return link


def _wait_counted(server, started: float) -> float:
    wait_until(lambda: f"{PASTE_BYTES}" in server.capture("work"), timeout=PASTE_TIMEOUT_S, interval=0.1,
               message="the pane counted the whole paste")
    return time.monotonic() - started


def test_a_4_mb_paste_in_a_real_terminal_reaches_the_pane_quickly(muxd_server, tmp_path):
    """Pasted into the outer terminal, unbracketed: it took ~16 s to reach the pane."""
    s = muxd_server
    s.cli("new-session", "-d", "-s", "work", "--", *COUNTING_PANE, check=True)
    (tmp_path / "paste").write_bytes(_paste_bytes())
    with outer_terminals(s) as make:
        term = make()
        term.type(muxd_command(s.name, "attach", "-t", "work"), enter=True)
        term.wait_for("[work]")
        term.tmux("load-buffer", str(tmp_path / "paste"))
        started = time.monotonic()
        term.tmux("paste-buffer", "-t", "outer")  # no -p: the bytes come as typed, unbracketed
        elapsed_s = _wait_counted(s, started)
    assert elapsed_s < stretched(5), elapsed_s  # ~0.1 s now; in machine time


def test_a_4_mb_paste_over_the_protocol_costs_bounded_time_and_memory(muxd_server):
    """The same paste straight over the protocol, in the largest messages allowed."""
    s = muxd_server
    s.cli("new-session", "-d", "-s", "work", "--", *COUNTING_PANE, check=True)
    paste = _paste_bytes()
    with _attached_link(s, "work") as link:
        before_kib = peak_rss_kib(s.pid)
        link.settimeout(stretched(PASTE_TIMEOUT_S))
        started = time.monotonic()
        link.sendall(b"".join(encode(AttachInput(data=paste[at:at + ATTACH_INPUT_MAX_BYTES]))
                              for at in range(0, len(paste), ATTACH_INPUT_MAX_BYTES)))
        elapsed_s = _wait_counted(s, started)
        grown_mib = (peak_rss_kib(s.pid) - before_kib) / 1024
    assert elapsed_s < stretched(5), elapsed_s
    assert grown_mib < 60, grown_mib


def test_a_paste_into_a_program_that_never_reads_cannot_lock_out_the_prefix(muxd_server):
    """The client's input waits for its pane to read, but not for ever: C-b d still detaches."""
    s = muxd_server
    s.cli("new-session", "-d", "-s", "work", "--", "sh", "-c", "stty raw -echo; exec sleep 600", check=True)
    paste = _paste_bytes()
    with _attached_link(s, "work") as link:
        before_kib = peak_rss_kib(s.pid)
        link.sendall(b"".join(encode(AttachInput(data=paste[at:at + ATTACH_INPUT_MAX_BYTES]))
                              for at in range(0, len(paste), ATTACH_INPUT_MAX_BYTES))
                     + encode(AttachInput(data=b"\x02d")))
        decoder, detached = FrameDecoder(), None
        deadline = Deadline(20)
        while detached is None and not deadline.expired():
            for message in map(decode_server_message, decoder.feed(link.recv(1 << 20))):
                if isinstance(message, Detached):
                    detached = message
        assert detached is not None and "detached" in detached.reason, detached
        grown_mib = (peak_rss_kib(s.pid) - before_kib) / 1024
    assert grown_mib < 60, grown_mib
    assert "dropping more" in s.log_path.read_text()  # what it could not take, said once


def test_one_run_of_typing_is_cut_where_keys_must_be_seen_alone(muxd_server):
    """One message of plain bytes holding prefix commands, a prompt, copy mode and the help
    view: each sees its keys alone, the typing between goes to the pane it was meant for."""
    s = muxd_server
    s.cli("new-session", "-d", "-s", "work", "--", *SHELL, check=True)
    name = _window_names(s)[0]
    typed = (b"echo a-$((40+1))\r"
             b"\x02,-2\r"                  # rename prompt (it starts with the name): "-2", Enter
             b"\x02[q"                     # copy mode: q leaves it
             b"\x02?q"                     # the help view: q closes it
             b"echo b-$((40+2))\r"
             b"\x02%echo c-$((40+3))\r")   # a split: the new pane is active and gets the rest
    with _attached_link(s, "work") as link:
        link.sendall(encode(AttachInput(data=typed)))
        s.wait_for_text("%0", "b-42\n")
        wait_until(lambda: "c-43\n" in s.capture("%1"), timeout=10, message="typed into the new pane")
    first = s.capture("%0")
    assert "a-41\n" in first and "-2" not in first and "q" not in first.replace("echo", ""), first
    assert _window_names(s) == [name + "-2"]


def _window_names(server) -> list[str]:
    return [w["name"] for w in json.loads(server.cli("list-windows", "-t", "work", "--json", check=True).stdout)]
