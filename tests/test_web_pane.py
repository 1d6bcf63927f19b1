"""The pane page (muxd/web/pages_pane.py): in a real browser, a pane's screen in colour, its
program's markup shown as text, the screen following the pane live, and the box typing into it;
a view_only token sees the screen but its typing is refused. Without a browser: the pane a URL
names, and the screen's stylesheet."""

from __future__ import annotations

import sys

from starlette.requests import Request

from muxd.testing.server import MuxdTestServer
from muxd.testing.web import WebClient, WebView, browser_wait, console_errors, log_in, make_token
from muxd.web.links import pane_path
from muxd.web.pages_pane import pane_id_of

# A pane's program printing markup in red, then echoing what it is sent (one line at a time).
PROGRAM = ("import sys\nsys.stdout.write('\\x1b[31m<script>alert(1)</script> & <b>bold?</b>\\x1b[0m\\n')\n"
           "sys.stdout.flush()\nfor line in sys.stdin: print('got:', line.strip(), flush=True)\n")


def request_for(raw_path: bytes) -> Request:
    return Request({"type": "http", "method": "GET", "path": raw_path.decode(), "raw_path": raw_path,
                    "headers": [], "query_string": b""})


def test_a_pane_url_names_one_pane_however_its_percent_is_written() -> None:
    for raw in (b"/pane/31", b"/pane/%2531", b"/pane/%31", b"/pane/%31/screen", b"/pane/31/keys"):
        assert pane_id_of(request_for(raw)) == "%31", raw
    assert pane_path("%31", "/keys") == "/pane/31/keys"


def start_pane(server: MuxdTestServer) -> str:
    return server.cli("new-session", "-d", "-P", "--", sys.executable, "-c", PROGRAM, check=True).stdout.strip()


def screen_text(driver) -> str:  # type: ignore[no-untyped-def]
    from selenium.webdriver.common.by import By

    return driver.find_element(By.ID, "screen").text


def test_a_pane_page_shows_the_screen_in_colour_live_and_types_into_it(  # type: ignore[no-untyped-def]
        muxd_server: MuxdTestServer, web_view: WebView, browser) -> None:
    from selenium.common.exceptions import NoAlertPresentException
    from selenium.webdriver.common.by import By

    pane = start_pane(muxd_server)
    muxd_server.wait_for_text(pane, "bold?")
    log_in(browser, web_view, make_token(muxd_server, "execute_advanced", "web-typist"))
    browser.get(web_view.url.rstrip("/") + pane_path(pane))
    # Read in one script: a frame of the live screen may replace the element between two reads.
    text, colour = browser_wait(browser, lambda d: d.execute_script(
        "const s = document.querySelector('#screen span.f1'); return s && [s.textContent, getComputedStyle(s).color];"),
        "the red text")
    assert text == "<script>alert(1)</script> & <b>bold?</b>"  # the program's markup, shown as text
    assert colour == "rgb(205, 0, 0)"
    assert not browser.find_elements(By.CSS_SELECTOR, "#screen script, #screen b")
    browser_wait(browser, lambda d: d.find_element(By.ID, "screen").get_attribute("data-connected") == "live",
                 "the screen's live stream")
    box = browser.find_element(By.ID, "pane-text")
    box.send_keys("hello <i>web</i>")
    browser.find_element(By.ID, "send-text").click()  # typed as text, then Enter (the box's default)
    browser_wait(browser, lambda d: "got: hello <i>web</i>" in screen_text(d), "the echo on the live screen")
    assert browser.find_element(By.ID, "pane-text").get_attribute("value") == ""
    assert "sent" in browser.find_element(By.ID, "input-result").text
    try:
        browser.switch_to.alert
        raise AssertionError("the pane's output ran as a script")
    except NoAlertPresentException:
        pass
    assert not console_errors(browser)  # no CSP violation (a style attribute), no script failure
    # The program exits (Ctrl-D's end of input is a key button away: here EOF by keys): the page says so.
    muxd_server.cli("send-keys", "-t", pane, "C-d", check=True)
    browser_wait(browser, lambda d: d.find_element(By.ID, "screen").get_attribute("data-connected") == "ended",
                 "the stream ending with the pane")


def test_view_only_sees_the_screen_but_may_not_type(muxd_server: MuxdTestServer, web_view: WebView) -> None:
    pane = start_pane(muxd_server)
    muxd_server.wait_for_text(pane, "bold?")
    client = WebClient(web_view.origin)
    assert client.login(make_token(muxd_server, "view_only", "web-viewer")).status in (200, 303)
    page = client.get(pane_path(pane))
    assert page.status == 200 and "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;b&gt;bold?&lt;/b&gt;" in page.text
    assert "<script>alert" not in page.text and 'id="pane-input"' not in page.text  # no box it could not use
    css = client.get("/screen.css")
    assert css.status == 200 and css.headers["content-type"].startswith("text/css") and ".f1{color:#cd0000}" in css.text
    # The daemon refuses it all the same, whatever the page shows.
    refused = client.post(pane_path(pane, "/keys"), {"text": "x", "csrf_token": client.csrf(pane_path(pane))},
                          headers={"X-CSRF-Token": client.csrf(pane_path(pane)), "Accept": "application/json"})
    assert refused.status == 403 and "send-keys" in refused.json()["message"]
    assert client.get("/pane/999").status == 404


