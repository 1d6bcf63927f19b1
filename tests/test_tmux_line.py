"""Reading a tmux command line (muxd/tmux_line.py): global options, `;`, names and aliases."""

import pytest

from muxd.errors import BadRequest
from muxd.tmux_line import find_command, parse_line, split_commands


def test_global_options_as_getopt_reads_them():
    line = parse_line(["-2u", "-Lwork", "-f", "/dev/null", "list-panes", "-a"])
    assert line.options == {"L": "work", "f": "/dev/null"}
    assert line.flags == {"2", "u"}
    assert line.commands == [["list-panes", "-a"]]
    assert parse_line(["-S", "/tmp/s.sock", "-V"]).options == {"S": "/tmp/s.sock"}
    assert parse_line([]).commands == []


@pytest.mark.parametrize(("words", "error"), [
    (["-Q"], "unknown option -- Q"),
    (["-L"], "option requires an argument -- L"),
])
def test_bad_global_options(words, error):
    with pytest.raises(BadRequest, match=error):
        parse_line(words)


def test_commands_split_at_semicolons():
    assert split_commands(["has", "-t", "x", ";", "display", "-p", "hi"]) == [["has", "-t", "x"],
                                                                             ["display", "-p", "hi"]]
    assert split_commands(["new", "-d;", "splitw"]) == [["new", "-d"], ["splitw"]]
    assert split_commands(["send", "echo a\\;", "Enter"]) == [["send", "echo a;", "Enter"]]
    assert split_commands([";", "ls", ";"]) == [["ls"]]


def test_names_aliases_and_unique_prefixes():
    assert find_command("splitw") == "split-window"
    assert find_command("ls") == "list-sessions"
    assert find_command("list-w") == "list-windows"
    assert find_command("display") == "display-message"
    with pytest.raises(BadRequest, match="^ambiguous command: lis, could be: list-buffers, "):
        find_command("lis")
    with pytest.raises(BadRequest, match="^unknown command: frobnicate$"):
        find_command("frobnicate")
