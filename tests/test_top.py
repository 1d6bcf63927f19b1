"""`muxd top` through a real daemon and fake agents: `--once` puts the waiting agent first with
its question; in a real terminal (a pane of a private tmux server) `y` answers the agent's
confirmation and it goes on, a key on an agent that asks nothing says why on the last line,
`e` shows its execution, Enter attaches to the agent's pane from outside muxd and switches the
attached client from inside it."""

from __future__ import annotations

import json

import pytest

from muxd.testing.fake_agent_panes import agent_state, ask, start_fake_agent
from muxd.testing.outer_terminal import attach_in, muxd_command, outer_terminals, status_line
from muxd.testing.wait import wait_until

TURN_TIMEOUT_S = 30.0


@pytest.fixture
def outer(muxd_server):
    with outer_terminals(muxd_server) as make:
        yield make


def table_rows(text: str) -> list[str]:
    lines = text.splitlines()
    at = next(n for n, line in enumerate(lines) if line.startswith("PANE"))
    return lines[at + 1:]


def test_once_lists_the_waiting_agent_first_with_its_question(muxd_server):
    s = muxd_server
    calm = start_fake_agent(s, "calm")
    asker = start_fake_agent(s, "asker", "codex")
    ask(s, asker)
    once = s.cli("top", "--once", check=True).stdout
    assert once.splitlines()[0] == "muxd top · 2 agents · 1 waiting"
    first, second = table_rows(once)
    assert first.startswith(f"{asker} asker") and "codex" in first and "waiting" in first
    question = json.loads(s.cli("list-panes", "-t", asker, "--json", check=True).stdout)[0]["attention_text"]
    assert question and question[:20] in first
    assert second.startswith(f"{calm} calm") and "Idle" in second
    assert "\x1b[" not in once  # piped: no colours
    live = s.cli("top")  # no terminal here: only --once runs
    assert (live.returncode, live.stderr) == (1, "muxd: top needs a terminal on stdin and stdout "
                                                 "(--once prints one frame anywhere)\n")


def test_top_in_a_terminal_answers_yes_shows_the_execution_and_enter_attaches(muxd_server, outer):
    s = muxd_server
    pane = start_fake_agent(s, "asker")
    term = outer(columns=120, lines=24, command=muxd_command(s.name, "top"))
    term.wait_for("1 agent · none needs you")
    term.keys("y")  # it asks nothing yet: top says so and goes on
    term.wait_for(f"{pane} is not waiting for a yes or no (it is Idle)")
    ask(s, pane)
    term.wait_for("1 waiting")
    term.keys("y")
    wait_until(lambda: agent_state(s, pane) == "Idle" and "Made the directory." in s.capture(pane),
               timeout=TURN_TIMEOUT_S, message="the agent went on after top's yes")
    term.wait_for(f"answered yes to {pane}")
    wait_until(lambda: [e["status"] for e in json.loads(s.cli("history", "--json", check=True).stdout)["executions"]]
               == ["success"], timeout=TURN_TIMEOUT_S, message="the turn recorded as ended")
    term.wait_for("finished")
    term.keys("e")
    shown = term.wait_for("Bash(mkdir -p demo)")
    assert "status        success" in shown and "Made the directory." in shown
    term.keys("Escape")  # back to the table
    term.wait_for("1 agent · 1 finished")
    term.keys("Enter")  # outside muxd: top ends and `muxd attach` takes the terminal
    attached = term.wait_for(lambda screen: status_line(screen, 24).startswith("[asker]"))
    assert "Made the directory." in attached


def test_enter_inside_an_attached_client_switches_it_to_the_agent(muxd_server, outer):
    s = muxd_server
    pane = start_fake_agent(s, "asker")
    s.cli("new-session", "-d", "-s", "home", "--", "bash", "--norc", "--noprofile", check=True)
    term = outer(columns=120, lines=24)
    attach_in(term, s, "home")
    term.type(muxd_command(s.name, "top"), enter=True)  # in home's pane: $MUXD names this server
    term.wait_for("1 agent")
    ask(s, pane)
    term.wait_for("1 waiting")
    term.keys("Enter")
    switched = term.wait_for(lambda screen: status_line(screen, 24).startswith("[asker]"))
    assert "Do you want to proceed?" in switched
    clients = json.loads(s.cli("list-clients", "--json", check=True).stdout)
    assert [c["session"] for c in clients] == ["asker"]


def test_q_quits_and_the_server_going_ends_top_with_one_line(muxd_server, outer):
    s = muxd_server
    start_fake_agent(s, "calm")
    term = outer(columns=100, lines=20)
    top = muxd_command(s.name, "top") + "; echo status=$?"
    term.type(top, enter=True)
    term.wait_for("1 agent")
    term.keys("q")
    term.wait_for("status=0")
    term.type("clear; " + top, enter=True)
    term.wait_for("1 agent")
    s.cli("kill-server", check=True)
    screen = term.wait_for("status=1")
    assert "muxd: the server went away" in screen and "Traceback" not in screen


@pytest.mark.parametrize("agent, said_no, said_yes", [
    ("claude", "Interrupted", "Made the directory."),
    ("codex", "You canceled the request", "You approved codex to run"),
    ("gemini", "Request cancelled.", "The tool finished."),
    ("aider", "Skipping edits to", "Applied edit to"),
])
def test_n_and_y_answer_each_agents_own_dialog(muxd_server, outer, agent, said_no, said_yes):
    s = muxd_server
    pane = start_fake_agent(s, "asker", agent)
    term = outer(columns=120, lines=24, command=muxd_command(s.name, "top"))
    term.wait_for("1 agent")
    for key, said in (("n", said_no), ("y", said_yes)):
        ask(s, pane)
        term.wait_for("1 waiting")
        term.keys(key)
        s.wait_for_text(pane, said, timeout=TURN_TIMEOUT_S)
        wait_until(lambda: agent_state(s, pane) == "Idle", timeout=TURN_TIMEOUT_S, message=f"{agent} idle after {key}")
