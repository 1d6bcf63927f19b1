"""Offline detection: `muxd detect` on saved screens and `muxd replay` on recordings."""

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from muxd.detectors.replay import Recording, plain_size, raw_events, read_recording, replay, screen_bytes
from muxd.detectors.schedule import DETECT_MAX_INTERVAL_S, DETECT_MIN_INTERVAL_S
from muxd.detectors.state import Detection, ToolSighting
from muxd.testing.patience import stretched

# A replay's first look at a frame comes at most the schedule's slowest interval after it, and
# its confirming look one shortest interval later: a person who waits longer leaves both looks
# in the recording before their quit.
AT_PROMPT_SEEN_S = DETECT_MAX_INTERVAL_S + 2 * DETECT_MIN_INTERVAL_S

PLUGIN_DIR = Path(__file__).parent / "plugin_data"


def muxd(*args):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(PLUGIN_DIR), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "muxd", *args], env=env, capture_output=True,
                          text=True, timeout=stretched(60))


def test_plain_captures_become_terminal_lines():
    assert screen_bytes(b"a\nb\n") == b"a\r\nb\r\n"
    assert screen_bytes(b"a\r\nb") == b"a\r\nb"
    assert plain_size(b"x" * 100 + b"\nshort\n") == (100, 2)


def test_asciicast_v2_and_v3_and_raw(tmp_path):
    v2 = tmp_path / "a.cast"
    v2.write_text('{"version": 2, "width": 100, "height": 30}\n[0.5, "o", "hi"]\n[1.25, "i", "x"]\n[2.0, "o", "!"]\n')
    rec = read_recording(v2)
    assert (rec.columns, rec.lines, rec.events) == (100, 30, [(0.5, b"hi"), (2.0, b"!")])
    v3 = tmp_path / "b.cast"
    v3.write_text('{"version": 3, "term": {"cols": 90, "rows": 20}}\n# a comment\n[0.5, "o", "hi"]\n[1.5, "o", "!"]\n')
    rec = read_recording(v3)
    assert (rec.columns, rec.lines, rec.events) == (90, 20, [(0.5, b"hi"), (2.0, b"!")])
    raw = tmp_path / "c.bin"
    raw.write_bytes(b"x" * 10000)
    rec = read_recording(raw, columns=50, lines=10)
    assert (rec.columns, rec.lines) == (50, 10)
    assert [len(data) for _, data in rec.events] == [4096, 4096, 1808]  # no frames: PTY-read sized
    assert b"".join(data for _, data in rec.events) == b"x" * 10000


def test_a_raw_log_is_cut_where_frames_begin():
    frames = [b"\x1b[?25l\x1b[Hone\x1b[?25h", b"\x1b[?2026hsync\x1b[?2026l", b"\x1b[2J\x1b[Hcleared",
              b"\x1b[2K\x1b[1A\x1b[2K\x1b[1A\x1b[2K\x1b[Gink frame\r\n\r", b"spinner 1\x08\x08\r",
              b"spinner 2\r\x1b[K", b"\x1b[H" + b"y" * 5000]
    events = raw_events(b"".join(frames))
    assert [data for _, data in events] == frames[:-1] + [frames[-1][:4096], frames[-1][4096:]]
    times = [t for t, _ in events]
    assert times[0] == 0 and times[-1] == (len(b"".join(frames)) - len(frames[-1]) + 4096) / 2048  # paced by size


class _ToolLines:
    """Remembers every screen it is shown, and counts each '* Bash(...)' row as a tool use."""

    name = "tool-lines"

    def __init__(self):
        self.screens = []

    def identify(self, ctx):
        return 1.0

    def detect(self, ctx, prev):
        self.screens.append(list(ctx.lines))
        seen = [ToolSighting("Bash", line) for line in ctx.lines if line.startswith("* Bash(")]
        return Detection(agent_type="demo", state="Idle", rule="rows", line="", tools_seen=seen)


