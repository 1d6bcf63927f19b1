"""muxd's own CLI answers `capture-pane` without argparse (cli/cli_fast_path.py) as its parsers'
way does: the same output, errors and exit status on a real daemon; the lines it is not sure of go
to the parsers; its options are the ones the command's parser declares; and such a call imports
neither argparse nor the parsers (a guard on imports, not a timing: bench_cold_start.py times it)."""

import subprocess
import sys

import pytest

from muxd.cli.cli_fast_path import FAST_COMMANDS, read_line
from muxd.cli.parsers import build_parser
from muxd.cli.table import command_named
from muxd.socket_names import DEFAULT_SERVER_NAME, HOST_URL_ENV
from muxd.testing.patience import stretched
from muxd.testing.wait import wait_until

# The parsers' way: the fast path told it knows no line.
PARSERS_WAY = ("import sys; import muxd.cli.cli_fast_path as fast; fast.read_line = lambda argv: None; "
               "from muxd.cli.main import main; sys.exit(main(sys.argv[1:]))")
FAST_WAY = "import sys; from muxd.cli.main import main; sys.exit(main(sys.argv[1:]))"


def _run(code, argv, env):
    result = subprocess.run([sys.executable, "-c", code, *argv], env=env, capture_output=True, text=True,
                            timeout=stretched(30))
    return result.returncode, result.stdout, result.stderr


@pytest.fixture(scope="module")
def pane(muxd_module_server):
    """The module's daemon with a pane that shows `ready` over a few lines and stays."""
    s = muxd_module_server
    pane = s.cli("new-session", "-d", "-P", "-s", "fast", "--", "sh", "-c",
                 "printf 'one\\ntwo\\n\\033[1mready\\033[0m\\n'; exec sleep 600", check=True).stdout.strip()
    wait_until(lambda: "ready" in s.cli("capture-pane", "-p", "-t", pane).stdout, timeout=stretched(10))
    return s, pane


@pytest.mark.parametrize("words", [
    ["capture-pane", "-p", "-t", "{pane}"],
    ["capture", "-pe", "-t{pane}"],
    ["capturep", "-J", "-t", "{pane}", "-S", "-2", "-E", "-"],
    ["capture-pane", "-p", "-t", "nosuch"],
    ["capture-pane", "-p", "-t", "{pane}", "-S", "x"],
    ["capture-pane", "-p", "-t", "{pane}", "surplus"],
], ids=lambda words: " ".join(words))
def test_it_answers_as_the_parsers_way(pane, words):
    s, pane_id = pane
    argv = ["-L", s.name, *[word.replace("{pane}", pane_id) for word in words]]
    fast = _run(FAST_WAY, argv, s.env)
    assert fast == _run(PARSERS_WAY, argv, s.env)
    assert (fast[0] == 0) == ("{pane}" in " ".join(words) and "x" not in words and "surplus" not in words)


def test_with_no_server_it_says_so_as_the_parsers_way(pane):
    s, _ = pane
    argv = ["-L", f"{s.name}-none", "capture-pane", "-p"]
    fast = _run(FAST_WAY, argv, s.env)
    assert fast == _run(PARSERS_WAY, argv, s.env) and fast[0] == 1 and "no server" in fast[2]


def test_a_call_imports_neither_argparse_nor_the_parsers(pane):
    s, pane_id = pane
    result = subprocess.run([sys.executable, "-X", "importtime", "-m", "muxd", "-L", s.name, "capture-pane", "-p",
                             "-t", pane_id], env=s.env, capture_output=True, text=True, timeout=stretched(30))
    assert result.returncode == 0 and "ready" in result.stdout
    imported = {line.rsplit("|", 1)[1].strip() for line in result.stderr.splitlines() if line.startswith("import time:")}
    assert "muxd.cli.cli_fast_path" in imported
    assert not imported & {"argparse", "gettext", "muxd.cli.parsers", "muxd.cli.pane_commands", "threading"}


@pytest.mark.parametrize("name", sorted(FAST_COMMANDS))
def test_its_options_are_those_the_parser_declares(name):
    command = command_named(name)
    parser = build_parser([command])._subparsers._group_actions[0].choices[name]
    parser.learn_options()
    short = {option[1]: action for option, action in parser._option_string_actions.items()
             if len(option) == 2 and option[1] != "-" and option != "-h"}
    valued, flagged, most = FAST_COMMANDS[name]
    assert set(valued) == {letter for letter, action in short.items() if action.nargs != 0}
    assert set(flagged) == {letter for letter, action in short.items() if action.nargs == 0}
    operands = [action.nargs for action in parser._actions if not action.option_strings and action.dest != "help"]
    assert most == (None if "*" in operands else len(operands))


@pytest.mark.parametrize("argv", [
    ["--token", "t", "capture-pane", "-p"], ["--token-file", "f", "capture-pane"], ["-H", "ssh://h", "capture-pane"],
    ["-f", "c.conf", "capture-pane"], ["-L=x", "capture-pane"], ["-L", "x", "-L", "y", "capture-pane"],
    ["-L", "-x", "capture-pane"], ["capture-pane", "--help"], ["capture-pane", "-h"], ["capture-pane", "-t=x"],
    ["capture-pane", "-p", "-"], ["capture-pane", "--", "-p"], ["ls"], ["capture-panes", "-p"], [], ["-L", "x"],
    ["capture-pane", "-S", "1.5"],
], ids=lambda argv: " ".join(argv) or "nothing")
def test_what_it_is_not_sure_of_goes_to_the_parsers(argv):
    assert read_line(argv) is None


def test_it_reads_muxds_server_name_and_the_options_as_argparse_does(monkeypatch):
    monkeypatch.delenv(HOST_URL_ENV, raising=False)
    name, command = read_line(["-Lwork", "capture", "-pJt%1", "-S", "-20", "-E", "-"])
    assert (name, command.name, command.values, command.flags) == (
        "work", "capture-pane", {"t": "%1", "S": "-20", "E": "-"}, {"p", "J"})
    assert read_line(["-L", "", "capture-pane"])[0] == DEFAULT_SERVER_NAME  # as the parsers leave -L ""
    assert read_line(["capture-pane", "-p"])[0] == DEFAULT_SERVER_NAME
    monkeypatch.setenv(HOST_URL_ENV, "ssh://elsewhere")
    assert read_line(["capture-pane", "-p"]) is None  # a server on another host: the parsers' way


def test_a_refused_token_reads_as_the_parsers_way(pane):
    s, pane_id = pane
    argv, env = ["-L", s.name, "capture-pane", "-p", "-t", pane_id], {**s.env, "MUXD_CLI_TOKEN": "mxd_bogus"}
    fast = _run(FAST_WAY, argv, env)
    assert fast == _run(PARSERS_WAY, argv, env) and fast[0] == 1 and "token" in fast[2]
