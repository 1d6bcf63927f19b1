"""`muxd top` live: the daemon's events drive it. An event marks what is shown as stale; the
panes and their executions are then read again and the frame redrawn, at most
REDRAW_MIN_INTERVAL_S apart however many events come; a tick each TICK_S redraws the times
from what is held (no request). At rest it asks the daemon nothing.

Keys act on the selected agent: Enter goes to its pane (switch-client when top runs inside an
attached muxd client, else top ends and `muxd attach` takes the terminal), y/n answer its
yes/no confirmation (detectors/confirm_keys.py), e shows its execution, q quits.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import signal
import time

from muxd.cli.top_board import AgentRow, agent_rows, executions_by_pane
from muxd.cli.top_frame import frame_lines, page_lines
from muxd.cli.top_terminal import TopTerminal
from muxd.client.connection import Client
from muxd.config import EXECUTION_LIST_LIMIT_MAX, SUBMIT_GAP_S
from muxd.detectors.confirm_keys import confirmation_keys
from muxd.errors import ConnectionLost, MuxdError, StoreUnavailable
from muxd.executions.record import Execution
from muxd.protocol.messages import (
    DaemonEvent, GetExecution, ListExecutions, ListPanes, PaneInfo, SendKeys, ShowPane, Subscribe, SwitchClient,
)

REDRAW_MIN_INTERVAL_S = 0.1  # events redraw at most ten times a second
TICK_S = 1.0                 # the times in state move on


async def read_board(client: Client, known: dict[str, Execution] | None = None,
                     ) -> tuple[list[PaneInfo], dict[str, Execution]]:
    """Every pane, and each one's running (else last) execution; `known`, the executions read
    before, stay shown while the history cannot be read."""
    panes = (await client.call(ListPanes, all=True)).panes
    return panes, await read_executions(client, panes, known)


async def read_executions(client: Client, panes: list[PaneInfo], known: dict[str, Execution] | None = None,
                          ) -> dict[str, Execution]:
    """Each of `panes`' running (else last) execution; `known` while the history cannot be read."""
    try:
        recent = (await client.call(ListExecutions, limit=EXECUTION_LIST_LIMIT_MAX)).executions
        active = (await client.call(ListExecutions, active=True, limit=EXECUTION_LIST_LIMIT_MAX)).executions
    except StoreUnavailable:  # the history's writes lag (it says so): the agents matter more
        return dict(known or {})
    return executions_by_pane(panes, recent, active)


