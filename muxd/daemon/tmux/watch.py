"""`muxd tmux watch`: the panes of running tmux servers, adopted as muxd panes.

Per watched server: the scopes asked for (the server, a session, a window, a pane), one control
client per tmux session holding a watched pane (daemon/tmux/link.py), and the adopted panes
(daemon/tmux/adopted_pane.py) in muxd sessions and windows that mirror tmux's: session `LABEL-NAME`
(`work-main` for session main of `tmux -L work`), its windows with tmux's indexes and names.
Discovery goes through libtmux (daemon/tmux/discovery.py), in a thread; live changes come from
the control clients: a pane in a watched window or session that appears is adopted, one that
closes ends as an exited pane, as do all of a server that exits.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from muxd.config import TMUX_COMMAND_TIMEOUT_S
from muxd.daemon.tmux.adopted_pane import AdoptedPane, seed_command
from muxd.daemon.panes.names import program_name
from muxd.daemon.panes.registry import Registry, Session, Window
from muxd.daemon.tmux.control import Notification, Output, layout_panes, quote
from muxd.daemon.tmux.discovery import (Scope, TmuxPaneFacts, TmuxServer, describe_server, framed, read_framed,
                                        target_kind)
from muxd.daemon.tmux.link import TmuxLink
from muxd.errors import BadRequest, Conflict, MuxdError, NotFound, Timeout
from muxd.terminal_text import visible

if TYPE_CHECKING:
    from muxd.daemon.panes.emulation import EmulationTurns
    from muxd.daemon.panes.pane import Pane

log = logging.getLogger(__name__)

_NAME_UNSAFE = re.compile(r"[:.\s]+")


class WatchedServer:
    def __init__(self, tmux: TmuxServer) -> None:
        self.tmux = tmux
        self.scopes: list[Scope] = []
        self.excluded: list[Scope] = []   # let go inside a wider scope (unwatch -t, kill-pane)
        self.links: dict[str, TmuxLink] = {}          # tmux session id -> its control client
        self.panes: dict[str, AdoptedPane] = {}       # tmux pane id -> the muxd pane
        # Panes tmux closed, kept (exited, their last screen) until unwatch or kill-pane: out of
        # `panes`, as a restarted server numbers its panes from %0 again.
        self.ended: list[AdoptedPane] = []
        self.sessions: dict[str, Session] = {}        # tmux session id -> muxd session
        self.windows: dict[str, Window] = {}          # tmux window id -> muxd window
        self.adopting: set[str] = set()
        self.seen: set[str] = set()  # tmux pane ids listed already: a layout showing them needs no new look

    def wants(self, facts: TmuxPaneFacts) -> bool:
        return any(s.covers(facts) for s in self.scopes) and not any(s.covers(facts) for s in self.excluded)

    @property
    def name_prefix(self) -> str:
        """The start of its muxd sessions' names: the socket's name, "tmux" for the default."""
        label = os.path.basename(self.tmux.args[1]) if self.tmux.args else "tmux"
        return _NAME_UNSAFE.sub("-", label).lstrip("$@%") or "tmux"


class TmuxWatcher:
    """Adopts tmux's panes into `registry`; `add_pane` has the daemon follow one (history,
    detection, attached clients), which reports its end to `pane_exited`."""

    def __init__(self, registry: Registry, *, add_pane: Callable[[Window, Pane], None],
                 pane_exited: Callable[[Pane], None], turns: EmulationTurns, scrollback_bytes: int) -> None:
        self._registry = registry
        self._add_pane = add_pane
        self._pane_exited = pane_exited
        self._turns = turns  # the loop's share for emulation, as every pane's (daemon/panes/emulation.py)
        self._scrollback_bytes = scrollback_bytes
        self.servers: dict[tuple[str, ...], WatchedServer] = {}
        self._tasks: set[asyncio.Task[Any]] = set()

    # ------------------------------------------------------------ requests

    async def watch(self, args: list[str], target: str | None) -> list[Pane]:
        """Adopt the panes `target` names in the tmux server `args` names (None: all of them),
        and those that appear in that scope later. Returns the scope's panes."""
        watched = self.servers.get(tuple(args))
        tmux = watched.tmux if watched is not None else await self._ask(TmuxServer, args)
        await self._ask(tmux.check_alive)
        scope = await self._ask(tmux.resolve, target)
        watched = self.servers.setdefault(tuple(args), watched or WatchedServer(tmux))
        if scope not in watched.scopes:
            watched.scopes.append(scope)
        watched.excluded = [s for s in watched.excluded if not s.within(scope)]
        every = await self._ask(tmux.panes)
        watched.seen = {f.pane for f in every}
        facts = [f for f in every if scope.covers(f)]
        if not facts:
            raise NotFound(f"{tmux.described} has no pane in {target or 'it'}")
        await asyncio.gather(*(self._adopt(watched, f) for f in facts))
        return [watched.panes[f.pane] for f in facts if f.pane in watched.panes]

    async def unwatch(self, args: list[str], target: str | None) -> list[str]:
        """Let go of the panes `target` names (None: every pane of that server); their muxd ids."""
        watched = self.servers.get(tuple(args))
        if watched is None:
            raise NotFound(f"muxd is not watching {describe_server(args)}")
        scope = await self._unwatch_scope(watched, target) if target else Scope("server")
        watched.scopes = [s for s in watched.scopes if not s.within(scope)]
        if any(scope.within(s) for s in watched.scopes):
            watched.excluded.append(scope)
        released = [p for p in [*watched.panes.values(), *watched.ended] if scope.covers(p.tmux_facts)]
        for pane in released:
            self._release(watched, pane)
        if not watched.scopes:
            await self._forget(watched)
        return [p.id for p in released]

    async def _unwatch_scope(self, watched: WatchedServer, target: str) -> Scope:
        """What `target` names, asked of tmux; of a server gone, read from the adopted panes'
        records (their ids, their session's name)."""
        try:
            return await self._ask(watched.tmux.resolve, target)
        except NotFound:
            kind = target_kind(target)
            for pane in [*watched.panes.values(), *watched.ended]:
                facts = pane.tmux_facts
                if target in (facts.pane, facts.window, facts.session, facts.session_name):
                    return Scope(kind, facts.session, facts.window, facts.pane)
            raise

    async def _ask(self, question: Any, *args: Any) -> Any:
        """A libtmux question, in a thread: it runs `tmux` and waits for it."""
        try:
            return await asyncio.wait_for(asyncio.to_thread(question, *args), TMUX_COMMAND_TIMEOUT_S)
        except TimeoutError:
            raise Timeout(f"tmux did not answer within {TMUX_COMMAND_TIMEOUT_S:g}s") from None
        except MuxdError:
            raise
        except Exception as exc:  # libtmux's own (no tmux installed, a failed command)
            raise NotFound(f"tmux: {exc}") from exc

    # ------------------------------------------------------------ adopting

    async def _adopt(self, watched: WatchedServer, facts: TmuxPaneFacts) -> None:
        if facts.pane in watched.panes or facts.pane in watched.adopting:
            return
        watched.adopting.add(facts.pane)
        try:
            link = await self._link(watched, facts.session)
            pane = self._new_pane(watched, facts, link)
            reply = link.command(seed_command(facts.pane), replies=3, then=pane.seed)
            assert reply is not None
            try:
                await asyncio.wait_for(reply, TMUX_COMMAND_TIMEOUT_S)
                await self._read_window_name(watched, link, facts.window)
            except TimeoutError:
                log.warning("tmux pane %s: no seed capture within %gs", facts.pane, TMUX_COMMAND_TIMEOUT_S)
            except Exception as exc:  # noqa: BLE001 - the link ended: closed() has ended the pane
                log.info("tmux pane %s: no seed capture: %s", facts.pane, exc)
        finally:
            watched.adopting.discard(facts.pane)

    async def _read_window_name(self, watched: WatchedServer, link: TmuxLink, tmux_window: str) -> None:
        """The window's name now that `link` hears renames: one between discovery and the link's
        start was told to nobody (tmux's automatic rename of a window whose shell was starting)."""
        named = link.command(f"display-message -p -t {tmux_window} {quote(framed('window_name'))}")
        assert named is not None
        replies = await asyncio.wait_for(named, TMUX_COMMAND_TIMEOUT_S)
        window = watched.windows.get(tmux_window)
        if window is None or not replies or replies[0].error:
            return
        try:  # framed: a name may hold newlines, which split the reply into lines
            (name,), _ = read_framed(b"\n".join(replies[0].lines), 1)
        except ValueError:
            return  # not what was asked for (a \r before a newline is lost on the way): the name stays
        window.name = program_name(name)

    async def _link(self, watched: WatchedServer, session: str) -> TmuxLink:
        link = watched.links.get(session)
        if link is None or link.closed:
            link = TmuxLink(watched.tmux.args, session, _Listener(self, watched))
            watched.links[session] = link
            await link.start()
        return link

    def _new_pane(self, watched: WatchedServer, facts: TmuxPaneFacts, link: TmuxLink) -> AdoptedPane:
        window = self._window(watched, facts)
        pane = AdoptedPane(self._registry.next_pane_number(), facts=facts, server_label=watched.tmux.label,
                           link=link, scrollback_bytes=self._scrollback_bytes, on_exit=self._pane_exited,
                           turns=self._turns)
        pane.on_released = lambda released: self._released(watched, released)
        pane.start(asyncio.get_running_loop())
        neighbour = window.panes[-1] if window.panes else None
        self._add_pane(window, pane)
        if neighbour is not None:
            try:  # a place in muxd's layout, for attach: the size stays tmux's
                window.split(neighbour, pane, horizontal=False)
            except BadRequest:
                pass  # too small to split: the pane is listed, attach leaves it out
        watched.panes[facts.pane] = pane
        log.info("pane %s adopted from %s %s", pane.id, watched.tmux.described, facts.pane)
        return pane

    def _window(self, watched: WatchedServer, facts: TmuxPaneFacts) -> Window:
        registry = self._registry
        window = watched.windows.get(facts.window)
        if window is not None and window.session in registry.sessions and window in window.session.windows:
            return window
        session = watched.sessions.get(facts.session)
        if session is None or session not in registry.sessions:
            session = self._session(watched, facts.session_name)
            watched.sessions[facts.session] = session
        used = {w.index for w in session.windows}
        window = registry.new_window(session, program_name(facts.window_name),
                                     None if facts.window_index in used else facts.window_index)
        watched.windows[facts.window] = window
        return window

    def _session(self, watched: WatchedServer, tmux_name: str) -> Session:
        registry = self._registry
        base = visible(f"{watched.name_prefix}-{_NAME_UNSAFE.sub('-', tmux_name)}")[:48]
        for n in range(1, 100):
            name = base if n == 1 else f"{base}-{n}"
            if registry.session_named(name) is None:
                return registry.new_session(name)
        raise Conflict(f"no free muxd session name for tmux session {tmux_name!r}")

    # ------------------------------------------------------------ what the control clients say

    def output(self, watched: WatchedServer, link: TmuxLink, event: Output) -> None:
        pane = watched.panes.get(event.pane)
        if pane is not None and pane.link is link:  # a window in two sessions is heard by both links
            pane.receive(event.data)

    def notification(self, watched: WatchedServer, link: TmuxLink, event: Notification) -> None:
        name, args = event.name, event.args
        if name == "layout-change" and len(args) >= 2:
            self._layout_changed(watched, args[0], args[1], args[2] if len(args) > 2 else args[1])
        elif name in ("window-add", "sessions-changed"):
            self._spawn(self._discover(watched))  # tmux says which window, not which panes
        elif name in ("window-close", "unlinked-window-close") and args:
            for pane in [p for p in watched.panes.values() if p.tmux_facts.window == args[0]]:
                self._ended(watched, pane)
        elif name == "window-renamed" and len(args) >= 2:
            window = watched.windows.get(args[0])
            if window is not None:
                self._registry.rename_window(window, program_name(" ".join(args[1:])))
        elif name == "session-changed" and args and args[0] != link.session:
            # Its session ended and tmux moved it to another (detach-on-destroy off): the panes
            # of its own session have gone.
            self._spawn(link.close())
            self.closed(watched, link)

    def _layout_changed(self, watched: WatchedServer, window: str, layout: str, visible: str) -> None:
        geometry = {g.pane: g for g in layout_panes(layout)}
        # A zoomed pane has the visible layout's size (the whole window); the others keep theirs.
        geometry.update({g.pane: g for g in layout_panes(visible) if g.pane in geometry})
        for pane in [p for p in watched.panes.values() if p.tmux_facts.window == window]:
            placed = geometry.get(pane.tmux_pane)
            if placed is None:
                self._ended(watched, pane)
            else:
                pane.follow_size(placed.columns, placed.lines)
        if any(p not in watched.panes and p not in watched.seen for p in geometry):
            self._spawn(self._discover(watched))

    async def _discover(self, watched: WatchedServer) -> None:
        """Adopt what appeared in a watched scope since the last look (and link new sessions)."""
        try:
            facts = await self._ask(watched.tmux.panes)
        except Exception as exc:  # noqa: BLE001 - the server may be on its way out
            log.info("%s: cannot list panes: %s", watched.tmux.described, exc)
            return
        if self.servers.get(tuple(watched.tmux.args)) is not watched:
            return  # unwatched meanwhile
        watched.seen.update(f.pane for f in facts)
        new = [f for f in facts if f.pane not in watched.panes and watched.wants(f)]
        await asyncio.gather(*(self._adopt(watched, f) for f in new))

    def closed(self, watched: WatchedServer, link: TmuxLink) -> None:
        """A control client ended (%exit, its session or the server is gone): so did its panes."""
        if watched.links.get(link.session) is link:
            del watched.links[link.session]
        watched.seen.clear()  # a server started again numbers its panes from %0
        for pane in [p for p in watched.panes.values() if p.link is link]:
            self._ended(watched, pane)

    @staticmethod
    def _ended(watched: WatchedServer, pane: AdoptedPane) -> None:
        """tmux closed `pane`: it exits in muxd, kept until let go."""
        if watched.panes.get(pane.tmux_pane) is pane:
            del watched.panes[pane.tmux_pane]
            watched.ended.append(pane)
        pane.tmux_closed()

    # ------------------------------------------------------------ letting go

    def _release(self, watched: WatchedServer, pane: AdoptedPane) -> None:
        """Let `pane` go (unwatch): out of muxd, the tmux pane untouched."""
        pane.on_released = None
        self._drop(watched, pane)
        if pane.window is not None and pane in getattr(pane.window, "panes", []):
            self._registry.remove_pane(pane)  # closes it: a release, the tmux pane runs on
        else:
            pane.close()

    def _released(self, watched: WatchedServer, pane: AdoptedPane) -> None:
        """muxd closed an adopted pane (kill-pane, kill-session): tmux's pane is not adopted again."""
        if self._drop(watched, pane) and not pane.exited:
            facts = pane.tmux_facts
            watched.excluded.append(Scope("pane", facts.session, facts.window, facts.pane))

    @staticmethod
    def _drop(watched: WatchedServer, pane: AdoptedPane) -> bool:
        """Forget `pane` in `watched`; False if it was not there."""
        if pane in watched.ended:
            watched.ended.remove(pane)
            return True
        if watched.panes.get(pane.tmux_pane) is pane:
            del watched.panes[pane.tmux_pane]
            return True
        return False

    async def _forget(self, watched: WatchedServer) -> None:
        for pane in [*watched.panes.values(), *watched.ended]:
            self._release(watched, pane)
        self.servers.pop(tuple(watched.tmux.args), None)
        await asyncio.gather(*(link.close() for link in watched.links.values()))
        watched.links.clear()

    def close(self) -> None:
        """The daemon is stopping: end every control client (the tmux panes run on)."""
        for watched in self.servers.values():
            for link in watched.links.values():
                link.kill()
        for task in self._tasks:
            task.cancel()

    def _spawn(self, work: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


class _Listener:
    """What one watched server's control clients report, handed to the watcher."""

    def __init__(self, watcher: TmuxWatcher, watched: WatchedServer) -> None:
        self._watcher = watcher
        self._watched = watched

    def output(self, link: TmuxLink, event: Output) -> None:
        self._watcher.output(self._watched, link, event)

    def notification(self, link: TmuxLink, event: Notification) -> None:
        self._watcher.notification(self._watched, link, event)

    def closed(self, link: TmuxLink) -> None:
        self._watcher.closed(self._watched, link)

    async def caught_up(self, link: TmuxLink) -> None:
        for pane in [p for p in self._watched.panes.values() if p.link is link]:
            await pane.output_room()
