"""The tmux shim's fast path (cli/tmux_fast_path.py) answers as the full `muxd tmux` does: the
same output, errors and exit status for the lines tools send on every call, run through the
launcher a daemon writes against the full CLI's run_tmux on a real daemon; the lines it does not
know go to the full CLI; its options are the ones the CLI's parsers declare; and a call imports
none of what made it slow (a guard on imports, not a timing: benchmarks/bench_tmux_shim.py times it)."""

import compileall
import os
import subprocess
import sys
from pathlib import Path

import pytest

import muxd

from muxd.cli._closed_pipe import CLOSED_PIPE_STATUS
from muxd.cli.table import command_named
from muxd.cli.tmux_commands import command_parser
from muxd.cli.tmux_fast_path import FAST_COMMANDS, answer, letters, read_command
from muxd.client.blocking import BlockingClient
from muxd.daemon.tmux.shim import SHEBANG_MAX_BYTES, launcher_path, launcher_script
from muxd.testing.patience import stretched
from muxd.testing.wait import wait_until

# What the full CLI runs: run_tmux, with no muxd option given (as the launcher runs it).
FULL_PATH = ("import argparse, sys; from muxd.cli.tmux_commands import run_tmux; "
             "sys.exit(run_tmux(sys.argv[1:], argparse.Namespace(server_name=None, cli_token=None, "
             "cli_token_file=None)))")


def _run(argv, env):
    result = subprocess.run(argv, env=env, capture_output=True, text=True, check=False, timeout=stretched(30))
    return result.returncode, result.stdout, result.stderr


@pytest.fixture(scope="module")
def shimmed(muxd_module_server):
    """The module's daemon with a session `fast` whose pane shows `ready` and stays."""
    s = muxd_module_server
    pane = s.cli("new-session", "-d", "-P", "-s", "fast", "--tmux-shim", "--",
                 "sh", "-c", "echo ready; exec sleep 600", check=True).stdout.strip()
    wait_until(lambda: "ready" in s.cli("capture-pane", "-p", "-t", pane).stdout, timeout=stretched(10))
    return s, pane


LINES = [
    ["has-session", "-t", "fast"],
    ["has-session", "-t", "=fast"],
    ["has-session", "-t", "nosuch"],
    ["has", "-tfast"],
    ["display-message", "-p", "-t", "{pane}", "#{session_name}:#{window_id}.#{pane_id}"],
    ["display-message", "-t", "{pane}", "-p", "#{window_id}"],
    ["display", "-p", "-t", "{pane}"],
    ["display-message", "-p", "-t", "{pane}", "#{focus-events}\t#{status}"],  # options: msgspec, site added
    ["display-message", "-p", "-t", "nosuch", "#{pane_id}"],
    ["display-message", "-p", "-t", "{pane}", "#{cursor_x},#{history_size} #{pane_start_command}"],
    ["list-panes", "-t", "fast", "-F", "#{pane_id} #{pane_width}x#{pane_height}"],
    ["list-panes", "-a", "-F#{pane_id}\t#{pane_current_command}"],
    ["lsp", "-s", "-t", "fast"],
    ["list-panes", "-t", "fast", "-f", "#{pane_active}", "-F", "#{pane_index}"],
    ["list-panes", "-t", "nosuch", "-F", "#{pane_id}"],
    ["list-panes", "-a", "-F", "#{pane_id} [#{agent_attention}] #{agents_waiting} #{host_short} #{pid}"],
    ["list-panes", "-s", "-t", "fast", "-F", "#{cursor_y} #{pane_start_command}"],
    ["list-windows", "-a"],
    ["list-windows", "-t", "fast", "-F", "#{window_id} #{window_name}"],
    ["list-sessions", "-F", "#{session_name}"],
    ["list-sessions", "-f", "#{==:#{session_windows},1}", "-F", "#{session_name} #{socket_path} #{version}"],
    ["display-message", "-p", "-a", "-t", "{pane}"],                       # every variable: the daemon's expansion
    ["display-message", "-p", "-t", "{pane}", "-F", "#{window_flags} #{session_windows}", "ignored"],
    ["list-windows", "-a", "-F", "#{window_id} #{pane_id} #{session_name} #{window_panes}"],
    ["list-panes", "-a", "-f", "#{==:#{session_name},fast}", "-F", "#{pane_id} #{?pane_active,on,off}"],
    ["list-sessions", "-F", "#{session_name} #{pane_id} #{history_size}"],
    ["ls"],
    ["capture-pane", "-p", "-t", "{pane}"],
    ["capture-pane", "-pJ", "-t{pane}", "-S", "-", "-E", "-"],
    ["capture-pane", "-p", "-t", "{pane}", "-S", "-3", "-E", "1"],
    ["capture-pane", "-p", "-t", "{pane}", "-S", "x"],          # not a line number: the full CLI's error
    ["capture-pane", "-p", "-t", "{pane}", "--bogus"],          # the full CLI's error
    ["send-keys", "-t", "{pane}", "-l", ""],
    ["send-keys", "-t", "nosuch", "x"],
    ["send-keys", "-X", "-t", "{pane}"],
    ["has-session", "-t", "fast", ";", "display-message", "-p", "-t", "{pane}", "#{pane_id}"],
    ["has-session", "-t", "nosuch", ";", "display-message", "-p", "-t", "{pane}", "#{pane_id}"],
    ["-V"],
    ["wait-for", "x"],
]


