"""The charts page in a real browser: after commands ran in two named panes (one failing), the
executions chart is an inline SVG with a line per agent and the fleet's, the failures chart
has the failing agent's, and the totals say as much; a token bound to one pane sees only its own.
One test, one daemon and web view: their start is most of its time."""

from __future__ import annotations

from selenium.webdriver.common.by import By

from muxd.testing.mcp_http import create_token
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until
from muxd.testing.web import WebClient, browser_wait, console_errors, log_in, make_token


def _shells_ran(server: MuxdTestServer, names: list[str]) -> dict[str, str]:
    """A named shell pane per name, each having run `true` as an execution; the first also `false`."""
    panes = {}
    for name in names:
        pane = server.cli("new-session", "-d", "-P", "-s", name, "--name", name, check=True).stdout.strip()
        wait_until(lambda: server.cli("run", "-t", pane, "--wait", "--", "true").returncode == 0 or None,
                   timeout=15, interval=0.5, message=f"a command typed into {name}")
        panes[name] = pane
    server.cli("run", "-t", panes[names[0]], "--wait", "--", "false")
    return panes


def _series(driver, measure: str) -> list[str]:
    return [p.get_attribute("data-series")
            for p in driver.find_elements(By.CSS_SELECTOR, f'svg[data-measure="{measure}"] path[data-series]')]


def test_the_charts_draw_each_agents_line_and_the_fleets_in_the_tokens_scope(muxd_server, web_view, browser):
    panes = _shells_ran(muxd_server, ["builder", "tester"])
    log_in(browser, web_view, make_token(muxd_server, "view_only", "web-charts"))
    browser.get(f"{web_view.origin}/charts")
    browser_wait(browser, lambda d: _series(d, "executions"), "the executions chart")
    assert set(_series(browser, "executions")) == {"builder", "tester", "fleet"}
    assert set(_series(browser, "failures")) >= {"builder", "fleet"}
    svg = browser.find_element(By.CSS_SELECTOR, 'svg[data-measure="executions"]')
    assert svg.size["width"] > 300 and svg.size["height"] > 80  # drawn, not blocked or collapsed
    totals = browser.find_element(By.CSS_SELECTOR, "table.totals").text
    assert "builder" in totals and "tester" in totals
    # Another window, from the tallies (whole days): the same agents.
    browser.get(f"{web_view.origin}/charts?window=30d&kind=command")
    browser_wait(browser, lambda d: set(_series(d, "executions")) == {"builder", "tester", "fleet"},
                 "the 30-day chart")
    assert console_errors(browser) == []  # the inline SVG needs nothing the CSP forbids
    # A token bound to one pane: the daemon cuts the timeline to that pane's executions.
    bound = WebClient(web_view.origin)
    bound.login(create_token(muxd_server, "execute_advanced", "web-builder", "--pane", panes["builder"]))
    page = bound.get("/charts")
    assert page.status == 200 and 'data-series="builder"' in page.text and "tester" not in page.text
