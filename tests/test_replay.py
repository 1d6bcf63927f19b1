"""Offline detection: `muxd detect` on saved screens and `muxd replay` on recordings."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from muxd.detectors.replay import plain_size, read_recording, screen_bytes

PLUGIN_DIR = Path(__file__).parent / "plugin_data"


def muxd(*args):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(PLUGIN_DIR), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "muxd", *args], env=env, capture_output=True,
                          text=True, timeout=60)


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
    assert (rec.columns, rec.lines, len(rec.events)) == (50, 10, 40)
    assert b"".join(data for _, data in rec.events) == b"x" * 10000


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


def test_replay_prints_the_timeline(tmp_path):
    cast = tmp_path / "session.cast"
    cast.write_text("\n".join([
        json.dumps({"version": 2, "width": 80, "height": 24}),
        json.dumps([0.0, "o", "DEMO-AGENT ready\r\n"]),
        json.dumps([1.0, "o", "DEMO-AGENT working\r\n"]),
        json.dumps([3.0, "o", "\x1b[2J\x1b[HDEMO-AGENT ready\r\n"]),
    ]) + "\n")
    result = muxd("replay", str(cast), "--json")
    assert result.returncode == 0, result.stderr
    timeline = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(t["state"]["activity"]["state"]) for t in timeline] == ["Idle", "Thinking", "Idle"]
    times = [t["t"] for t in timeline]
    assert 0 < times[0] < 0.5 and 1.0 < times[1] < 1.5 and 3.0 < times[2] < 3.5
    assert "Thinking" in muxd("replay", str(cast)).stdout


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
