"""Issue 26's done-when, as one scene: a person attached to session `work` in a real outer
terminal (a pane of a private tmux server), a script's `set-hook`, a `muxd watch` and a
`muxd top` in a second outer terminal; a fake Claude in session `far` asks for a yes. Every one
of them hears it: the attached client's status line counts it and its terminal gets OSC 9 and a
bell; the far window is flagged `?`; the hook's command runs with the pane and the question;
the watch prints the event; top lists the agent first and answers it, and the agent goes on.

The latency here is bounded loosely (a loaded 2-core machine); benchmarks/bench_alert_latency.py
and bench_alert_latency_scripts.py measure it."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys

import pytest

from muxd.testing.byte_stamps import arrival
from muxd.testing.event_tap import EventTap
from muxd.testing.fake_agent_panes import agent_state, start_fake_agent
from muxd.testing.outer_terminal import attach_in, muxd_command, outer_terminals, status_line
from muxd.testing.patience import stretched
from muxd.testing.wait import wait_until

LINES = 24
LOOSE_LATENCY_S = 2.0
TURN_TIMEOUT_S = 30.0


@pytest.fixture
def outer(muxd_server):
    with outer_terminals(muxd_server) as make:
        yield make


def test_an_agent_asking_elsewhere_reaches_the_terminal_a_hook_a_watch_and_top(muxd_server, outer, tmp_path):
    s = muxd_server
    asked_file = tmp_path / "asked"
    s.cli("new-session", "-d", "-s", "work", "--", "bash", "--norc", "--noprofile", check=True)
    far = start_fake_agent(s, "far")
    s.cli("set-hook", "-g", "agent-waiting",
          f"run-shell \"echo #{{hook_pane}} #{{q:hook_question}} >> {shlex.quote(str(asked_file))}\"", check=True)
    person = outer(lines=LINES)
    attach_in(person, s, "work")
    person.tmux("pipe-pane", "-O", "-t", "outer",
                shlex.join([sys.executable, "-m", "muxd.testing.byte_stamps", str(tmp_path / "bytes")]))
    top = outer(columns=120, lines=LINES, command=muxd_command(s.name, "top"))
    top.wait_for("1 agent · none needs you")
    tap = EventTap(s)
    watch = subprocess.Popen([sys.executable, "-m", "muxd", "-L", s.name, "watch", "--until", "agent-waiting",
                              "-t", "far", "--timeout", f"{stretched(TURN_TIMEOUT_S):.1f}"],
                             env=s.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # Whether the watch subscribed before the question or after, it prints it: as it comes, or
        # as the pane's current need (marked "current").
        s.cli("send-keys", "-t", far, "tool", "Enter", check=True)
        waiting = tap.wait_for("agent-waiting", far, timeout=TURN_TIMEOUT_S)

        # The attached terminal: the count on its status line, OSC 9 and a bell, soon after.
        notice = f"\x1b]9;muxd: claude {far} (far:0) waits".encode()
        at = wait_until(lambda: arrival(tmp_path / "bytes", notice), timeout=10, message="OSC 9 at the terminal")
        assert waiting.at <= at < waiting.at + LOOSE_LATENCY_S, (waiting.at, at)
        line = status_line(person.wait_for(lambda sc: "1 waiting" in status_line(sc, LINES)), LINES)
        assert line.rstrip().endswith("1 waiting"), line
        assert s.cli("list-windows", "-t", "far", "-F", "#{window_flags}", check=True).stdout.strip() == "*?"

        # The hook's command ran with the pane and its question.
        hooked = wait_until(lambda: asked_file.read_text() if asked_file.exists() else None, timeout=TURN_TIMEOUT_S,
                            message="the agent-waiting hook ran")
        assert hooked.startswith(f"{far} ") and "proceed" in hooked.lower(), hooked

        # The watch printed the event and ended.
        out, err = watch.communicate(timeout=stretched(TURN_TIMEOUT_S))
        assert watch.returncode == 0, err
        printed = json.loads(out.splitlines()[-1])
        assert (printed["kind"], printed["pane_id"], printed["question"]) == ("agent-waiting", far, waiting.question)

        # top lists it first, with its question, and answers it.
        shown = top.wait_for("1 waiting")
        first = next(row for row in shown.splitlines() if row.startswith(far))
        assert "waiting" in first and waiting.question and waiting.question.split()[0] in first
        top.keys("y")
        wait_until(lambda: agent_state(s, far) == "Idle" and "Made the directory." in s.capture(far),
                   timeout=TURN_TIMEOUT_S, message="the agent went on after top's yes")
        # Answered: no one waits any more, on the attached status line either.
        person.wait_for(lambda sc: not re.search(r"\d waiting", status_line(sc, LINES)))
    finally:
        if watch.poll() is None:
            watch.kill()
            watch.wait()
        tap.close()

