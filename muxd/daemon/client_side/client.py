"""What the key handlers (prefix_actions, command_prompt, chooser, pane_numbers,
attached_mouse, status_formats) use of an attached client and of the hub of clients.
attached.py's AttachedClient and hub.py's AttachHub are these; the handlers name these
protocols, not attached.py, which imports the handlers (and AttachedClient names `Hub`, not
hub.py, which imports attached.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sized
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from muxd.attach.paint import FramePainter
    from muxd.daemon.client_side.attention_view import AttentionView
    from muxd.daemon.client_side.copy_mode import CopyMode, Point
    from muxd.daemon.client_side.host import AttachHost, ClientConnection
    from muxd.daemon.client_side.status_prompt import Prompt
    from muxd.daemon.panes.pane import Pane
    from muxd.daemon.panes.paste_buffers import PasteBuffers
    from muxd.daemon.panes.registry import Session, Window


class Hub(Protocol):
    """Every attached client, the copy modes they share, and the sizes they impose."""

    @property
    def daemon(self) -> AttachHost: ...

    @property
    def clients(self) -> Mapping[ClientConnection, Client]: ...

    @property
    def copy_modes(self) -> dict[str, CopyMode]: ...  # pane id -> its copy mode

    def clients_of(self, session: Session) -> Sized: ...

    def placements(self, window: Window) -> list[tuple[Pane, int, int, int, int]]: ...

    def fit_session(self, session: Session) -> None: ...

    def changed(self, session: Session | None = None) -> None: ...

    def catch_up(self, session: Session) -> bool: ...  # output its panes hold back, read for a frame

    @property
    def attention(self) -> AttentionView: ...
    # What an attached client hands back: itself when it goes, and the selections it copies.
    @property
    def buffers(self) -> PasteBuffers: ...
    def keep_buffer(self, text: str) -> None: ...
    def forget(self, client: Client) -> None: ...


class Client(Protocol):
    """One attached terminal: its session, what covers its window, and what its keys open."""

    session: Session
    prompt: Prompt | None
    repeat_until: float  # monotonic time a repeat-time (bind -r) ends; 0: none open
    press: tuple[str, Point] | None  # (pane id, point) of a left button held down
    term: str  # its $TERM and $TERM_PROGRAM (which notifications it shows)
    term_program: str

    @property
    def hub(self) -> Hub: ...

    @property
    def daemon(self) -> AttachHost: ...

    @property
    def connection(self) -> ClientConnection: ...

    @property
    def painter(self) -> FramePainter: ...

    @property
    def columns(self) -> int: ...

    @property
    def closed(self) -> bool: ...

    @property
    def prefix(self) -> bytes: ...

    def wake(self) -> None: ...

    def say(self, text: str) -> None: ...

    def between_frames(self, data: bytes) -> None: ...

    def detach(self, reason: str) -> None: ...

    def viewing(self) -> bool: ...

    def switch_to(self, session: Session) -> None: ...

    def active_pane(self) -> Pane | None: ...

    def key_to_pane(self, key: bytes) -> bool: ...  # the active pane's copy mode or program takes it

    def paste_buffer(self) -> None: ...

    def new_copy_mode(self, pane: Pane) -> CopyMode: ...

    def copy_selection(self, pane: Pane, copy: CopyMode, keep: bool = False) -> str: ...

    def mode_keys(self, pane: Pane | None) -> str: ...  # the window option: vi or emacs

    def show_text(self, text_lines: list[str]) -> None: ...

    def open_help(self) -> None: ...

    # What keys open over the window; AttachedClient holds them (attached.py imports their modules).

    def run_line(self, line: str) -> None: ...

    def open_command_prompt(self) -> None: ...

    def open_chooser(self, *, windows: bool) -> None: ...

    def close_chooser(self) -> None: ...

    def show_pane_numbers(self) -> None: ...
