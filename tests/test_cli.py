"""End to end: the `muxd` command line against a real daemon with real PTYs."""

import json
import os
import signal

import pytest

from muxd.testing.wait import wait_until

PANE_FIELDS = {"id", "session", "window", "index", "name", "tags", "command", "pid", "cwd", "width",
               "height", "status", "exit_code", "created_at", "title"}


def panes(server, *args):
    return json.loads(server.cli("list-panes", "-a", "--json", *args, check=True).stdout)


def pane(server, pane_id):
    return next(p for p in panes(server) if p["id"] == pane_id)


def test_issue_walkthrough(muxd_server, tmp_path):
    s = muxd_server
    s.cli("new-session", "-d", "-s", "work", "-n", "shell", "-x", "120", "-y", "40", "--", "bash",
          "--norc", "--noprofile", check=True)
    s.cli("send-keys", "-t", "work", "echo hello-$((6*7))", "Enter", check=True)
    screen = s.wait_for_text("work", "hello-42\n")
    assert "echo hello-$((6*7))" in screen
    assert len(screen.splitlines()) == 40

    s.cli("new-session", "-d", "-s", "api", "-x", "200", "-c", str(tmp_path), "-e", "FOO=1", "--",
          "sh", "-c", 'echo "foo=$FOO pwd=$PWD term=$TERM pane=$MUXD_PANE"; exec sleep 600', check=True)
    s.wait_for_text("api", f"foo=1 pwd={tmp_path} term=xterm-256color pane=%1")

    split = s.cli("split-window", "-t", "work", "-P", "--", "python3", "-q", check=True).stdout.strip()
    assert split == "%2"
    window = s.cli("new-window", "-t", "work", "-n", "logs", "-P", "--", "tail", "-f", "/dev/null",
                   check=True).stdout.strip()

    listed = panes(s)
    assert [p["id"] for p in listed] == ["%0", "%2", window, "%1"]
    for p in listed:
        assert PANE_FIELDS <= p.keys()
    by_id = {p["id"]: p for p in listed}
    assert by_id["%0"]["height"] + by_id["%2"]["height"] + 1 == 40  # split with a border line
    assert (by_id["%2"]["session"], by_id["%2"]["window"], by_id["%2"]["index"]) == ("work", 0, 1)
    assert (by_id[window]["window"], by_id[window]["window_name"]) == (1, "logs")
    assert by_id["%1"]["cwd"] == str(tmp_path)
    assert all(p["status"] == "running" and p["pid"] for p in listed)

    table = s.cli("ls", check=True).stdout
    for needle in ("SESSION", "work", "api", "%2", "logs", "running"):
        assert needle in table

    # In a split, resize-pane moves the divider: the pane below gives the lines up.
    s.cli("resize-pane", "-t", "work:0.0", "-y", "30", check=True)
    assert [(pane(s, p)["width"], pane(s, p)["height"]) for p in ("%0", "%2")] == [(120, 30), (120, 9)]
    s.cli("send-keys", "-t", "%0", "stty size", "Enter", check=True)
    s.wait_for_text("%0", "30 120")

    s.cli("kill-pane", "-t", "%2", check=True)
    assert "%2" not in [p["id"] for p in panes(s)]
    s.cli("kill-session", "-t", "work", check=True)
    assert [p["id"] for p in panes(s)] == ["%1"]
    s.cli("kill-server", check=True)
    wait_until(lambda: not s.running(), timeout=10, message="daemon exit")
    assert not s.socket_path.exists()


def test_capture_with_colours_and_scrollback(muxd_server):
    s = muxd_server
    s.cli("new-session", "-d", "-s", "c", "-x", "80", "-y", "10", "--", "sh", "-c",
          r"seq 1 300; printf '\033[31mred\033[0m \033[1;44mbold-on-blue\033[0m\n'; exec sleep 600",
          check=True)
    s.wait_for_text("c", "bold-on-blue")
    plain = s.capture("c")
    assert "\x1b" not in plain and "red bold-on-blue" in plain
    coloured = s.capture("c", "-e")
    assert "\x1b[31mred" in coloured
    assert "bold-on-blue" in coloured and "44" in coloured
    history = s.capture("c", "-S", "-2000")
    assert history.startswith("1\n2\n3\n")
    assert "300\n" in history
    lines = s.capture("c", "-S", "-5", "-E", "-1").splitlines()
    assert lines == ["288", "289", "290", "291", "292"]  # 293-300 and the colour line are on screen


def test_exited_pane_keeps_its_screen_and_code_until_killed(muxd_server):
    s = muxd_server
    s.cli("new-session", "-d", "-s", "job", "--", "sh", "-c", "echo finished-work; exit 3", check=True)
    wait_until(lambda: pane(s, "%0")["status"] == "exited", message="pane exit")
    info = pane(s, "%0")
    assert info["exit_code"] == 3
    assert "finished-work" in s.capture("job")
    send = s.cli("send-keys", "-t", "job", "x")
    assert send.returncode == 1 and "exited" in send.stderr
    s.cli("kill-pane", "-t", "%0", check=True)
    assert panes(s) == []


