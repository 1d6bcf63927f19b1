"""`muxd completion bash|zsh|fish` and `muxd man`, tried as a user would: the script loaded into
the real shell and Tab pressed in an interactive one (a pane of a private tmux), the page
rendered by groff and man. Each test walks CLI_COMMANDS, so a command added to the table and
missing from a script or the page fails here."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from muxd.cli.table import CLI_COMMANDS
from muxd.testing.outer_terminal import OuterTerminal
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until

EVERY_NAME = sorted({name for c in CLI_COMMANDS for name in (c.name, *c.aliases)})
BIN = str(Path(sys.executable).parent)  # the `muxd` console script of this install


def _env(server: MuxdTestServer) -> dict[str, str]:
    """The server's environment with this install's `muxd` first on PATH, as the shells run it."""
    return {**server.env, "PATH": f"{BIN}{os.pathsep}{server.env.get('PATH', os.defpath)}"}


def _script(server: MuxdTestServer, shell: str) -> str:
    result = server.cli("completion", shell, check=True)
    assert result.stdout.strip() and result.stdout.endswith("\n"), result.stderr
    return result.stdout


def _bash_complete(server: MuxdTestServer, script: Path, *words: str) -> list[str]:
    """What bash's completion of muxd offers for the line `words` (its last word being typed)."""
    line = " ".join(f"'{w}'" for w in words)
    program = (f"source {script} || exit 9; COMP_WORDS=(muxd {line}); COMP_CWORD={len(words)}; "
               "_shtab_muxd; printf '%s\\n' \"${COMPREPLY[@]}\"")
    result = subprocess.run(["bash", "--norc", "--noprofile", "-c", program], env=_env(server),
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


@pytest.fixture
def bash_script(muxd_unstarted: MuxdTestServer, tmp_path: Path) -> Path:
    path = tmp_path / "muxd.bash"
    path.write_text(_script(muxd_unstarted, "bash"))
    return path


def test_bash_registers_the_completion(muxd_unstarted: MuxdTestServer) -> None:
    result = subprocess.run(["bash", "--norc", "--noprofile", "-c", "source <(muxd completion bash); complete -p muxd"],
                            env=_env(muxd_unstarted), capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "complete -o bashdefault -F _shtab_muxd muxd"


def test_bash_completes_every_command_and_a_commands_options(muxd_unstarted: MuxdTestServer,
                                                              bash_script: Path) -> None:
    server = muxd_unstarted
    assert _bash_complete(server, bash_script, "new-se") == ["new-session"]
    assert sorted(_bash_complete(server, bash_script, "")) == EVERY_NAME
    assert _bash_complete(server, bash_script, "-L", "x", "split-window", "--ta") == ["--tag"]
    assert "--sessions" in _bash_complete(server, bash_script, "ls", "-")
    assert set(_bash_complete(server, bash_script, "task", "")) >= {"add", "ls", "approve", "run"}
    assert _bash_complete(server, bash_script, "completion", "") == ["bash", "zsh", "fish"]
    # What follows the command: a program to run, or for bind-key muxd's commands.
    assert "bash" in _bash_complete(server, bash_script, "new", "-d", "--", "bas")
    assert _bash_complete(server, bash_script, "bind-key", "x", "split-w") == ["split-window"]


def test_bash_completes_a_target_with_the_servers_sessions(muxd_server: MuxdTestServer, tmp_path: Path) -> None:
    server = muxd_server
    for name in ("build", "bugfix", "review"):
        server.cli("new-session", "-d", "-s", name, "--", "sleep", "600", check=True)
    script = tmp_path / "muxd.bash"
    script.write_text(_script(server, "bash"))
    assert sorted(_bash_complete(server, script, "-L", server.name, "send-keys", "-t", "bu")) == ["bugfix", "build"]
    assert sorted(_bash_complete(server, script, f"-L{server.name}", "kill-session", "-t", "")) == [
        "bugfix", "build", "review"]
    # Another server's name, which does not run: nothing offered, nothing said, nothing started.
    assert _bash_complete(server, script, "-L", "none", "send-keys", "-t", "") == []
    assert not (server.socket_dir / "none.sock").exists()


def test_fish_completes_commands_options_and_subcommands(muxd_unstarted: MuxdTestServer, tmp_path: Path) -> None:
    if shutil.which("fish") is None:
        pytest.skip("fish is not installed (.ci/run installs it)")
    script = tmp_path / "muxd.fish"
    script.write_text(_script(muxd_unstarted, "fish"))

    def offered(line: str) -> list[str]:
        result = subprocess.run(["fish", "--no-config", "-c", f"source {script}; complete -C '{line}'"],
                                env=_env(muxd_unstarted), capture_output=True, text=True, timeout=30)
        assert result.returncode == 0, result.stderr
        return [row.split("\t")[0] for row in result.stdout.splitlines()]

    assert offered("muxd new-se") == ["new-session"]
    assert sorted(offered("muxd ")) == EVERY_NAME
    assert offered("muxd split-window --ta") == ["--tag"]
    assert set(offered("muxd task ")) >= {"add", "ls", "approve", "run"}


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_tab_in_an_interactive_shell_completes_a_command_and_an_option(muxd_unstarted: MuxdTestServer,
                                                                        shell: str) -> None:
    """What the user sees: the script loaded as the help says, `muxd list-pa` Tab in a terminal."""
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed (.ci/run installs it)")
    command, load = {
        "bash": ("bash --norc --noprofile", "source <(muxd completion bash)"),
        "zsh": ("zsh -f", "autoload -Uz compinit && compinit -u && eval \"$(muxd completion zsh)\""),
        "fish": ("fish --no-config", "muxd completion fish | source"),
    }[shell]
    env = {**_env(muxd_unstarted), "SHELL": shutil.which(shell) or shell}
    terminal = OuterTerminal(env, columns=120, lines=20, command=command)
    try:
        # The marker printed, not typed: the screen shows it once the script is loaded.
        marker = "loaded-$((6*7))" if shell != "fish" else "loaded-(string join '' 4 2)"
        terminal.type(f"{load}; echo {marker}", enter=True)
        terminal.wait_for("loaded-42", timeout=30)
        terminal.type("muxd list-pa")
        terminal.keys("Tab")
        terminal.wait_for("muxd list-panes", timeout=30)
        terminal.type("--js")  # after the space the completion put
        terminal.keys("Tab")
        terminal.wait_for("muxd list-panes --json", timeout=30)
        # A command whose rest is a program (zsh once listed its options without inserting one).
        # C-c clears the line; a shell still busy with the last completion on a loaded machine
        # can miss it, so again until the line is empty.
        wait_until(lambda: "list-panes --json" not in _last_line(terminal) or terminal.keys("C-c"),
                   timeout=30, interval=2, message="the line cleared by C-c")
        terminal.type("muxd new-session --na")
        terminal.keys("Tab")
        terminal.wait_for("muxd new-session --name", timeout=30)
    finally:
        terminal.close()


def _last_line(terminal: OuterTerminal) -> str:
    return next((line for line in reversed(terminal.lines()) if line.strip()), "")


def _roff(server: MuxdTestServer) -> str:
    return server.cli("man", "--roff", check=True).stdout


def test_the_manual_renders_without_a_warning_and_names_every_command(muxd_unstarted: MuxdTestServer) -> None:
    roff = _roff(muxd_unstarted)
    assert roff.isascii()  # groff reads it without preconv
    checked = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z"], input=roff, capture_output=True, text=True,
                             timeout=60)
    assert checked.returncode == 0 and checked.stderr == "", checked.stderr
    shown = subprocess.run(["man", "-l", "-"], input=roff, capture_output=True, text=True, timeout=60,
                           env={**os.environ, "MANWIDTH": "200", "MANPAGER": "cat"})
    assert shown.returncode == 0 and shown.stderr == "", shown.stderr
    page = shown.stdout
    assert page.startswith("MUXD(1)") and "muxd - terminal multiplexer for AI coding agents" in page
    headings = {line.strip() for line in page.splitlines() if line.startswith("   muxd ")}
    for command in CLI_COMMANDS:
        aliases = f" ({', '.join(command.aliases)})" if command.aliases else ""
        assert f"muxd {command.name}{aliases}" in headings, command.name
        assert " ".join(command.help.split()) in " ".join(page.split()), command.name
    assert "-t PANE" in page and "--tier TIER" in page  # the commands' options, and their subcommands'
    assert "$XDG_STATE_HOME/muxd/NAME.log" in page and "muxd completion bash|zsh|fish" in page


def test_muxd_man_on_a_terminal_shows_the_page_not_its_roff(muxd_unstarted: MuxdTestServer) -> None:
    terminal = OuterTerminal({**_env(muxd_unstarted), "MANPAGER": "cat", "MANWIDTH": "100"}, columns=100, lines=30)
    try:
        terminal.type("muxd man; echo shown-$((6*7))", enter=True)
        screen = terminal.wait_for("shown-42", timeout=60)
        assert "SEE ALSO" in screen and "muxd systemd-unit" in screen and ".SH" not in screen
    finally:
        terminal.close()


def test_help_names_the_completion_and_the_manual(muxd_unstarted: MuxdTestServer) -> None:
    text = " ".join(muxd_unstarted.cli("--help", check=True).stdout.split())
    assert "Shell completion: muxd completion bash|zsh|fish; manual: muxd man" in text
    assert "a systemd user unit: muxd systemd-unit" in text
    refused = muxd_unstarted.cli("completion", "tcsh")
    assert refused.returncode == 2 and "invalid choice: 'tcsh'" in refused.stderr
