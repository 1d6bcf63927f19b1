"""One tmux control client (`tmux -C attach-session -f ignore-size -t $N`) of a watched server:
it hears the output of the panes of one tmux session, and carries muxd's commands to tmux
(captures, `send-keys -H`). The asyncio edge of daemon/tmux/control.py's parser.

tmux sends a control client only the output of the windows of its own session, so a watched
server has one link per session. `ignore-size` keeps the link from ever sizing a window.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from muxd.config import TMUX_SEND_KEYS_CHUNK_BYTES
from muxd.daemon.tmux.control import ControlParser, Notification, Output, Reply
from muxd.errors import ConnectionLost

log = logging.getLogger(__name__)

READ_CHUNK_BYTES = 64 * 1024
CLOSE_GRACE_S = 2.0  # a link asked to detach that has not gone by then is terminated


class LinkListener(Protocol):
    def output(self, link: TmuxLink, event: Output) -> None: ...
    def notification(self, link: TmuxLink, event: Notification) -> None: ...
    def closed(self, link: TmuxLink) -> None: ...
    async def caught_up(self, link: TmuxLink) -> None:
        """Return once the screens fed by `link` have room for more output."""


@dataclass
class _Pending:
    replies: int
    then: Callable[[list[Reply]], None] | None
    future: asyncio.Future[list[Reply]] | None
    got: list[Reply] = field(default_factory=list)


class TmuxLink:
    def __init__(self, server_args: list[str], session: str, listener: LinkListener) -> None:
        self.server_args = server_args  # ["-L", "work"], ["-S", path] or []
        self.session = session          # tmux's session id, "$0"
        self._listener = listener
        self._parser = ControlParser()
        self._pending: deque[_Pending] = deque()
        self._process: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None
        self.closed = False

    async def start(self) -> None:
        env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}  # not "nested"
        self._process = await asyncio.create_subprocess_exec(
            "tmux", *self.server_args, "-C", "attach-session", "-f", "ignore-size", "-t", self.session,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
            env=env, start_new_session=True)
        self._reader = asyncio.create_task(self._read(), name=f"tmux link {self.session}")

    # ------------------------------------------------------------ commands

    def command(self, line: str, *, replies: int = 1, then: Callable[[list[Reply]], None] | None = None,
                wait: bool = True) -> asyncio.Future[list[Reply]] | None:
        """Send a command line (`replies`: how many commands it holds, `;`-separated). `then` is
        called with the replies the moment they are read, before any later output is handled."""
        future = asyncio.get_running_loop().create_future() if wait else None
        if self.closed or self._process is None or self._process.stdin is None:
            if future is not None:
                future.set_exception(ConnectionLost(f"the tmux control client of {self.session} has ended"))
            return future
        self._pending.append(_Pending(replies, then, future))
        try:
            self._process.stdin.write(line.encode() + b"\n")
        except (ConnectionError, RuntimeError):
            pass  # the reader sees the end and fails what waits
        return future

    def send_keys(self, pane: str, data: bytes) -> None:
        """Type `data` into tmux pane `pane`, byte for byte (`send-keys -H`), answers unread."""
        for start in range(0, len(data), TMUX_SEND_KEYS_CHUNK_BYTES):
            chunk = data[start:start + TMUX_SEND_KEYS_CHUNK_BYTES]
            self.command(f"send-keys -t {pane} -H " + " ".join(f"{b:02x}" for b in chunk), wait=False)

    # ------------------------------------------------------------ reading

    async def _read(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        try:
            while chunk := await self._process.stdout.read(READ_CHUNK_BYTES):
                for event in self._parser.feed(chunk):
                    self._dispatch(event)
                await self._listener.caught_up(self)  # backpressure: tmux holds the rest meanwhile
        except Exception:  # a listener's bug ends this link, never the daemon
            log.exception("tmux link %s failed", self.session)
        finally:
            self._ended()

    def _dispatch(self, event: Output | Reply | Notification) -> None:
        if isinstance(event, Output):
            self._listener.output(self, event)
        elif isinstance(event, Notification):
            self._listener.notification(self, event)
        elif event.ours and self._pending:  # the attach command's own reply has no one waiting
            pending = self._pending[0]
            pending.got.append(event)
            if len(pending.got) == pending.replies:
                self._pending.popleft()
                if pending.then is not None:
                    pending.then(pending.got)
                if pending.future is not None and not pending.future.done():
                    pending.future.set_result(pending.got)

    def _ended(self) -> None:
        if self.closed:
            return
        self.closed = True
        self._fail_pending()
        self._listener.closed(self)

    def _fail_pending(self) -> None:
        while self._pending:
            pending = self._pending.popleft()
            if pending.future is not None and not pending.future.done():
                pending.future.set_exception(ConnectionLost(f"the tmux control client of {self.session} ended"))

    # ------------------------------------------------------------ ending

    async def close(self) -> None:
        """Detach (an empty line ends a control client), then make sure the process is gone."""
        process = self._process
        if process is None:
            return
        self.closed = True  # a release, not an end of the tmux panes: the listener is not told
        self._fail_pending()
        if process.returncode is None and process.stdin is not None:
            try:
                process.stdin.write(b"\n")
            except (ConnectionError, RuntimeError):
                pass
            try:
                await asyncio.wait_for(process.wait(), CLOSE_GRACE_S)
            except TimeoutError:
                process.kill()
                await process.wait()
        if self._reader is not None:
            self._reader.cancel()

    def kill(self) -> None:
        """End the control client now (the daemon is stopping): tmux only sees a client leave."""
        self.closed = True
        self._fail_pending()
        if self._process is not None and self._process.returncode is None:
            self._process.kill()
        if self._reader is not None:
            self._reader.cancel()