@pytest.mark.parametrize("words", LINES, ids=lambda words: " ".join(words)[:40])
def test_the_launcher_answers_as_the_full_cli(shimmed, words):
    s, pane = shimmed
    line = [word.replace("{pane}", pane) for word in words]
    fast = _run([str(launcher_path(s.socket_path)), "-L", s.name, *line], s.env)
    full = _run([sys.executable, "-c", FULL_PATH, "-L", s.name, *line], s.env)
    assert fast == full
    if words[0] == "has-session" and words[-1] == "fast":
        assert fast == (0, "", "")


@pytest.mark.parametrize("words", [["capture-pane", "-p", "-t", "{pane}"], ["list-panes", "-a"]])
def test_a_closed_pipe_ends_quietly(shimmed, words):
    """`tmux capture-pane -p | head -1` whose reader is gone: no traceback, SIGPIPE's status."""
    s, pane = shimmed
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        result = subprocess.run([str(launcher_path(s.socket_path)), "-L", s.name,
                                 *[word.replace("{pane}", pane) for word in words]],
                                env=s.env, stdout=write_end, stderr=subprocess.PIPE, timeout=stretched(30))
    finally:
        os.close(write_end)
    assert (result.returncode, result.stderr) == (CLOSED_PIPE_STATUS, b"")


def test_a_refused_hello_reads_as_before(shimmed):
    """The Hello leaves with the first request: a token the daemon refuses still ends the call
    with the daemon's own error and status."""
    s, pane = shimmed
    env = {**s.env, "MUXD_CLI_TOKEN": "not-a-token"}
    for line in (["has-session", "-t", "fast"], ["display-message", "-p", "-t", pane, "#{pane_id}"]):
        fast = _run([str(launcher_path(s.socket_path)), "-L", s.name, *line], env)
        assert fast == _run([sys.executable, "-c", FULL_PATH, "-L", s.name, *line], env)
        assert fast[0] == 1 and fast[2]


@pytest.mark.parametrize("words", [
    ["has-session", "-t", "fast"], ["capture-pane", "-p", "-t", "{pane}"], ["send-keys", "-t", "{pane}", "-l", ""],
    ["display-message", "-p", "-t", "{pane}", "#{session_name}:#{window_id}.#{pane_id}"],
    ["list-panes", "-t", "fast", "-F", "#{pane_id} #{pane_width}x#{pane_height} #{cursor_x}"],
    ["list-panes", "-a"], ["list-windows", "-t", "fast"], ["list-sessions"],
    ["has-session", "-t", "fast", ";", "display-message", "-p", "-t", "{pane}", "#{pane_id}"],
], ids=lambda words: " ".join(words)[:40])
def test_a_line_takes_one_write_per_command(shimmed, monkeypatch, capsys, words):
    """Hello with the first request, and a format expanded by the daemon (expand-format): one
    write, one round trip, per command of the line."""
    s, pane = shimmed
    for name, value in s.env.items():
        monkeypatch.setenv(name, value)
    writes = []
    flush = BlockingClient._flush

    def counted(client):
        if client._outgoing:
            writes.append(len(client._outgoing))
        flush(client)

    monkeypatch.setattr(BlockingClient, "_flush", counted)
    line = [word.replace("{pane}", pane) for word in words]
    assert answer(["-L", s.name, *line]) == 0
    assert bool(capsys.readouterr().out) == any(word.startswith(("display", "capture", "list")) for word in words)
    assert len(writes) == 1 + line.count(";"), writes


