"""/metrics in Prometheus' conventions (issue 27, item 13): a real daemon runs real executions (a
fake agent's turn, commands that succeed and fail) and real tasks; `muxd mcp --http` serves the
scrape, and `promtool check metrics` (Debian's `prometheus` package) must have nothing to say
about it, nor about `get_tool_metrics(format="prometheus")`, which says the same."""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess

import httpx2
import pytest

from muxd.daemon.work.work_metrics import ExecutionMetrics
from muxd.executions.record import Execution
from muxd.prometheus import Exposition
from muxd.testing.fake_agent_panes import start_fake_agent
from muxd.testing.mcp_http import HttpMcp, create_token
from muxd.testing.mcp_stdio import call_ok
from muxd.testing.patience import patient_wait_for, stretched
from muxd.testing.server import MuxdTestServer

PROMTOOL = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(PROMTOOL is None, reason="promtool is not installed (Debian package "
                                                             "`prometheus`; .ci/run installs it)")
_SAMPLE = re.compile(r"^(?P<series>[a-zA-Z_:][\w:]*(?:\{[^}]*\})?) (?P<value>\S+)$")


def promtool_complaints(text: str) -> str:
    """What `promtool check metrics` says about `text` (empty: nothing); its exit status counts too."""
    assert PROMTOOL is not None
    checked = subprocess.run([PROMTOOL, "check", "metrics"], input=text, capture_output=True, text=True,
                             timeout=stretched(60))
    said = (checked.stdout + checked.stderr).strip()
    return said or ("" if checked.returncode == 0 else f"exit status {checked.returncode}")


def samples(text: str) -> dict[str, float]:
    found = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            match = _SAMPLE.match(line)
            assert match, f"not a sample line: {line!r}"
            found[match["series"]] = float(match["value"])
    return found


def families(text: str) -> dict[str, str]:
    return {m[1]: m[2] for m in re.finditer(r"^# TYPE (\S+) (\S+)$", text, re.MULTILINE)}


async def _work_then_scrape(server: MuxdTestServer, mcp: HttpMcp, admin: str, scoped: str) -> dict:
    async with mcp.session(admin) as session:
        tools = [t["name"] for t in (await call_ok(session, "list_tools"))["tools"]]
        turn = await call_ok(session, "send_task", pane_id="worker", message="summarise the repo", wait=True,
                             wait_timeout_s=30)
        first = await call_ok(session, "create_task", title="first")
        second = await call_ok(session, "create_task", title="second")
        await call_ok(session, "create_task", title="third")
        await call_ok(session, "claim_task", taskId=first["taskId"])
        assert (await call_ok(session, "complete_task", taskId=first["taskId"]))["state"] == "done"
        await call_ok(session, "claim_task", taskId=second["taskId"])
        via_tool = (await call_ok(session, "get_tool_metrics", format="prometheus"))["text"]
    async with httpx2.AsyncClient(timeout=stretched(30)) as http:
        scrape = await http.get(mcp.metrics_url, headers={"Authorization": f"Bearer {admin}"})
        scoped_scrape = await http.get(mcp.metrics_url, headers={"Authorization": f"Bearer {scoped}"})
    assert scrape.status_code == 200 and scoped_scrape.status_code == 200, (scrape.text, scoped_scrape.text)
    return {"tools": tools, "turn": turn["execution"], "via_tool": via_tool, "text": scrape.text,
            "scoped": scoped_scrape.text}