def test_rm_panes_go_away_on_exit(muxd_server):
    s = muxd_server
    s.cli("new-session", "-d", "-s", "keep", "--", "sleep", "600", check=True)
    s.cli("new-window", "-t", "keep", "--rm", "--", "true", check=True)
    wait_until(lambda: [p["id"] for p in panes(s)] == ["%0"], message="--rm pane removed")
    s.cli("new-session", "-d", "-s", "gone", "--rm", "--", "true", check=True)
    wait_until(lambda: "gone" not in s.cli("ls", "--sessions").stdout, message="session removed")


def test_killed_by_signal_reports_128_plus_signal(muxd_server):
    s = muxd_server
    s.cli("new-session", "-d", "-s", "sig", "--", "sleep", "600", check=True)
    os.kill(pane(s, "%0")["pid"], signal.SIGTERM)
    wait_until(lambda: pane(s, "%0")["status"] == "exited", message="pane exit")
    assert pane(s, "%0")["exit_code"] == 128 + signal.SIGTERM


def test_targets_like_tmux(muxd_server):
    s = muxd_server
    s.cli("new-session", "-d", "-s", "proj", "--name", "first", "--", "sleep", "600", check=True)
    s.cli("split-window", "-t", "proj", "--name", "second", "--tag", "worker", "--", "sleep", "600", check=True)
    s.cli("new-window", "-t", "proj", "-n", "w1", "--", "sleep", "600", check=True)
    cases = {"proj:0.0": "%0", "proj:0.1": "%1", "proj:0": "%1", "proj:w1": "%2", "proj:1.0": "%2",
             "%1": "%1", "first": "%0", "second": "%1", "@1": "%2", "$0": "%2", "proj": "%2"}
    for target, expected in cases.items():
        listed = s.cli("list-panes", "-t", target, "--json", check=True)
        ids = [p["id"] for p in json.loads(listed.stdout)]
        assert expected in ids, (target, ids)
        s.cli("send-keys", "-t", target, "", check=True)
    assert pane(s, "%1")["tags"] == ["worker"] and pane(s, "%1")["name"] == "second"
    for bad in ("nope", "proj:9", "proj:0.7", "%99", "@42", "$7"):
        result = s.cli("send-keys", "-t", bad, "x")
        assert result.returncode == 1 and "can't find" in result.stderr, (bad, result.stderr)


def test_send_keys_delivers_exact_bytes(muxd_server, tmp_path):
    s = muxd_server
    out = tmp_path / "keys.bin"
    script = ("import os,sys,tty; tty.setraw(0); data=b''\n"
              "while not data.endswith(b'!!'): data += os.read(0, 1024)\n"
              f"open({str(out)!r},'wb').write(data)\n")
    s.cli("new-session", "-d", "-s", "k", "--", "python3", "-c", script, check=True)
    wait_until(lambda: pane(s, "%0")["foreground"] == "python3", message="python running")
    # raw mode must be set before typing: wait until the terminal says so
    wait_until(lambda: "-icanon" in os.popen(f"stty -a -F /proc/{pane(s, '%0')['pid']}/fd/0 2>/dev/null").read(),
               message="raw mode")
    s.cli("send-keys", "-t", "k", "ab", "Enter", "C-c", "M-x", "Up", "F5", "Escape", check=True)
    s.cli("send-keys", "-t", "k", "-l", "Enter", check=True)
    s.cli("send-keys", "-t", "k", "-H", "01", "ff", check=True)
    s.cli("send-keys", "-t", "k", "!!", check=True)
    # exists() holds from open() on, before the bytes land: wait for the last ones.
    wait_until(lambda: out.exists() and out.read_bytes().endswith(b"!!"), message="keys written")
    assert out.read_bytes() == b"ab\r\x03\x1bx\x1b[A\x1b[15~\x1bEnter\x01\xff!!"


def test_first_command_starts_the_server(muxd_unstarted):
    s = muxd_unstarted
    assert not s.socket_path.exists()
    status = s.cli("server", "status")
    assert status.returncode == 1 and "no server running" in status.stderr  # status does not start one
    s.cli("new-session", "-d", "-s", "auto", "--", "sleep", "600", check=True)
    s.pid = json.loads(s.cli("server", "status", "--json", check=True).stdout)["pid"]
    assert s.running()
    assert oct(os.stat(s.socket_dir).st_mode & 0o777) == "0o700"
    assert s.cli("has-session", "-t", "auto").returncode == 0
    assert s.cli("has-session", "-t", "nope").returncode == 1


@pytest.mark.parametrize("args, message", [
    (["-x", "0"], "width 0 is out of range"),
    (["-y", "100000"], "height 100000 is out of range"),
    (["-e", "NOEQUALS"], "VAR=VALUE"),
    (["-c", "/no/such/dir"], "no such directory"),
])
def test_bad_new_session_arguments(muxd_server, args, message):
    result = muxd_server.cli("new-session", "-d", *args, "--", "sleep", "1")
    assert result.returncode == 1 and message in result.stderr
    assert panes(muxd_server) == []
