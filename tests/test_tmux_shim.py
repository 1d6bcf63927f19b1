"""`muxd tmux` and the shimmed panes, end to end: libtmux (a tmux client nobody here wrote)
driving a real muxd daemon through the launcher, programs in a shimmed pane calling `tmux`,
and real tmux 3.3a as the oracle for output formats and error lines."""

import json
import os
import re
import shutil
import subprocess
import sys
import uuid

import pytest

from muxd.daemon.tmux.shim import launcher_path
from muxd.testing.patience import stretched
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until

needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def shim(server, *args, env=None):
    """`muxd tmux -L NAME args…` as a tool would run it."""
    return subprocess.run([sys.executable, "-m", "muxd", "tmux", "-L", server.name, *args],
                          env=env or server.env, capture_output=True, text=True, check=False, timeout=stretched(30))


class RealTmux:
    def __init__(self):
        self.name = f"muxd-shim-{uuid.uuid4().hex[:8]}"
        env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
        self.env = {**env, "SHELL": "/bin/sh"}

    def __call__(self, *args):
        return subprocess.run(["tmux", "-L", self.name, "-f", "/dev/null", *args], env=self.env,
                              capture_output=True, text=True, check=False, timeout=stretched(30))

    def close(self):
        subprocess.run(["tmux", "-L", self.name, "kill-server"], capture_output=True, check=False, timeout=stretched(10))


@pytest.fixture
def shared_server(muxd_module_server: MuxdTestServer) -> MuxdTestServer:
    """One daemon for the tests below that only add sessions of their own names."""
    return muxd_module_server


@pytest.fixture
def real_tmux():
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    tmux = RealTmux()
    yield tmux
    tmux.close()


def _same_history(text):
    """tmux's `[history N/LIMIT, B bytes]` counts what muxd counts otherwise."""
    return re.sub(r"\[history \d+/\d+, \d* bytes\]", "[history]", text)


def test_default_output_formats_are_tmuxs(muxd_server, real_tmux):
    s = muxd_server
    steps = [("new-session", "-d", "-s", "fmt", "-n", "first", "-x", "80", "-y", "24", "-P", "cat"),
             ("split-window", "-t", "fmt", "-P", "cat"),
             ("split-window", "-h", "-t", "fmt:0.1", "-P", "-F", "#{pane_id} #{window_layout}", "cat"),
             ("new-window", "-t", "fmt", "-n", "second", "-P", "cat"),
             ("new-session", "-d", "-s", "aaa", "-n", "later", "-x", "80", "-y", "24", "cat")]  # listed first
    for step in steps:
        theirs, ours = real_tmux(*step), shim(s, *step)
        assert (ours.returncode, ours.stdout) == (theirs.returncode, theirs.stdout), step
    for listing in [("list-windows", "-t", "fmt"), ("list-windows", "-a"), ("list-panes", "-t", "fmt:0"),
                    ("list-panes", "-s", "-t", "fmt"), ("list-panes", "-a"), ("lsp", "-t", "fmt:1"),
                    ("display-message", "-p", "-t", "fmt:0.2", ("#{pane_index} #{pane_width}x#{pane_height} "
                                                                "#{pane_left},#{pane_top} #{window_flags} #F "
                                                                "#{session_windows} #{pane_dead}"))]:
        theirs, ours = real_tmux(*listing), shim(s, *listing)
        assert ours.returncode == theirs.returncode == 0, ours.stderr
        assert _same_history(ours.stdout) == _same_history(theirs.stdout), listing
    ours, theirs = shim(s, "ls").stdout, real_tmux("ls").stdout
    created = r"\(created \w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}\)"
    pattern = rf"aaa: 1 windows {created}\nfmt: 2 windows {created}\n"
    assert re.fullmatch(pattern, ours) and re.fullmatch(pattern, theirs)


