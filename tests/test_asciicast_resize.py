"""Recordings keep resizes: a pane resized to 100x30 writes an asciicast v2 `r` event, which
asciinema (PyPI) reads as such and `muxd replay` applies (issue 27, item 14)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from muxd.detectors.replay import read_recording
from muxd.testing.patience import stretched
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until

asciicast_v2 = pytest.importorskip("asciinema.asciicast.v2", reason="asciinema (the test extra) is not installed")


def _record_a_resize(record_dir: Path) -> tuple[Path, str]:
    server = MuxdTestServer(env={"MUXD_RECORD_DIR": str(record_dir)}).start()
    try:
        server.cli("new-session", "-d", "-s", "rec", "-x", "80", "-y", "24", "--", "bash", "--norc",
                   "--noprofile", check=True)
        server.cli("send-keys", "-t", "rec", "stty size", "Enter", check=True)
        server.wait_for_text("rec", "24 80")
        server.cli("resize-pane", "-t", "rec", "-x", "100", "-y", "30", check=True)
        server.cli("send-keys", "-t", "rec", "stty size; printf 'wide%s\\n' $(seq -s '' 1 50)", "Enter", check=True)
        # stty and printf write separately: wait for the last of the output, the wide line's end.
        screen = server.wait_for_text("rec", "4950\n")
        (cast,) = record_dir.glob("*.cast")
        # The recording is written as output is read: wait until the marker is in the file.
        wait_until(lambda: "4950" in cast.read_text(), message="the resized output recorded")
    finally:
        server.stop()
    return cast, screen


def test_a_resize_is_an_r_event_that_asciinema_reads_and_replay_applies(tmp_path):
    cast, screen = _record_a_resize(tmp_path / "casts")

    file = cast.open(encoding="utf-8")
    with asciicast_v2.open_from_file(file.readline(), file) as parsed:  # asciinema's own v2 reader
        header = parsed.v2_header
        events = list(parsed.events())
    assert (header["version"], header["width"], header["height"]) == (2, 80, 24)
    assert {kind for _, kind, _ in events} == {"o", "r"}
    resizes = [(when, size) for when, kind, size in events if kind == "r"]
    assert [size for _, size in resizes] == ["100x30"]
    times = [when for when, _, _ in events]
    assert times == sorted(times)
    # The resize sits between the output at the old size and the output at the new one.
    text_before = "".join(data for when, kind, data in events if kind == "o" and when <= resizes[0][0])
    text_after = "".join(data for when, kind, data in events if kind == "o" and when > resizes[0][0])
    assert "24 80" in text_before and "30 100" in text_after and "30 100" not in text_before

    asciinema = shutil.which("asciinema") or str(Path(sys.executable).with_name("asciinema"))
    cat = subprocess.run([asciinema, "cat", str(cast)], capture_output=True, text=True, timeout=stretched(60))
    assert cat.returncode == 0 and cat.stderr == "", cat.stderr
    assert "24 80" in cat.stdout and "30 100" in cat.stdout

    recording = read_recording(cast)
    assert (recording.columns, recording.lines) == (80, 24)
    assert [(c, r) for _, c, r in recording.resizes] == [(100, 30)]
    result = subprocess.run([sys.executable, "-m", "muxd", "replay", str(cast), "--until", "1000", "--json"],
                            capture_output=True, text=True, timeout=stretched(60))
    assert result.returncode == 0, result.stderr
    replayed = json.loads(result.stdout)["screen"]
    assert len(replayed) == 30  # the emulator took the recorded size
    live = screen.splitlines()
    # A 100-column line: at 80 columns it would have wrapped onto two rows.
    wide = next(line for line in live if line.startswith("wide"))
    assert len(wide) > 80 and wide in [line.rstrip() for line in replayed]


def test_a_resize_that_is_not_cols_x_rows_is_refused_in_one_line(tmp_path):
    cast = tmp_path / "bad.cast"
    cast.write_text('{"version": 2, "width": 80, "height": 24}\n[0.1, "r", "wide"]\n')
    result = subprocess.run([sys.executable, "-m", "muxd", "replay", str(cast)], capture_output=True, text=True,
                            timeout=stretched(60))
    assert result.returncode == 1
    assert "not an asciicast resize (COLSxROWS): 'wide'" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
