"""A pane adopted from a running tmux server (`muxd tmux watch`): tmux owns the program and its
terminal; muxd keeps a screen of its own, fed by the control client's `%output`
(daemon/tmux/link.py), so detection, summaries, the history and MCP see it as any pane.

Input goes back through tmux (`send-keys -H`). The size follows tmux's (its layout changes):
muxd never resizes a tmux pane. Closing it in muxd lets it go: the tmux pane runs on untouched.
When tmux closes it (or the server ends) it ends as an exited pane, its last screen kept.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from muxd.config import PANE_PENDING_MAX_BYTES, PANE_PENDING_RESUME_BYTES, TMUX_SEED_HISTORY_LINES
from muxd.daemon.panes import pty as ptys
from muxd.daemon.panes.emulation import EmulationTurns
from muxd.daemon.panes.pane import Pane
from muxd.daemon.tmux.control import Reply, quote

if TYPE_CHECKING:
    from muxd.daemon.tmux.discovery import TmuxPaneFacts
    from muxd.daemon.tmux.link import TmuxLink

log = logging.getLogger(__name__)

# The display-message format read with the seed capture: where the cursor is, which modes hold.
SEED_FORMAT = ("#{cursor_x} #{cursor_y} #{alternate_on} #{keypad_cursor_flag} #{keypad_flag} "
               "#{alternate_saved_x} #{alternate_saved_y}")


def seed_command(pane: str) -> str:
    """One tmux command line (so no output comes in between) whose three replies are what
    AdoptedPane.seed draws: the screen with some history (the alternate screen, when a program
    shows one), the main screen saved behind it (-a; empty without one), and SEED_FORMAT."""
    return (f"capture-pane -p -e -S -{TMUX_SEED_HISTORY_LINES} -t {pane} ; "
            f"capture-pane -p -e -a -q -t {pane} ; display-message -p -t {pane} {quote(SEED_FORMAT)}")


class AdoptedPane(Pane):
    resizable = False

    def __init__(self, number: int, *, facts: TmuxPaneFacts, server_label: str, link: TmuxLink,
                 scrollback_bytes: int, on_exit: Callable[[Pane], None],
                 turns: EmulationTurns | None = None) -> None:
        super().__init__(number, command=list(facts.command), cwd=facts.path or "/", env={},
                         columns=facts.columns, lines=facts.lines, name=None, tags=[], remove_on_exit=False,
                         scrollback_bytes=scrollback_bytes, on_exit=on_exit, turns=turns)
        self.tmux_facts = facts  # tmux's ids of the pane, its window and session, when adopted
        self.tmux_pane = facts.pane
        self.server_label = server_label  # "-L work", "-S /path", "" for tmux's default server
        self.link = link
        # Told when muxd lets the pane go (kill-pane, kill-session, unwatch, the daemon's end).
        self.on_released: Callable[[AdoptedPane], None] | None = None
        self._tmux_pid = facts.pid
        self._seeded = False      # output before the seed capture is in that capture already
        self._gone = False        # tmux closed the pane: exit once its last output is drawn
        # Clear while PANE_PENDING_MAX_BYTES wait to be drawn: its link stops reading tmux (which
        # then holds the output) until the screen catches up, as a PTY pane stops reading its PTY.
        self._output_room = asyncio.Event()
        self._output_room.set()

    @property
    def pid(self) -> int | None:
        return self._tmux_pid

    @property
    def source(self) -> str:
        return " ".join(part for part in ("tmux", self.server_label, self.tmux_pane) if part)

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop  # nothing to spawn: the program runs in tmux already

    # ------------------------------------------------------------ output from tmux

    def seed(self, replies: list[Reply]) -> None:
        """Draw what tmux shows now, from the replies to seed_command: called as they are read,
        so the output notified after them is what comes next."""
        capture, saved, facts = replies
        if capture.error or facts.error or not facts.lines:
            self.tmux_closed()  # the pane went before it could be read
            return
        cursor_x, cursor_y, alternate, keypad_cursor, keypad, saved_x, saved_y = \
            [int(n) if n.isdigit() else 0 for n in (facts.lines[0].split() + [b"0"] * 7)[:7]]
        if alternate:
            # The history and the main screen the program will return to (the cursor where it
            # will be then), then its own screen.
            history, screen = capture.lines[:-self.lines], capture.lines[-self.lines:]
            seed = bytearray(b"\r\n".join([*history, *saved.lines]))
            seed += b"\x1b[0m\x1b[%d;%dH" % (saved_y + 1, saved_x + 1)
            seed += b"\x1b[?1049h\x1b[H" + b"\r\n".join(screen)
        else:
            seed = bytearray(b"\r\n".join(capture.lines))
        seed += b"\x1b[0m\x1b[%d;%dH" % (cursor_y + 1, cursor_x + 1)
        if keypad_cursor:
            seed += b"\x1b[?1h"
        if keypad:
            seed += b"\x1b="
        self._seeded = True
        self._take_output(bytes(seed))

    def receive(self, data: bytes) -> None:
        """tmux's `%output` for this pane."""
        if self._seeded and not self._closed and not self.exited:
            self._take_output(data)
            if self.unemulated_bytes >= PANE_PENDING_MAX_BYTES:
                self._output_room.clear()

    async def output_room(self) -> None:
        """Return once the screen has caught up with what tmux sent (or the pane is done)."""
        await self._output_room.wait()

    def follow_size(self, columns: int, lines: int) -> None:
        """tmux gave the pane this size (a layout change)."""
        if (columns, lines) != (self.columns, self.lines) and not self._closed:
            self.emulator.resize(columns, lines)
            self._notice_emulator_failure()

    def tmux_closed(self) -> None:
        """tmux closed the pane (or its session, or the server ended)."""
        self._gone = True
        if not self.unemulated_bytes:
            self._finish()

    def emulate_until(self, deadline: float) -> bool:
        left = super().emulate_until(deadline)
        if self.unemulated_bytes <= PANE_PENDING_RESUME_BYTES:
            self._output_room.set()
        if self._gone and not left:
            self._finish()
        return left

    def _finish(self) -> None:
        if self.exited or self._closed:
            return
        self.exited = True
        self.exit_code = None  # tmux does not tell how a closed pane's program ended
        self._on_exit(self)

    # ------------------------------------------------------------ input and size

    def write(self, data: bytes) -> None:
        if data and not (self._closed or self.exited):
            self.link.send_keys(self.tmux_pane, data)

    def send(self, data: bytes) -> None:
        self.write(data)

    def _emulator_reply(self, data: bytes) -> None:
        pass  # tmux answers the program's queries itself: a second answer would reach it as typing

    def resize(self, columns: int, lines: int) -> None:
        pass  # a muxd layout or client never resizes a tmux pane: follow_size does

    # ------------------------------------------------------------ live facts

    def foreground_pid(self) -> int | None:
        if self.exited or self._closed or self._tmux_pid is None:
            return None
        return ptys.terminal_foreground_pid(self._tmux_pid)

    # ------------------------------------------------------------ letting go

    def close(self) -> None:
        """Let the pane go: muxd forgets it, the tmux pane runs on."""
        if self._closed:
            return
        self._turns.forget(self)
        self._backlog.clear()
        self._output_room.set()
        if self.recorder is not None:
            self.recorder.close()
        self._closed = True
        if self.on_released is not None:
            self.on_released(self)