ERROR_CASES = [
    ("frobnicate",), ("lis",), ("has-session", "-t", "nope"), ("kill-pane", "-t", "%99"),
    ("new-session", "-Q"), ("new-session", "-d", "-s", "twice"),
    ("has", "-t", "twice", ";", "display-message", "-p", "#{session_name} ok"),
    ("has", "-t", "=twice", "\\;", "lsw", "-t", "twice", "-F", "#W"),
    ("new-session", "-A", "-d", "-s", "twice"),  # it exists: attach, which needs a terminal
    ("new-session", "-A", "-d", "-s", "thrice", "-P", "cat"), ("kill-session", "-t", "thrice"),
    ("kill-session", "-t", "twice"),
]


def test_errors_and_exit_codes_are_tmuxs(shared_server, real_tmux):
    ours = shim(shared_server, "-V")
    assert (ours.returncode, ours.stdout) == (0, "tmux 3.3a\n")
    assert real_tmux("-V").stdout.startswith("tmux 3.")
    for run in (real_tmux, lambda *a: shim(shared_server, *a)):
        assert run("new-session", "-d", "-s", "twice", "-n", "w", "cat").returncode == 0
    for args in ERROR_CASES:
        theirs, ours = real_tmux(*args), shim(shared_server, *args)
        if theirs.stderr.startswith("open terminal failed"):  # muxd's line says what attach needs too
            theirs.stderr = ours.stderr if ours.stderr.startswith(theirs.stderr.rstrip("\n")) else theirs.stderr
        assert (ours.returncode, ours.stdout, ours.stderr) == (theirs.returncode, theirs.stdout, theirs.stderr), args


def test_no_server_and_unsupported_commands(muxd_unstarted):
    result = shim(muxd_unstarted, "list-sessions")
    assert (result.returncode, result.stderr) == (1, f"no server running on {muxd_unstarted.socket_path}\n")
    assert not muxd_unstarted.socket_path.exists()  # a listing starts no server, as in tmux
    result = shim(muxd_unstarted, "wait-for", "x")
    assert (result.returncode, result.stderr) == (1, "wait-for: not supported by muxd\n")


def test_libtmux_drives_muxd_through_the_launcher(muxd_server, monkeypatch, tmp_path):
    libtmux = pytest.importorskip("libtmux")
    s = muxd_server
    launcher = launcher_path(s.socket_path)
    assert os.access(launcher, os.X_OK)
    monkeypatch.setenv("MUXD_SOCKET_DIR", str(s.socket_dir))  # where -L NAME is found
    monkeypatch.delenv("TMUX", raising=False)
    server = libtmux.Server(socket_name=s.name, tmux_bin=str(launcher))
    shell = "bash --norc --noprofile"
    session = server.new_session(session_name="crew", window_command=shell, x=100, y=30,
                                 start_directory=str(tmp_path))
    window = session.new_window(window_name="workers", window_shell=shell)
    worker = window.split(shell=shell)
    assert (session.session_name, window.window_name, window.window_index) == ("crew", "workers", "1")
    assert [p.pane_id for p in window.panes] == [window.panes[0].pane_id, worker.pane_id]

    side = window.split(direction=libtmux.constants.PaneDirection.Right, size="30%", attach=False, shell=shell)
    window.select_layout("even-horizontal")
    window.refresh()
    widths = [int(w) for w in re.findall(r"[{,](\d+)x30,\d+,0,\d+", window.window_layout)]
    assert widths == [32, 32, 34]  # what tmux 3.3a's even-horizontal gives three panes of a 100-column window
    assert worker.display_message("#{pane_id} #{pane_current_command}", get_text=True) == [f"{worker.pane_id} bash"]
    side.kill()

    worker.send_keys("echo worker-$((6*7))", enter=True)
    wait_until(lambda: "worker-42" in worker.capture_pane(), timeout=10, message="the worker's echo")

    # Every pane libtmux made is a muxd pane: listed, sized, running, under libtmux's names.
    panes = json.loads(s.cli("list-panes", "-a", "--json", check=True).stdout)
    assert [(p["id"], p["session"], p["window_name"], p["status"]) for p in panes] == [
        (p.pane_id, "crew", w.window_name, "running") for w in session.windows for p in w.panes]
    assert all(p["tmux_shim"] for p in panes) and panes[0]["cwd"] == str(tmp_path)
    assert server.has_session("crew") and not server.has_session("nobody")
    assert [sess.session_name for sess in server.sessions] == ["crew"]

    worker.kill()
    assert [p.pane_id for p in window.panes] == [window.panes[0].pane_id]
    window.kill()
    assert [w.window_name for w in session.windows] == [session.windows[0].window_name]
    session.kill()
    assert server.sessions == []
    assert s.cli("list-panes", "-a", "-F", "#D", check=True).stdout == ""


