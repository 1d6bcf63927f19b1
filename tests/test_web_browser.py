"""The web view in a real browser (headless Debian Chromium, clicked as a person would): log in
with a token, see a fake agent wait, answer it from its card and watch its state change live; a
view_only token sees the question but no button and the daemon refuses its answer (audited);
logging out ends the session; a page of another site posting the answer form is refused; two
servers on one host keep their sessions apart.
One Chromium serves every test (muxd/testing/web.py); each waits on conditions, never sleeps."""

from __future__ import annotations

import asyncio
import re

import pytest

from muxd.protocol.access_messages import GetToolHistory
from muxd.testing.fake_agent_panes import agent_state, ask, start_fake_agent
from muxd.testing.web import WebView, browser_wait, click, console_errors, forging_site, log_in, make_token, texts

pytest.importorskip("selenium", reason="selenium is not installed (pip install -e '.[test]')")
from selenium.webdriver.common.by import By  # noqa: E402


def card_state(driver, pane: str) -> str | None:
    cards = driver.find_elements(By.CSS_SELECTOR, f'article[data-pane="{pane}"]')
    return cards[0].get_attribute("data-state") if cards else None


def test_a_person_logs_in_and_sees_the_grid(muxd_server, web_view, browser):
    token = make_token(muxd_server, "execute_advanced", "web-person")
    log_in(browser, web_view, token)
    assert "token:web-person" in browser.find_element(By.CSS_SELECTOR, "nav .who").text
    browser_wait(browser, lambda d: d.find_element(By.ID, "grid").get_attribute("data-connected") == "live",
                 "the grid's live stream")


def test_a_person_answers_a_waiting_agent_and_watches_it_move_on(muxd_server, web_view, browser):
    pane = start_fake_agent(muxd_server, "asker")
    log_in(browser, web_view, make_token(muxd_server, "execute_advanced", "web-answerer"))
    browser_wait(browser, lambda d: card_state(d, pane) == "Idle", "the idle agent's card")
    # Its time in state, counted by the page's script from the server's clock.
    browser_wait(browser, lambda d: re.fullmatch(r"\d+[smhd]", (texts(d, f'article[data-pane="{pane}"] .for')
                                                                 or [""])[0]), "the card's time in state")
    ask(muxd_server, pane)
    # Live: the card moves under "Needs you" with the question and its options, no reload.
    waiting = f'.needs-you article[data-pane="{pane}"]'
    browser_wait(browser, lambda d: texts(d, f"{waiting} form.answer button"), "the waiting agent's answer buttons")
    assert card_state(browser, pane) == "waiting"
    assert browser.title.startswith("(1) Agents")  # a background tab says someone waits
    assert "Do you want to proceed?" in texts(browser, f"{waiting} .question")[0]
    assert texts(browser, f"{waiting} form.answer button") == [
        "1. Yes", "2. Yes, and don't ask again for mkdir commands in /tmp/work", "3. No"]
    click(browser, f"{waiting} form.answer button", "the first option's button")
    browser_wait(browser, lambda d: "answered" in d.find_element(By.ID, "status").text, "the answer's confirmation")
    # The agent ran its tool and is back at its prompt: the daemon says so, and the card follows on its own.
    browser_wait(browser, lambda d: "Made the directory." in muxd_server.capture(pane), "the tool run")
    browser_wait(browser, lambda d: card_state(d, pane) not in ("waiting", None), "the card past waiting")
    assert not texts(browser, f'article[data-pane="{pane}"] form.answer button')
    # The strict CSP let the page's own script and stylesheet do all of it: nothing was refused.
    assert console_errors(browser) == []


def page_post(driver, path: str, fields: dict[str, str]) -> dict:
    """A POST from the page's own script (its origin, the session's CSRF token): what a button
    would send, with the button hidden or not."""
    return driver.execute_async_script("""
        const [path, fields, done] = arguments;
        const token = document.querySelector('meta[name="csrf-token"]').content;
        fetch(path, {method: "POST", body: new URLSearchParams(fields), headers: {"X-CSRF-Token": token}})
          .then((r) => r.json().then((body) => done({status: r.status, body})));
    """, path, fields)


def test_a_view_only_token_and_a_forged_request_cannot_answer(muxd_server, web_view, browser):
    pane = start_fake_agent(muxd_server, "guarded")
    ask(muxd_server, pane)
    answer = {"pane": pane, "option": "0", "text": "1. Yes"}
    # view_only: the question and its options, as text; no button; the daemon refuses the keys anyway.
    log_in(browser, web_view, make_token(muxd_server, "view_only", "web-viewer"))
    waiting = f'.needs-you article[data-pane="{pane}"]'
    browser_wait(browser, lambda d: texts(d, f"{waiting} .options li"), "the options, shown as text")
    assert texts(browser, f"{waiting} .options li")[0] == "1. Yes"
    assert not texts(browser, f"{waiting} button")
    refused = page_post(browser, "/answer", answer)
    assert refused["status"] == 403 and refused["body"]["code"] == "forbidden", refused
    assert "needs tier execute_advanced" in refused["body"]["message"]
    # Logged out in another tab: this one's live grid ends and the page goes back to the login.
    browser.switch_to.new_window("tab")
    browser.get(web_view.url)
    click(browser, "nav form.logout button", "the log out button")
    browser_wait(browser, lambda d: d.find_elements(By.ID, "token"), "the login page after logging out")
    browser.close()
    browser.switch_to.window(browser.window_handles[0])
    browser_wait(browser, lambda d: d.find_elements(By.ID, "token"), "the first tab back at the login page")
    # A token that may answer, lured to another site that posts the answer form cross-site: refused.
    log_in(browser, web_view, make_token(muxd_server, "execute_advanced", "web-lured"))
    with forging_site(web_view.url + "answer", {**answer, "csrf_token": "guessed"}) as site:
        browser.get(site)
        browser_wait(browser, lambda d: d.current_url.startswith(web_view.url) and "refused" in d.page_source,
                     "the web view's refusal of the forged post")
    assert agent_state(muxd_server, pane) == "AwaitingConfirmation"
    # The view_only answer is in the daemon's audit as a denied call of that token, like an MCP call.
    rows = asyncio.run(audit_rows(muxd_server, "web.answer"))
    assert ("token:web-viewer", "denied", "forbidden") in {(r.principal, r.status, r.error_code) for r in rows}


async def audit_rows(server, tool: str) -> list:
    client = await server.client()
    try:
        return (await client.call(GetToolHistory, tool=tool)).rows
    finally:
        await client.close()


def test_two_servers_on_one_host_keep_a_session_each(muxd_server, web_view, browser):
    # A browser keeps one cookie jar for 127.0.0.1 whatever the port: each server's cookie is named after its port.
    other = WebView(muxd_server)
    try:
        log_in(browser, web_view, make_token(muxd_server, "view_only", "web-first"))
        log_in(browser, other, make_token(muxd_server, "view_only", "web-second"))
        names = sorted(c["name"] for c in browser.get_cookies())
        ports = sorted(view.origin.rsplit(":", 1)[1] for view in (web_view, other))
        assert names == sorted(f"muxd_session_{port}" for port in ports)
        for view, who in ((web_view, "token:web-first"), (other, "token:web-second")):
            browser.get(view.url)  # still logged in there, as the token that logged in there
            browser_wait(browser, lambda d: d.find_elements(By.ID, "grid"), f"{view.url}'s grid, not its login")
            assert who in browser.find_element(By.CSS_SELECTOR, "nav .who").text
    finally:
        browser.get("about:blank")
        other.stop()
