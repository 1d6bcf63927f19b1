"""wait_for's attention form: return when one of many panes needs its caller (an agent waits for
a yes or an answer, hit a usage limit, failed, or finished its turn), or when each named pane has.

One event connection hears the bus (Subscribe events=True, the kinds asked for) for every pane
at once; the daemon's attention board, read right after subscribing, answers at once for a pane
that already needs you. The connection presents the caller's token, so a pane-scoped caller
hears, and is answered about, its own panes only.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from muxd.daemon.attention.board import NEED_ORDER
from muxd.errors import BadRequest, NotFound
from muxd.mcp_server.link import connect_as_caller, current_client
from muxd.mcp_server.summary_tools import summary_record
from muxd.mcp_server.wait_progress import WaitProgress
from muxd.protocol.event_messages import DaemonEvent
from muxd.protocol.messages import ListPanes, PaneInfo, Subscribe, Summary

NEEDS: tuple[str, ...] = NEED_ORDER  # waiting, limited, failed, finished: the board's kinds
# The bus's event for each need (a need on the board begins with it).
NEED_EVENTS = {"waiting": "agent-waiting", "limited": "agent-limited", "failed": "agent-failed",
               "finished": "agent-idle"}
_NEED_OF_EVENT = {event: need for need, event in NEED_EVENTS.items()}
_TEXT_FIELD = {"waiting": "question", "limited": "error", "failed": "error"}


def check_needs(attention: str | list[str]) -> set[str]:
    """The needs asked for, each one known; a bad_request naming the unknown ones otherwise."""
    wanted = [attention] if isinstance(attention, str) else list(attention)
    unknown = [a for a in wanted if a not in NEEDS]
    if unknown:
        raise BadRequest(f"attention: unknown kind(s) {', '.join(map(repr, unknown))}; known: {', '.join(NEEDS)}",
                         field="attention")
    if not wanted:
        raise BadRequest(f"attention is empty; name one or more of {', '.join(NEEDS)}", field="attention")
    return set(wanted)


@dataclass(frozen=True)
class Sighting:
    """A pane found needing its caller: from the board (read at the start) or from an event."""

    pane_id: str
    need: str
    since: float
    text: str | None = None
    resets_at: float | None = None
    execution_id: str | None = None

    @classmethod
    def of_pane(cls, pane: PaneInfo) -> Sighting:
        return cls(pane.id, pane.attention or "", pane.attention_since or 0.0, pane.attention_text)

    @classmethod
    def of_event(cls, event: DaemonEvent) -> Sighting:
        return cls(event.pane_id or "", _NEED_OF_EVENT[event.kind], event.at, event.question or event.error,
                   event.resets_at, event.execution_id)


class AttentionWait:
    """One wait: on `panes` (ids; None: every pane the caller may see), for `needs`, needs that
    began after `after` only; `every` (mode=all): until each pane has needed you, else the first."""

    def __init__(self, panes: list[str] | None, needs: set[str], *, every: bool, after: float | None,
                 progress: WaitProgress) -> None:
        self.panes = panes
        self.needs = needs
        self.every = every and panes is not None
        self.after = after
        self.progress = progress
        self.found: dict[str, Sighting] = {}  # pane -> its first sighting
        self.events: asyncio.Queue[Any] = asyncio.Queue()

    def _take(self, sighting: Sighting) -> None:
        if sighting.need not in self.needs or (self.after is not None and sighting.since <= self.after):
            return
        if self.panes is not None and sighting.pane_id not in self.panes:
            return
        self.found.setdefault(sighting.pane_id, sighting)

    def _done(self) -> bool:
        if self.every:
            return all(p in self.found for p in self.panes or ())
        return bool(self.found)

    def _heard(self, event: Any) -> None:
        if not isinstance(event, DaemonEvent) or event.pane_id is None:
            return
        if event.kind == "agent-state":
            self.progress.state(event.pane_id, event.state or "?")
        elif event.kind in _NEED_OF_EVENT:
            self._take(Sighting.of_event(event))

    async def run(self, deadline: float) -> bool:
        """Wait until the panes need you (True) or `deadline` passes (False)."""
        kinds = [NEED_EVENTS[n] for n in NEEDS if n in self.needs]
        if self.progress.active:
            kinds.append("agent-state")  # only to tell the caller what the panes do meanwhile
        watcher = await connect_as_caller("muxd-mcp-attention", self.events.put_nowait)
        try:
            await watcher.call(Subscribe, events=True, kinds=kinds, panes=self.panes)
            # The board after subscribing: a need that began in between is seen twice, never lost.
            for pane in (await current_client().call(ListPanes, all=True)).panes:
                if self.panes is None or pane.id in self.panes:
                    self.progress.seen(pane.id, pane.agent.activity.state)
                    if pane.attention is not None:
                        self._take(Sighting.of_pane(pane))
            self.progress.start()
            while not self._done():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                try:
                    async with asyncio.timeout(remaining):
                        event = await self.events.get()
                except TimeoutError:
                    return False
                self._heard(event)
                while not self.events.empty():  # what arrived together is answered together
                    self._heard(self.events.get_nowait())
            return True
        finally:
            await watcher.close()


async def resolve_panes(targets: Iterable[str]) -> list[str]:
    """The ids of the panes `targets` name (`%N` or names), in their order, each once."""
    client = current_client()
    replies = await asyncio.gather(*(client.call(Summary, target=t) for t in targets))
    return list(dict.fromkeys(r.summary.pane_id for r in replies))


async def pane_result(sighting: Sighting) -> dict[str, Any]:
    """One pane that needs you: what it needs, since when, its question or error, and its summary."""
    try:
        summary = (await current_client().call(Summary, target=sighting.pane_id)).summary
    except NotFound:
        summary = None  # the pane is gone
    text_field = _TEXT_FIELD.get(sighting.need)
    return {"pane_id": sighting.pane_id, "attention": sighting.need, "since": sighting.since,
            "question": sighting.text if text_field == "question" else None,
            "error": sighting.text if text_field == "error" else None,
            "resets_at": sighting.resets_at, "execution_id": sighting.execution_id,
            "state": summary.activity.state if summary is not None else None,
            "summary": summary_record(summary) if summary is not None else None}


async def wait_attention(panes: list[str] | None, needs: set[str], *, every: bool, after: float | None,
                         deadline: float, progress: WaitProgress) -> dict[str, Any]:
    """The attention wait's result: `panes` lists each pane that needs you (who is blocked on
    you first); `since` is the latest need's start, to pass back as `after`."""
    started = time.monotonic()
    targets = await resolve_panes(panes) if panes is not None else None
    wait = AttentionWait(targets, needs, every=every, after=after, progress=progress)
    try:
        matched = await wait.run(deadline)
    finally:
        await progress.stop()
    order = {need: i for i, need in enumerate(NEEDS)}
    found = sorted(wait.found.values(), key=lambda s: (order[s.need], s.since))
    return {"matched": matched, "reason": "attention" if matched else "timed_out",
            "elapsed_s": round(time.monotonic() - started, 3),
            "since": max((s.since for s in found), default=after),
            "panes": [await pane_result(s) for s in found]}
