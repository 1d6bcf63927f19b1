"""An agent's turn's transcript is its own rows as the pane's screen laid them out at its end:
from its prompt's echo to the bottom, nothing of the turn before, stored as text; a command's
is still the bytes it wrote (rendered when asked for). Real daemon, fake Claude Code, SQLite."""

from __future__ import annotations

import json
import sqlite3

from muxd.testing.fake_agent_panes import start_fake_agent


def as_json(server, *args: str) -> dict:
    return json.loads(server.cli(*args, "--json", check=True).stdout)


def test_an_agent_turn_keeps_its_own_rows_as_text(muxd_server):
    s = muxd_server
    pane = start_fake_agent(s, "worker")
    first = as_json(s, "submit", "-t", "worker", "name the first colour", "--wait")
    second = as_json(s, "submit", "-t", "worker", "name the second colour", "--wait")
    assert first["status"] == second["status"] == "success"

    shown = as_json(s, "show", second["id"], "--transcript")
    transcript = shown["transcript"]
    lines = transcript.rstrip("\n").split("\n")
    assert "name the second colour" in lines[0]  # it starts at its own echo
    assert "first colour" not in transcript  # nothing of the turn before
    assert shown["execution"]["response"] and shown["execution"]["response"].split("\n")[0] in transcript
    assert shown["execution"]["transcript_bytes"] == len(transcript.encode())
    # The rows are the pane's own: the screen's last rows end it, as capture-pane shows them.
    screen = [row.rstrip() for row in s.cli("capture-pane", "-p", "-J", "-t", pane, check=True).stdout.split("\n")]
    while screen and not screen[-1]:
        screen.pop()
    shared = min(len(lines), len(screen))
    assert [row.rstrip() for row in lines[-shared:]] == screen[-shared:]

    with sqlite3.connect(s.env["MUXD_DB"]) as db:
        formats = dict(db.execute("SELECT execution_id, json_extract(extra, '$.format') FROM execution_transcripts"))
    assert formats[second["id"]] == "text" and formats[first["id"]] == "text"


def test_a_command_keeps_its_bytes(muxd_server):
    s = muxd_server
    ran = json.loads(s.cli("run", "--wait", "--json", "--", "printf", "a\\033[31mred\\033[0m line\\n",
                           check=True).stdout)
    shown = as_json(s, "show", ran["id"], "--transcript")
    assert shown["transcript"] == "ared line\n"
    with sqlite3.connect(s.env["MUXD_DB"]) as db:
        (fmt,) = db.execute("SELECT json_extract(extra, '$.format') FROM execution_transcripts WHERE execution_id = ?",
                            (ran["id"],)).fetchone()
    assert fmt is None
