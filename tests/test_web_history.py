"""The history pages (muxd/web/pages_history.py): their HTML from hostile records, the filters as
`muxd history` maps them; then in a real browser, filtering the history and opening an execution."""

from __future__ import annotations

import re
import time

import pytest

from muxd.errors import BadRequest
from muxd.executions.record import Execution, ExecutionError
from muxd.store.execution_store import ErrorPattern
from muxd.web.pages_history import (
    HISTORY_PAGE_ROWS, _pages, execution_body, executions_table, history_request, patterns_table,
)

HOSTILE = "<script>alert(1)</script>\"'&"
SAFE = "&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#x27;&amp;"


def hostile_execution(**fields: object) -> Execution:
    now = time.time()
    record: dict[str, object] = dict(
        id="exec_1_abcdef12", pane_id="%3", pane_key="run/%3", agent_name=HOSTILE, agent_type="claude",
        status="failed", triggered_by="mcp", principal="token:" + HOSTILE, message=HOSTILE + "\nline two",
        response=HOSTILE, error=ExecutionError(type="api_error", message=HOSTILE, stack_hash="abc123"),
        queued_at=now - 70, started_at=now - 65, completed_at=now - 5, duration_ms=60_000, tokens_used=12_345,
        cost_usd=0.0123, cost_source="estimate", cost_model="claude-sonnet-4-5", cost_price_date="2026-01-01",
        tool_calls=["Bash(" + HOSTILE + ")"], files_written=["/tmp/" + HOSTILE], trace_id="t" * 32,
        sources={"tokens_used": "session_log"}, transcript_bytes=99)
    record.update(fields)
    return Execution(**record)  # type: ignore[arg-type]


def test_an_execution_page_escapes_every_value_and_says_where_its_cost_came_from() -> None:
    html = execution_body(hostile_execution(), transcript=HOSTILE)
    assert "<script" not in html and HOSTILE not in html
    assert html.count(SAFE) >= 7  # agent, principal, message, response, error, tool, file, transcript
    assert "$0.012300 (estimate: claude-sonnet-4-5 at the prices of 2026-01-01)" in html
    assert '<a href="/pane/3">%3</a>' in html and "12,345" in html
    assert f'href="/history?trace={"t" * 32}"' in html
    assert re.search(r"<h2>Tools \(1\)</h2><ul class=\"tools\"><li><code>Bash\(&lt;script", html)
    unknown = execution_body(hostile_execution(cost_usd=None, cost_source=None, response=None), transcript=None)
    assert "<td>unknown</td>" in unknown and "No output kept." in unknown


def test_tables_escape_and_link_each_execution() -> None:
    html = executions_table([hostile_execution()])
    assert "<script" not in html and SAFE.split("\"")[0] in html
    assert '<a href="/execution/exec_1_abcdef12" class="exec-id">exec_1_abcdef12</a>' in html
    assert "~$0.0123" in html and "line two" in html  # one line: the newline is a space
    assert executions_table([]) == '<p class="empty">No executions.</p>'
    pattern = ErrorPattern(stack_hash="abc123", count=4, first_seen=time.time() - 7200, last_seen=time.time() - 60,
                           error_type="api_error", message=HOSTILE, example_id="exec_1_abcdef12")
    patterns = patterns_table([pattern])
    assert "<script" not in patterns and "<td>4</td>" in patterns and "2h ago" in patterns
    assert 'href="/execution/exec_1_abcdef12"' in patterns


def test_filters_map_as_the_cli_maps_its_options() -> None:
    fields = history_request({"agent": " claude-1 ", "status": "failed", "by": "mcp", "trace": "", "since": "2h",
                              "offset": "50"})
    assert fields["agent_name"] == "claude-1" and fields["status"] == "failed" and fields["triggered_by"] == "mcp"
    assert fields["trace_id"] is None and fields["offset"] == 50 and fields["limit"] == HISTORY_PAGE_ROWS
    assert abs(time.time() - 7200 - fields["since"]) < 5  # type: ignore[operator]
    assert history_request({"offset": "-3"})["offset"] == 0
    with pytest.raises(BadRequest):
        history_request({"since": "last tuesday"})
    pages = _pages({"status": "failed", "agent": "a&b"}, HISTORY_PAGE_ROWS, 120)
    assert "1–50 of 120" in pages and 'href="/history?agent=a%26b&amp;status=failed&amp;offset=50"' in pages


def test_a_person_filters_the_history_and_opens_an_execution(  # type: ignore[no-untyped-def]
        muxd_server, web_view, browser, tmp_path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    from muxd.testing.web import browser_wait, console_errors, log_in, make_token

    muxd_server.cli("run", "--wait", "--", "sh", "-c", "echo fine", cwd=tmp_path, check=True)
    muxd_server.cli("run", "--wait", "--", "sh", "-c", "echo '<b>broke</b>'; exit 3", cwd=tmp_path)
    log_in(browser, web_view, make_token(muxd_server, "view_only", "web-reader"))
    browser.get(web_view.url.rstrip("/") + "/history")

    def rows(driver) -> list[str]:  # type: ignore[no-untyped-def]
        return [row.text for row in driver.find_elements(By.CSS_SELECTOR, "table.executions tbody tr")]

    assert len(browser_wait(browser, rows, "the executions")) == 2
    Select(browser.find_element(By.NAME, "status")).select_by_value("failed")
    browser.find_element(By.CSS_SELECTOR, "form.filters button").click()
    browser_wait(browser, lambda d: "status=failed" in d.current_url and len(rows(d)) == 1, "the failed one only")
    assert "failed" in rows(browser)[0] and "exit_status" in rows(browser)[0]
    browser.find_element(By.CSS_SELECTOR, "table.executions a.exec-id").click()
    browser_wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "pre.transcript"), "the execution's page")
    assert "<b>broke</b>" in browser.find_element(By.CSS_SELECTOR, "pre.transcript").text  # as text, not markup
    fields = browser.find_element(By.CSS_SELECTOR, "table.fields").text
    assert "Exit code 3" in fields and "Status failed" in fields
    browser.get(web_view.url.rstrip("/") + "/failures")
    patterns = browser_wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "table.patterns tbody tr"),
                            "the failures' patterns")
    assert len(patterns) == 1 and "exit_status" in patterns[0].text
    assert not console_errors(browser)
