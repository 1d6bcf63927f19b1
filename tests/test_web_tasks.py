"""The task board in a real browser: a task waiting for review is on the board under "Needs
review"; a person approves it with a click and sees it under "Done", as the daemon says, and
rejects another from its page; a view_only token, and one of the tier but without the
tasks:write scope, see no button and the daemon refuses their POST all the same. One test, one daemon and web view: their start is most of its time."""

from __future__ import annotations

import asyncio

from selenium.webdriver.common.by import By

from muxd.client.connection import Client
from muxd.protocol.task_messages import (ClaimTask, CompleteTask, CreateTask, GetTask, UpdateTaskStatus,
                                         VerificationSpec)
from muxd.testing.server import MuxdTestServer
from muxd.testing.web import WebClient, browser_wait, console_errors, log_in, make_token


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
    cards = driver.find_elements(By.CSS_SELECTOR, f'section.column article[data-task="{task_id}"]')
    return cards[0].find_element(By.XPATH, "./..").get_attribute("data-state") if cards else None


def test_a_person_reviews_tasks_on_the_board_and_a_view_only_token_may_not(muxd_server, web_view, browser):
    reviewed, other, waiting = _tasks_for_review(muxd_server, ["<b>ship</b> the release", "rejected one", "look only"])
    log_in(browser, web_view, make_token(muxd_server, "execute_advanced", "web-reviewer"))
    browser.get(f"{web_view.origin}/tasks")
    browser_wait(browser, lambda d: _column_of(d, reviewed) == "needs_review", "the task under Needs review")
    card = browser.find_element(By.CSS_SELECTOR, f'article[data-task="{reviewed}"]')
    assert card.find_element(By.CSS_SELECTOR, "a").text == "<b>ship</b> the release"  # text, not markup
    assert [c.get_attribute("data-state") for c in browser.find_elements(By.CSS_SELECTOR, "section.column")] == [
        "ready", "claimed", "in_progress", "needs_review", "done", "failed"]
    card.find_element(By.CSS_SELECTOR, "form.approve button").click()
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
