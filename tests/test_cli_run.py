"""`muxd run` as a person types it in a shell: in the directory it was typed in, and with --wait
a foreground command (the id at once on stderr, the program's output on stdout, its exit status;
Ctrl-C leaves it running and says how to stop it)."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading

from muxd.cli.run_command import OUTPUT_TAIL_LINES
from muxd.testing.patience import stretched, wait_process
from muxd.testing.wait import wait_until

LINE_TIMEOUT_S = 30.0


def _interruptible() -> None:
    """In the CLI, before it starts: Ctrl-C's SIGINT acts, as in a terminal's foreground (a test
    run started in the background of a shell ignores SIGINT, and children inherit that)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_run_runs_where_it_was_typed(muxd_module_server, tmp_path):
    s = muxd_module_server
    project = tmp_path / "proj"
    (project / "sub").mkdir(parents=True)
    here = s.cli("run", "--wait", "--", "pwd", cwd=project)
    assert here.returncode == 0, here.stderr
    assert here.stdout.strip() == os.path.realpath(project), here.stdout
    # -c still wins, relative to where it was typed, as tmux's new-window -c.
    there = s.cli("run", "--wait", "-c", "sub", "--", "pwd", cwd=project)
    assert there.stdout.strip() == os.path.realpath(project / "sub"), there.stdout
    # Without --wait too: the record's window ran there (its output read back with show).
    started = json.loads(s.cli("run", "--json", "--", "sh", "-c", "pwd; exit 4", cwd=project, check=True).stdout)
    ended = wait_until(lambda: (e := json.loads(s.cli("show", started["id"], "--json", check=True).stdout))
                       ["execution"]["status"] == "failed" and e or None, timeout=LINE_TIMEOUT_S,
                       message="the background run ended")
    shown = s.cli("show", started["id"], "--transcript", check=True).stdout
    assert ended["execution"]["exit_code"] == 4 and os.path.realpath(project) in shown, shown


def test_run_wait_shows_the_output_and_exits_with_its_status(muxd_module_server, tmp_path):
    s = muxd_module_server
    failed = s.cli("run", "--wait", "--", "sh", "-c", "echo building; echo 'cc: error' >&2; exit 3", cwd=tmp_path)
    assert failed.returncode == 3
    # stdout is the program's (its stdout and stderr, as the window showed them); muxd's words on stderr.
    assert failed.stdout.splitlines() == ["building", "cc: error"], failed.stdout
    said = failed.stderr.splitlines()
    assert len(said) == 2 and said[0].startswith("exec_") and said[0].endswith(" running"), failed.stderr
    execution_id = said[0].split()[0]
    assert said[1] == f"{execution_id} failed (exit 3)", failed.stderr

    long = s.cli("run", "--wait", "--", "seq", "1", str(OUTPUT_TAIL_LINES + 50), cwd=tmp_path)
    assert long.returncode == 0, long.stderr
    assert long.stdout.splitlines() == [str(n) for n in range(51, OUTPUT_TAIL_LINES + 51)]
    note = long.stderr.splitlines()[1]
    assert note.startswith("[50 earlier lines: muxd show exec_") and note.endswith(" --transcript]"), long.stderr

    # --json: stdout is the record alone, for scripts.
    record = json.loads(s.cli("run", "--wait", "--json", "--", "sh", "-c", "echo x; exit 5", cwd=tmp_path).stdout)
    assert (record["status"], record["exit_code"]) == ("failed", 5)


def test_ctrl_c_leaves_the_run_running_and_says_how_to_cancel_it(muxd_module_server, tmp_path):
    s = muxd_module_server
    cli = subprocess.Popen([sys.executable, "-m", "muxd", "-L", s.name, "run", "--wait", "--", "sleep", "600"],
                           env=s.env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           preexec_fn=_interruptible)
    try:
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=lambda: [lines.put(line) for line in cli.stderr], daemon=True).start()
        first = lines.get(timeout=stretched(LINE_TIMEOUT_S))
        execution_id, status = first.split()
        assert execution_id.startswith("exec_") and status == "running", first
        cli.send_signal(signal.SIGINT)
        assert wait_process(cli, LINE_TIMEOUT_S) == 130
        said = wait_until(lambda: lines.get_nowait() if not lines.empty() else None, timeout=LINE_TIMEOUT_S,
                          message="the CLI's line after Ctrl-C")
        assert said.strip() == f"muxd: {execution_id} still runs; `muxd cancel {execution_id}` stops it"
        assert cli.stdout.read() == ""
    finally:
        if cli.poll() is None:
            cli.kill()
            cli.wait()
    shown = json.loads(s.cli("show", execution_id, "--json", check=True).stdout)["execution"]
    assert shown["status"] == "running"
    s.cli("cancel", execution_id, check=True)
    wait_until(lambda: json.loads(s.cli("show", execution_id, "--json", check=True).stdout)["execution"]["status"]
               != "running", timeout=LINE_TIMEOUT_S, message="the cancelled run ended")


def test_run_typed_in_a_removed_directory_runs_in_home(muxd_module_server, tmp_path):
    """As tmux's new-window from a shell whose directory is gone: the server's default, $HOME."""
    s = muxd_module_server
    typed = subprocess.run(["sh", "-c", 'mkdir gone && cd gone && rmdir ../gone && exec "$@"', "sh",
                            sys.executable, "-m", "muxd", "-L", s.name, "run", "--wait", "--", "pwd"],
                           env=s.env, cwd=tmp_path, capture_output=True, text=True, timeout=stretched(LINE_TIMEOUT_S))
    assert typed.returncode == 0, typed.stderr
    assert typed.stdout.strip() == os.path.realpath(s.env.get("HOME") or os.path.expanduser("~")), typed.stdout


def test_run_wait_timeout_leaves_it_running_and_says_so(muxd_module_server, tmp_path):
    s = muxd_module_server
    waited = s.cli("run", "--wait", "--timeout", "1", "--", "sleep", "600", cwd=tmp_path)
    assert waited.returncode == 1
    execution_id = waited.stderr.split()[0]
    assert waited.stderr.splitlines()[-1] == (f"muxd: {execution_id} still runs after 1s; "
                                              f"`muxd cancel {execution_id}` stops it"), waited.stderr
    assert json.loads(s.cli("show", execution_id, "--json", check=True).stdout)["execution"]["status"] == "running"
    s.cli("cancel", execution_id, check=True)
    refused = s.cli("run", "--wait", "--timeout", "0", "--", "true")
    assert refused.returncode == 1 and refused.stderr.strip() == "muxd: --timeout must be above 0 seconds, got 0"
