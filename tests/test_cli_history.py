"""The history from the CLI, as a person types it: submit, run, history, show, failures, stats,
cancel — tables for people, --json for scripts, one-line errors for bad input."""

from __future__ import annotations

import asyncio
import json

from muxd.protocol.messages import AgentStateChanged, Subscribe
from muxd.testing.fake_agent_panes import start_fake_agent
from muxd.testing.wait import wait_until

FEAT_TRACE = "0af7651916cd43dd8448eb211c80319c"  # a W3C trace id: both attempts of one feature


def as_json(server, *args: str) -> dict:
    return json.loads(server.cli(*args, "--json", check=True).stdout)


def test_the_history_commands_from_a_shell(muxd_server):
    s = muxd_server
    start_fake_agent(s, "worker")
    done = s.cli("submit", "-t", "worker", "add a flag", "--wait", "--trace-id", FEAT_TRACE, "--attempt", "1")
    assert done.returncode == 0 and "success" in done.stdout and "add a flag" in done.stdout
    retried = as_json(s, "submit", "-t", "worker", "add a flag again", "--wait", "--trace-id", FEAT_TRACE,
                      "--attempt", "2")
    assert retried["status"] == "success" and retried["attempt"] == 2

    failed = s.cli("run", "--wait", "--", "sh", "-c", "echo building; exit 3")
    assert failed.returncode == 3 and "failed (exit 3)" in failed.stderr and failed.stdout == "building\n"
    passed = s.cli("run", "--wait", "--", "true")
    assert passed.returncode == 0 and "success" in passed.stderr
    # A bash pane muxd started writes prompt marks: `run -t` types into it and reads the status.
    shell = s.cli("new-session", "-d", "-P", "-s", "sh", check=True).stdout.strip()
    wait_until(lambda: s.cli("run", "-t", shell, "--wait", "--", "true").returncode == 0
               or None, timeout=15, interval=0.5, message="a command typed into the integrated shell")
    typed = s.cli("run", "-t", shell, "--wait", "--", "ls /no/such/dir")
    assert typed.returncode == 2, typed.stdout + typed.stderr

    table = s.cli("history", check=True).stdout
    assert "worker" in table and "add a flag" in table and "exit_status" in table
    rows = as_json(s, "history", "--agent", "worker", "--since", "1h")["executions"]
    assert [r["message"] for r in rows] == ["add a flag again", "add a flag"]
    assert as_json(s, "history", "--status", "failed")["total"] == 2
    assert [r["attempt"] for r in as_json(s, "history", "--trace", FEAT_TRACE)["executions"]] == [2, 1]

    shown = s.cli("show", rows[0]["id"], "--transcript", check=True).stdout
    assert "add a flag again" in shown and "transcript:" in shown
    failures = as_json(s, "failures")
    # Two commands failing two ways: two patterns.
    assert len(failures["failures"]) == 2 and [p["count"] for p in failures["error_patterns"]] == [1, 1]
    stats = s.cli("stats", check=True).stdout
    assert "worker" in stats and "100.0%" in stats

    keyed = as_json(s, "submit", "-t", "worker", "once", "--idempotency-key", "k-1", "--wait")
    assert as_json(s, "submit", "-t", "worker", "once", "--idempotency-key", "k-1")["id"] == keyed["id"]
    reused = s.cli("submit", "-t", "worker", "twice", "--idempotency-key", "k-1")
    assert reused.returncode != 0 and reused.stderr.strip().splitlines() == [
        f"muxd: idempotency key 'k-1' already names execution {keyed['id']} on {keyed['pane_id']}, sent with "
        "another message: a new prompt needs a new key"], reused.stderr
    held = as_json(s, "submit", "-t", "worker", "tool")
    assert s.cli("cancel", held["id"], check=True).stdout.split() == [held["id"], "cancelled"]


def test_bad_history_input_gets_one_line(muxd_server):
    s = muxd_server
    for args, words in ((("history", "--since", "yesterday"), "--since must be an ISO 8601 time"),
                        (("show", "exec_1_00000000"), "no execution exec_1_00000000"),
                        (("cancel", "exec_1_00000000"), "no execution"),
                        (("history", "--limit", "0"), "limit must be between 1 and 100"),
                        (("submit", "-t", "nope", "hi"), "no sessions"),
                        (("run", "--"), "needs a command")):
        out = s.cli(*args)
        assert out.returncode != 0 and words in out.stderr, (args, out.stderr)
        assert len(out.stderr.strip().splitlines()) == 1, out.stderr


def test_a_damaged_transcript_is_one_typed_line_and_the_history_goes_on(muxd_server):
    s = muxd_server
    ran = json.loads(s.cli("run", "--wait", "--json", "--", "sh", "-c", "echo built").stdout)
    assert "built" in s.cli("show", ran["id"], "--transcript", check=True).stdout
    import sqlite3

    with sqlite3.connect(s.env["MUXD_DB"]) as db:  # a row whose bytes were damaged on the disk
        assert db.execute("UPDATE execution_transcripts SET data = x'28b52ffd00' WHERE execution_id = ?",
                          (ran["id"],)).rowcount == 1
    shown = s.cli("show", ran["id"], "--transcript")
    assert shown.returncode != 0 and shown.stdout == ""
    assert shown.stderr.strip().splitlines() == [shown.stderr.strip()] and ran["id"] in shown.stderr
    assert "transcript" in shown.stderr and "Traceback" not in shown.stderr
    assert as_json(s, "show", ran["id"])["execution"]["status"] == "success"  # the record itself still reads


def test_a_turns_tokens_are_the_most_its_spinner_showed(muxd_server):
    # The daemon gives the history only the last of a run of states that move the counters on
    # (issue 29); what it records is still the most the agent showed, in every state it published.
    s = muxd_server
    pane = start_fake_agent(s, "counter", env={"MUXD_FAKE_THINK_S": "4"})
    events: list[object] = []

    async def turn() -> dict:
        client = await s.client(on_event=events.append)
        try:
            await client.call(Subscribe)
            done = await asyncio.to_thread(s.cli, "submit", "-t", "counter", "count", "--wait", "--json")
            return json.loads(done.stdout)
        finally:
            await client.close()

    done = asyncio.run(turn())
    shown = [e.state.session.tokens_used for e in events if isinstance(e, AgentStateChanged)
             and e.pane_id == pane and e.state.activity.state == "Thinking"]
    assert len(shown) >= 2 and shown == sorted(shown), shown  # a run the history was given the last of
    assert done["status"] == "success" and done["tokens_used"] == max(shown)