def test_replaying_a_raw_log_never_reads_a_half_drawn_redraw():
    # A TUI redraws its whole screen from the top for every new row (as Claude Code does when
    # its conversation is taller than the screen). A look between two pieces of one redraw
    # would see new rows above old ones: never a screen the program drew, and once in a while
    # the tool row twice, one row apart (a second use counted).
    rows = [f"line {n} " + "." * 60 for n in range(40)]
    rows[12] = "* Bash(make test)"
    log, drawn = b"", []
    for shown in range(10, len(rows) + 1):
        drawn.append(rows[shown - 10:shown])
        log += b"\x1b[?25l\x1b[H" + b"\r\n".join(row.encode() + b"\x1b[K" for row in drawn[-1]) + b"\x1b[?25h"
    detector = _ToolLines()
    timeline = list(replay(Recording(80, 10, raw_events(log)), [detector]))
    assert len(detector.screens) > 10 and all(screen in drawn for screen in detector.screens)
    assert timeline[-1][1].recent_tools == ["Bash"]


def test_detect_a_saved_screen(tmp_path):
    screen = tmp_path / "screen.txt"
    screen.write_text("some output\nDEMO-AGENT working\n")
    result = muxd("detect", str(screen), "--json")
    assert result.returncode == 0, result.stderr
    state = json.loads(result.stdout)
    assert state["agent_type"] == "demo" and state["activity"]["state"] == "Thinking"
    table = muxd("detect", str(screen)).stdout
    assert "demo-banner" in table and "Thinking" in table
    ansi = tmp_path / "screen.ansi"
    ansi.write_bytes(b"\x1b[31mDEMO-AGENT\x1b[0m ready\n")
    assert json.loads(muxd("detect", str(ansi), "--json").stdout)["activity"]["state"] == "Idle"
    forced = muxd("detect", str(screen), "--agent", "nosuch")
    assert forced.returncode == 1 and "no detector named 'nosuch'" in forced.stderr


def demo_session(path, width, height, last_screen):
    """An asciicast of the demo agent: ready at 0 s, working at 1 s, `last_screen` at 3 s."""
    path.write_text("\n".join([
        json.dumps({"version": 2, "width": width, "height": height}),
        json.dumps([0.0, "o", "DEMO-AGENT ready\r\n"]),
        json.dumps([1.0, "o", "DEMO-AGENT working\r\n"]),
        json.dumps([3.0, "o", "\x1b[2J\x1b[H" + last_screen + "\r\n"]),
    ]) + "\n")
    return path


def test_replay_prints_the_timeline(tmp_path):
    cast = demo_session(tmp_path / "session.cast", 80, 24, "DEMO-AGENT ready")
    result = muxd("replay", str(cast), "--json")
    assert result.returncode == 0, result.stderr
    timeline = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(t["state"]["activity"]["state"]) for t in timeline] == ["Idle", "Thinking", "Idle"]
    times = [t["t"] for t in timeline]
    assert 0 < times[0] < 0.5 and 1.0 < times[1] < 1.5 and 3.0 < times[2] < 3.5
    assert "Thinking" in muxd("replay", str(cast)).stdout


def test_replay_until_shows_the_screen_and_the_state_at_that_moment(tmp_path):
    cast = demo_session(tmp_path / "session.cast", 40, 5, "gone")
    at = json.loads(muxd("replay", str(cast), "--until", "2.5", "--json").stdout)
    assert at["t"] == 2.5 and at["screen"] == ["DEMO-AGENT ready", "DEMO-AGENT working", "", "", ""]
    assert at["state"]["activity"]["state"] == "Thinking" and at["state"]["evidence"]["detector"] == "demo"
    early = json.loads(muxd("replay", str(cast), "--until", "1.05", "--json").stdout)
    assert early["screen"][1] == "DEMO-AGENT working"     # written by then,
    assert early["state"]["activity"]["state"] == "Idle"  # not yet looked at twice
    text = muxd("replay", str(cast), "--until", "2.5").stdout
    assert "screen at 2.5 s (40x5):" in text and "   1 | DEMO-AGENT working" in text
    assert "Thinking" in text and "demo" in text


def test_the_state_table_shows_every_session_field(capsys):
    from muxd.cli.agent_commands import print_state
    from muxd.detectors.state import AgentSession, AgentState

    session = AgentSession(id="0199a", model="gpt-5", tokens_used=4800, cost_usd=0.125, context_left_pct=72.0)
    print_state(AgentState(pane_id="%1", agent_type="codex", session=session))
    table = dict(re.split(r"\s{2,}", line.strip(), maxsplit=1) for line in capsys.readouterr().out.splitlines()[1:])
    assert table["session id"] == "0199a" and table["cost"] == "$0.125" and table["context left"] == "72%"
    assert table["tokens"] == "4800" and table["model"] == "gpt-5"


