"""`muxd` starts lean: a one-shot command imports neither asyncio nor rich, nor the modules of the
commands it does not run. A guard on what is imported, not a timing: a module that creeps onto
this path costs every `muxd ls` (benchmarks/bench_cli_start.py measures the time itself)."""

from __future__ import annotations

import subprocess
import sys

import pytest

import muxd
from muxd.testing.patience import stretched
from muxd.testing.server import MuxdTestServer

# Modules a one-shot command has no use for, each costing milliseconds to import.
NEVER_ON_THE_FAST_PATH = (
    "asyncio", "rich", "subprocess", "dataclasses", "mcp", "shutil",
    "muxd.client.connection",                                      # the async client
    "muxd.protocol.messages", "muxd.protocol.codec",              # every message of every union
    "muxd.protocol.execution_messages", "muxd.protocol.task_messages",
    "muxd.cli.history_commands", "muxd.cli.task_commands", "muxd.cli.mcp_commands",
    "muxd.cli.integration_commands", "shtab", "argparse_manpage",   # completion and man page generators
)


def _imports(argv: list[str], env: dict[str, str]) -> set[str]:
    result = subprocess.run([sys.executable, "-X", "importtime", *argv], env=env, capture_output=True, text=True,
                            timeout=stretched(30))
    assert result.returncode == 0, result.stderr
    return {line.rsplit("|", 1)[1].strip() for line in result.stderr.splitlines() if line.startswith("import time:")}


def imported_by(server: MuxdTestServer, *args: str) -> set[str]:
    """The modules `muxd -L NAME args…` imports beyond those the interpreter's own start imports
    here (site, a sitecustomize), as `python -X importtime` lists them."""
    return _imports(["-m", "muxd", "-L", server.name, *args], server.env) - _imports(["-c", "pass"], server.env)


@pytest.fixture(scope="module")
def server_with_a_pane():
    server = MuxdTestServer().start()
    try:
        server.cli("new-session", "-d", "-s", "lean", "--", "sleep", "600", check=True)
        yield server
    finally:
        server.stop()


@pytest.mark.parametrize("args", [
    ("ls",), ("ls", "--json"), ("ls", "--sessions"), ("list-windows",), ("has-session", "-t", "lean"),
    ("capture-pane", "-p", "-t", "lean"), ("send-keys", "-t", "lean", ""), ("summary", "-t", "lean"),
])
def test_one_shot_commands_import_neither_asyncio_nor_rich(server_with_a_pane, args):
    modules = imported_by(server_with_a_pane, *args)
    assert "muxd.client.blocking" in modules  # it did talk to the daemon
    assert not modules & set(NEVER_ON_THE_FAST_PATH)
    assert not any(m.startswith(("rich.", "asyncio.", "mcp.")) for m in modules)
    # msgspec costs about what the interpreter's start does: only JSON output may import it.
    assert ("msgspec" in modules) == ("--json" in args)
    assert "typing" not in modules or "--json" in args  # msgspec imports it; nothing else here needs it


def test_version_imports_no_command_and_no_protocol(muxd_unstarted):
    modules = imported_by(muxd_unstarted, "--version")
    assert not modules & set(NEVER_ON_THE_FAST_PATH)
    assert "typing" not in modules  # only the type checker reads the annotations that name it
    assert not any(m.startswith(("muxd.cli.", "muxd.client", "muxd.protocol", "msgspec"))
                   for m in modules - {"muxd.cli.main", "muxd.cli.table", "muxd.cli.global_options",
                                       "muxd.cli.cli_fast_path", "muxd.cli.parsers"})


ARGVS = [
    ["ls"], ["ls", "--json"], ["-L", "x", "has", "-t", "s"], ["-Lx", "--token-file=f", "capture", "-p"],
    ["--token", "ls", "list-windows"], ["--version"], ["-L", "x", "-V", "ls"], ["-h"], ["lss"], ["--", "ls"],
    ["ls", "--bogus"], ["-L"], ["--token-file", "-L", "x", "ls"], ["task", "ls", "--json"], ["new", "-d", "--", "top"],
]


@pytest.mark.parametrize("argv", ARGVS, ids=" ".join)
def test_a_parser_of_the_command_argv_names_parses_as_one_of_every_command(argv, capsys):
    """commands_to_parse gives the parser fewer commands to build; what it parses must not change."""
    from muxd.cli.parsers import build_parser, commands_to_parse

    outcomes = []
    for parser in (build_parser(commands_to_parse(argv)), build_parser()):
        try:
            outcomes.append(vars(parser.parse_args(argv)))
        except SystemExit as exc:
            outcomes.append(exc.code)
        outcomes.append(capsys.readouterr())
    assert outcomes[:2] == outcomes[2:]


def test_the_parser_of_ls_or_version_builds_no_other_command():
    from muxd.cli.parsers import commands_to_parse

    assert [c.name for c in commands_to_parse(["-L", "x", "--token", "ls", "has", "-t", "s"])] == ["has-session"]
    assert list(commands_to_parse(["-L", "x", "--version"])) == []


EXIT_PROBE = """
import atexit, sys
{register}
sys.argv = ["muxd", "--version"]
from muxd.cli.main import main
raise SystemExit(main())
"""


@pytest.mark.parametrize("waiting", [False, True])
def test_the_program_exits_with_its_output_written_and_runs_what_waits_for_its_exit(waiting: bool) -> None:
    """`muxd` as the program skips the interpreter's teardown (cli/main.py exit_at_once): its
    output is still all written through a pipe, and an atexit handler, when one was registered,
    still runs (the teardown then happens as usual)."""
    register = "atexit.register(lambda: print('atexit ran'))" if waiting else ""
    result = subprocess.run([sys.executable, "-c", EXIT_PROBE.format(register=register)], capture_output=True,
                            text=True, timeout=stretched(30))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [f"muxd {muxd.__version__}", *(["atexit ran"] if waiting else [])]
