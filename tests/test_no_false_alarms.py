"""Programs that are not agents, and agent-like words in ordinary output, raise no alarm."""

import json
import subprocess
import sys
import time

import pytest

from muxd.testing.wait import wait_until

# Phrases agents show when they wait or work, here only as text in a file.
AGENT_WORDS = ("Do you want to proceed?\n ❯ 1. Yes\n   2. No\n Esc to cancel · Tab to amend\n"
               "✻ Gusting… (4s · ↓ 12 tokens)\n  ⏸ manual mode on · esc to interrupt\n"
               "Allow execution of [Shell]?\n● 1. Allow once\nCreate new file? (Y)es/(N)o [Yes]:\n"
               "Would you like to run the following command?\nPress enter to confirm or esc to cancel\n")
OBSERVE_S = 1.0


@pytest.fixture
def words(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text(AGENT_WORDS * 3)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "add", "notes.txt"], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t",
                    "commit", "-qm", "Do you want to proceed? esc to interrupt"], check=True)
    return path


CASES = {
    "cat": (["cat", "{file}", ";", "exec", "sleep", "600"], "Press enter to confirm"),
    "less": (["less", "{file}"], "Do you want to proceed?"),
    "vim": (["vim", "-u", "NONE", "-N", "{file}"], "Do you want to proceed?"),
    "git-log": (["git", "-C", "{dir}", "log", "-p"], "esc to interrupt"),
    "python": ([sys.executable, "-q"], ">>>"),
    "top": (["top"], "PID"),
    "shell": (["bash", "--norc", "--noprofile"], "bash-"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_no_alarm(muxd_server, words, name):
    argv, marker = CASES[name]
    argv = [a.format(file=words, dir=words.parent) for a in argv]
    command = [" ".join(argv)] if ";" in argv else argv
    s = muxd_server
    s.cli("new-session", "-d", "-s", name, "-x", "100", "-y", "30", "-c", str(words.parent),
          "-e", "PAGER=cat", "-e", "GIT_PAGER=less", "--", *command, check=True)
    s.wait_for_text(name, marker)
    deadline = time.monotonic() + OBSERVE_S
    seen = []
    while time.monotonic() < deadline:  # an assertion over a time window, not a synchronisation
        state = json.loads(s.cli("list-panes", "-a", "--json", check=True).stdout)[0]["agent"]
        seen.append(state)
        assert not state["is_agent"], state
        assert not state["is_awaiting_confirmation"], state
        assert state["activity"]["state"] not in ("AwaitingConfirmation", "Thinking", "Generating", "ToolUse")
    assert seen
    wait_until(lambda: json.loads(s.cli("list-panes", "-a", "--json").stdout)[0]["agent"]["activity"]["state"]
               in ("Idle", "Unknown"), message="published a neutral state")
