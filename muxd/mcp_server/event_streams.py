"""Subscriptions to the event resources (event_resources.py): a subscriber is sent
`notifications/resources/updated` for `muxd://events` on every event it may see, and for
`muxd://panes/{pane}/attention` on each of that pane's agent events; it reads the resource to
learn what happened.

Both ways the SDK serves: the 2026-07-28 `subscriptions/listen` stream (one request whose
response is the stream) and, for sessions of earlier revisions, `resources/subscribe`. Each
stream or session hears the daemon on a connection of its own (EventFeed) that presents the
caller's token, so a pane-scoped token hears its panes only, and a pane it may not see is left
out of a stream's acknowledged subscriptions (refused, by resources/subscribe). Opening one
passes the guards (tier, rate limit, audit); at most EVENT_STREAMS_MAX are open at once.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from mcp.server.subscriptions import ListenHandler, ResourceUpdated, ServerEvent
from mcp_types import EmptyResult, SubscribeRequestParams, SubscriptionsListenRequestParams, UnsubscribeRequestParams

from muxd.client.connection import Client
from muxd.errors import BadRequest, Forbidden, MuxdError, NotFound, QuotaExceeded
from muxd.mcp_server.event_resources import EVENTS_URI, guarded, pane_attention_uri, pane_of_uri
from muxd.mcp_server.guards import ToolGuard
from muxd.mcp_server.limits import EVENT_STREAM_BACKLOG_MAX, EVENT_STREAMS_MAX, EVENT_URIS_MAX
from muxd.mcp_server.link import connect_as_caller, current_client
from muxd.mcp_server.registry import ToolRegistry
from muxd.protocol.event_messages import AGENT_EVENT_KINDS, DaemonEvent
from muxd.protocol.messages import ShowPane, Subscribe

log = logging.getLogger(__name__)


class EventFeed:
    """The daemon's events for one subscriber, told to `notify` as the URIs they update."""

    def __init__(self, notify: Callable[[str], None]) -> None:
        self.notify = notify
        self.everything = False  # muxd://events is subscribed
        self.pane_uris: dict[str, set[str]] = {}  # pane id -> its subscribed URIs (a pane's number or name)
        self.connection: Client | None = None

    @property
    def uris(self) -> set[str]:
        return ({EVENTS_URI} if self.everything else set()) | {u for us in self.pane_uris.values() for u in us}

    async def add(self, uri: str) -> None:
        """Subscribe `uri`: not_found for a URI that is no event resource, forbidden for a pane the caller
        may not see (the daemon's answer, as for any request of its)."""
        if uri == EVENTS_URI:
            self.everything = True
            return
        ref = pane_of_uri(uri)
        if ref is None:
            raise NotFound(f"no event resource {uri!r}: subscribe to {EVENTS_URI} or "
                           f"{pane_attention_uri('%N')}", uri=uri)
        pane_id = (await current_client().call(ShowPane, target=ref)).pane.id
        self.pane_uris.setdefault(pane_id, set()).add(uri)

    def remove(self, uri: str) -> None:
        if uri == EVENTS_URI:
            self.everything = False
        for uris in self.pane_uris.values():
            uris.discard(uri)
        self.pane_uris = {p: us for p, us in self.pane_uris.items() if us}

    async def follow(self) -> None:
        """Hear what the subscriptions need from the daemon (anew after a change of them)."""
        if self.connection is None:
            self.connection = await connect_as_caller("muxd-mcp-events", self._heard)
        if self.everything:
            await self.connection.call(Subscribe, events=True)
        else:
            await self.connection.call(Subscribe, events=True, panes=sorted(self.pane_uris),
                                       kinds=list(AGENT_EVENT_KINDS))

    def _heard(self, event: Any) -> None:
        if not isinstance(event, DaemonEvent):
            return
        if self.everything:
            self.notify(EVENTS_URI)
        if event.pane_id is not None and event.kind in AGENT_EVENT_KINDS:
            for uri in sorted(self.pane_uris.get(event.pane_id, ())):
                self.notify(uri)

    async def close(self) -> None:
        if self.connection is not None:
            await self.connection.close()
            self.connection = None


class StreamBus:
    """The SDK's SubscriptionBus for one listen stream: what its feed hears, to its handler alone."""

    def __init__(self) -> None:
        self._listeners: list[Callable[[ServerEvent], None]] = []

    def emit(self, event: ServerEvent) -> None:
        for listener in list(self._listeners):
            listener(event)

    async def publish(self, event: ServerEvent) -> None:
        self.emit(event)

    def subscribe(self, listener: Callable[[ServerEvent], None]) -> Callable[[], None]:
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe


class SessionSubscriptions:
    """resources/subscribe of one session (revisions before 2026-07-28): its feed, and the task
    sending it `notifications/resources/updated`, each URI once until it is sent."""

    def __init__(self, session: Any, on_end: Callable[[SessionSubscriptions], None]) -> None:
        self.session = session
        self.feed = EventFeed(self._queue)
        self._pending: dict[str, None] = {}
        self._wake = asyncio.Event()
        self._on_end = on_end
        self._task = asyncio.ensure_future(self._send())
        self._lost: asyncio.Task[None] | None = None  # ends the subscriptions when the daemon connection ends

    async def follow(self) -> None:
        await self.feed.follow()
        if self._lost is None and self.feed.connection is not None:
            self._lost = asyncio.ensure_future(_after(self.feed.connection.wait_lost(), self._end_soon))

    def _end_soon(self) -> None:
        asyncio.ensure_future(self.close())

    def _queue(self, uri: str) -> None:
        self._pending[uri] = None
        self._wake.set()

    async def _send(self) -> None:
        try:
            while True:
                await self._wake.wait()
                self._wake.clear()
                while self._pending:
                    uri = next(iter(self._pending))
                    del self._pending[uri]
                    await self.session.send_resource_updated(uri)
        except Exception as exc:  # the session is gone: so are its subscriptions
            log.debug("resource updates of a session end: %r", exc)
            await self.close()

    async def close(self) -> None:
        self._on_end(self)
        for task in (self._task, self._lost):
            if task is not None and not task.done() and task is not asyncio.current_task():
                task.cancel()
        await self.feed.close()