def test_the_launcher_starts_python_from_its_own_first_line(shimmed):
    s, _ = shimmed
    if len(os.fsencode(f"#!{sys.executable} -SP\n")) > SHEBANG_MAX_BYTES or " " in sys.executable:
        pytest.skip("this interpreter's path cannot be a #! line (the next test covers that)")
    assert launcher_path(s.socket_path).read_text().startswith(f"#!{sys.executable} -SP\n")


@pytest.mark.parametrize("python_dir", ["with space", "x" * 130])
def test_an_interpreter_no_first_line_can_name_goes_through_sh(shimmed, tmp_path, python_dir):
    """A path with a space, or too long for the kernel's `#!` line: the sh launcher, which answers
    the same."""
    s, pane = shimmed
    (tmp_path / python_dir).mkdir()
    python = tmp_path / python_dir / "python"
    python.symlink_to(sys.executable)
    launcher = tmp_path / "tmux"
    launcher.write_text(launcher_script(str(python), str(Path(muxd.__file__).parent.parent)))
    launcher.chmod(0o700)
    assert launcher.read_text().startswith("#!/bin/sh\n")
    for line in (["display-message", "-p", "-t", pane, "#{pane_id}"], ["-V"]):
        assert _run([str(launcher), "-L", s.name, *line], s.env) == _run([sys.executable, "-c", FULL_PATH, "-L", s.name,
                                                                        *line], s.env)


@pytest.mark.parametrize("pythonpath", [None, "", "/elsewhere"])
def test_what_the_full_cli_starts_finds_this_muxd_first(shimmed, pythonpath):
    """As the sh launcher exported it: this muxd, then the caller's PYTHONPATH (run-shell runs
    its command from the full CLI's process)."""
    s, _ = shimmed
    env = {key: value for key, value in s.env.items() if key != "PYTHONPATH"}
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    result = _run([str(launcher_path(s.socket_path)), "-L", s.name, "run-shell", 'echo "$PYTHONPATH"'], env)
    root = str(Path(muxd.__file__).parent.parent)
    assert result == (0, f"{root}:{pythonpath}\n" if pythonpath else f"{root}\n", "")


def test_in_a_shimmed_pane_a_line_without_a_target_acts_on_that_pane(shimmed):
    s, pane = shimmed
    env = {**s.env, "TMUX": f"{s.socket_path},{s.pid},0", "MUXD": str(s.socket_path), "TMUX_PANE": pane}
    for line in (["display-message", "-p", "#{pane_id}"], ["-S", str(s.socket_path), "display", "-p", "#{pane_id}"]):
        fast = _run([str(launcher_path(s.socket_path)), *line], env)
        assert fast == _run([sys.executable, "-c", FULL_PATH, *line], env)
        assert fast == (0, f"{pane}\n", "")


def test_the_muxd_cli_takes_the_fast_path_too(shimmed):
    s, pane = shimmed
    assert _run([sys.executable, "-m", "muxd", "tmux", "-L", s.name, "display", "-p", "-t", pane, "#{pane_id}"],
                s.env) == (0, f"{pane}\n", "")


SLOW_TO_IMPORT = {"site", "argparse", "pathlib", "msgspec", "muxd.cli.main", "muxd.cli.tmux_commands"}


