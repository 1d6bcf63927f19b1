"""Paste buffers and pipe-pane through the real CLI and a real daemon, with tmux's flags and
output. One server for the module; each test has its own panes and buffer names."""

from __future__ import annotations

import sys

import pytest

from muxd.client.blocking import BlockingClient
from muxd.testing.server import InProcessCli
from muxd.testing.wait import wait_until

SHELL = ["--", "bash", "--norc", "--noprofile"]
# A program that shows every read of its input as a Python bytes literal; BRACKETED asks for
# bracketed paste first (mode 2004), as an editor would. It says READY once in raw mode: what is
# typed after that reaches it as typed (setraw drops what came before).
READY = "reader-ready"
READER = ("import os, sys, tty; tty.setraw(0); sys.stdout.write({mode!r} + " + repr(READY + "\r\n") + "); "
          "sys.stdout.flush()\n"
          "while True: os.write(1, repr(os.read(0, 4096)).encode() + b'\\r\\n')")


@pytest.fixture
def s(muxd_module_server):
    return InProcessCli(muxd_module_server)


def reader(s, name: str, bracketed: bool = False) -> str:
    mode = "\x1b[?2004h" if bracketed else ""
    pane = s.cli("new-session", "-d", "-s", name, "-P", "--", sys.executable, "-c", READER.format(mode=mode),
                 check=True).stdout.strip()
    # Waiting for READY, not probing with keys: a probe still unread when an earlier one showed
    # would arrive with the test's first input, in the same read.
    wait_for_text(s, pane, READY)
    return pane


def screen(s, pane: str) -> str:
    """Read in this process: a CLI per look would double the module's time."""
    with BlockingClient.connect(s.socket_path) as client:
        return client.call("capture-pane", "captured", target=pane).text


def wait_for_text(s, pane: str, text: str) -> None:
    wait_until(lambda: text in screen(s, pane), timeout=10, message=f"{text!r} in {pane}")


def fails(s, *args: str) -> str:
    out = s.cli(*args)
    assert out.returncode == 1 and "Traceback" not in out.stderr, out
    return out.stderr.strip()


def test_set_list_show_rename_and_delete_buffers(s):
    s.cli("set-buffer", "-b", "notes", "a\nb\tc\x01é", check=True)
    s.cli("set-buffer", "-b", "notes", "-a", "!", check=True)
    s.cli("set-buffer", "-b", "temp", "scratch", check=True)
    listed = s.cli("list-buffers", check=True).stdout.splitlines()
    assert listed[:2] == ['temp: 7 bytes: "scratch"', 'notes: 9 bytes: "a\\nb\\tc\\001é!"']
    assert s.cli("show-buffer", "-b", "notes", check=True).stdout == "a\nb\tc\x01é!"
    assert s.cli("show-buffer", check=True).stdout == "scratch"  # the newest
    s.cli("set-buffer", "-b", "temp", "-n", "kept", check=True)
    assert s.cli("show-buffer", "-b", "kept", check=True).stdout == "scratch"
    assert fails(s, "show-buffer", "-b", "temp") == "muxd: no buffer temp"
    s.cli("delete-buffer", "-b", "kept", check=True)
    assert fails(s, "delete-buffer", "-b", "kept") == "muxd: unknown buffer: kept"
    assert fails(s, "set-buffer") == "muxd: no data specified"


def test_buffer_limit_drops_the_oldest_automatic_buffers_only(s):
    s.cli("set", "-s", "buffer-limit", "2", check=True)
    try:
        s.cli("set-buffer", "-b", "named-stays", "x", check=True)
        for text in ("one", "two", "three"):
            s.cli("set-buffer", text, check=True)  # automatic: buffer0, buffer1, …
        names = [line.split(":")[0] for line in s.cli("list-buffers", check=True).stdout.splitlines()]
        automatic = [n for n in names if n.startswith("buffer")]
        assert len(automatic) == 2 and "named-stays" in names
        assert s.cli("show-buffer", check=True).stdout == "three"
    finally:
        s.cli("set", "-su", "buffer-limit", check=True)


def test_paste_buffer_types_line_ends_as_enter_with_separators_raw_and_brackets(s):
    pane = reader(s, "paste")
    s.cli("set-buffer", "-b", "two-lines", "first\nsecond", check=True)
    s.cli("paste-buffer", "-t", pane, "-b", "two-lines", check=True)
    wait_for_text(s, pane, "b'first\\rsecond'")  # as typed: Enter is a carriage return
    s.cli("paste-buffer", "-t", pane, "-b", "two-lines", "-r", check=True)
    wait_for_text(s, pane, "b'first\\nsecond'")
    s.cli("paste-buffer", "-t", pane, "-b", "two-lines", "-s", "|", check=True)
    wait_for_text(s, pane, "b'first|second'")
    # -p brackets only for a program that asked: this one did not.
    s.cli("paste-buffer", "-t", pane, "-b", "two-lines", "-p", "-s", "+", check=True)
    wait_for_text(s, pane, "b'first+second'")
    editor = reader(s, "paste-editor", bracketed=True)
    s.cli("paste-buffer", "-t", editor, "-b", "two-lines", "-p", "-d", check=True)
    wait_for_text(s, editor, "b'\\x1b[200~first\\rsecond\\x1b[201~'")
    assert fails(s, "paste-buffer", "-t", editor, "-b", "two-lines") == "muxd: no buffer two-lines"  # -d deleted it


