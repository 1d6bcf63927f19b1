"""The task tools over the real MCP SDK client (stdio): the worker loop of seed 001 with its
knowledge digest, each error code, the scopes, and each verification contract run for real."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys

from test_access import new_shell, pane_token

from muxd.testing.mcp_http import create_token
from muxd.testing.mcp_stdio import call_error, call_ok, mcp_session
from muxd.testing.patience import stretched
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import async_wait_until


async def _worker_loop(server: MuxdTestServer) -> None:
    worker = create_token(server, "execute_advanced", "worker")
    async with mcp_session(server) as boss, mcp_session(server, MUXD_TOKEN=worker) as me:
        first = await call_ok(boss, "create_task", title="Fix the flaky login test", priority=10,
                              description="The login test fails one run in ten on CI.")
        later = await call_ok(boss, "create_task", title="Speed up the login test", priority=20,
                              description="Same login test, now slow.", plan="auth")
        urgent_later = await call_ok(boss, "create_task", title="Another thing", priority=20, plan="auth")
        nxt = await call_ok(me, "get_next_actionable")
        assert [t["taskId"] for t in nxt["tasks"]] == [first["taskId"], later["taskId"], urgent_later["taskId"]]
        assert nxt["tasks"][0]["knowledge"] == {"references": []}
        assert [t["taskId"] for t in (await call_ok(me, "get_next_actionable", planId="auth", limit=1))["tasks"]] \
            == [later["taskId"]]
        assert (await call_ok(me, "get_next_actionable", priorityLte=10))["count"] == 1

        claimed = await call_ok(me, "claim_task", taskId=first["taskId"])
        assert claimed["state"] == "claimed" and claimed["claimedBy"] == "token:worker" and claimed["leaseSec"] == 900
        again = await call_ok(me, "claim_task", taskId=first["taskId"], leaseSec=120)
        assert again["claimed"] is False and again["leaseExpiresAt"] == claimed["leaseExpiresAt"]  # idempotent
        going = await call_ok(me, "update_task_status", taskId=first["taskId"], status="in_progress",
                              context={"branch": "fix-login"}, externalRef="abc123")
        assert going["state"] == "in_progress" and going["context"] == {"branch": "fix-login"}
        done = await call_ok(me, "complete_task", taskId=first["taskId"], output={"summary": "waited for the DB"},
                             learnings=[{"title": "login test race",
                                         "content": "The login test is flaky because the session table is "
                                                    "created after the first request; wait for the migration.",
                                         "tags": ["tests", "login"]}])
        assert done["state"] == "done" and done["verificationStatus"] == "skipped"
        assert done["verificationEtaSec"] == 0 and len(done["knowledgeIds"]) == 1

        # The next task about the login test comes with what the first one learned.
        digest = (await call_ok(me, "get_next_actionable"))["tasks"][0]
        assert digest["taskId"] == later["taskId"]
        refs = digest["knowledge"]["references"]
        assert [r["id"] for r in refs] == done["knowledgeIds"] and refs[0]["score"] >= 0.5
        assert refs[0]["sourceTaskId"] == first["taskId"]
        found = await call_ok(me, "search_knowledge", query="flaky login")
        assert found["entries"][0]["id"] == done["knowledgeIds"][0]

        shown = await call_ok(boss, "get_task", taskId=first["taskId"])
        assert [e["kind"] for e in shown["events"]] == ["created", "claimed", "status", "completed"]
        assert shown["output"] == {"summary": "waited for the DB"} and shown["externalRef"] == "abc123"


def test_the_worker_loop_with_its_knowledge_digest(muxd_server):
    asyncio.run(_worker_loop(muxd_server))


async def _errors(server: MuxdTestServer) -> None:
    a, b = create_token(server, "execute_advanced", "a"), create_token(server, "execute_advanced", "b")
    async with mcp_session(server) as boss, mcp_session(server, MUXD_TOKEN=a) as alice, \
            mcp_session(server, MUXD_TOKEN=b) as bob:
        base = await call_ok(boss, "create_task", title="base")
        blocked = await call_ok(boss, "create_task", title="after base", depends_on=[base["taskId"]])
        assert (await call_ok(bob, "get_next_actionable"))["count"] == 1  # the dependent one is not offered
        assert "task.not_actionable" in await call_error(bob, "claim_task", taskId=blocked["taskId"])
        await call_ok(alice, "claim_task", taskId=base["taskId"])
        assert "task.already_claimed" in await call_error(bob, "claim_task", taskId=base["taskId"])
        assert "task.already_claimed" in await call_error(bob, "update_task_status", taskId=base["taskId"],
                                                          status="in_progress")
        assert "task.already_claimed" in await call_error(bob, "complete_task", taskId=base["taskId"])
        await call_ok(alice, "complete_task", taskId=base["taskId"])
        assert "task.invariant_violated" in await call_error(alice, "update_task_status", taskId=base["taskId"],
                                                             status="in_progress")
        assert "task.invariant_violated" in await call_error(alice, "claim_task", taskId=base["taskId"])
        await call_ok(bob, "claim_task", taskId=blocked["taskId"])  # its dependency is done now
        # An open blocking review keeps a task off the queue until approved.
        held = await call_ok(boss, "create_task", title="held back")
        await call_ok(boss, "review_task", taskId=held["taskId"], verdict="comment", comment="wait for legal",
                      blocking=True)
        assert "task.not_actionable" in await call_error(alice, "claim_task", taskId=held["taskId"])
        assert (await call_ok(alice, "get_next_actionable"))["count"] == 0
        await call_ok(boss, "review_task", taskId=held["taskId"], verdict="approve")
        await call_ok(alice, "claim_task", taskId=held["taskId"])
        # Bounds, as the seed gives them.
        assert "not_found" in await call_error(alice, "claim_task", taskId="00000000-0000-0000-0000-000000000000")
        for tool, args, field in (("claim_task", {"taskId": held["taskId"], "leaseSec": 59}, "leaseSec"),
                                  ("claim_task", {"taskId": held["taskId"], "leaseSec": 3601}, "leaseSec"),
                                  ("get_next_actionable", {"limit": 21}, "limit"),
                                  ("get_next_actionable", {"limit": 0}, "limit"),
                                  ("get_next_actionable", {"priorityLte": 1001}, "priorityLte"),
                                  ("create_task", {"title": "x", "priority": -1}, "priority"),
                                  ("complete_task", {"taskId": held["taskId"],
                                                     "learnings": [{"content": "x"}] * 21}, "learnings")):
            text = await call_error(alice, tool, **args)
            assert "bad_request" in text and field in text, text


def test_each_error_code(muxd_server):
    asyncio.run(_errors(muxd_server))


async def _scopes(server: MuxdTestServer) -> None:
    reader = create_token(server, "execute_advanced", "dashboard", "--scope", "tasks:read")
    viewer = create_token(server, "view_only", "viewer")
    listed = json.loads(server.cli("token", "ls", "--json", check=True).stdout)
    assert {t["name"]: t["scopes"] for t in listed} == {"dashboard": ["tasks:read"], "viewer": ["tasks:read"]}
    async with mcp_session(server) as boss, mcp_session(server, MUXD_TOKEN=reader) as dashboard, \
            mcp_session(server, MUXD_TOKEN=viewer) as view:
        task = await call_ok(boss, "create_task", title="scoped")
        assert (await call_ok(dashboard, "get_next_actionable"))["count"] == 1
        assert (await call_ok(view, "list_tasks"))["total"] == 1
        text = await call_error(dashboard, "claim_task", taskId=task["taskId"])
        assert "forbidden" in text and "needs the tasks:write scope" in text
        assert "forbidden" in await call_error(view, "claim_task", taskId=task["taskId"])
    # A pane's own token gets both scopes by default; MUXD_AGENT_SCOPES narrows them.
    pane = server.cli("new-session", "-d", "-P", check=True).stdout.strip()
    agent = next(t for t in json.loads(server.cli("token", "ls", "--json", check=True).stdout)
                 if t["name"] == f"agent:{pane}")
    assert agent["scopes"] == ["tasks:read", "tasks:write"]


def test_scopes_decide_who_reads_and_who_works_the_queue(muxd_server):
    asyncio.run(_scopes(muxd_server))


def test_agent_scopes_are_configurable():
    server = MuxdTestServer(env={"MUXD_AGENT_SCOPES": "tasks:read"}).start()
    try:
        pane = server.cli("new-session", "-d", "-P", check=True).stdout.strip()
        agent = next(t for t in json.loads(server.cli("token", "ls", "--json", check=True).stdout)
                     if t["name"] == f"agent:{pane}")
        assert agent["scopes"] == ["tasks:read"]
    finally:
        server.stop()


async def _task(session, task_id: str) -> dict:
    return await call_ok(session, "get_task", taskId=task_id)


async def _commands_check(server: MuxdTestServer, tmp) -> None:
    # Fails the first time (printing why), passes the second.
    check = (f"if [ -f {tmp}/seen ]; then echo all green; "
             f"else touch {tmp}/seen; echo 'FAIL test_login: expected 200, got 500'; exit 3; fi")
    async with mcp_session(server) as boss:
        worker = create_token(server, "execute_advanced", "builder")
        async with mcp_session(server, MUXD_TOKEN=worker) as me:
            task = await call_ok(boss, "create_task", title="make login pass",
                                 verification={"kind": "commands", "commands": [check], "cwd": str(tmp)})
            await call_ok(me, "claim_task", taskId=task["taskId"])
            first = await call_ok(me, "complete_task", taskId=task["taskId"])
            assert first["state"] == "needs_review" and first["verificationEtaSec"] == 30
            back = await async_wait_until(lambda: _back_in_progress(me, task["taskId"]), timeout=30, interval=0.25,
                                          message="the failed check sends the task back")
            assert "expected 200, got 500" in back["feedback"] and back["verification"]["exitCode"] == 3
            assert back["claimedBy"] == "token:builder" and back["leaseExpiresAt"] is not None
            await call_ok(me, "complete_task", taskId=task["taskId"])
            done = await async_wait_until(lambda: _in_state(me, task["taskId"], "done"), timeout=30, interval=0.25,
                                          message="the second check passes")
            assert done["verification"]["status"] == "passed"
            # Each check ran as an execution linked to the task, which the holder may read.
            runs = [e for e in done["executions"] if e["status"] in ("failed", "success")]
            assert sorted(e["status"] for e in runs) == ["failed", "success"]
            history = await call_ok(me, "list_recent_executions")
            assert {e["id"] for e in history["executions"]} >= {e["id"] for e in runs}
    assert "verify-" not in server.cli("list-windows", "-a", check=True).stdout  # the check windows are gone


async def _back_in_progress(session, task_id: str):
    task = await _task(session, task_id)
    return task if task["state"] == "in_progress" and task["verification"]["status"] == "failed" else None


async def _in_state(session, task_id: str, state: str):
    task = await _task(session, task_id)
    return task if task["state"] == state else None


def test_a_commands_check_runs_as_an_execution_and_sends_failures_back(muxd_server, tmp_path):
    asyncio.run(_commands_check(muxd_server, tmp_path))


def _cli_as(server: MuxdTestServer, token: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`muxd ARGS…` acting as `token` ($MUXD_CLI_TOKEN), as a program in a pane would."""
    return subprocess.run([sys.executable, "-m", "muxd", "-L", server.name, *args],
                          env={**server.env, "MUXD_CLI_TOKEN": token}, capture_output=True, text=True, timeout=stretched(30))