@needs_promtool
def test_a_real_scrape_after_executions_and_tasks_is_promtool_clean(muxd_server: MuxdTestServer) -> None:
    pane = start_fake_agent(muxd_server, "worker")
    for script in ("exit 0", "exit 3"):
        muxd_server.cli("run", "--wait", "--timeout", "30", "--", "bash", "-c", script)
    admin = create_token(muxd_server, "admin", "scraper")
    scoped = create_token(muxd_server, "execute_basic", "agentish", "--pane", pane)
    mcp = HttpMcp(muxd_server)
    try:
        seen = asyncio.run(patient_wait_for(_work_then_scrape(muxd_server, mcp, admin, scoped), timeout=120))
    finally:
        mcp.stop()
    text, got = seen["text"], samples(seen["text"])

    assert promtool_complaints(text) == "", text
    assert promtool_complaints(seen["via_tool"]) == ""
    assert families(seen["via_tool"]) == families(text)  # get_tool_metrics says what /metrics says
    assert families(text)["mcp_latency_seconds"] == "histogram"
    assert not any(name.endswith("_ms") or "_ms_" in name for name in families(text))

    # Every registered tool is listed, the ones never called at zero.
    for tool in seen["tools"]:
        assert f'mcp_calls_total{{tool="{tool}"}}' in got, tool
    assert got['mcp_calls_total{tool="kill_pane"}'] == 0
    assert got['mcp_latency_seconds_count{tool="send_task"}'] == 1
    assert 0 < got['mcp_latency_seconds_sum{tool="send_task"}'] < 60  # seconds, not milliseconds

    # Executions: by agent, kind and status, with durations in seconds and the agent's tokens.
    assert got['muxd_executions_total{agent="claude",kind="prompt",status="success"}'] == 1
    commands = {k: v for k, v in got.items() if k.startswith("muxd_executions_total{") and 'kind="command"' in k}
    assert sorted(re.search(r'status="(\w+)"', k)[1] for k, v in commands.items() for _ in range(int(v))) \
        == ["failed", "success"], commands
    turn = seen["turn"]
    assert got['muxd_execution_duration_seconds_count{agent="claude",kind="prompt"}'] == 1
    assert got['muxd_execution_duration_seconds_sum{agent="claude",kind="prompt"}'] == \
        pytest.approx(turn["duration_seconds"], abs=0.01)
    assert got['muxd_execution_tokens_total{agent="claude"}'] == turn["tokens_used"] > 0
    assert families(text)["muxd_execution_cost_usd_total"] == "counter"
    if turn["cost_usd"] is None:  # the fake shows no cost and keeps no session log: unknown, not $0
        assert not [k for k in got if k.startswith(("muxd_execution_cost_usd_total{", "muxd_execution_cost_known"))]
    else:
        assert got[f'muxd_execution_cost_usd_total{{agent="claude",source="{turn["cost_source"]}"}}'] == \
            pytest.approx(turn["cost_usd"])

    # Tasks: the queue by state, and how long the finished one took.
    assert got['muxd_tasks{state="done"}'] == 1 and got['muxd_tasks{state="ready"}'] == 1
    assert got['muxd_tasks{state="claimed"}'] == 1
    assert {k: v for k, v in got.items() if k.startswith("muxd_tasks_held")} == \
        {'muxd_tasks_held{holder="token:scraper",state="claimed"}': 1}
    assert got['muxd_tasks{state="failed"}'] == 0
    assert got['muxd_task_duration_seconds_count{state="done"}'] == 1
    assert got['muxd_task_duration_seconds_bucket{state="done",le="+Inf"}'] == 1

    # A pane-scoped token sees the tool metrics, not the fleet's executions and tasks.
    assert promtool_complaints(seen["scoped"]) == ""
    assert "mcp_calls_total" in seen["scoped"] and "muxd_executions_total" not in seen["scoped"]
    assert "muxd_tasks" not in seen["scoped"]


@needs_promtool
def test_cost_is_a_counter_in_dollars_by_source_with_the_executions_it_covers() -> None:
    metrics = ExecutionMetrics()
    base = dict(pane_id="%1", pane_key="r/%1", agent_name="a", agent_type="aider", status="success",
                started_at=100.0, completed_at=102.5, duration_ms=2500)
    metrics.execution_ended(Execution(id="exec_1_00000001", cost_usd=0.25, tokens_used=1200, **base))
    metrics.execution_ended(Execution(id="exec_1_00000002", cost_usd=0.5, **base))
    metrics.execution_ended(Execution(id="exec_1_00000003", **base))  # its cost unknown: not summed as zero
    out = Exposition()
    metrics.write(out, [Execution(id="exec_1_00000004", pane_id="%2", pane_key="r/%2", agent_name="b",
                                  status="running")])
    text = out.text()
    assert promtool_complaints(text) == "", text
    got = samples(text)
    assert got['muxd_execution_cost_usd_total{agent="aider",source="agent"}'] == 0.75
    assert got['muxd_execution_cost_known_total{agent="aider"}'] == 2
    assert got['muxd_executions_total{agent="aider",kind="prompt",status="success"}'] == 3
    assert got['muxd_execution_tokens_total{agent="aider"}'] == 1200
    assert got['muxd_execution_duration_seconds_bucket{agent="aider",kind="prompt",le="1.0"}'] == 0
    assert got['muxd_execution_duration_seconds_bucket{agent="aider",kind="prompt",le="5.0"}'] == 3
    assert got['muxd_execution_duration_seconds_sum{agent="aider",kind="prompt"}'] == 7.5
    assert got['muxd_executions_active{agent="none",kind="prompt",status="running"}'] == 1


@needs_promtool
def test_promtool_is_strict_enough_to_catch_the_old_names() -> None:
    """The check the scrape passes is not a formality: the names /metrics had before fail it."""
    old = ("# HELP mcp_latency_ms MCP tool call latency in milliseconds.\n# TYPE mcp_latency_ms histogram\n"
           'mcp_latency_ms_bucket{tool="a",le="+Inf"} 1\nmcp_latency_ms_sum{tool="a"} 3.0\n'
           'mcp_latency_ms_count{tool="a"} 1\n')
    assert promtool_complaints(old) == "mcp_latency_ms metric names should not contain abbreviated units"