def test_a_shimmed_panes_tmux_calls_reach_muxd(shared_server, tmp_path):
    s = shared_server
    out = tmp_path / "out"
    script = ('echo "pane=$TMUX_PANE tmux=$TMUX"; command -v tmux; '
              'tmux display -p "me=#{pane_id} #{session_name}"; '
              '(cd / && tmux split-window -c "#{pane_current_path}" -P -F "new=#{pane_id}" "sleep 600"); '
              'tmux list-panes -F "#{pane_id} #{pane_active}"; '
              'tmux has -t nope; echo "rc=$?"')
    lead = s.cli("new-session", "-d", "-P", "-s", "lead", "-c", str(tmp_path), "--tmux-shim", "--", "sh", "-c",
                 f"({script}) >{out}.part 2>&1; mv {out}.part {out}; sleep 600", check=True).stdout.strip()
    wait_until(out.exists, timeout=15, message="the script in the shimmed pane")
    lines = out.read_text().splitlines()
    assert re.fullmatch(rf"pane={lead} tmux={re.escape(str(s.socket_path))},{s.pid},\d+", lines[0])
    assert lines[1] == str(launcher_path(s.socket_path))
    assert lines[2] == f"me={lead} lead"
    new = lines[3].removeprefix("new=")
    assert lines[4:] == [f"{lead} 0", f"{new} 1", "can't find session: nope", "rc=1"]
    panes = {p["id"]: p for p in json.loads(s.cli("list-panes", "-a", "--json", check=True).stdout)}
    assert panes[new]["tmux_shim"] and panes[new]["session"] == "lead"
    assert panes[new]["cwd"] == str(tmp_path)  # -c's format expanded for the pane it ran in, not "/"
    # A split of a shimmed pane by muxd's own CLI is shimmed too, and a plain pane is not.
    half = s.cli("split-window", "-t", lead, "-P", "--", "sleep", "600", check=True).stdout.strip()
    plain = s.cli("new-session", "-d", "-P", "--", "sleep", "600", check=True).stdout.strip()
    shimmed = {p["id"]: p["tmux_shim"] for p in json.loads(s.cli("list-panes", "-a", "--json").stdout)}
    assert shimmed[half] and not shimmed[plain]


def test_muxd_cli_formats(shared_server):
    s = shared_server
    made = s.cli("new-session", "-d", "-s", "cli", "-n", "main", "-P", "-F", "#{session_name}:#{window_index}.#P #D",
                 "--", "sleep", "600", check=True).stdout
    assert re.fullmatch(r"cli:0\.0 %\d+\n", made)
    pane = made.split()[1]
    second = s.cli("split-window", "-t", "cli", "-P", "-F", "#D", "--", "sleep", "600", check=True).stdout.strip()
    shown = s.cli("display-message", "-p", "-t", pane, "#{pane_id}|#{pane_current_command}|#{window_name}|"
                  "#{session_windows}|#{pane_active}|#{agent_type}|#{version}|#{socket_path}", check=True).stdout
    assert shown == f"{pane}|sleep|main|1|0||3.3a|{s.socket_path}\n"
    assert s.cli("display", "-p", "-t", "cli", "#D", check=True).stdout == f"{second}\n"  # the active pane
    listed = s.cli("list-panes", "-t", "cli", "-F", "#{pane_index}:#{pane_id}", check=True).stdout
    assert listed == f"0:{pane}\n1:{second}\n"
    mine = "#{==:#{session_name},cli}"
    filtered = s.cli("list-panes", "-a", "-f", "#{&&:#{pane_active}," + mine + "}", "-F", "#D", check=True).stdout
    assert filtered == f"{second}\n"
    assert s.cli("ls", "-f", mine, "-F", "#{session_name} #{session_windows}", check=True).stdout == "cli 1\n"
    windows = s.cli("list-windows", "-t", "cli", "-F", "#{window_name} #{window_panes} #{window_layout}",
                    check=True).stdout
    assert re.fullmatch(r"main 2 [0-9a-f]{4},80x24,0,0\[80x12,0,0,\d+,80x11,0,13,\d+\]\n", windows)
    typed = s.cli("new-session", "-d", "-P", "-s", "cursor", "--", "sh", "-c", "printf 'one\\ntwo\\nabc'; exec sleep 600",
                  check=True).stdout.strip()
    s.wait_for_text(typed, "abc")
    assert s.cli("display", "-p", "-t", typed, "#{cursor_x},#{cursor_y}", check=True).stdout == "3,2\n"
    assert s.cli("list-panes", "-t", typed, "-F", "#{cursor_x},#{cursor_y} #{history_size}",
                 check=True).stdout == "3,2 0\n"
    bad = s.cli("display-message", "-p", "-t", "nope", "x")
    assert (bad.returncode, bad.stderr) == (1, "muxd: can't find session: nope\n")