def test_who_may_not_run_a_command_may_not_write_a_commands_check(muxd_server, tmp_path):
    """A pane's own token may not `run`; no more may it have muxd run `id > F` as a task's check
    (the attack: create the task, claim it, complete it, and the check ran in a new window)."""
    server = muxd_server
    pane = new_shell(server)
    agent = pane_token(server, pane)
    scoped_admin = create_token(server, "admin", "scoped-admin", "--pane", pane)
    planted = tmp_path / "F"
    windows = server.cli("list-windows", "-a", check=True).stdout
    for token in (agent, scoped_admin):
        run = _cli_as(server, token, "run", "--", "id")
        assert run.returncode == 1 and "muxd: " in run.stderr, run.stderr
        refusal = run.stderr.strip().removeprefix("muxd: ")  # run's own words
        add = _cli_as(server, token, "task", "add", "pwn", "--verify-cmd", f"id > {planted}")
        assert add.returncode == 1 and refusal in add.stderr and "commands verification" in add.stderr, add.stderr

        async def over_mcp(token: str = token, refusal: str = refusal) -> None:
            async with mcp_session(server, MUXD_TOKEN=token) as me:
                text = await call_error(me, "create_task", title="pwn",
                                        verification={"kind": "commands", "commands": [f"id > {planted}"]})
                assert text.startswith("forbidden: ") and refusal in text, text
                # What it may still write: a check muxd does not run from its words.
                await call_ok(me, "create_task", title="harmless", verification={"kind": "manual"})

        asyncio.run(over_mcp())
    listed = json.loads(server.cli("task", "ls", "--json", check=True).stdout)
    assert [t["title"] for t in listed["tasks"]] == ["harmless", "harmless"]  # no commands task was stored
    assert server.cli("list-windows", "-a", check=True).stdout == windows and not planted.exists()
    denied = json.loads(server.cli("history", "--json", check=True).stdout)["executions"]
    assert denied == []  # nothing ran: no `run`, no check


