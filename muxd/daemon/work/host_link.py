"""`HostLink`: this daemon's end of the actions daemons of a shared PostgreSQL database ask of each
other's panes (issue 30; the rows: store/host_actions.py).

It LISTENs on this host's channel (store/pg_listen.py, on the database's one listener) and hears
three things there: an action for this host (it claims every pending one, applies each through
`apply`, the same code a local request runs, and answers on the row, telling the asking host), an
answer to an action this daemon asked, and the end of an execution this daemon sent to another
host (the owner tells it when the ended row is written). Actions written while this daemon was
down are claimed when it opens; after a lost connection (`on_gap`) it claims again and wakes every
waiter to read its row: what was told meanwhile is lost.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

from muxd.config import HISTORY_PRUNE_INTERVAL_S, HOST_ACTIONS_KEPT_S, HOST_HEARD_KEPT
from muxd.errors import MuxdError
from muxd.executions.record import Execution
from muxd.store import host_actions
from muxd.store.database import Database, transaction
from muxd.store.host_actions import TOLD_ACTION, TOLD_ANSWER, TOLD_ENDED, HostAction, channel_of, told
from muxd.store.pg_listen import PgListener, notify

log = logging.getLogger(__name__)
UNFINISHED = "the daemon of this host stopped before it applied this action: it was not applied again"


class HostLink:
    """Listens for this host's actions and answers on `listener`, the one of the PostgreSQL database
    `db` writes to; `apply(action)` carries out one and returns its answer (JSON-able), or raises
    the MuxdError it is refused with."""

    def __init__(self, db: Database, listener: PgListener, apply: Callable[[HostAction], Awaitable[Any]]) -> None:
        self.db = db
        self.host = db.host
        self._apply = apply
        self._loop = asyncio.get_running_loop()
        self._waiters: dict[str, list[asyncio.Future[None]]] = {}
        self._heard: OrderedDict[str, None] = OrderedDict()  # told before anyone waited: a late waiter's
        self._sent_from: dict[str, str] = {}  # execution id -> the host that sent it, told of its end
        self._tasks: set[asyncio.Task[None]] = set()
        self._claiming = asyncio.Lock()  # one claim at a time: actions are applied in the order asked
        self._open = False
        self._listener = listener

    async def open(self) -> None:
        """Listen, then take what the last run left claimed but unanswered (refused: applied at
        most once) and what was asked while this daemon was down."""
        listening = self._listener.hear(channel_of(self.host), self._told, on_gap=self._missed)
        if not await asyncio.to_thread(listening.wait, self.db.busy_timeout_s):
            log.warning("not listening to other hosts' actions yet: %s", self.db.path)
        left = await self.db.call(lambda c: host_actions.refuse_unfinished(c, UNFINISHED), "refusing unfinished actions")
        if left:
            log.warning("%d action(s) of other hosts were claimed by this host's last run and never answered: "
                        "refused", left)
        self._open = True
        self._claim()
        self._start(self._forget_now_and_then())

    def close(self) -> None:
        self._open = False
        self._listener.unhear(channel_of(self.host))
        for task in self._tasks:
            task.cancel()

    # ------------------------------------------------------------ hearing (the listener's thread)

    def _told(self, _channel: str, payload: str) -> None:
        self._loop.call_soon_threadsafe(self._heard_of, payload)

    def _missed(self) -> None:
        self._loop.call_soon_threadsafe(self._gap)

    def _heard_of(self, payload: str) -> None:
        if payload.startswith(TOLD_ACTION + ":"):
            self._claim()
            return
        waiters = self._waiters.pop(payload, [])
        if not waiters:
            self._heard[payload] = None
            while len(self._heard) > HOST_HEARD_KEPT:
                self._heard.popitem(last=False)
        for future in waiters:
            if not future.done():
                future.set_result(None)

    def _gap(self) -> None:
        self._claim()
        for key in list(self._waiters):  # each reads its row again
            for future in self._waiters.pop(key):
                if not future.done():
                    future.set_result(None)

    # ------------------------------------------------------------ waiting (the loop)

    async def heard(self, kind: str, key: object, timeout_s: float) -> bool:
        """Whether `kind` (TOLD_ANSWER, TOLD_ENDED) of `key` is told within `timeout_s` (or a gap
        asks to read again); False when the time ran out."""
        payload = told(kind, key)
        if payload in self._heard:
            del self._heard[payload]
            return True
        future: asyncio.Future[None] = self._loop.create_future()
        self._waiters.setdefault(payload, []).append(future)
        try:
            await asyncio.wait_for(future, max(0.0, timeout_s))
            return True
        except TimeoutError:
            waiters = self._waiters.get(payload, [])
            if future in waiters:
                waiters.remove(future)
                if not waiters:
                    del self._waiters[payload]
            return False

    def tell(self, c: Any, host: str, kind: str, key: object) -> None:
        """(In a writer job.) Tell `host`'s daemon `kind` of `key` when the job's transaction commits."""
        notify(c, channel_of(host), told(kind, key))

    # ------------------------------------------------------------ applying (the loop)

    def _start(self, job: Awaitable[None]) -> None:
        task = self._loop.create_task(job)  # type: ignore[arg-type]
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _forget_now_and_then(self) -> None:
        """Answered actions older than HOST_ACTIONS_KEPT_S go, this host's (every owner its own)."""
        while self._open:
            before = time.time() - HOST_ACTIONS_KEPT_S
            try:
                await self.db.call(lambda c: host_actions.forget_answered(c, before), "forgetting old actions")
            except MuxdError as exc:
                log.error("other hosts' actions: %s", exc.message)
            await asyncio.sleep(HISTORY_PRUNE_INTERVAL_S)

    def _claim(self) -> None:
        if self._open:
            self._start(self._claim_now())

    async def _claim_now(self) -> None:
        async with self._claiming:
            try:
                actions = await self.db.call(host_actions.claim_pending, "claiming other hosts' actions")
            except MuxdError as exc:
                log.error("other hosts' actions: %s", exc.message)
                return
            for action in actions:  # in order: a cancel asked after its send finds the send applied
                await self._carry_out(action)

    async def _carry_out(self, action: HostAction) -> None:
        try:
            answer = await self._apply(action)
        except MuxdError as exc:
            log.info("refused %s from host %s (%s): %s", action.kind, action.from_host, action.principal, exc.message)
            state, error = "refused", (exc.code, exc.message, _plain(exc.detail))
            answer = None
        except Exception as exc:  # a bug must cost one action, not the link
            log.exception("applying %s from host %s", action.kind, action.from_host)
            state, error, answer = "refused", ("internal", f"internal error: {exc!r}", {}), None
        else:
            state, error = "done", None
            if action.kind == "send" and isinstance(answer, dict):
                self._sent_from[str(answer.get("id"))] = action.from_host

        def answer_it(c: Any) -> None:
            with transaction(c):
                host_actions.answer(c, action.seq, state, answer=answer, error=error)  # type: ignore[arg-type]
                self.tell(c, action.from_host, TOLD_ANSWER, action.seq)

        try:
            await self.db.call(answer_it, f"answering {action.kind} {action.seq}")
        except MuxdError as exc:
            log.error("the answer to %s from host %s is lost: %s", action.kind, action.from_host, exc.message)

    def execution_ended(self, execution: Execution) -> None:
        """An execution of this host ended (and is written): the host that sent it is told."""
        sender = self._sent_from.pop(execution.id, None)
        if sender is not None:
            self.db.submit(lambda c: self.tell(c, sender, TOLD_ENDED, execution.id),
                           f"telling host {sender} that {execution.id} ended")


def _plain(detail: dict[str, Any]) -> dict[str, Any]:
    """An error's detail as JSON can hold it (the odd non-JSON value as its text)."""
    return {key: value if isinstance(value, (str, int, float, bool, type(None), list, dict)) else str(value)
            for key, value in detail.items()}
