"""A live board (the agents grid, the task board): one feed per token, shared by every browser
logged in with it.

A feed holds a daemon connection greeted with the token and subscribed to the daemon's events
of its kinds (so it hears only what that token may see: the agents' events, or the queue's
task-changed). An event marks the board stale; the feed then reads what changed again (the
agents grid: the panes the events name, board_read.py; at most one read each
REDRAW_MIN_INTERVAL_S, however many events come), renders the board once and hands it to every
watching browser's stream. Ten browsers of one token cost the daemon one read per change, not
ten. A feed nobody watches closes its connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable

from muxd.client.connection import Client
from muxd.errors import MuxdError
from muxd.protocol.messages import DaemonEvent, Subscribe
from muxd.web.board_read import panes_named

log = logging.getLogger(__name__)

# Events closer than this ride one read. muxd top waits 0.1 s (a terminal redraw); a card here is what
# a person is about to click, and an agent-state event is often followed within ms by its agent-waiting.
REDRAW_MIN_INTERVAL_S = 0.02
# Render = read the board again (the panes named; None: all) and build its HTML through this connection;
# one per feed (it keeps the board between reads): a feed makes its own from a RenderFactory.
Render = Callable[[Client, "set[str] | None"], Awaitable[str]]
RenderFactory = Callable[[], Render]
Connect = Callable[[Callable[[object], None]], Awaitable[Client]]
# What an event asks to read again (the panes it names; None: all): the agents grid's is panes_named.
ChangedBy = Callable[[DaemonEvent], "set[str] | None"]


def read_all(event: DaemonEvent) -> None:
    """A board read whole after any of its events (the task board: a column a request)."""
    return None


class BoardFeed:
    def __init__(self, connect: Connect, render: Render, on_idle: Callable[[BoardFeed], None], *,
                 kinds: list[str] | None = None, changed_by: ChangedBy = panes_named) -> None:
        self._connect = connect
        self._render = render
        self._kinds = kinds  # the events it subscribes to (None: every kind but the opt-in ones)
        self._changed_by = changed_by
        self._changed: set[str] | None = None  # the panes to read again; None: all
        self._on_idle = on_idle
        self._watchers: set[asyncio.Queue[str]] = set()
        self._stale = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._lost: asyncio.Future[None] | None = None
        self.latest: str | None = None
        self.failure: MuxdError | None = None

    def _heard(self, message: object) -> None:
        if isinstance(message, DaemonEvent):
            named = self._changed_by(message)
            self._changed = None if named is None or self._changed is None else self._changed | named
            self._stale.set()

    @contextlib.asynccontextmanager
    async def watch(self) -> AsyncIterator[asyncio.Queue[str]]:
        """A queue that gets the grid's HTML now (once read) and after every change; each watcher
        sees only the newest grid (a slow browser skips grids, it never queues them)."""
        queue: asyncio.Queue[str] = asyncio.Queue(maxsize=1)
        self._watchers.add(queue)
        if self.latest is not None:
            queue.put_nowait(self.latest)
        if self._task is None:
            self._task = asyncio.ensure_future(self._run())
        try:
            yield queue
        finally:
            self._watchers.discard(queue)
            if not self._watchers:
                await self.close()
                self._on_idle(self)

    async def _run(self) -> None:
        client: Client | None = None
        loop = asyncio.get_running_loop()
        try:
            client = await self._connect(self._heard)
            # A connection the daemon closed (it stopped, or revoked the token) wakes the loop, whose
            # next read fails with what closed it: the streams say so and end.
            self._lost = asyncio.ensure_future(client.wait_lost())
            self._lost.add_done_callback(lambda _: self._stale.set())
            await client.call(Subscribe, events=True, kinds=self._kinds)
            last_read = -REDRAW_MIN_INTERVAL_S
            self._stale.set()  # the first grid: read now
            while True:
                await self._stale.wait()
                wait_s = last_read + REDRAW_MIN_INTERVAL_S - loop.time()
                if wait_s > 0:
                    await asyncio.sleep(wait_s)  # coalesce a burst: the events meanwhile ride this read
                self._stale.clear()
                if client.closed:  # said now: a read naming no pane (a fleet-changed's) may call nothing
                    raise await client.ended()
                last_read = loop.time()
                changed, self._changed = self._changed, set()
                grid = await self._render(client, changed)
                if grid != self.latest:  # the events were of another part (a task page's other tasks)
                    self._publish(grid)
        except MuxdError as exc:  # the daemon went, or refused the token: the streams say so and end
            self.failure = exc
            self._publish("")
        finally:
            if client is not None:
                await client.close()

    def _publish(self, grid: str) -> None:
        self.latest = grid
        for queue in self._watchers:
            if queue.full():
                queue.get_nowait()
            queue.put_nowait(grid)

    async def close(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, MuxdError):
                await task


class BoardFeeds:
    """The feeds of one `muxd web`, by board and token (its sha256)."""

    def __init__(self) -> None:
        self._feeds: dict[str, BoardFeed] = {}

    def feed(self, key: str, connect: Connect, render: RenderFactory, *, kinds: list[str] | None = None,
             changed_by: ChangedBy = panes_named) -> BoardFeed:
        feed = self._feeds.get(key)
        if feed is None or feed.failure is not None:
            feed = self._feeds[key] = BoardFeed(connect, render(), lambda done: self._forget(key, done),
                                                kinds=kinds, changed_by=changed_by)
        return feed

    def _forget(self, key: str, feed: BoardFeed) -> None:
        if self._feeds.get(key) is feed:
            del self._feeds[key]

    async def close(self) -> None:
        feeds, self._feeds = list(self._feeds.values()), {}
        for feed in feeds:
            await feed.close()