async def _authored_check(server: MuxdTestServer, tmp, admin: str, worker: str) -> None:
    by_cli = _cli_as(server, admin, "task", "add", "check by cli", "--verify-cmd", f"echo cli >> {tmp}/ran")
    assert by_cli.returncode == 0, by_cli.stderr
    async with mcp_session(server, MUXD_TOKEN=admin) as boss, mcp_session(server, MUXD_TOKEN=worker) as me:
        by_mcp = await call_ok(boss, "create_task", title="check by mcp",
                               verification={"kind": "commands", "commands": [f"echo mcp >> {tmp}/ran"]})
        for task_id in (by_cli.stdout.split()[0], by_mcp["taskId"]):
            await call_ok(me, "claim_task", taskId=task_id)
            assert (await call_ok(me, "complete_task", taskId=task_id))["state"] == "needs_review"
            done = await async_wait_until(lambda: _in_state(boss, task_id, "done"), timeout=30, interval=0.25,
                                          message="the admin's check passes")
            assert done["claimedBy"].startswith("agent:") and done["createdBy"] == "token:boss"
            # The check's execution is its author's (who wrote the command), linked to the task.
            runs = json.loads(server.cli("history", "--task", task_id, "--json", check=True).stdout)["executions"]
            assert [(e["kind"], e["principal"], e["triggered_by"], e["status"]) for e in runs] == \
                [("command", "token:boss", "schedule", "success")]
    assert sorted((tmp / "ran").read_text().split()) == ["cli", "mcp"]


