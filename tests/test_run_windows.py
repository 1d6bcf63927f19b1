"""Where `muxd run` leaves nothing behind (issue 28): its window closes when the command ends, as
tmux's `new-window -d CMD` does, so `ls`, `list-windows` and `C-b w` show the user's own windows;
the history keeps the output and the status (`muxd show`), and `stats` sums the closed ones in one
row. --keep keeps the window."""

from __future__ import annotations

import json

from muxd.testing.wait import wait_until

END_TIMEOUT_S = 30.0


def windows(server) -> list[dict]:
    return json.loads(server.cli("list-windows", "-a", "--json", check=True).stdout)


def shown(server, execution_id: str) -> dict:
    return json.loads(server.cli("show", execution_id, "--json", check=True).stdout)["execution"]


def test_a_run_leaves_no_window_and_keeps_its_output(muxd_server, tmp_path):
    s = muxd_server
    s.cli("new-session", "-d", "-s", "work", check=True)
    mine = windows(s)

    failed = s.cli("run", "--wait", "--", "sh", "-c", "echo building; exit 3", cwd=tmp_path)
    assert failed.returncode == 3 and failed.stdout == "building\n", failed.stderr
    execution_id = failed.stderr.split()[0]
    assert windows(s) == mine
    listed = s.cli("ls", check=True).stdout
    assert "exited" not in listed and "echo building" not in listed, listed
    # The window is gone; the record is not: status, exit code and output.
    record = shown(s, execution_id)
    assert (record["status"], record["exit_code"]) == ("failed", 3)
    assert s.cli("show", execution_id, check=True).stdout.endswith("\noutput:\nbuilding\n")

    # Without --wait: the window is there while it runs, and goes when it ends.
    started = s.cli("run", "--", "sh", "-c", "echo quiet", cwd=tmp_path, check=True).stdout.split()[0]
    wait_until(lambda: shown(s, started)["status"] == "success", timeout=END_TIMEOUT_S, message="the run ended")
    wait_until(lambda: windows(s) == mine, timeout=END_TIMEOUT_S, message="the run's window closed")
    assert "quiet" in s.cli("show", started, "--transcript", check=True).stdout
    # stats: the closed runs in one row, not one per window that is gone.
    rows = [line.split() for line in s.cli("stats", check=True).stdout.splitlines()[1:]]
    assert rows == [["2", "closed", "windows", "command", "2", "1", "1", "0", "50.0%", rows[0][9], "gone"]], rows


def test_keep_keeps_the_window_as_it_ended(muxd_server, tmp_path):
    s = muxd_server
    s.cli("new-session", "-d", "-s", "work", check=True)
    kept = s.cli("run", "--wait", "--keep", "--", "sh", "-c", "echo kept; exit 2", cwd=tmp_path)
    assert kept.returncode == 2 and kept.stdout == "kept\n", kept.stderr
    assert [w["name"] for w in windows(s)][1:] == ["sh"]
    assert "exited (2)" in s.cli("ls", check=True).stdout
    assert "kept" in s.capture("work:1")

    typed = s.cli("run", "-t", "work:0", "--keep", "--", "true")
    assert typed.returncode != 0 and typed.stderr.strip().splitlines() == [
        "muxd: --keep is for a new window: a command typed with -t runs in that pane, which stays"], typed.stderr


def test_a_run_with_no_session_leaves_none(muxd_server, tmp_path):
    """With no session to open its window in, a run makes one; it goes with the window."""
    s = muxd_server
    ran = s.cli("run", "--wait", "--", "true", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert json.loads(s.cli("list-sessions", "--json", check=True).stdout) == []
