"""The task board in a real browser: a task waiting for review is on the board under "Needs
review"; a person approves it with a click and sees it under "Done", as the daemon says, and
rejects another from its page; a view_only token, and one of the tier but without the
tasks:write scope, see no button and the daemon refuses their POST all the same. One test, one daemon and web view: their start is most of its time."""

from __future__ import annotations

import asyncio
import json

from selenium.webdriver.common.by import By

from muxd.client.connection import Client
from muxd.protocol.task_messages import (ClaimTask, CompleteTask, CreateTask, GetTask, UpdateTaskStatus,
                                         VerificationSpec)
from muxd.testing.server import MuxdTestServer
from muxd.testing.web import WebClient, browser_wait, click, console_errors, log_in, make_token, texts


def _tasks_for_review(server: MuxdTestServer, titles: list[str]) -> list[str]:
    """A task per title, claimed, worked and completed: each waits for a person (manual check)."""
    async def make() -> list[str]:
        client = await Client.connect(server.socket_path)
        try:
            ids = []
            for title in titles:
                task = (await client.call(CreateTask, title=title, verification=VerificationSpec(kind="manual"))).task
                await client.call(ClaimTask, task_id=task.id)
                await client.call(UpdateTaskStatus, task_id=task.id, status="in_progress")
                assert (await client.call(CompleteTask, task_id=task.id)).task.state == "needs_review"
                ids.append(task.id)
            await client.call(CreateTask, title="still to do")
            return ids
        finally:
            await client.close()

    return asyncio.run(make())


def _state(server: MuxdTestServer, task_id: str) -> str:
    async def read() -> str:
        client = await Client.connect(server.socket_path)
        try:
            return str((await client.call(GetTask, task_id=task_id)).task.state)
        finally:
            await client.close()

    return asyncio.run(read())


def _column_of(driver, task_id: str) -> str | None:
    """The column the task's card is in now, read in the page (the live board replaces cards)."""
    return driver.execute_script("""
        const card = document.querySelector(`section.column article[data-task="${arguments[0]}"]`);
        return card ? card.closest("section.column").dataset.state : null;""", task_id)


def test_a_person_reviews_tasks_on_the_board_and_a_view_only_token_may_not(muxd_server, web_view, browser):
    reviewed, other, waiting = _tasks_for_review(muxd_server, ["<b>ship</b> the release", "rejected one", "look only"])
    log_in(browser, web_view, make_token(muxd_server, "execute_advanced", "web-reviewer"))
    browser.get(f"{web_view.origin}/tasks")
    browser_wait(browser, lambda d: _column_of(d, reviewed) == "needs_review", "the task under Needs review")
    card = f'article[data-task="{reviewed}"]'
    assert texts(browser, f"{card} a") == ["<b>ship</b> the release"]  # text, not markup
    assert browser.execute_script("return Array.from(document.querySelectorAll('section.column'))"
                                  ".map((c) => c.dataset.state);") == [
        "ready", "claimed", "in_progress", "needs_review", "done", "failed"]
    click(browser, f"{card} form.approve button", "the approve button")
    browser_wait(browser, lambda d: _column_of(d, reviewed) == "done", "the approved task under Done")
    assert _state(muxd_server, reviewed) == "done"
    # Its page: the review and the move are in its history; rejecting the other fails it for good.
    browser.get(f"{web_view.origin}/task/{other}")
    form = browser_wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "form.reject"), "the reject form")[0]
    form.find_element(By.NAME, "comment").send_keys("not like this")
    form.find_element(By.NAME, "final").click()
    form.find_element(By.CSS_SELECTOR, "button").click()
    browser_wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, 'h1[data-state="failed"]'), "the failed task")
    assert "not like this" in browser.find_element(By.CSS_SELECTOR, "table.reviews").text
    assert "needs_review" in browser.find_element(By.CSS_SELECTOR, "table.events").text
    assert console_errors(browser) == []  # the CSP blocked nothing on the board or the task's page
    # view_only: no button drawn, and a review POSTed anyway (with the session's CSRF token) is the daemon's to refuse.
    viewer = WebClient(web_view.origin)
    assert viewer.login(make_token(muxd_server, "view_only", "web-viewer")).status in (200, 303)
    page = viewer.get(f"/task/{waiting}")
    assert page.status == 200 and "look only" in page.text and "Approve" not in page.text
    assert "Approve" not in viewer.get("/tasks").text
    refused = viewer.post(f"/task/{waiting}/review", {"verdict": "approve", "csrf_token": viewer.csrf("/tasks")})
    assert refused.status == 403 and refused.text.startswith("forbidden"), refused.text
    assert _state(muxd_server, waiting) == "needs_review"
    # The tier to review but not the tasks:write scope: the greeting says so, no button, and the daemon refuses.
    reader_token = muxd_server.run_here("token", "create", "--tier", "execute_advanced", "--name", "web-reader",
                                        "--scope", "tasks:read", check=True).stdout.strip()
    assert _greeting_scopes(muxd_server, reader_token) == ["tasks:read"]
    reader = WebClient(web_view.origin)
    assert reader.login(reader_token).status == 303
    assert "look only" in reader.get("/tasks").text and "Approve" not in reader.get("/tasks").text
    assert "Approve" not in reader.get(f"/task/{waiting}").text
    refused = reader.post(f"/task/{waiting}/review", {"verdict": "approve", "csrf_token": reader.csrf("/tasks")})
    assert refused.status == 403 and "tasks:write" in refused.text, refused.text
    assert _state(muxd_server, waiting) == "needs_review"


