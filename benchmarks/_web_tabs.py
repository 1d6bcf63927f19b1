"""bench_web.py's browsers: one headless Chromium (Debian's, under Selenium) with N tabs, each
on the agents page of one session, and when each tab's grid showed an agent waiting.

Each tab runs a MutationObserver on its grid that stamps (Date.now(), the machine's clock, as
the daemon's event `at` is) the moment a card's data-state becomes "waiting"; the benchmark
reads the stamps after each round, so Selenium's own round trips are not in the latency.

A browser opens at most 6 HTTP/1.1 connections to one host and each tab's live grid holds one,
so a 7th tab of one host name never loads: the tabs are spread over the loopback's two names
(127.0.0.1 and localhost), TABS_PER_HOST each, a login (a session, one token: one feed) each.
"""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace
from typing import Any

from muxd.testing.web import WebView, browser_wait, log_in, start_browser

# Background tabs are otherwise throttled (timers, rendering): each tab here stands for a watched window.
UNTHROTTLED = ("--disable-background-timer-throttling", "--disable-renderer-backgrounding",
               "--disable-backgrounding-occluded-windows")
HOSTS = ("127.0.0.1", "localhost")
TABS_PER_HOST = 5  # of Chromium's 6 connections a host: one left for the pages' loads
_OBSERVE = """
window.muxdSeen = {}; const state = {}; const grid = document.getElementById("grid");
const scan = () => {
  const now = Date.now();
  grid.querySelectorAll("article[data-pane]").forEach((card) => {
    const pane = card.dataset.pane, was = state[pane];
    if (card.dataset.state === "waiting" && was !== "waiting") window.muxdSeen[pane] = now;
    state[pane] = card.dataset.state;
  });
};
new MutationObserver(scan).observe(grid, {childList: true, subtree: true, attributes: true,
                                          attributeFilter: ["data-state"]});
scan();
"""


class BrowserTabs:
    """`count` tabs of one Chromium on `view`'s agents page, logged in with `token`; `waiting`
    (pane -> wall time its tab showed it waiting) holds, per pane, the latest tab's stamp of
    the round: a round is done for the browser when every tab stamped the pane."""

    def __init__(self, view: WebView, token: str, count: int) -> None:
        self.driver: Any = start_browser(*UNTHROTTLED)
        self.waiting: dict[str, float] = {}
        self.each: list[dict[str, float]] = [{} for _ in range(count)]  # per tab: pane -> when
        self.since: dict[str, float] = {}  # pane -> when its round began (older stamps are last round's)
        if count > TABS_PER_HOST * len(HOSTS):
            raise ValueError(f"at most {TABS_PER_HOST * len(HOSTS)} tabs (Chromium's connections per host)")
        port = view.origin.rsplit(":", 1)[1]
        for n in range(count):
            url = f"http://{HOSTS[n % len(HOSTS)]}:{port}/"
            if n:
                self.driver.switch_to.new_window("tab")
            if n < len(HOSTS):
                log_in(self.driver, SimpleNamespace(url=url), token)  # type: ignore[arg-type]
            else:
                self.driver.get(url)
            browser_wait(self.driver, lambda d: d.find_element("id", "grid").get_attribute("data-connected") == "live",
                         "a tab's live grid")
            self.driver.execute_script(_OBSERVE)
        self.tabs = list(self.driver.window_handles)

    def forget(self, pane: str) -> None:
        self.waiting.pop(pane, None)
        self.since[pane] = time.time()
        for seen in self.each:
            seen.pop(pane, None)

    def _read(self) -> None:
        for handle, seen in zip(self.tabs, self.each):
            self.driver.switch_to.window(handle)
            stamps = self.driver.execute_script("return window.muxdSeen;") or {}
            for pane, ms in stamps.items():
                if ms / 1000 >= self.since.get(pane, 0.0) - 0.001:
                    seen[pane] = ms / 1000
        for pane in self.since:
            if all(pane in seen for seen in self.each):
                self.waiting[pane] = 0.0  # a round is done for the browser: stamps() has the tabs'

    async def poll(self) -> None:
        await asyncio.to_thread(self._read)

    def stamps(self, pane: str) -> list[float]:
        return [seen[pane] for seen in self.each]

    def close(self) -> None:
        self.driver.quit()
