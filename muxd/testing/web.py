"""Test support for `muxd web`: the web view of a test daemon on a free loopback port, an HTTP
client that keeps its cookie (for what needs no browser), and headless Debian Chromium driven
through Selenium and Debian's chromedriver (both apt packages, matched; nothing downloaded).

Fixtures (the muxd pytest plugin gives them): `web_view` starts `muxd web --port 0` on
`muxd_server`; `browser` is one headless Chromium for the whole test session (a worker's),
its cookies cleared for each test."""

from __future__ import annotations

import contextlib
import html
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlencode, urlsplit

import pytest

from muxd.testing.patience import stretched
from muxd.testing.server import MuxdTestServer

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
WEB_START_TIMEOUT_S = 30.0
BROWSER_WAIT_S = 20.0  # the longest a browser test waits on one thing (a condition, never a sleep)
HTTP_TIMEOUT_S = 30.0
_SERVING = re.compile(r"muxd web: serving (http://\S+)")


class WebView:
    """`muxd -L NAME web --port 0` of `server`, started; `url` once it listens."""

    def __init__(self, server: MuxdTestServer) -> None:
        self.server = server
        self.process = subprocess.Popen([sys.executable, "-m", "muxd", "-L", server.name, "web", "--port", "0"],
                                        env=server.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE, text=True)
        self.stderr: list[str] = []
        found = threading.Event()
        self.url = ""

        def read() -> None:
            assert self.process.stderr is not None
            for line in self.process.stderr:
                self.stderr.append(line)
                served = _SERVING.search(line)
                if served and not self.url:
                    self.url = served[1]
                    found.set()
            found.set()  # it ended

        threading.Thread(target=read, daemon=True).start()
        # A readiness ceiling, not a sleep: the line comes the moment it listens.
        if not found.wait(stretched(WEB_START_TIMEOUT_S)) or not self.url:
            self.stop()
            raise AssertionError(f"muxd web did not start: {''.join(self.stderr)}")

    @property
    def origin(self) -> str:
        return self.url.rstrip("/")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=stretched(10.0))
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    text: str

    def json(self) -> Any:
        return json.loads(self.text)


@dataclass
class WebClient:
    """A plain HTTP client of a WebView that keeps its session cookie, as a browser would."""

    origin: str
    cookies: dict[str, str] = field(default_factory=dict)

    def request(self, method: str, path: str, *, fields: dict[str, str] | None = None,
                headers: dict[str, str] | None = None) -> Reply:
        parts = urlsplit(self.origin)
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=stretched(HTTP_TIMEOUT_S))
        sent = dict(headers or {})
        if self.cookies:
            sent["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        body = None
        if fields is not None:
            body = urlencode(fields)
            sent.setdefault("Content-Type", "application/x-www-form-urlencoded")
        try:
            connection.request(method, path, body=body, headers=sent)
            response = connection.getresponse()
            text = response.read().decode("utf-8", "replace")
            for value in response.headers.get_all("Set-Cookie") or []:
                jar: SimpleCookie = SimpleCookie(value)
                for name, morsel in jar.items():
                    if morsel["max-age"] == "0" or not morsel.value:
                        self.cookies.pop(name, None)
                    else:
                        self.cookies[name] = morsel.value
            return Reply(response.status, {k.lower(): v for k, v in response.getheaders()}, text)
        finally:
            connection.close()

    def get(self, path: str, **kwargs: Any) -> Reply:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, fields: dict[str, str], *, origin: str | None = "self", **kwargs: Any) -> Reply:
        """POST a form; `origin`: "self" sends this server's Origin (as its pages do), None none."""
        headers = dict(kwargs.pop("headers", {}) or {})
        if origin is not None:
            headers["Origin"] = self.origin if origin == "self" else origin
        return self.request("POST", path, fields=fields, headers=headers, **kwargs)

    def login(self, token: str) -> Reply:
        return self.post("/login", {"token": token})

    def csrf(self, path: str = "/") -> str:
        """The session's CSRF token, as a page's meta tag gives it."""
        found = re.search(r'<meta name="csrf-token" content="([^"]+)"', self.get(path).text)
        assert found, "no CSRF token on the page (not logged in?)"
        return found[1]