PROBE = "#{client_termtype}\t#{allow-passthrough}\t#{focus-events}\t#{pane_top}\t#{pane_left}\t#{status}" \
        "\t#{status-position}\t#{window_bigger}"


def test_claude_codes_teammate_command_lines(shared_server, tmp_path):
    """The tmux command lines Claude Code 2.1.330 sent real tmux 3.3a when its agent team spawned
    a teammate (tests/shim_data/claude_tmux_commands.txt), sent the same way
    through the shim by programs in the lead's shimmed pane (TMUX, TMUX_PANE, MUXD set), with
    tmux's answers."""
    s = shared_server
    lead = s.cli("new-session", "-d", "-P", "-s", "team", "-x", "120", "-y", "40", "--tmux-shim", "--",
                 "sleep", "600", check=True).stdout.strip()
    window = s.cli("display-message", "-p", "-t", lead, "#{window_id}", check=True).stdout.strip()
    sock = str(s.socket_path)

    def tmux(from_pane, *args):
        env = {**s.env, "TMUX": f"{sock},{s.pid},0", "TMUX_PANE": from_pane, "MUXD": sock}
        result = subprocess.run([sys.executable, "-m", "muxd", "tmux", *args], env=env, capture_output=True,
                                text=True, check=False, timeout=stretched(30), cwd=tmp_path)
        assert (result.returncode, result.stderr) == (0, ""), args
        return result.stdout

    assert tmux(lead, "show", "-gv", "focus-events") == "off\n"
    assert tmux(lead, "display-message", "-p", "-t", lead, "#{session_name}:#{window_id}.#{pane_id}") == \
        f"team:{window}.{lead}\n"
    assert tmux(lead, "display-message", "-p", "-t", lead, PROBE) == "\t0\t0\t0\t0\ton\tbottom\t\n"
    assert tmux(lead, "-S", sock, "display-message", "-t", lead, "-p", "#{window_id}") == f"{window}\n"
    assert tmux(lead, "-S", sock, "list-panes", "-t", window, "-F", "#{pane_id}") == f"{lead}\n"
    mate = tmux(lead, "-S", sock, "split-window", "-d", "-t", lead, "-h", "-l", "70%", "-P", "-F", "#{pane_id}",
                "--", "cat").strip()
    for option, value in (("window-style", "bg=default,fg=blue"), ("pane-border-style", "fg=blue"),
                          ("pane-active-border-style", "fg=blue")):
        assert tmux(lead, "-S", sock, "set-option", "-p", "-t", mate, option, value) == ""
    assert tmux(lead, "-S", sock, "select-pane", "-t", mate, "-T", "helper") == ""
    assert tmux(lead, "-S", sock, "set-option", "-p", "-t", mate, "pane-border-format",
                "#[fg=blue,bold] #{pane_title} #[default]") == ""
    assert tmux(lead, "-S", sock, "list-panes", "-t", window, "-F", "#{pane_id}") == f"{lead}\n{mate}\n"
    assert tmux(lead, "-S", sock, "set-option", "-w", "-t", window, "pane-border-status", "top") == ""
    assert tmux(lead, "-S", sock, "set-option", "-p", "-t", mate, "remain-on-exit", "failed") == ""
    assert tmux(lead, "-S", sock, "respawn-pane", "-k", "-t", mate, "--",
                f"cd {tmp_path} && env WHO=helper sh -c 'echo $WHO in $PWD; exec cat'") == ""
    wait_until(lambda: f"helper in {tmp_path}" in s.capture(mate), timeout=10, message="the teammate's start")
    # The teammate's own probes, from its pane: it is a shimmed pane too, 36 columns from the left.
    assert tmux(mate, "show", "-gv", "focus-events") == "off\n"
    assert tmux(mate, "display-message", "-p", "-t", mate, PROBE) == "\t0\t0\t0\t36\ton\tbottom\t\n"
    assert tmux(lead, "-S", sock, "kill-pane", "-t", mate) == ""
    assert s.cli("list-panes", "-t", "team", "-F", "#D", check=True).stdout == f"{lead}\n"