@pytest.mark.parametrize("bad", ['{"version": 2}\n[1, "o"]\n', '{"version": 2}\nnot json\n'])
def test_replay_rejects_broken_recordings(tmp_path, bad):
    cast = tmp_path / "bad.cast"
    cast.write_text(bad)
    result = muxd("replay", str(cast))
    assert result.returncode == 1 and "not an asciicast event line" in result.stderr


def test_daemon_records_panes_that_replay_to_the_same_screen(tmp_path):
    from muxd.emulator import Emulator
    from muxd.testing.server import MuxdTestServer

    record_dir = tmp_path / "casts"
    server = MuxdTestServer(env={"MUXD_RECORD_DIR": str(record_dir)}).start()
    try:
        server.cli("new-session", "-d", "-s", "rec", "-x", "60", "-y", "12", "--",
                   "bash", "--norc", "-c", "printf '\\033[1;31mred\\033[0m é 漢\\n'; seq 1 30; sleep 30",
                   check=True)
        screen = server.wait_for_text("rec", "30")
        casts = list(record_dir.glob("*.cast"))
        assert len(casts) == 1 and oct(casts[0].stat().st_mode & 0o777) == "0o600"
        recording = read_recording(casts[0])
        assert (recording.columns, recording.lines) == (60, 12)
        times = [t for t, _ in recording.events]
        assert times == sorted(times)
        replayed = Emulator(columns=60, lines=12)
        for _, data in recording.events:
            replayed.feed(data)
        assert replayed.display_lines() == screen.splitlines() + [""] * (12 - len(screen.splitlines()))
    finally:
        server.stop()


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini", "aider"])
def test_an_agent_quit_back_to_its_shell_replays_to_the_shell_as_it_ended_live(tmp_path, agent):
    from muxd.testing.server import MuxdTestServer
    from muxd.testing.wait import wait_until

    record_dir = tmp_path / "casts"
    server = MuxdTestServer(env={"MUXD_RECORD_DIR": str(record_dir)}).start()

    def live():
        return json.loads(server.cli("list-panes", "-a", "--json", check=True).stdout)[0]["agent"]

    try:
        server.cli("new-session", "-d", "-s", "rec", "-x", "70", "-y", "20", "--", "bash", "--norc",
                   "--noprofile", check=True)
        wait_until(lambda: live()["agent_type"] == "shell", message="the shell")
        server.cli("send-keys", "-t", "rec", "-l", f"{sys.executable} -m muxd.testing.fake_agent {agent}", check=True)
        server.cli("send-keys", "-t", "rec", "Enter", check=True)
        # At its prompt for a moment, as a person reads it before quitting: a recording holds no
        # keystrokes, so its replay takes a frame as the daemon takes one no Enter caused, on a
        # second look; the daemon took the agent's first frame at once (the command's Enter made
        # it), and a quit sent then could leave the recording less than two looks of it.
        def at_prompt_a_moment():
            now = live()
            return (now["agent_type"], now["activity"]["state"]) == (agent, "Idle") and (
                time.time() - now["activity"]["since"] >= AT_PROMPT_SEEN_S)

        wait_until(at_prompt_a_moment, message=f"{agent} at its prompt for {AT_PROMPT_SEEN_S} s")
        server.cli("send-keys", "-t", "rec", "quit", "Enter", check=True)
        ended = wait_until(lambda: (lambda a: a if a["agent_type"] == "shell" else None)(live()),
                           message="the shell back")
    finally:
        server.stop()
    (cast,) = record_dir.glob("*.cast")
    result = muxd("replay", str(cast), "--json")
    assert result.returncode == 0, result.stderr
    timeline = [json.loads(line)["state"] for line in result.stdout.splitlines()]
    assert any(state["agent_type"] == agent for state in timeline), timeline
    last = timeline[-1]
    assert (last["agent_type"], last["activity"]["state"]) == (ended["agent_type"], ended["activity"]["state"])
