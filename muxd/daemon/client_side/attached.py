"""Attached clients: the daemon side of `muxd attach`, one `AttachedClient` per terminal.

As in tmux's server-client.c the daemon renders per client: when something a client shows
changes, a frame is planned on the loop (a frame interval after the last); it composes the
frame from the panes' emulators (never from queued output), paints the difference, and the
next waits for the socket's drain. A slow client thus gets fewer, newer frames and slows
nobody else. Keys are parsed here (prefix table, copy mode, prompts), so every client of a
session sees the same windows, panes and copy modes.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import math
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

# This module loads with the first attach (or paste): the renderer comes with it, imported here
# once, not in the functions each frame runs.
from muxd.attach.compose import StatusLine, compose
from muxd.attach.echo_frame import echo_frame
from muxd.attach.paint import FramePainter, enter_terminal_bytes
from muxd.attach.selection import pane_geometry, selection_text
from muxd.config import (
    ATTACH_FRAME_INTERVAL_S, ATTACH_OUTPUT_FRAME_INTERVAL_S,
    ATTACH_RENDER_FAILURES_MAX, ATTACH_STATUS_REFRESH_S, ATTACH_STATUS_REUSE_S, ATTACH_TYPING_S, CLIPBOARD_MAX_CHARS, MAX_COLUMNS,
    MAX_LINES, PASTE_BUFFER_MAX_CHARS,
)
from muxd.daemon.client_side.chooser import Chooser
from muxd.daemon.client_side.client_frame import pane_views, status_line
from muxd.daemon.client_side.copy_mode import COPY, LEAVE, CopyMode, Point
from muxd.daemon.client_side.copy_mode_keys import copy_mode_key
from muxd.daemon.client_side.attached_mouse import mouse_event
from muxd.daemon.client_side.input_parser import InputParser, Key, Mouse, Paste, Text, Token, next_key_bytes
from muxd.daemon.panes.pane import Pane
from muxd.daemon.client_side.command_prompt import open_command_prompt, run_line
from muxd.daemon.client_side.pane_numbers import PaneNumbers
from muxd.daemon.client_side.prefix_actions import after_prefix, repeats
from muxd.daemon.client_side.prefix_keys import list_keys_text, prefix_bytes
from muxd.daemon.panes.registry import Session, Window, window_of
from muxd.daemon.client_side.status_formats import StatusFormats
from muxd.daemon.client_side.status_prompt import Prompt
from muxd.daemon.client_side.terminal_output import SocketOutput, TtyOutput
from muxd.emulator import Emulator
from muxd.emulator.backend import new_emulator
from muxd.errors import MuxdError
from muxd.protocol.messages import Detached

if TYPE_CHECKING:
    from muxd.daemon.client_side.client import Hub
    from muxd.daemon.client_side.host import ClientConnection

log = logging.getLogger(__name__)

BRACKETED_PASTE_MODE = 2004
HELP_SCROLLBACK_BYTES = 64 * 1024  # the C-b ? list, far more than it needs
BETWEEN_FRAMES_MAX_BYTES = 16 * 1024  # bells and notifications waiting for the next frame


def pane_modes(emulator: Emulator) -> frozenset[int]:
    return emulator.private_modes


def paste_into(pane: Pane, data: bytes) -> None:
    """Pasted text to a pane: in bracketed-paste markers only if its program asked (2004)."""
    wrapped = BRACKETED_PASTE_MODE in pane_modes(pane.emulator)
    pane.write(b"\x1b[200~" + data + b"\x1b[201~" if wrapped else data)


class AttachedClient:
    def __init__(self, hub: Hub, connection: ClientConnection, session: Session,
                 columns: int, lines: int, prefix: str) -> None:
        self.hub = hub
        self.daemon = hub.daemon
        self.connection = connection
        self.output: SocketOutput | TtyOutput = SocketOutput(connection)  # its terminal, by the socket or direct
        self.session = session
        self.columns, self.lines = clamp_size(columns, lines)
        self.chosen_prefix = prefix  # --prefix / $MUXD_PREFIX; "": the prefix option, read at each key
        prefix_bytes(prefix or "C-b")  # a bad name is refused at attach
        self.name = ""  # its terminal (tmux names clients so), else made up by the hub
        self.term = self.term_program = ""  # its $TERM and $TERM_PROGRAM, told at attach
        self._between_frames = bytearray()  # bells and notifications, written before the next frame
        self.painter = FramePainter()
        self.parser = InputParser()
        self.prefix_pending = False
        self.repeat_until = 0.0  # monotonic time a repeat-time (bind -r) ends; 0: none open
        self.prompt: Prompt | None = None
        self.notice: tuple[str, float] | None = None
        self.status_formats = StatusFormats()  # status-left and status-right, expanded
        self.help_view: Emulator | None = None  # the C-b ? list or a command's output, while open
        self.help_lines: list[str] = []  # its text (made again for a new size)
        self.help_scroll = CopyMode()  # where in it the client is
        self.chooser: Chooser | None = None  # C-b w / s, while open
        self.pane_numbers: PaneNumbers | None = None  # C-b q, while shown
        self.closed = False
        self.frames = 0
        self.last_input = 0.0  # time.monotonic() of the last keys or mouse event
        self.press: tuple[str, Point] | None = None  # (pane id, point) of a left button held down
        self._dirty = False  # something it shows changed since the last frame
        self._planned: asyncio.Handle | None = None  # the next frame's call on the loop
        self._draining = False  # a frame waits for the terminal to take the last one
        self._drain_task: asyncio.Task[None] | None = None
        self._rendering = False  # frames are drawn (from start until the connection goes)
        self.started = False
        self._failures = 0  # frames failed in a row
        self._last_frame = 0.0  # time.monotonic() of the last frame drawn or failed
        self._status_line: StatusLine | None = None  # the last one made, reused as ATTACH_STATUS_REUSE_S says
        self._status_made_at = -math.inf  # time.monotonic() it was made; -inf: make it again
        self._flags_at: tuple[int, str] | None = None  # (options.generation, session id) of _flags
        self._flags = (True, True)
        self._drawn_at = 0.0  # time.monotonic() of the last frame sent
        self._frame: Any = None  # the last frame painted (None: the painter repaints everything)
        self._catching_up = False  # a frame reads its panes' held-back output (_catch_up)
        self._streaming = False  # the last frame found some: the next reads again

    @property
    def prefix_name(self) -> str:
        return self.chosen_prefix or self.daemon.registry.options.lookup("prefix", self.session.id)

    @property
    def prefix(self) -> bytes:
        return prefix_bytes(self.prefix_name)

    # ------------------------------------------------------------ lifecycle

    def start(self) -> None:
        self.output.write(enter_terminal_bytes())
        self.repaint_all()
        self.started = self._rendering = True
        self._frame_wanted()
        asyncio.get_running_loop().call_later(ATTACH_STATUS_REFRESH_S, self._refresh_due)

    def _refresh_due(self) -> None:
        """Plan a frame if none went for ATTACH_STATUS_REFRESH_S (the status line's
        times and clock move on); one timer a refresh, not one a frame."""
        if self.closed:
            return
        now = time.monotonic()
        due = self._drawn_at + ATTACH_STATUS_REFRESH_S
        if now >= due:
            self.wake()
            due = now + ATTACH_STATUS_REFRESH_S
        asyncio.get_running_loop().call_later(due - now, self._refresh_due)

    def wake(self) -> None:
        self._status_made_at = -math.inf  # whatever changed may show in the status line
        self._frame_wanted()

    def screen_changed(self) -> None:
        """A pane it shows has new output: its screen changed, its status line most likely not
        (output that flags a window or changes an agent wakes it as `wake`)."""
        if self._catching_up:
            self._dirty = True  # read for the frame being drawn
            return
        self._frame_wanted()

    def detach(self, reason: str) -> None:
        if self.closed:
            return
        self.closed = True
        self.output.close()  # its last frame is on the terminal before the client hears it
        self.connection.send(Detached(reason=reason))
        self.hub.forget(self)

    def window_area(self) -> tuple[int, int]:
        """The cells left for the window: the client minus its status line (if it has room)."""
        return self.columns, max(1, self.lines - 1) if self._status_shown() else self.lines

    def _status_shown(self) -> bool:
        return self.lines >= 2 and self._option_flags()[0]

    def _option_flags(self) -> tuple[bool, bool]:
        """The session's status and mouse options, looked up again only after an option changed
        (every frame asks)."""
        options, session_id = self.daemon.registry.options, self.session.id
        if self._flags_at != (options.generation, session_id):
            self._flags_at = (options.generation, session_id)
            self._flags = (options.flag("status", session_id), options.flag("mouse", session_id))
        return self._flags

    # ------------------------------------------------------------ rendering

    def _frame_wanted(self) -> None:
        """Something it shows changed: plan a frame unless one is planned (or the terminal is
        behind: the frame follows its drain)."""
        self._dirty = True
        if self._planned is None and not self._draining and self._rendering:
            self._plan_frame()

    def _plan_frame(self) -> None:
        """_frame_due on the loop once the frame interval since the last frame has passed (a
        callback: a task waiting on an event and a sleep made two futures a frame). Output
        arriving meanwhile joins the frame. A program redrawing on its own (a 60 Hz TUI, a build
        log) gets 30 frames a second, half the render cost and nobody can tell; while the user
        types, 60; and the first frame after a key goes at once: it carries the echo, which the
        cap would delay by up to a frame interval (tmux paints an echo as soon as it comes, too)."""
        loop = asyncio.get_running_loop()
        last_frame = max(self._last_frame, self._drawn_at)  # an echo render_now drew is a frame too
        now = time.monotonic()
        if self.last_input <= last_frame:
            typing = now - self.last_input < ATTACH_TYPING_S
            interval = ATTACH_FRAME_INTERVAL_S if typing else ATTACH_OUTPUT_FRAME_INTERVAL_S
            delay = last_frame + interval - now
            if delay > 0:
                self._planned = loop.call_later(delay, self._frame_due)
                return
        self._planned = loop.call_soon(self._frame_due)  # output coming in this turn joins it

    def _frame_due(self) -> None:
        """Paint what changed since the last frame; a frame that fails is tried again a frame
        interval later, and ATTACH_RENDER_FAILURES_MAX in a row detach the client."""
        self._planned = None
        if self.closed:
            return
        try:
            self._catch_up()
            if not self._dirty:  # not dirty: render_now drew it meanwhile
                return
            if self._paint() and self.output.backlog():
                self._draining = True  # frames wait until the terminal has taken this one
                self._drain_task = asyncio.get_running_loop().create_task(self._drain())
            elif self._streaming and self._planned is None:
                self._plan_frame()  # to read and draw the next of it, a frame interval on
            self._failures = 0
        except ConnectionError:
            self._rendering = False  # the connection is going: its close ends the client
        except Exception:  # a bug must cost this client a frame, not the daemon
            self._frame_failed()

    def _catch_up(self) -> None:
        """Read the output its panes have waiting, held back between frames (a TUI's next
        redraw; Pane.catch_up): the frame about to be drawn shows it, and while there is some the
        next frame comes a frame interval on to read again. A program redrawing on its own then
        costs a wakeup a frame, not one for its read and one for the frame."""
        self._catching_up = True
        try:
            self._streaming = self.hub.catch_up(self.session)
        finally:
            self._catching_up = False

    async def _drain(self) -> None:
        try:
            await self.output.drain()
        except ConnectionError:
            self._draining = self._rendering = False
        except Exception:
            self._draining = False
            self._frame_failed()
        else:
            self._draining = False
            if self._dirty:
                self._frame_wanted()

    def _frame_failed(self) -> None:
        self._failures += 1
        log.exception("attached client render failed (%d in a row)", self._failures)
        if self._failures >= ATTACH_RENDER_FAILURES_MAX:
            self._rendering = False
            self.detach("internal error in the muxd server (see its log)")
            return
        # Try again a frame interval later, repainting the whole screen: a transient state (a
        # layout caught mid-change) must not cost the user their session.
        self.repaint_all()
        self._last_frame = time.monotonic()
        self._frame_wanted()

    def render_now(self) -> None:
        """Draw at once, in the caller's callback, if keys came since the last frame: their
        echo (EmulationTurns emulates the pane being typed into first) then never waits for
        this client's planned frame behind other panes' output. Otherwise that frame draws it.
        A window that is one pane gets only that pane redrawn (echo_frame), and the planned
        frame composes the whole a frame interval later."""
        if self.closed or not self._dirty or self.last_input <= self._drawn_at:
            return
        if self.output.backlog():
            return  # the terminal is behind: the planned frame waits for it
        try:
            frame = self._echo_frame()
            if frame is None:
                self._paint()
            else:
                self._send_frame(frame)  # still dirty: the planned frame does the rest
        except Exception:  # a bug costs this frame, not the emulation turn that asked for it
            log.exception("attached client render failed (drawing an echo)")
            self.repaint_all()
            self._frame_wanted()  # _frame_due tries again, counting failures

    def _paint(self) -> bool:
        """Paint what changed and send it; False if there was nothing to send."""
        self._dirty = False
        if self.closed:
            return False
        if self.session not in self.daemon.registry.sessions:
            self.detach("exited")
            return False
        self.painter.mouse = self._option_flags()[1]
        return self._send_frame(self.frame())

    def _send_frame(self, frame: Any) -> bool:
        """Paint `frame` over the last and send it; False if nothing changed."""
        data = self.painter.paint(frame)
        self._frame = frame
        if self._between_frames:  # in the same write, ahead of the frame: never inside one
            data, self._between_frames = bytes(self._between_frames) + data, bytearray()
        if not data:  # an empty paint (e.g. woken by a keystroke before its echo) is no frame
            return False
        self._drawn_at = time.monotonic()
        self.frames += 1
        self.output.write(data)
        return True

    def repaint_all(self) -> None:
        """Forget what the terminal shows: the next frame redraws all of it."""
        self.painter.invalidate()
        self._frame = None

    def _echo_frame(self) -> Any:
        """The next frame as the active pane alone changes it (attach/echo_frame.py), when the
        window is that one pane, live, filling the client's window area, and nothing covers it;
        else None (compose the whole frame)."""
        last, window = self._frame, self.session.active_window
        if last is None or (last.columns, last.lines) != (self.columns, self.lines):
            return None
        if (window is None or window.layout is None or self.prompt is not None or self.viewing()
                or self.pane_numbers is not None or self.session not in self.daemon.registry.sessions):
            return None
        placed = self.hub.placements(window)
        if len(placed) != 1:
            return None
        pane, x, y, columns, lines = placed[0]
        emulator = pane.emulator
        if (pane is not window.active_pane or pane.exited or pane.id in self.hub.copy_modes or (x, y) != (0, 0)
                or (columns, lines) != self.window_area() or (emulator.columns, emulator.lines) != (columns, lines)):
            return None
        return echo_frame(last, emulator)

    def frame(self) -> Any:
        self.hub.attention.looked(self.session)
        columns, lines = self.window_area()
        views = pane_views(self, columns, lines)
        status = self._status_now() if self._status_shown() else None
        frame = compose(self.columns, self.lines, views, status)
        window = self.session.active_window
        if self.pane_numbers is not None and window is not None and not self.viewing():
            if self.pane_numbers.live():
                return self.pane_numbers.drawn(frame, self.hub.placements(window))
            self.pane_numbers = None
        return frame

    def _status_now(self) -> StatusLine:
        """The status line: made again unless only pane output woke this client since it was
        made, less than ATTACH_STATUS_REUSE_S ago."""
        now = time.monotonic()
        if self._status_line is None or now - self._status_made_at >= ATTACH_STATUS_REUSE_S:
            self._status_line, self._status_made_at = status_line(self), now
        return self._status_line

    def say(self, text: str) -> None:
        shown_ms = self.daemon.registry.options.number("display-time", self.session.id)
        # 0: until a key (any input takes a message away)
        self.notice = (text, time.monotonic() + shown_ms / 1000 if shown_ms else math.inf)
        self.wake()

    def between_frames(self, data: bytes) -> None:
        """Bytes for the terminal itself (a bell, a notification's OSC), written ahead of the
        next frame in the same write. A client that cannot keep up (a bell storm) drops them."""
        if len(self._between_frames) + len(data) <= BETWEEN_FRAMES_MAX_BYTES:
            self._between_frames += data
        self.wake()

    def viewing(self) -> bool:
        """A list (the `?` keys, a command's output, the chooser) covers the window."""
        return self.help_view is not None or self.chooser is not None

    def switch_to(self, session: Session) -> None:
        """Show another session in this terminal (tmux's switch-client); sizes follow."""
        previous, self.session = self.session, session
        if previous is not session:
            self.hub.fit_session(previous)
        self.hub.fit_session(session)

    # ------------------------------------------------------------ input

    def resize(self, columns: int, lines: int) -> None:
        self.columns, self.lines = clamp_size(columns, lines)
        self.repaint_all()
        if self.help_view is not None:
            self.show_text(self.help_lines)
        self.hub.fit_session(self.session)

    def input(self, data: bytes) -> None:
        self.last_input = time.monotonic()
        shown = self.notice is not None
        self.notice = None  # a key takes a message away, as in tmux
        for token in self.parser.feed(data):
            for unit in self._units(token):
                if self.closed:
                    return
                try:
                    shown = self._token(unit) or shown
                except MuxdError as exc:
                    self.say(exc.message)
        # Keys that only went to a program change nothing on screen until it answers (its
        # output wakes the clients): a frame now would be an empty paint in the echo's way.
        if shown:
            self.hub.changed(self.session)

    def _units(self, token: Token) -> Iterator[Token]:
        """A run of text in as few pieces as may be (one write to the pane), cut where a key
        must be seen alone: the prefix, and every key while the prefix waits for its command,
        a repeat-time is open, or a prompt, copy mode or the help view takes keys. Lazy: each cut sees the state the
        piece before left."""
        if not isinstance(token, Text):
            yield token
            return
        data = token.data
        while data:
            pane = self.active_pane()
            if (self.prefix_pending or self.repeat_until > time.monotonic() or self.prompt is not None
                    or self.viewing() or self.pane_numbers is not None
                    or (pane is not None and pane.id in self.hub.copy_modes)):
                size = next_key_bytes(data)
            elif self.daemon.registry.key_bindings.any_in("root"):
                size = next_key_bytes(data)  # any key may be bound on its own
            else:
                cut = data.find(self.prefix)
                size = len(self.prefix) if cut == 0 else len(data) if cut < 0 else cut
            yield Key(data[:size])
            data = data[size:]

    def _token(self, token: Token) -> bool:
        """Act on one key, paste or mouse event; False when it only went to a program."""
        if isinstance(token, Mouse):
            return mouse_event(self, token)
        if isinstance(token, Paste):
            pane = self.active_pane()
            if pane is not None and pane.id not in self.hub.copy_modes and not self.viewing():
                paste_into(pane, token.data)
                return False
            return True
        key = token.data
        if self.help_view is not None:
            # Moved around like copy mode (the list is taller than small terminals); any key
            # that would leave or copy closes it.
            if self.help_scroll.key(key, pane_geometry(self.help_view)) in (COPY, LEAVE):
                self.help_view = None
            return True
        if self.chooser is not None:
            self.chooser.key(key)
            return True
        if self.pane_numbers is not None:
            numbers, self.pane_numbers = self.pane_numbers, None
            if numbers.live() and numbers.key(key):
                return True
            # Any other key: the numbers go, and the key does what it would have done.
        if self.prompt is not None:
            finished, answer = self.prompt.key(key)
            if finished:
                prompt, self.prompt = self.prompt, None
                if answer is not None:
                    prompt.on_done(answer)
            return True
        if self.prefix_pending:
            self.prefix_pending = False
            return after_prefix(self, key)
        if self.repeat_until:
            if repeats(self, key):
                return after_prefix(self, key)
            self.repeat_until = 0.0  # any other key ends the repeat, and does what it does
        bound = self.daemon.registry.key_bindings.lookup("root", key)
        if bound is not None and bound.command is not None:
            run_line(self, bound.command)
            return True
        if key == self.prefix:
            self.prefix_pending = True
            return False
        return self.key_to_pane(key)

    def key_to_pane(self, key: bytes) -> bool:
        """`key` to the active pane: its copy mode if it has one, else its program; False when
        only the program saw it."""
        pane = self.active_pane()
        if pane is None:
            return False
        copy = self.hub.copy_modes.get(pane.id)
        if copy is not None:
            copy_mode_key(self, pane, copy, key)
            return True
        pane.write(key)
        return False

    def active_pane(self) -> Pane | None:
        window = self.session.active_window
        return window.active_pane if window is not None else None

    def paste_buffer(self) -> None:
        """The newest buffer into the active pane, line feeds as carriage returns (tmux's
        paste-buffer -p: bracketed only for a program that asked)."""
        pane = self.active_pane()
        newest = self.hub.buffers.newest_first()
        if not newest:
            self.say("no buffers")
            return
        if pane is None or pane.exited or pane.id in self.hub.copy_modes:
            return
        paste_into(pane, newest[0].text.replace("\n", "\r").encode())

    def mode_keys(self, pane: Pane | None) -> str:
        """Copy mode's key table for `pane` (a window option): "vi" or "emacs"."""
        ids = (pane.id, window_of(pane).id) if pane is not None else ()
        return self.daemon.registry.options.lookup("mode-keys", *ids)

    # What keys open, held here so the key handlers (client.py's Client) need not import each other.

    def run_line(self, line: str) -> None:
        run_line(self, line)

    def open_command_prompt(self) -> None:
        open_command_prompt(self)

    def open_chooser(self, *, windows: bool) -> None:
        self.chooser = Chooser.opened(self, windows=windows)

    def close_chooser(self) -> None:
        self.chooser = None

    def show_pane_numbers(self) -> None:
        self.pane_numbers = PaneNumbers.shown(self)

    def open_help(self) -> None:
        self.show_text(list_keys_text(self.prefix_name, self.daemon.registry.key_bindings,
                                      self.mode_keys(self.active_pane())))

    def show_text(self, text_lines: list[str]) -> None:
        """Lines to read over the window (the `?` list, a command's output): scrolled like copy
        mode, q leaves."""
        columns, lines = self.window_area()
        view = new_emulator(columns=columns, lines=lines, scrollback_bytes=HELP_SCROLLBACK_BYTES)
        self.help_lines = text_lines
        view.feed("\r\n".join(text_lines).encode())
        view.feed(b"\x1b[?25l")  # a list to read: no cursor
        # Shown from its first line: scrolled back over whatever went into the history.
        self.help_scroll = CopyMode(offset=view.history_size, cursor=(view.rows_scrolled - view.history_size, 0))
        self.help_view = view

    @staticmethod
    def new_copy_mode(pane: Pane) -> CopyMode:
        """Copy mode with its cursor where the program's cursor is, as tmux starts it."""
        x, y = pane.emulator.cursor
        return CopyMode(cursor=(pane.emulator.rows_scrolled + y, x))

    def copy_selection(self, pane: Pane, copy: CopyMode, keep: bool = False) -> str:
        """Keep the selected text as the newest buffer (C-b ] pastes it) and offer it to the
        terminal's clipboard (OSC 52), as tmux does; the selection is cleared unless `keep`, and
        a copy mode the drag began ends. Returns the text."""
        selection = copy.selection()
        assert selection is not None
        text = selection_text(pane.emulator, selection, max_chars=PASTE_BUFFER_MAX_CHARS)
        if not keep:
            copy.anchor = copy.end = None
        if copy.entered_by_drag:
            del self.hub.copy_modes[pane.id]
        if not text:
            return text
        self.hub.keep_buffer(text)
        if len(text) <= CLIPBOARD_MAX_CHARS:
            clipboard = b"\x1b]52;c;" + base64.b64encode(text.encode()) + b"\x07"
            self.output.write(clipboard)
        return text


def clamp_size(columns: int, lines: int) -> tuple[int, int]:
    return min(max(columns, 1), MAX_COLUMNS), min(max(lines, 1), MAX_LINES)