def test_bind_key_and_list_keys_through_the_shim(shared_server, real_tmux):
    for run in (real_tmux, lambda *a: shim(shared_server, *a)):
        assert run("new-session", "-d", "-s", "keys", "cat").returncode == 0
        assert run("bind-key", "X", "new-window", "-d").returncode == 0
        listed = run("list-keys", "-T", "prefix", "X")
        # the key column's width is the table's widest key: tmux's table has keys muxd's has not
        assert listed.stdout.split() == ["bind-key", "-T", "prefix", "X", "new-window", "-d"], listed
        assert run("unbind-key", "X").returncode == 0
        gone = run("list-keys", "-T", "prefix", "X")
        assert (gone.returncode, gone.stderr) == (1, "unknown key: X\n"), gone
        assert run("unbind-key", "-q", "X").returncode == 0


def test_every_default_key_muxd_has_is_listed_as_tmux_lists_it(muxd_server, real_tmux):
    assert real_tmux("new-session", "-d", "cat").returncode == 0
    theirs = set(real_tmux("list-keys", "-T", "prefix").stdout.splitlines())
    ours = muxd_server.cli("list-keys", check=True).stdout.splitlines()
    assert len(ours) > 40
    assert [line for line in ours if line not in theirs] == []


def test_muxds_own_L_names_the_server_a_tmux_line_speaks_to(muxd_server, real_tmux):
    """`muxd -L NAME tmux …` speaks to NAME, as every other muxd command: a tmux line may name the
    same server again (its -L or -S, with tmux's precedence: the last -L, and -S over -L), never
    another one."""
    s = muxd_server
    default_env = {**s.env, "MUXD_DB": str(s.socket_dir / "default.db")}  # the default server, same directory

    def default(*args):
        return subprocess.run([sys.executable, "-m", "muxd", *args], env=default_env, capture_output=True,
                              text=True, check=False, timeout=stretched(30))

    assert default("start-server").returncode == 0
    try:
        assert default("tmux", "new-session", "-d", "-s", "elsewhere", "cat").returncode == 0
        assert s.cli("tmux", "new-session", "-d", "-s", "here", "cat").returncode == 0
        sock = str(s.socket_path)
        for inner in ([], ["-L", s.name], [f"-L{s.name}"], ["-S", sock], ["-L", "default", "-L", s.name],
                      ["-S", sock, "-L", "default"]):
            listed = s.cli("tmux", *inner, "ls", "-F", "#{session_name}")
            assert (listed.returncode, listed.stdout, listed.stderr) == (0, "here\n", ""), inner
        # tmux's meaning of those lines: the last -L counts, and -S counts over any -L.
        assert real_tmux("new-session", "-d", "-s", "real", "cat").returncode == 0
        socket = real_tmux("display-message", "-p", "#{socket_path}").stdout.strip()
        for inner in (["-L", "muxd-none", "-L", real_tmux.name], ["-S", socket, "-L", "muxd-none"]):
            theirs = subprocess.run(["tmux", *inner, "ls", "-F", "#{session_name}"], env=real_tmux.env,
                                    capture_output=True, text=True, check=False, timeout=stretched(30))
            assert (theirs.returncode, theirs.stdout) == (0, "real\n"), inner
        for inner, named in ((["-L", "default"], "-L default"), (["-S", "/tmp/other.sock"], "-S /tmp/other.sock")):
            refused = s.cli("tmux", *inner, "ls")
            assert (refused.returncode, refused.stdout, refused.stderr) == (
                1, "", f"muxd tmux: muxd -L {s.name} and tmux {named} name different servers: give one of them\n")
        # kill-server kills the server -L names, and that one only.
        assert s.cli("tmux", "kill-server").returncode == 0
        wait_until(lambda: not s.running(), timeout=15, message="the -L server stopped")
        assert default("tmux", "ls", "-F", "#{session_name}").stdout == "elsewhere\n"
    finally:
        default("kill-server")