@contextlib.contextmanager
def forging_site(action_url: str, fields: dict[str, str]) -> Iterator[str]:
    """Another site (another origin: a port of its own) whose page, once opened, posts `fields` to
    `action_url` by itself, as a page an attacker lures a logged-in user to would; its URL."""
    form = "".join(f'<input type="hidden" name="{html.escape(k)}" value="{html.escape(v)}">' for k, v in fields.items())
    body = (f'<!doctype html><html><body><form id="forged" method="post" action="{html.escape(action_url)}">'
            f'{form}</form><script>document.getElementById("forged").submit();</script></body></html>').encode()

    class Page(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    site = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    thread = threading.Thread(target=site.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{site.server_address[1]}/"
    finally:
        site.shutdown()
        site.server_close()


class EventStream:
    """A browser's /events stream read as a script would: `next_event()` gives (event, data)."""

    def __init__(self, origin: str, cookies: dict[str, str]) -> None:
        parts = urlsplit(origin)
        self.sock = socket.create_connection((parts.hostname, parts.port), timeout=stretched(HTTP_TIMEOUT_S))
        cookie = "; ".join(f"{k}={v}" for k, v in cookies.items())
        self.sock.sendall(f"GET /events HTTP/1.1\r\nHost: {parts.netloc}\r\nCookie: {cookie}\r\n"
                          "Accept: text/event-stream\r\n\r\n".encode())
        self.lines = self.sock.makefile("r", encoding="utf-8", newline="\n")
        self.status = int(self.lines.readline().split()[1])
        while self.lines.readline().strip():  # the headers
            pass

    def next_event(self) -> tuple[str, str] | None:
        """The next named event (chunk sizes and comments skipped); None when the stream ended."""
        event, data = "", []
        for line in self.lines:
            line = line.rstrip("\r\n")
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                data.append(line[6:])
            elif not line and event:
                return event, "\n".join(data)
        return None

    def close(self) -> None:
        # Shut the socket first: a thread blocked reading the stream (a GridReader) holds the
        # reader's lock, which closing it would wait for until the next keepalive, or longer.
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass  # the server closed it already
        self.lines.close()
        self.sock.close()


def make_token(server: MuxdTestServer, tier: str, name: str) -> str:
    """A new token of `tier` (as `muxd token create` prints it)."""
    return server.run_here("token", "create", "--tier", tier, "--name", name, check=True).stdout.strip()


def chromium_or_skip() -> None:
    missing = [path for path in (CHROMIUM, CHROMEDRIVER) if not os.path.exists(path)]
    if missing:
        pytest.skip(f"{', '.join(missing)} missing: apt-get install chromium chromium-driver (.ci/run does)")
    try:
        import selenium  # noqa: F401
    except ImportError:
        pytest.skip("selenium is not installed (pip install -e '.[test]')")


def start_browser(*extra_flags: str) -> Any:
    """Headless Debian Chromium under Debian's chromedriver (their versions match); `extra_flags`:
    more of Chromium's command-line switches."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--no-first-run", "--disable-extensions", "--window-size=1280,900", *extra_flags):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})  # console_errors() reads it
    driver = webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))
    driver.set_page_load_timeout(stretched(HTTP_TIMEOUT_S))
    return driver


def browser_wait(driver: Any, condition: Any, message: str, timeout: float = BROWSER_WAIT_S) -> Any:
    """Selenium's wait on `condition(driver)`, its ceiling stretched by the machine's load."""
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, stretched(timeout), poll_frequency=0.05).until(condition, message)


def console_errors(driver: Any) -> list[str]:
    """What the pages logged as errors since the last call (a CSP violation, a script's failure)."""
    return [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def texts(driver: Any, css: str) -> list[str]:
    """The text of every element `css` selects now, read in the page (no element held across a
    live update, which would go stale)."""
    found: list[str] = driver.execute_script(
        "return Array.from(document.querySelectorAll(arguments[0])).map((e) => e.textContent.trim());", css)
    return found


def click(driver: Any, css: str, message: str) -> None:
    """Click the first element `css` selects, as soon as there is one; an element the live grid
    replaced between finding and clicking is found again."""
    from selenium.common.exceptions import StaleElementReferenceException

    def clicked(d: Any) -> bool:
        from selenium.webdriver.common.by import By

        try:
            elements = d.find_elements(By.CSS_SELECTOR, css)
            if elements:
                elements[0].click()
                return True
        except StaleElementReferenceException:
            pass
        return False

    browser_wait(driver, clicked, message)


def log_in(driver: Any, view: WebView, token: str) -> None:
    """Log in as a person does: open the page, type the token, press the button."""
    from selenium.webdriver.common.by import By

    driver.get(view.url)
    browser_wait(driver, lambda d: d.find_elements(By.ID, "token"), "the login form")
    driver.find_element(By.ID, "token").send_keys(token)
    driver.find_element(By.ID, "login").click()
    browser_wait(driver, lambda d: d.find_elements(By.ID, "grid"), "the agents grid after logging in")


@pytest.fixture
def web_view(muxd_server: MuxdTestServer) -> Iterator[WebView]:
    view = WebView(muxd_server)
    try:
        yield view
    finally:
        view.stop()


@pytest.fixture(scope="session")
def _chromium() -> Iterator[Any]:
    chromium_or_skip()
    driver = start_browser()
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def browser(_chromium: Any) -> Iterator[Any]:
    """The session's headless Chromium, on a blank page with no cookie."""
    # Every cookie, not only the open page's (delete_all_cookies): an earlier test's server on another
    # port left one for 127.0.0.1 too.
    _chromium.execute_cdp_cmd("Network.clearBrowserCookies", {})
    _chromium.get_log("browser")  # drained: console_errors() tells this test's own
    yield _chromium
    _chromium.get("about:blank")  # closes the page's event stream before its server stops


