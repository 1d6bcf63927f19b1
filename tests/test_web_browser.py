"""The web view in a real browser (headless Debian Chromium, clicked as a person would): log in
with a token, see a fake agent wait, answer it from its card and watch its state change live; a
view_only token sees the question but no button; logging out ends the session."""

from __future__ import annotations

from selenium.webdriver.common.by import By

from muxd.testing.fake_agent_panes import agent_state, ask, start_fake_agent
from muxd.testing.web import browser_wait, click, log_in, make_token, texts


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
    ask(muxd_server, pane)
    # Live: the card moves under "Needs you" with the question and its options, no reload.
    waiting = f'.needs-you article[data-pane="{pane}"]'
    browser_wait(browser, lambda d: texts(d, f"{waiting} form.answer button"), "the waiting agent's answer buttons")
    assert card_state(browser, pane) == "waiting"
    assert "Do you want to proceed?" in texts(browser, f"{waiting} .question")[0]
    assert texts(browser, f"{waiting} form.answer button") == [
        "1. Yes", "2. Yes, and don't ask again for mkdir commands in /tmp/work", "3. No"]
    click(browser, f"{waiting} form.answer button", "the first option's button")
    browser_wait(browser, lambda d: "answered" in d.find_element(By.ID, "status").text, "the answer's confirmation")
    # The agent ran its tool and is back at its prompt: the daemon says so, and the card follows on its own.
    browser_wait(browser, lambda d: "Made the directory." in muxd_server.capture(pane), "the tool run")
    browser_wait(browser, lambda d: card_state(d, pane) not in ("waiting", None), "the card past waiting")
    assert not texts(browser, f'article[data-pane="{pane}"] form.answer button')