def test_muxd_tmux_acts_as_the_token_the_cli_presents(shared_server, tmp_path):
    """MUXD_CLI_TOKEN (and --token-file) hold for `muxd tmux …` as for `muxd …`: a view_only
    token reads, and is refused the rest with tmux's one error line; so does a shimmed pane's
    `tmux` whose environment holds one."""
    s = shared_server
    pane = s.cli("new-session", "-d", "-s", "guarded", "-P", "--", "cat", check=True).stdout.strip()
    token = s.cli("token", "create", "--tier", "view_only", "--pane", pane, check=True).stdout.strip()
    token_file = tmp_path / "token"
    token_file.write_text(token + "\n")
    env = {**s.env, "MUXD_CLI_TOKEN": token}
    before = shim(s, "show-options", "-g", "default-command").stdout
    refusals = {"send-keys": "send-keys is moderate: it needs tier execute_advanced",
                "kill-session": "kill-session is dangerous: it needs tier admin",
                "set-option": "set-option is dangerous: it needs tier admin"}
    for words in (["send-keys", "-t", pane, "typed", "Enter"], ["kill-session", "-t", "guarded"],
                  ["set", "-g", "default-command", "false"]):
        name = "set-option" if words[0] == "set" else words[0]
        cli = subprocess.run([sys.executable, "-m", "muxd", "-L", s.name, *words], env=env, capture_output=True,
                             text=True, check=False, timeout=stretched(30))
        assert cli.returncode == 1 and refusals[name] in cli.stderr, cli.stderr  # the CLI's own refusal
        for refused in (shim(s, *words, env=env),
                        s.cli("--token-file", str(token_file), "tmux", *words)):
            assert refused.returncode == 1 and refused.stdout == "", refused
            assert refused.stderr.startswith(refusals[name]) and refused.stderr.count("\n") == 1, refused.stderr
    # Nothing changed, and the token's reads still work.
    assert "typed" not in shim(s, "capture-pane", "-p", "-t", pane, env=env).stdout
    assert shim(s, "has-session", "-t", "guarded", env=env).returncode == 0
    assert shim(s, "list-panes", "-t", pane, "-F", "#{pane_id}", env=env).stdout == f"{pane}\n"
    assert shim(s, "show-options", "-g", "default-command").stdout == before
    # A shimmed pane's `tmux` chooses its token as `muxd` does there: this one's MUXD_CLI_TOKEN.
    out = tmp_path / "out"
    script = (f"tmux send-keys -t {pane} typed; echo send=$?; tmux kill-session -t guarded; echo kill=$?; "
              f"tmux display -p -t {pane} '#{{pane_id}}'")
    s.cli("new-session", "-d", "-s", "shimmed-guard", "--tmux-shim", "-e", f"MUXD_CLI_TOKEN={token}", "--", "sh",
          "-c", f"({script}) >{out}.part 2>&1; mv {out}.part {out}; sleep 600", check=True)
    wait_until(out.exists, timeout=15, message="the script in the shimmed pane")
    lines = out.read_text().splitlines()
    assert lines[1::2][:2] == ["send=1", "kill=1"] and lines[4] == pane, lines
    assert lines[0].startswith(refusals["send-keys"]) and lines[2].startswith(refusals["kill-session"]), lines
    assert shim(s, "has-session", "-t", "guarded").returncode == 0
    s.cli("kill-session", "-t", "shimmed-guard", check=True)
    s.cli("kill-session", "-t", "guarded", check=True)
