"""`send-keys` and MCP `send_input` encode cursor and keypad keys in the modes the pane's program
set, compared byte for byte with real tmux 3.3a's send-keys into the same program."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from muxd.testing.mcp_stdio import call_ok, mcp_session
from muxd.testing.patience import stretched
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until

# Raw mode, the modes from argv (DECCKM and DECKPAM, as vim's smkx), then every byte read is
# appended to a file until a `!` arrives.
KEY_RECORDER = r"""
import os, sys, tty
tty.setraw(0)
if sys.argv[2] == "application":
    os.write(1, b"\x1b[?1h\x1b=")
os.write(1, b"ready\r\n")
with open(sys.argv[1], "wb", buffering=0) as out:
    while True:
        data = os.read(0, 1024)
        out.write(data)
        if data.endswith(b"!"):
            break
"""
SHARED_KEYS = ["Up", "Down", "Left", "Right", "S-Up", "C-Left", "PageUp", "F1", "Enter",
               "KP0", "KP1", "KP5", "KP9", "KP/", "KP*", "KP-", "KP+", "KP.", "KPEnter"]


@pytest.fixture
def server(muxd_module_server):
    return muxd_module_server


def _recorded(path: Path) -> bytes:
    wait_until(lambda: path.exists() and path.read_bytes().endswith(b"!"), timeout=10,
               message=f"keys recorded in {path.name}")
    return path.read_bytes()[:-1]


def _tmux_bytes(tmp_path: Path, script: Path, mode: str, keys: list[str]) -> bytes:
    out = tmp_path / f"tmux-{mode}"
    name = f"muxd-test-{uuid.uuid4().hex[:10]}"

    def tmux(*args: str) -> str:
        return subprocess.run(["tmux", "-L", name, "-f", "/dev/null", *args], check=True, capture_output=True,
                              text=True, timeout=stretched(10)).stdout

    tmux("new-session", "-d", "-x", "80", "-y", "24", sys.executable, str(script), str(out), mode)
    try:
        wait_until(lambda: "ready" in tmux("capture-pane", "-p"), timeout=10, message="recorder ready in tmux")
        tmux("send-keys", *keys)
        tmux("send-keys", "-l", "!")
        return _recorded(out)
    finally:
        subprocess.run(["tmux", "-L", name, "kill-server"], check=False, capture_output=True, timeout=stretched(10))


def _muxd_bytes(server: MuxdTestServer, tmp_path: Path, script: Path, mode: str, keys: list[str]) -> bytes:
    out = tmp_path / f"muxd-{mode}"
    pane = server.cli("new-session", "-d", "-P", "--", sys.executable, str(script), str(out), mode,
                      check=True).stdout.strip()
    server.wait_for_text(pane, "ready")
    server.cli("send-keys", "-t", pane, *keys, check=True)
    server.cli("send-keys", "-t", pane, "-l", "!", check=True)
    return _recorded(out)


@pytest.mark.parametrize("mode", ["application", "normal"])
def test_send_keys_matches_tmux_in_both_modes(server, tmp_path, mode):
    script = tmp_path / "recorder.py"
    script.write_text(KEY_RECORDER)
    ours = _muxd_bytes(server, tmp_path, script, mode, SHARED_KEYS)
    assert ours == _tmux_bytes(tmp_path, script, mode, SHARED_KEYS)
    if mode == "application":
        assert ours.startswith(b"\x1bOA\x1bOB\x1bOD\x1bOC\x1b[1;2A")  # modified keys keep CSI
        assert b"\x1bOp\x1bOq\x1bOu" in ours
    else:
        assert ours.startswith(b"\x1b[A\x1b[B")


def test_home_and_end_follow_the_panes_terminfo(server, tmp_path):
    """tmux sends ESC [1~ for Home whatever the mode (its TERM says so); muxd's panes are
    xterm-256color, whose khome/kend are the application-mode keys smkx turns on."""
    script = tmp_path / "recorder.py"
    script.write_text(KEY_RECORDER)

    def terminfo(cap: str) -> bytes:
        return subprocess.run(["tput", "-T", "xterm-256color", cap], check=True, capture_output=True).stdout

    assert _muxd_bytes(server, tmp_path, script, "application", ["Home", "End"]) == terminfo("khome") + terminfo("kend")
    assert _muxd_bytes(server, tmp_path, script, "normal", ["Home", "End"]) == b"\x1b[H\x1b[F"


def test_mcp_send_input_keys_follow_the_mode(server, tmp_path):
    script = tmp_path / "recorder.py"
    script.write_text(KEY_RECORDER)
    out = tmp_path / "mcp"
    pane = server.cli("new-session", "-d", "-P", "--", sys.executable, str(script), str(out), "application",
                      check=True).stdout.strip()
    server.wait_for_text(pane, "ready")

    async def drive() -> None:
        async with mcp_session(server) as session:
            await call_ok(session, "send_input", pane_id=pane, keys=["Up", "KP5", "Home"])
            await call_ok(session, "send_input", pane_id=pane, text="!")

    asyncio.run(drive())
    assert _recorded(out) == b"\x1bOA\x1bOu\x1bOH"