class LiveTop:
    """One run of the live view. `run()` returns the pane to attach to once top ends, if Enter chose one."""

    def __init__(self, client: Client, terminal: TopTerminal, *, inside_pane: str | None = None) -> None:
        self.client = client
        self.terminal = terminal
        self.inside_pane = inside_pane  # top runs in this pane of the same server: Enter switches its client
        self.panes: list[PaneInfo] = []
        self.executions: dict[str, Execution] = {}
        self.rows: list[AgentRow] = []
        self.selected: str | None = None
        self.message: str | None = None
        self.page: list[str] | None = None  # an execution shown over the table
        self.page_first = 0
        self.attach_to: str | None = None
        self.done = False
        self.failure: BaseException | None = None  # an action's unexpected error: top ends with it
        self._stale = True
        self._wake = asyncio.Event()
        self._actions: set[asyncio.Task[None]] = set()

    def heard(self, message: object) -> None:
        """The connection's event callback: what is shown is stale."""
        if isinstance(message, DaemonEvent):
            self._stale = True
            self._wake.set()

    async def run(self) -> str | None:
        loop = asyncio.get_running_loop()
        ended = asyncio.ensure_future(self.client.ended())
        ended.add_done_callback(lambda _: self._wake.set())
        loop.add_reader(self.terminal.fd_in, self._typed)
        loop.add_signal_handler(signal.SIGWINCH, self._resized)
        try:
            await self.client.call(Subscribe, events=True)
            last_read = -REDRAW_MIN_INTERVAL_S
            next_tick = loop.time()
            while not self.done:
                if ended.done():
                    raise ConnectionLost(f"the server went away ({ended.result().message})")
                now = loop.time()
                if self._stale and now - last_read >= REDRAW_MIN_INTERVAL_S:
                    self._stale, last_read = False, now
                    self.panes, self.executions = await read_board(self.client, self.executions)
                    self._rank()
                    next_tick = now + TICK_S
                elif now >= next_tick:
                    self._rank()  # the times in state move on: from what is held, no request
                    next_tick = now + TICK_S
                self._paint()
                due = min(next_tick, last_read + REDRAW_MIN_INTERVAL_S) if self._stale else next_tick
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), max(0.0, due - loop.time()))
            if self.failure is not None:
                raise self.failure
        finally:
            loop.remove_reader(self.terminal.fd_in)
            loop.remove_signal_handler(signal.SIGWINCH)
            ended.cancel()
            for task in self._actions:
                task.cancel()
        return self.attach_to

    # ------------------------------------------------------------ drawing

    def _rank(self) -> None:
        self.rows = agent_rows(self.panes, self.executions)
        if self.selected not in {r.pane_id for r in self.rows}:
            self.selected = self.rows[0].pane_id if self.rows else None

    def _paint(self) -> None:
        columns, lines = self.terminal.size()
        if self.page is not None:
            self.terminal.paint(page_lines(self.page, self.page_first, columns, lines))
        else:
            self.terminal.paint(frame_lines(self.rows, self.selected, columns, lines, message=self.message))

    def _resized(self) -> None:
        self.terminal.invalidate()
        self._wake.set()

    # ------------------------------------------------------------ keys

    def _typed(self) -> None:
        for key in self.terminal.keys():
            self._key(key)
        self._wake.set()

    def _key(self, key: str) -> None:
        if self.page is not None:  # an execution is shown: arrows scroll it, any other key leaves it
            if key in ("up", "down"):
                self.page_first = max(0, min(len(self.page) - 1, self.page_first + (1 if key == "down" else -1)))
            else:
                self.page = None
            return
        self.message = None
        if key == "quit":
            self.done = True
        elif key in ("up", "down") and self.rows:
            ids = [r.pane_id for r in self.rows]
            at = ids.index(self.selected) if self.selected in ids else 0
            self.selected = ids[max(0, min(len(ids) - 1, at + (1 if key == "down" else -1)))]
        elif key in ("enter", "yes", "no", "execution") and self.selected is not None:
            self._act(key, self.selected)

    def _act(self, key: str, pane_id: str) -> None:
        actions = {"enter": self._go_to, "yes": self._answer, "no": self._answer, "execution": self._show_execution}
        task = asyncio.ensure_future(actions[key](pane_id, key))
        self._actions.add(task)
        task.add_done_callback(self._acted)

    def _acted(self, task: asyncio.Task[None]) -> None:
        self._actions.discard(task)
        failure = None if task.cancelled() else task.exception()
        if isinstance(failure, MuxdError):
            self.message = failure.message  # refused or not found: said on the last line, top goes on
        elif failure is not None:
            self.failure, self.done = failure, True
        self._wake.set()

    async def _go_to(self, pane_id: str, _key: str) -> None:
        if self.inside_pane is None:
            self.attach_to, self.done = pane_id, True
            return
        await self.client.call(SwitchClient, target=pane_id, pane=self.inside_pane)
        self.message = f"switched to {pane_id}"

    async def _answer(self, pane_id: str, key: str) -> None:
        pane = (await self.client.call(ShowPane, target=pane_id)).pane  # as it is now, not as last drawn
        for n, name in enumerate(confirmation_keys(pane.agent, key == "yes")):
            if n:  # each key its own write, as a person types them (Aider's y, then Enter)
                await asyncio.sleep(SUBMIT_GAP_S)
            await self.client.call(SendKeys, target=pane_id, keys=[name])
        self.message = f"answered {key} to {pane_id}"

    async def _show_execution(self, pane_id: str, _key: str) -> None:
        from muxd.cli.history_commands import print_execution

        row = next((r for r in self.rows if r.pane_id == pane_id), None)
        if row is None or row.execution_id is None:
            self.message = f"no execution in {pane_id} yet"
            return
        reply = await self.client.call(GetExecution, execution_id=row.execution_id)
        text = io.StringIO()
        with contextlib.redirect_stdout(text):
            print_execution(reply.execution, None)
        self.page, self.page_first = text.getvalue().splitlines(), 0


def once_lines(panes: list[PaneInfo], executions: dict[str, Execution], width: int, *, color: bool) -> list[str]:
    """`muxd top --once`: the frame with every agent, no selection and no keys line."""
    rows = agent_rows(panes, executions, time.time())
    return frame_lines(rows, None, width, len(rows) + 3, color=color)[:-1]