@pytest.mark.parametrize(("words", "shows", "never"), [
    (["capture-pane", "-p", "-t", "{pane}"], "ready", SLOW_TO_IMPORT | {"re", "collections", "struct", "os"}),
    (["has-session", "-t", "fast"], "", SLOW_TO_IMPORT | {"re", "collections", "struct", "os", "_collections_abc"}),
    (["display-message", "-p", "-t", "{pane}", "#{pane_id}"], "%", SLOW_TO_IMPORT | {"re", "shlex", "collections", "os",
                                                                               "_collections_abc", "struct",
                                                                               "muxd.cli.table", "muxd.daemon.attention"}),
    (["list-panes", "-t", "fast", "-F", "#{pane_id} #{agent_attention}"], "%",
     SLOW_TO_IMPORT | {"re", "collections", "os", "struct"}),
])
def test_a_call_imports_neither_the_cli_nor_site(shimmed, words, shows, never):
    s, pane = shimmed
    line = [word.replace("{pane}", pane) for word in words]
    result = subprocess.run([str(launcher_path(s.socket_path)), "-L", s.name, *line],
                            env={**s.env, "PYTHONPROFILEIMPORTTIME": "1"}, capture_output=True, text=True,
                            timeout=stretched(30))
    assert result.returncode == 0 and shows in result.stdout
    imported = {line.rsplit("|", 1)[1].strip() for line in result.stderr.splitlines() if line.startswith("import time:")}
    assert "muxd.cli.tmux_launcher" in imported  # the fast path's modules may be preloaded: see below
    assert not imported & never


@pytest.mark.parametrize("words", [
    ["capture-pane", "-p", "-t", "{pane}"], ["has-session", "-t", "fast"], ["send-keys", "-t", "{pane}", "-l", ""],
    ["display-message", "-p", "-t", "{pane}", "#{pane_id}"], ["list-panes", "-t", "fast", "-F", "#{pane_id}"],
    ["list-sessions", "-F", "#{session_name}"],
], ids=lambda words: " ".join(words)[:40])
def test_a_call_preloads_every_module_of_muxd_it_imports_but_the_launchers_own(shimmed, words):
    """With muxd's bytecode compiled (as pip does at install), a common line's modules are all
    preloaded (tmux_launcher.PRELOADED: complete, each after what it imports): `import` loads
    only the launcher and its packages."""
    s, pane = shimmed
    compileall.compile_dir(os.path.dirname(muxd.__file__), quiet=1)
    result = subprocess.run([str(launcher_path(s.socket_path)), "-L", s.name,
                             *[word.replace("{pane}", pane) for word in words]],
                            env={**s.env, "PYTHONPROFILEIMPORTTIME": "1"}, capture_output=True, text=True,
                            timeout=stretched(30))
    assert result.returncode == 0
    imported = {line.rsplit("|", 1)[1].strip() for line in result.stderr.splitlines() if line.startswith("import time:")}
    assert {name for name in imported if name.startswith("muxd")} == {"muxd", "muxd.cli", "muxd.cli.tmux_launcher"}


@pytest.mark.parametrize("name", sorted(FAST_COMMANDS))
def test_its_options_are_those_the_parsers_declare(name):
    command = command_named(name)
    parser = command_parser(name, command)
    short = {option[1]: action for option, action in parser._option_string_actions.items()
             if len(option) == 2 and option[1] != "-"}
    valued, flagged, most = letters(name)
    assert set(valued) == {letter for letter, action in short.items() if action.nargs != 0}
    assert set(flagged) == {letter for letter, action in short.items() if action.nargs == 0}
    operands = [action.nargs for action in parser._actions if not action.option_strings]
    assert most == (None if "*" in operands else len(operands))


@pytest.mark.parametrize("words", [
    ["send-keys", "-t", "x", "--", "-a"], ["send-keys", "a", "-l"], ["display-message", "-t=x"],
    ["capture-pane", "-p", "-"], ["list-panes", "--json"], ["new-session", "-d"], ["display-message", "a", "b"],
    ["send-keys", "-t"], ["send-keys", "-t", "-l"],
])
def test_what_it_is_not_sure_of_goes_to_the_full_cli(words):
    assert read_command(words) is None


def test_it_reads_options_as_argparse_does():
    command = read_command(["capture-pane", "-pJt%1", "-S", "-20", "-E", "-"])
    assert (command.values, command.flags, command.operands) == ({"t": "%1", "S": "-20", "E": "-"}, {"p", "J"}, [])
    command = read_command(["send", "-lt", "%2", "", "-", "-5"])
    assert (command.name, command.values, command.flags, command.operands) == (
        "send-keys", {"t": "%2"}, {"l"}, ["", "-", "-5"])