class EventStreams:
    """The subscribers of one MCP server."""

    def __init__(self, guard: ToolGuard) -> None:
        self.guard = guard
        self.open = 0  # listen streams and sessions with subscriptions
        self.sessions: dict[int, SessionSubscriptions] = {}  # id(session) -> its subscriptions

    def _admit(self) -> None:
        if self.open >= EVENT_STREAMS_MAX:
            raise QuotaExceeded(f"{EVENT_STREAMS_MAX} event streams are open on this MCP server; close one first",
                                limit=EVENT_STREAMS_MAX)
        self.open += 1

    async def listen(self, ctx: Any, params: SubscriptionsListenRequestParams) -> Any:
        """subscriptions/listen: the SDK's stream, fed by a feed of the caller's own."""
        wanted = list(params.notifications.resource_subscriptions or [])
        bus = StreamBus()
        feed = EventFeed(lambda uri: bus.emit(ResourceUpdated(uri=uri)))
        admitted = False

        async def open_feed() -> list[str]:
            nonlocal admitted
            if len(wanted) > EVENT_URIS_MAX:
                raise BadRequest(f"{len(wanted)} resource subscriptions, at most {EVENT_URIS_MAX}",
                                 field="resource_subscriptions")
            for uri in wanted:
                try:
                    await feed.add(uri)
                except (NotFound, Forbidden) as exc:  # left out of the acknowledgement: never told
                    log.info("listen: %s left out: %s", uri, exc.message)
            if feed.uris:
                self._admit()
                admitted = True
                await feed.follow()
            return sorted(feed.uris)

        ending: asyncio.Task[None] | None = None
        try:
            honored = await guarded(self.guard, "listen_events", {"uris": wanted}, open_feed)
            notifications = params.notifications.model_copy(update={"resource_subscriptions": honored or None})
            handler = ListenHandler(bus, max_subscriptions=1, max_buffered_events=EVENT_STREAM_BACKLOG_MAX)
            if feed.connection is not None:  # the daemon gone, the stream ends: the client listens anew
                ending = asyncio.ensure_future(_after(feed.connection.wait_lost(), handler.close))
            return await handler(ctx, params.model_copy(update={"notifications": notifications}))
        finally:
            if ending is not None:
                ending.cancel()
            await feed.close()
            if admitted:
                self.open -= 1

    async def subscribe(self, ctx: Any, params: SubscribeRequestParams) -> EmptyResult:
        """resources/subscribe: this session is told when `params.uri` changes."""
        uri = str(params.uri)

        async def add() -> None:
            subscriptions = self.sessions.get(id(ctx.session))
            if subscriptions is None:
                self._admit()
                subscriptions = SessionSubscriptions(ctx.session, self._ended)
                self.sessions[id(ctx.session)] = subscriptions
            feed = subscriptions.feed
            if len(feed.uris | {uri}) > EVENT_URIS_MAX:
                raise BadRequest(f"this session already has {EVENT_URIS_MAX} resource subscriptions", field="uri")
            try:
                await feed.add(uri)
                await subscriptions.follow()
            except MuxdError:
                if not feed.uris:
                    await subscriptions.close()
                raise

        await guarded(self.guard, "subscribe_events", {"uri": uri}, add)
        return EmptyResult()

    async def unsubscribe(self, ctx: Any, params: UnsubscribeRequestParams) -> EmptyResult:
        subscriptions = self.sessions.get(id(ctx.session))
        if subscriptions is not None:
            subscriptions.feed.remove(str(params.uri))
            if subscriptions.feed.uris:
                await subscriptions.follow()
            else:
                await subscriptions.close()
        return EmptyResult()

    def _ended(self, subscriptions: SessionSubscriptions) -> None:
        if self.sessions.get(id(subscriptions.session)) is subscriptions:
            del self.sessions[id(subscriptions.session)]
            self.open -= 1


async def _after(event: Awaitable[None], then: Callable[[], None]) -> None:
    await event
    then()


def register_event_streams(tools: ToolRegistry) -> EventStreams:
    """Serve subscriptions/listen and resources/(un)subscribe with muxd's event streams."""
    streams = EventStreams(tools.guard)
    # MCPServer has no public way to add a request handler; its lowlevel Server has (and its
    # capabilities follow the handlers it holds: resources.subscribe, the listen stream).
    lowlevel = tools.server._lowlevel_server
    lowlevel.add_request_handler("subscriptions/listen", SubscriptionsListenRequestParams, streams.listen)
    lowlevel.add_request_handler("resources/subscribe", SubscribeRequestParams, streams.subscribe)
    lowlevel.add_request_handler("resources/unsubscribe", UnsubscribeRequestParams, streams.unsubscribe)
    return streams
