"""`FleetNews`: what the other daemons of a shared PostgreSQL database changed in the fleet (issue
31), heard as it happens so a live board of their panes (the web view's agents grid) reads them
again then, and not only when something happens on this host.

Every write another daemon's view would show is told on the fleet channel (store/fleet.py: a
publish, a start, a clean stop, a beat after a silence, a host taken over or forgotten), the host
it is about as the payload. The news LISTENs (store/pg_listen.py, on the database's one listener),
skips what is about this host (its own publishes: it never wakes itself) and tells `changed(host)`
on the loop, at most once every FLEET_HEARD_MIN_INTERVAL_S for however many notifications came
meanwhile: each host heard once, in the order heard. Once listening, and after a lost connection,
it tells `changed(None)`: any host may have changed while nothing was heard.

A host that dies writes nothing: the daemon that takes it over (at its first beat past the staleness
bound, daemon/work/fleet_presence.py) tells of it, and every daemon but the dead one hears that.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from muxd.config import FLEET_HEARD_MIN_INTERVAL_S
from muxd.store.fleet import FLEET_CHANNEL
from muxd.store.pg_listen import PgListener

ANY_HOST = ""  # what a gap is queued as: every host may have changed


class FleetNews:
    """Hears the fleet channel on `listener`, for host `host`; `changed(other host or None)` on the
    loop. `start()`, then `stop()`."""

    def __init__(self, listener: PgListener, host: str, changed: Callable[[str | None], None]) -> None:
        self.host = host
        self._changed = changed
        self._loop = asyncio.get_running_loop()
        self._heard: dict[str, None] = {}  # hosts told of since the last telling, in order (ANY_HOST: a gap)
        self._telling: asyncio.TimerHandle | None = None
        self._last_told = -FLEET_HEARD_MIN_INTERVAL_S
        self._listener = listener

    def start(self) -> FleetNews:
        self._listener.hear(FLEET_CHANNEL, self._notified, on_gap=self._missed, gap_first=True)
        return self

    def stop(self) -> None:
        if self._telling is not None:
            self._telling.cancel()
        self._listener.unhear(FLEET_CHANNEL)

    # ------------------------------------------------------------ the listener's thread

    def _notified(self, _channel: str, host: str) -> None:
        if host != self.host:  # this daemon's own write: it knows
            self._loop.call_soon_threadsafe(self._heard_of, host)

    def _missed(self) -> None:
        self._loop.call_soon_threadsafe(self._heard_of, ANY_HOST)

    # ------------------------------------------------------------ the loop

    def _heard_of(self, host: str) -> None:
        self._heard[host] = None
        if self._telling is None:
            delay = max(0.0, self._last_told + FLEET_HEARD_MIN_INTERVAL_S - self._loop.time())
            self._telling = self._loop.call_later(delay, self._tell)

    def _tell(self) -> None:
        self._telling = None
        self._last_told = self._loop.time()
        heard, self._heard = list(self._heard), {}
        for host in [ANY_HOST] if ANY_HOST in heard else heard:
            self._changed(host or None)