def test_pipe_pane_sends_output_to_a_command_toggles_and_types_its_output(s, tmp_path):
    pane = s.cli("new-session", "-d", "-s", "piped", "-P", *SHELL, check=True).stdout.strip()
    log = tmp_path / "pane.log"
    s.cli("pipe-pane", "-t", pane, f"cat >> {log}", check=True)
    s.cli("send-keys", "-t", pane, "echo piped-$((6*7))", "Enter", check=True)
    wait_until(lambda: log.exists() and "piped-42" in log.read_text(), timeout=10, message="output in the pipe")
    s.cli("pipe-pane", "-o", "-t", pane, f"cat >> {tmp_path}/other.log", check=True)  # -o: a pipe was open: closed
    s.cli("send-keys", "-t", pane, "echo after-$((6*7))", "Enter", check=True)
    wait_for_text(s, pane, "after-42")
    assert "after-42" not in log.read_text() and not (tmp_path / "other.log").exists()
    # -I: what the command prints is typed into the pane.
    s.cli("pipe-pane", "-I", "-t", pane, "echo 'echo $((6*7))-by-pipe'", check=True)
    wait_for_text(s, pane, "42-by-pipe")
    s.cli("pipe-pane", "-t", pane, check=True)  # no command: closes (none open: no error)
    assert fails(s, "pipe-pane", "-t", "%999", "cat") == "muxd: can't find pane: %999"


def test_load_and_save_buffer_through_files_stdin_and_stdout(s, tmp_path):
    source = tmp_path / "in.txt"
    source.write_bytes("first line\nsecond: é ✓\n".encode())
    s.cli("load-buffer", "-b", "loaded", str(source), check=True)
    assert s.cli("show-buffer", "-b", "loaded", check=True).stdout == "first line\nsecond: é ✓\n"
    saved = tmp_path / "out.txt"
    s.cli("save-buffer", "-b", "loaded", str(saved), check=True)
    assert saved.read_bytes() == source.read_bytes()
    s.cli("save-buffer", "-a", "-b", "loaded", str(saved), check=True)  # -a appends
    assert saved.read_bytes() == source.read_bytes() * 2
    s.cli("save-buffer", "-b", "loaded", str(saved), check=True)  # without it, replaces
    assert saved.read_bytes() == source.read_bytes()
    # - is the caller's standard input and output: a real `muxd` process in a pipe.
    s.server.cli("load-buffer", "-b", "piped", "-", input="from a pipe\n", check=True)
    assert s.server.cli("save-buffer", "-b", "piped", "-", check=True).stdout == "from a pipe\n"
    # Without -b: a new automatic buffer, the newest, which save-buffer then writes.
    s.server.cli("load-buffer", "-", input="unnamed-load", check=True)
    newest = s.cli("list-buffers", check=True).stdout.splitlines()[0]
    assert newest.startswith("buffer") and newest.endswith('"unnamed-load"'), newest
    assert s.server.cli("save-buffer", "-", check=True).stdout == "unnamed-load"
    # Bytes that are not UTF-8 load as replacement characters, not a traceback.
    source.write_bytes(b"caf\xe9")
    s.cli("load-buffer", "-b", "latin", str(source), check=True)
    assert s.cli("show-buffer", "-b", "latin", check=True).stdout == "caf\ufffd"


def test_load_and_save_buffer_errors_are_one_line(s, tmp_path):
    missing = tmp_path / "nosuch.txt"
    assert fails(s, "load-buffer", "-b", "x", str(missing)).endswith(f"{missing}: No such file or directory")
    assert "\n" not in fails(s, "load-buffer", str(missing))
    assert s.cli("show-buffer", "-b", "x").returncode == 1  # nothing was loaded
    s.cli("set-buffer", "-b", "kept", "text", check=True)
    no_dir = tmp_path / "no-dir" / "out.txt"
    assert fails(s, "save-buffer", "-b", "kept", str(no_dir)).endswith(f"{no_dir}: No such file or directory")
    assert fails(s, "save-buffer", "-b", "kept", str(tmp_path)).endswith(f"{tmp_path}: Is a directory")
    assert "\n" not in fails(s, "save-buffer", "-b", "no-such-buffer", str(tmp_path / "y"))
    assert not (tmp_path / "y").exists()
    # The daemon keeps serving.
    assert s.cli("show-buffer", "-b", "kept", check=True).stdout == "text"