def test_an_admins_commands_check_runs_as_the_admins_when_a_worker_completes_it(muxd_server, tmp_path):
    admin = create_token(muxd_server, "admin", "boss")
    worker = pane_token(muxd_server, new_shell(muxd_server))  # a pane's own token: may not `run`
    asyncio.run(_authored_check(muxd_server, tmp_path, admin, worker))


async def _manual_and_ci(server: MuxdTestServer) -> None:
    async with mcp_session(server) as boss:
        worker = create_token(server, "execute_advanced", "w")
        async with mcp_session(server, MUXD_TOKEN=worker) as me:
            manual = await call_ok(boss, "create_task", title="needs a person", verification={"kind": "manual"})
            await call_ok(me, "claim_task", taskId=manual["taskId"])
            out = await call_ok(me, "complete_task", taskId=manual["taskId"])
            assert out["state"] == "needs_review" and out["verificationEtaSec"] is None
            # A worker does not approve its own work.
            assert "forbidden" in await call_error(me, "review_task", taskId=manual["taskId"], verdict="approve")
            short = manual["taskId"][:8]
            rejected = server.cli("task", "reject", short, "-m", "add a test", check=True).stdout
            assert rejected.split()[1] == "in_progress"
            assert (await _task(me, manual["taskId"]))["feedback"] == "add a test"
            await call_ok(me, "complete_task", taskId=manual["taskId"])
            assert server.cli("task", "approve", short, check=True).stdout.split()[1] == "done"

            failing = await call_ok(boss, "create_task", title="doomed", verification={"kind": "manual"})
            await call_ok(me, "claim_task", taskId=failing["taskId"])
            await call_ok(me, "update_task_status", taskId=failing["taskId"], status="needs_review",
                          reason="I am stuck")
            assert server.cli("task", "reject", failing["taskId"], "--fail", "-m", "not needed",
                              check=True).stdout.split()[1] == "failed"

            pr = await call_ok(boss, "create_task", title="ship it", verification={"kind": "github_pr"})
            await call_ok(me, "claim_task", taskId=pr["taskId"])
            await call_ok(me, "update_task_status", taskId=pr["taskId"], status="in_progress",
                          externalRef="https://example.com/pull/7")
            assert (await call_ok(me, "complete_task", taskId=pr["taskId"]))["verificationEtaSec"] == 60
            done = await async_wait_until(lambda: _in_state(me, pr["taskId"], "done"), timeout=30, interval=0.25,
                                          message="the scripted PR check passes")
            assert done["verification"]["status"] == "passed"
            check = next(e for e in done["executions"])
            assert "https://example.com/pull/7" in (await call_ok(
                boss, "get_execution_result", agent_name=check["agent_name"], execution_id=check["id"]))[
                "execution"]["message"]


