"""The HTTP side shared by every fake model server: a threaded stdlib server on 127.0.0.1,
request recording, JSON replies and chunked server-sent events with interruptible delays."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlsplit

from muxd.testing.patience import Deadline, stretched
from muxd.testing.fake_models.script import Fail, Pause, RecordedRequest, Script, Step, Turn, failure

SERVER_STOP_TIMEOUT_S = 5.0
SERVE_POLL_INTERVAL_S = 0.05  # how soon serve_forever notices stop()


def _first_message(body: Any) -> str:
    """The conversation's first message as JSON text, whichever API shaped it (Messages and
    Chat: `messages`, Responses: `input`, Gemini: `contents`); "" when there is none."""
    if not isinstance(body, dict):
        return ""
    for key in ("messages", "input", "contents"):
        items = body.get(key)
        if isinstance(items, list) and items:
            return json.dumps(items[0])
        if isinstance(items, str):
            return items
    return ""


class ClientGone(Exception):
    """The CLI closed the connection (it was interrupted) or the server is stopping."""


class Exchange:
    """One request and its reply, as the API modules see it."""

    def __init__(self, handler: BaseHTTPRequestHandler, server: FakeModelServer,
                 record: RecordedRequest, query: dict[str, list[str]]) -> None:
        self._handler = handler
        self._server = server
        self.record = record
        self.query = query
        self._chunked = False

    @property
    def method(self) -> str:
        return self.record.method

    @property
    def path(self) -> str:
        return self.record.path

    @property
    def body(self) -> Any:
        return self.record.body

    def take_turn(self) -> list[Step]:
        """Mark this request as a main-loop one and return the steps it is to play: from the
        script of the conversation it belongs to (see `FakeModelServer.converse`)."""
        marker, script = self._server.script_for(self.body)
        turn, steps = script.take()
        self.record.turn, self.record.main, self.record.conversation = turn, True, marker
        return steps

    def send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self._head(status, {"Content-Type": "application/json", "Content-Length": str(len(data)),
                            **(headers or {})})
        self._write(data)

    def start_events(self, content_type: str = "text/event-stream") -> None:
        self._head(200, {"Content-Type": content_type, "Cache-Control": "no-cache",
                         "Transfer-Encoding": "chunked"})
        self._chunked = True

    def event(self, data: Any, name: str | None = None) -> None:
        """One server-sent event; `data` is JSON-encoded unless it is already a string."""
        text = data if isinstance(data, str) else json.dumps(data)
        self.chunk((f"event: {name}\n" if name else "") + f"data: {text}\n\n")

    def chunk(self, text: str) -> None:
        data = text.encode()
        self._write(b"%x\r\n%s\r\n" % (len(data), data))

    def end_events(self) -> None:
        if self._chunked:
            self._write(b"0\r\n\r\n")
            self._chunked = False

    def failure(self, steps: list[Step]) -> Fail | None:
        """The `Fail` these steps answer with, once the pauses before it have passed; None
        when they do not fail."""
        fail = failure(steps)
        if fail is not None:
            for step in steps[:-1]:
                if isinstance(step, Pause):
                    self.sleep(step.seconds)
        return fail

    def sleep(self, seconds: float) -> None:
        if seconds > 0 and self._server.stopping.wait(seconds):
            raise ClientGone("server stopping")

    def _head(self, status: int, headers: dict[str, str]) -> None:
        h = self._handler
        h.send_response(status)
        for key, value in headers.items():
            h.send_header(key, value)
        h.end_headers()

    def _write(self, data: bytes) -> None:
        try:
            self._handler.wfile.write(data)
            self._handler.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, ValueError) as exc:
            raise ClientGone(str(exc)) from exc


class FakeModelServer:
    """Base of the fake APIs. `with Server(turns) as port:` serves on 127.0.0.1:port until
    the block ends; `requests` records what the CLI sent, in arrival order."""

    api = "fake"

    def __init__(self, turns: Iterable[Turn] | Script = (), *, port: int = 0) -> None:
        self.script = Script.of(turns)
        self.conversations: dict[str, Script] = {}  # opening marker -> its own script
        self.requests: list[RecordedRequest] = []
        self.stopping = threading.Event()
        self._port = port
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    # ------------------------------------------------------------ lifecycle

    def start(self) -> int:
        server = self
        self.stopping.clear()

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet in test output
                pass

            def do_GET(self) -> None:
                server._serve(self)

            do_POST = do_PUT = do_DELETE = do_HEAD = do_GET

        self._httpd = ThreadingHTTPServer(("127.0.0.1", self._port), Handler)
        self._httpd.daemon_threads = True
        httpd = self._httpd
        self._thread = threading.Thread(target=lambda: httpd.serve_forever(SERVE_POLL_INTERVAL_S),
                                        name=f"fake-{self.api}", daemon=True)
        self._thread.start()
        return self.port

    def stop(self) -> None:
        self.stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(stretched(SERVER_STOP_TIMEOUT_S))
        self._httpd = self._thread = None

    def __enter__(self) -> int:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # ------------------------------------------------------------ conversations

    def converse(self, marker: str, turns: Iterable[Turn] | Script) -> Script:
        """Give the conversations that open with `marker` (in their first message) their own
        script: a second agent talking to the same server (a teammate Claude Code spawns,
        whose first message is the lead's brief) plays these turns, whatever order the two
        agents' requests arrive in, while every other conversation plays `self.script`."""
        script = Script.of(turns)
        with self._lock:
            self.conversations[marker] = script
        return script

    def script_for(self, body: Any) -> tuple[str, Script]:
        """The marker and script of the conversation `body` continues ("" and the main script
        when none of `converse`'s markers opens it)."""
        opening = _first_message(body)
        with self._lock:
            found = [(m, s) for m, s in self.conversations.items() if m in opening]
        return found[0] if found else ("", self.script)

    # ------------------------------------------------------------ what the CLI sent

    def main_requests(self, conversation: str | None = None) -> list[RecordedRequest]:
        """The main-loop requests, in order; with `conversation`, only those of the
        conversation opened by that marker ("": the main script's)."""
        with self._lock:
            return [r for r in self.requests if r.main and conversation in (None, r.conversation)]

    def wait_for_main_requests(self, count: int, timeout: float = 10.0) -> list[RecordedRequest]:
        deadline = Deadline(timeout)
        while len(found := self.main_requests()) < count:
            if deadline.expired():
                raise AssertionError(f"{self.api}: {len(found)} main requests in {deadline.describe()}, "
                                     f"expected {count}")
            time.sleep(0.05)
        return found

    # ------------------------------------------------------------ serving

    def route(self, exchange: Exchange) -> Callable[[Exchange], None] | None:
        """The handler for this request, or None for a 404. Subclasses decide."""
        raise NotImplementedError

    def _serve(self, handler: BaseHTTPRequestHandler) -> None:
        url = urlsplit(handler.path)
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        body: Any
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode(errors="replace")
        record = RecordedRequest(at=time.time(), method=handler.command, path=url.path,
                                 headers={k.lower(): v for k, v in handler.headers.items()}, body=body)
        with self._lock:
            self.requests.append(record)
        exchange = Exchange(handler, self, record, parse_qs(url.query))
        try:
            serve = self.route(exchange)
            if serve is None:
                exchange.send_json(404, {"error": {"message": f"no route for {handler.command} {url.path}"}})
            else:
                serve(exchange)
                exchange.end_events()
        except ClientGone:
            handler.close_connection = True