def _greeting_scopes(server: MuxdTestServer, token: str) -> list[str] | None:
    async def greet() -> list[str] | None:
        client = await Client.connect(server.socket_path, token=token)
        try:
            assert client.welcome is not None
            return client.welcome.scopes
        finally:
            await client.close()

    return asyncio.run(greet())


def test_the_board_and_a_tasks_page_follow_tasks_moved_elsewhere_without_a_reload(muxd_server, web_view, browser):
    waiting, opened = _tasks_for_review(muxd_server, ["approve me from the CLI", "and me, on my page"])
    log_in(browser, web_view, make_token(muxd_server, "execute_advanced", "web-watcher"))
    browser.get(f"{web_view.origin}/tasks")
    browser_wait(browser, lambda d: d.find_element(By.ID, "grid").get_attribute("data-connected") == "live",
                 "the board's live stream")
    assert _column_of(browser, waiting) == "needs_review"
    browser.execute_script("window.sameDocument = true;")  # gone if the page reloads
    # Moved by `muxd task` in a terminal: the board follows on its own, through the daemon's task-changed event.
    added_id = json.loads(muxd_server.run_here("task", "add", "written in a terminal", "--json", check=True).stdout)["id"]
    browser_wait(browser, lambda d: _column_of(d, added_id) == "ready", "the new task under Ready")
    muxd_server.run_here("task", "approve", waiting, check=True)
    browser_wait(browser, lambda d: _column_of(d, waiting) == "done", "the approved task under Done")
    assert browser.execute_script("return window.sameDocument === true;")
    assert "written in a terminal" in browser.find_element(By.CSS_SELECTOR, 'section[data-state="ready"]').text
    assert console_errors(browser) == []
    # A task's own page follows it too: approved in a terminal, it says done, with the review, in place.
    browser.get(f"{web_view.origin}/task/{opened}")
    browser_wait(browser, lambda d: d.find_element(By.ID, "grid").get_attribute("data-connected") == "live",
                 "the task page's live stream")
    assert browser.find_elements(By.CSS_SELECTOR, 'h1[data-state="needs_review"]')
    assert browser.find_elements(By.CSS_SELECTOR, "form.approve")  # drawn for the session, CSRF token in
    browser.execute_script("window.sameDocument = true;")
    # A comment half typed on the page outlives a redraw: a comment made in a terminal meanwhile.
    box = browser.find_element(By.CSS_SELECTOR, 'form.reject input[name="comment"]')
    box.send_keys("half typed")
    muxd_server.run_here("task", "comment", opened, "-m", "a word from the terminal", check=True)
    browser_wait(browser, lambda d: "a word from the terminal" in texts(d, "table.reviews")[0] if texts(d, "table.reviews")
                 else False, "the terminal's comment on the page")
    assert browser.execute_script(
        "const box = document.querySelector('form.reject input[name=\"comment\"]');"
        "return [box.value, document.activeElement === box];") == ["half typed", True]
    muxd_server.run_here("task", "approve", opened, "-m", "seen from the terminal", check=True)
    browser_wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, 'h1[data-state="done"]'), "the task done on its page")
    assert browser.execute_script("return window.sameDocument === true;")
    assert "seen from the terminal" in browser.find_element(By.CSS_SELECTOR, "table.reviews").text
    assert not browser.find_elements(By.CSS_SELECTOR, "form.approve")
    assert console_errors(browser) == []


def test_hidden_board_tabs_let_go_of_their_streams_and_the_agents_grid_keeps_its(muxd_server, web_view, browser):
    """Seven task boards and the agents grid open in eight tabs (Chromium allows 6 connections to
    one host): each goes live when seen; the first board shows the task added while it was hidden."""
    log_in(browser, web_view, make_token(muxd_server, "view_only", "web-tabs"))

    def connected(d) -> str:  # type: ignore[no-untyped-def]
        return d.execute_script("return document.getElementById('grid').dataset.connected;")

    browser.get(web_view.origin + "/")
    browser_wait(browser, lambda d: connected(d) == "live", "the agents grid's stream")
    agents = browser.current_window_handle
    boards = []
    for n in range(7):
        browser.switch_to.new_window("tab")
        browser.get(f"{web_view.origin}/tasks")
        browser_wait(browser, lambda d: connected(d) == "live", f"board {n + 1}'s stream")
        boards.append(browser.current_window_handle)
    added = json.loads(muxd_server.cli("task", "add", "added <while> hidden", "--json", check=True).stdout)
    browser.switch_to.window(boards[0])
    browser_wait(browser, lambda d: _column_of(d, added["id"]) == "ready", "the task added while the tab was hidden")
    assert "added <while> hidden" in texts(browser, f'article[data-task="{added["id"]}"]')[0]
    browser.switch_to.window(agents)
    browser_wait(browser, lambda d: connected(d) == "live", "the agents grid, still live")
    assert not console_errors(browser)