def test_manual_review_and_a_scripted_pr_check(tmp_path):
    checker = tmp_path / "pr-checks"
    checker.write_text("#!/bin/sh\necho \"checks of $1: 3 passed\"\n[ \"$1\" = https://example.com/pull/7 ]\n")
    checker.chmod(0o755)
    server = MuxdTestServer(env={"MUXD_VERIFY_GITHUB_PR": f"{checker} {{externalRef}}"}).start()
    try:
        asyncio.run(_manual_and_ci(server))
    finally:
        server.stop()


async def _expiry(server: MuxdTestServer) -> None:
    worker = create_token(server, "execute_advanced", "sleepy")
    async with mcp_session(server) as boss, mcp_session(server, MUXD_TOKEN=worker) as me:
        task = await call_ok(boss, "create_task", title="forgotten")
        await call_ok(me, "claim_task", taskId=task["taskId"], leaseSec=60)
        # The lease runs out (moved into the past in the daemon's own database file).
        with sqlite3.connect(server.env["MUXD_DB"]) as db:
            db.execute("UPDATE tasks SET lease_expires_at = lease_expires_at - 3600 WHERE id = ?", (task["taskId"],))
        back = await async_wait_until(lambda: _in_state(boss, task["taskId"], "ready"), timeout=10, interval=0.25,
                                      message="the sweeper returns the task")
        expired = [e for e in back["events"] if e["kind"] == "lease_expired"]
        assert len(expired) == 1 and back["claimedBy"] is None
        assert "task.already_claimed" in await call_error(me, "update_task_status", taskId=task["taskId"],
                                                          status="in_progress")
        again = await call_ok(me, "claim_task", taskId=task["taskId"])
        assert again["claimed"] is True and again["attempts"] == 2


def test_an_expired_lease_returns_the_task_to_ready(muxd_server):
    asyncio.run(_expiry(muxd_server))


