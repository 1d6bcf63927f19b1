"""`muxd task run`: muxd as the worker loop of agent panes (fake agent CLIs here; the real ones
in test_agents_real_tasks.py). Panes on one plan share its queue; each task is a prompt
execution linked to it; a failed check comes back as a prompt; a failed turn releases it."""

from __future__ import annotations

import json

from muxd.testing.fake_agent_panes import FAKE_AGENT, start_fake_agent
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until


def tasks(server: MuxdTestServer, *args: str) -> dict[str, dict]:
    """Read back in this process (waits poll it: a CLI a look is a load of its own)."""
    listed = json.loads(server.run_here("task", "ls", "--json", "--limit", "100", *args, check=True).stdout)
    return {t["title"]: t for t in listed["tasks"]}


def show(server: MuxdTestServer, task_id: str) -> dict:
    return json.loads(server.run_here("task", "show", task_id, "--json", check=True).stdout)


def test_two_panes_share_a_plan(muxd_server, tmp_path):
    server = muxd_server
    a, b = start_fake_agent(server, "alpha"), start_fake_agent(server, "beta")
    titles = [f"write module {n}" for n in range(4)]
    for title in titles:
        server.cli("task", "add", title, "--plan", "build", check=True)
    server.cli("task", "add", "not this plan", "--plan", "other", check=True)
    check = (f"if [ -f {tmp_path}/seen ]; then echo ok; "
             f"else touch {tmp_path}/seen; echo 'lint: E501 line too long'; exit 1; fi")
    server.cli("task", "add", "checked module", "--plan", "build", "-p", "900", "--verify-cmd", check, check=True)
    out = server.cli("task", "run", "-t", a, "--plan", "build", check=True).stdout
    assert f"{a} plan=build as agent:{a}" in out
    server.cli("task", "run", "-t", b, "--plan", "build", check=True)
    wait_until(lambda: all(tasks(server, "--plan", "build")[t]["state"] == "done" for t in titles + ["checked module"]),
               timeout=90, message="every task of the plan done")
    assert tasks(server)["not this plan"]["state"] == "ready"
    holders = {t["claimed_by"] for t in tasks(server, "--plan", "build").values()}
    assert holders == {f"agent:{a}", f"agent:{b}"}  # both panes worked the queue
    for title in titles:
        task = tasks(server)[title]
        prompts = [e for e in show(server, task["id"])["executions"] if e["kind"] == "prompt"]
        assert len(prompts) == 1 and prompts[0]["status"] == "success"
        assert prompts[0]["triggered_by"] == "schedule" and prompts[0]["task_id"] == task["id"]
        assert title in prompts[0]["message"]
    # The failed check came back to the same agent as a prompt carrying its output.
    checked = show(server, tasks(server)["checked module"]["id"])
    prompts = sorted((e for e in checked["executions"] if e["kind"] == "prompt"), key=lambda e: e["started_at"])
    assert len(prompts) == 2 and "E501 line too long" in prompts[1]["message"]
    assert len({e["pane_id"] for e in prompts}) == 1
    checks = [e for e in checked["executions"] if e["kind"] == "command"]
    assert sorted(e["status"] for e in checks) == ["failed", "success"]
    # The checks are their author's commands (the owner's, who added the task), not the worker's.
    assert {e["principal"] for e in checks} == {"system"}
    assert {e["principal"] for e in prompts} == {f"agent:{prompts[0]['pane_id']}"}


def test_a_failed_turn_releases_the_task(muxd_server):
    server = muxd_server
    pane = start_fake_agent(server, "worker")
    # "tool": the fake agent asks for approval and its turn runs on; killing the pane fails it.
    server.cli("task", "add", "tool", check=True)
    server.cli("task", "run", "-t", pane, check=True)
    wait_until(lambda: tasks(server)["tool"]["state"] == "in_progress", timeout=20, message="the task worked on")
    server.cli("kill-pane", "-t", pane, check=True)
    released = wait_until(lambda: (t := tasks(server)["tool"])["state"] == "ready" and t, timeout=20,
                          message="the task released")
    assert released["claimed_by"] is None and "execution" in released["last_error"]
    assert [e["kind"] for e in show(server, released["id"])["events"]][-1] == "released"


def test_a_check_that_never_passes_is_given_up(tmp_path):
    """The agent gets max_attempts tries at a failing check per claim, then the task is released
    (failed after max_attempts claims) and the pane goes on with the queue."""
    server = MuxdTestServer(env={"MUXD_TASK_MAX_ATTEMPTS": "2"}).start()
    try:
        pane = start_fake_agent(server, "worker")
        server.cli("task", "add", "never passes", "-p", "10", "--verify-cmd", "echo 'still wrong'; exit 1",
                   check=True)
        server.cli("task", "add", "afterwards", "-p", "20", check=True)
        server.cli("task", "run", "-t", pane, check=True)
        wait_until(lambda: tasks(server)["afterwards"]["state"] == "done", timeout=60,
                   message="the next task done")
        given_up = tasks(server)["never passes"]
        assert given_up["state"] == "failed" and given_up["attempts"] == 2, given_up
        assert given_up["last_error"] == "its check failed 2 times in a row", given_up
        shown = show(server, given_up["id"])
        assert [e["kind"] for e in shown["executions"]].count("prompt") == 4  # two claims, two tries each
        assert {e["status"] for e in shown["executions"] if e["kind"] == "command"} == {"failed"}
        assert [e["kind"] for e in shown["events"] if e["kind"] in ("released", "failed")] == ["released", "failed"]
    finally:
        server.stop()


def test_a_bare_shell_gets_no_task_until_an_agent_runs_in_it(muxd_server):
    server = muxd_server
    pane = server.cli("new-session", "-d", "-P", "-s", "sh", "--", "bash", "--norc", check=True).stdout.strip()
    server.cli("task", "add", "write the docs", check=True)
    server.cli("task", "run", "-t", pane, check=True)
    server.cli("send-keys", "-t", pane, " ".join(FAKE_AGENT), "Enter", check=True)  # the agent starts in the shell
    done = wait_until(lambda: (t := tasks(server)["write the docs"])["state"] == "done" and t, timeout=30,
                      message="the task done by the agent")
    [prompt] = show(server, done["id"])["executions"]
    assert prompt["agent_type"] == "claude" and prompt["message"] == "Task: write the docs"