def test_a_prompt_from_the_box_becomes_an_execution_listed_live(muxd_server: MuxdTestServer, web_view: WebView,
                                                                browser) -> None:  # type: ignore[no-untyped-def]
    from selenium.webdriver.common.by import By

    from muxd.testing.fake_agent_panes import start_fake_agent

    pane = start_fake_agent(muxd_server, "webby")
    log_in(browser, web_view, make_token(muxd_server, "execute_advanced", "web-prompter"))
    browser.get(web_view.url.rstrip("/") + pane_path(pane))
    browser_wait(browser, lambda d: d.find_element(By.ID, "screen").get_attribute("data-connected") == "live",
                 "the screen's live stream")
    assert "No executions." in browser.find_element(By.ID, "pane-executions").text
    browser.find_element(By.ID, "pane-text").send_keys("list the files")
    browser.find_element(By.ID, "submit-prompt").click()
    browser_wait(browser, lambda d: "submitted exec_" in d.find_element(By.ID, "input-result").text,
                 "the submit's answer")

    def listed(driver) -> str:  # type: ignore[no-untyped-def]
        # One script: the list is replaced as the pane's work changes.
        return driver.execute_script("const r = document.querySelector('#pane-executions tbody tr');"
                                     "return r ? ' ' + r.innerText.replace(/\\s+/g, ' ') + ' ' : '';")

    browser_wait(browser, lambda d: " success " in listed(d), "the execution listed, then ended")
    assert "list the files" in listed(browser) and "webby" in listed(browser)
    # Recorded as the web's, under the token that typed it.
    by_web = muxd_server.cli("history", "--by", "web", "--json", check=True).stdout
    assert "list the files" in by_web and "web-prompter" in by_web
    assert not console_errors(browser)


def test_the_scrollback_page_shows_what_scrolled_off_the_screen(muxd_server: MuxdTestServer,
                                                                 web_view: WebView) -> None:
    program = "import sys\nfor n in range(1, 301): print(f'row-{n:04} <&>', flush=True)\nsys.stdin.read()\n"  # then waits
    pane = muxd_server.cli("new-session", "-d", "-P", "--", sys.executable, "-c", program, check=True).stdout.strip()
    muxd_server.wait_for_text(pane, "row-0300")
    client = WebClient(web_view.origin)
    assert client.login(make_token(muxd_server, "view_only", "web-reader")).status in (200, 303)
    live = client.get(pane_path(pane))
    assert "row-0001" not in live.text and f'href="{pane_path(pane, "/scrollback")}#end"' in live.text
    back = client.get(pane_path(pane, "/scrollback"))
    assert back.status == 200 and "row-0001 &lt;&amp;&gt;" in back.text and "row-0300" in back.text
    assert back.text.index("row-0001") < back.text.index("row-0300") < back.text.index('id="end"')
    recent = client.get(pane_path(pane, "/scrollback") + "?lines=50")
    assert "row-0300" in recent.text and "row-0200" not in recent.text  # 50 above a screen of 24 or so
    for bad in ("abc", "0", "999999"):
        refused = client.get(pane_path(pane, "/scrollback") + f"?lines={bad}")
        assert refused.status == 400 and "lines must be a number 1..20000" in refused.text, bad


def test_a_hidden_tab_lets_go_of_its_stream_and_follows_again_once_seen(  # type: ignore[no-untyped-def]
        muxd_server: MuxdTestServer, web_view: WebView, browser) -> None:
    """Chromium opens at most 6 connections to one host for all its tabs: with a live stream held
    by every tab, a seventh pane page would never go live."""
    pane = start_pane(muxd_server)
    muxd_server.wait_for_text(pane, "bold?")
    log_in(browser, web_view, make_token(muxd_server, "execute_advanced", "web-tabs"))
    url = web_view.url.rstrip("/") + pane_path(pane)

    def connected(d) -> str:  # type: ignore[no-untyped-def]
        return d.execute_script("return document.getElementById('screen').dataset.connected;")

    browser.get(url)
    browser_wait(browser, lambda d: connected(d) == "live", "the first tab's stream")
    first = browser.current_window_handle
    for n in range(2, 9):
        browser.switch_to.new_window("tab")
        browser.get(url)
        browser_wait(browser, lambda d: connected(d) == "live", f"tab {n}'s stream")
    muxd_server.cli("send-keys", "-t", pane, "while hidden", "Enter", check=True)
    muxd_server.wait_for_text(pane, "got: while hidden")
    browser.switch_to.window(first)  # seen again: it follows from the screen it showed
    browser_wait(browser, lambda d: "got: while hidden" in screen_text(d), "what changed while the tab was hidden")
    assert connected(browser) == "live" and not console_errors(browser)