async def _quota(server: MuxdTestServer) -> None:
    worker = create_token(server, "execute_advanced", "learner")
    async with mcp_session(server) as boss, mcp_session(server, MUXD_TOKEN=worker) as me:
        first = await call_ok(boss, "create_task", title="learn a lot")
        await call_ok(me, "claim_task", taskId=first["taskId"])
        done = await call_ok(me, "complete_task", taskId=first["taskId"],
                             learnings=[{"content": "one thing"}, {"content": "another thing"}])
        # What fits in the quota (1) is stored, the rest is not, and the answer says which and why.
        assert done["state"] == "done" and len(done["knowledgeIds"]) == 1
        assert done["learnings"] == {"given": 2, "stored": 1, "notStored": 1, "notStoredReason":
                                     "1 of 2 learnings not stored: token:learner has stored 0 of its 1 knowledge "
                                     "entries (the knowledge_stored quota)"}
        found = await call_ok(me, "search_knowledge", query="thing")
        assert [e["content"] for e in found["entries"]] == ["one thing"]
        # At the quota: a check still runs; the task is not held back for its learnings.
        checked = await call_ok(boss, "create_task", title="checked", verification={"kind": "manual"})
        await call_ok(me, "claim_task", taskId=checked["taskId"])
        out = await call_ok(me, "complete_task", taskId=checked["taskId"], learnings=[{"content": "more"}])
        assert out["state"] == "needs_review" and out["knowledgeIds"] == []
        assert out["learnings"]["notStored"] == 1 and "has stored 1 of its 1" in out["learnings"]["notStoredReason"]
        shown = await _task(boss, checked["taskId"])
        assert shown["events"][-1]["detail"] == {"verification": "manual", "knowledge": 0, "knowledge_not_stored": 1}


def test_learnings_past_the_knowledge_quota_are_not_stored_and_the_task_completes():
    server = MuxdTestServer(env={"MUXD_KNOWLEDGE_QUOTA": "1"}).start()
    try:
        asyncio.run(_quota(server))
    finally:
        server.stop()


async def _broken_search(server: MuxdTestServer) -> None:
    async with mcp_session(server) as session:
        task = await call_ok(session, "create_task", title="still offered")
        with sqlite3.connect(server.env["MUXD_DB"]) as db:
            db.execute("DROP TABLE knowledge_fts")  # the full-text index is gone
        offered = await call_ok(session, "get_next_actionable")
        assert [t["taskId"] for t in offered["tasks"]] == [task["taskId"]]
        assert offered["tasks"][0]["knowledge"] == {"references": [], "searchFailed": True}
        assert "store_unavailable" in await call_error(session, "search_knowledge", query="anything")


def test_a_failed_knowledge_search_degrades_to_no_references(muxd_server):
    asyncio.run(_broken_search(muxd_server))


async def _newest_first(server: MuxdTestServer) -> None:
    async with mcp_session(server) as boss:
        urgent = await call_ok(boss, "create_task", title="urgent", priority=10)
        later = await call_ok(boss, "create_task", title="later", priority=20)
        await call_ok(boss, "claim_task", taskId=later["taskId"])  # the latest move
        assert [t["taskId"] for t in (await call_ok(boss, "list_tasks"))["tasks"]] == \
            [urgent["taskId"], later["taskId"]]
        assert [t["taskId"] for t in (await call_ok(boss, "list_tasks", newestFirst=True))["tasks"]] == \
            [later["taskId"], urgent["taskId"]]


def test_tasks_list_newest_first_by_cli_and_mcp(muxd_server):
    """The web board's order (the latest move first) is `task ls --newest-first` and list_tasks'
    newestFirst; queue order stays the default."""
    asyncio.run(_newest_first(muxd_server))

    def titles(*flags: str) -> list[str]:
        return [t["title"] for t in json.loads(muxd_server.cli("task", "ls", "--json", *flags, check=True).stdout)["tasks"]]

    assert titles() == ["urgent", "later"]
    assert titles("--newest-first") == ["later", "urgent"]
