"""`C-b w` / `C-b s`: tmux's choose-tree, a list of sessions and their windows with what the
agents in them are doing (`claude: waiting for yes`), over the whole window.

Up/Down (or k/j) move, Right/`+` open a session's windows, Left/`-` close them, Enter or a
row's number chooses, q/Escape leave. Rows are rebuilt from the registry on every frame, so
states stay live; the selection is kept by object, not by row number.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from muxd.daemon.panes.registry import Session, Window
from muxd.daemon.client_side.status_line import agent_phrase
from muxd.emulator import Emulator
from muxd.emulator.backend import new_emulator

if TYPE_CHECKING:
    from muxd.daemon.client_side.client import Client
    from muxd.daemon.panes.pane import Pane

_UP = (b"\x1b[A", b"\x1bOA", b"k")
_DOWN = (b"\x1b[B", b"\x1bOB", b"j")
_OPEN = (b"\x1b[C", b"\x1bOC", b"+")
_CLOSE = (b"\x1b[D", b"\x1bOD", b"-")
_LEAVE = (b"q", b"\x1b", b"\x03", b"\x07")  # q, Escape, C-c, C-g
_CHOOSE = (b"\r", b"\n")
_SELECTED_SGR = b"\x1b[30;43m"  # black on yellow, tmux's mode-style
PREVIEW_MIN_LINES = 10  # shorter clients get the list alone


@dataclass(frozen=True)
class Row:
    item: Session | Window
    text: str


def _agents(panes: list[Pane]) -> str:
    return ", ".join(phrase for phrase in (agent_phrase(p.agent) for p in panes) if phrase)


class Chooser:
    def __init__(self, client: Client, selected: Session | Window, expanded: set[Session]) -> None:
        self.client = client
        self.selected: Session | Window = selected
        self.expanded = expanded  # sessions shown with their windows
        self._view: tuple[tuple[str, ...], Emulator] | None = None

    @classmethod
    def opened(cls, client: Client, *, windows: bool) -> Chooser:
        """`w`: every session open, the current window selected; `s`: sessions closed, the
        current session selected (tmux's choose-tree -w / -s)."""
        session = client.session
        if windows and session.active_window is not None:
            return cls(client, session.active_window, set(client.daemon.registry.sessions))
        return cls(client, session, set())

    # ------------------------------------------------------------ rows

    def rows(self) -> list[Row]:
        rows = []
        attached = {c.session for c in self.client.hub.clients.values() if not c.closed}
        for session in self.client.daemon.registry.sessions:
            is_open = session in self.expanded
            count = len(session.windows)
            text = f"{'-' if is_open else '+'} {session.name}: {count} window{'s' * (count != 1)}"
            if session in attached:
                text += " (attached)"
            agents = "" if is_open else _agents(session.panes())
            rows.append(Row(session, f"{text}  {agents}" if agents else text))
            if not is_open:
                continue
            for at, window in enumerate(session.windows):
                branch = "└─>" if at == len(session.windows) - 1 else "├─>"
                flag = "*" if window is session.active_window else "-" if window is session.last_window else ""
                panes = len(window.panes)
                text = f"  {branch} {window.index}: {window.name}{flag} ({panes} pane{'s' * (panes != 1)})"
                agents = _agents(window.panes)
                rows.append(Row(window, f"{text}  {agents}" if agents else text))
        return rows

    def _index(self, rows: list[Row]) -> int:
        for at, row in enumerate(rows):
            if row.item is self.selected:
                return at
        # Gone (killed) or hidden (closed): its session's row, else the first.
        session = self.selected.session if isinstance(self.selected, Window) else None
        return next((at for at, row in enumerate(rows) if row.item is session), 0)

    # ------------------------------------------------------------ keys

    def key(self, key: bytes) -> None:
        """Act on a key; the chooser closes itself (client.close_chooser()) when it is done."""
        rows = self.rows()
        if key in _LEAVE or not rows:
            self.client.close_chooser()
            return
        at = self._index(rows)
        if key in _UP or key in _DOWN:
            self.selected = rows[(at + (1 if key in _DOWN else -1)) % len(rows)].item
        elif key in _OPEN or key in _CLOSE:
            item = rows[at].item
            session = item if isinstance(item, Session) else item.session
            if key in _OPEN:
                self.expanded.add(session)
            else:
                self.expanded.discard(session)
                self.selected = session
        elif key in _CHOOSE:
            self.choose(rows[at].item)
        elif key.isdigit() and int(key) < len(rows):  # the (N) shortcuts
            self.choose(rows[int(key)].item)

    def choose(self, item: Session | Window) -> None:
        """Show `item`: switch this client to its session (tmux's switch-client), make a
        window current; then the chooser closes."""
        client = self.client
        session = item if isinstance(item, Session) else item.session
        if isinstance(item, Window):
            session.active_window = item
        client.close_chooser()
        client.switch_to(session)

    # ------------------------------------------------------------ drawing

    def view(self, columns: int, lines: int) -> Emulator:
        """The list as a screen `columns` x `lines`, scrolled to keep the selection in view,
        and below it (given the room) the end of the selected window's active pane, as tmux's
        preview; remade only when its text changed."""
        rows = self.rows()
        at = self._index(rows)
        list_lines = lines // 2 if lines >= PREVIEW_MIN_LINES else lines
        top = max(0, min(at - list_lines // 2, len(rows) - list_lines))
        texts = []
        for n, row in enumerate(rows[top:top + list_lines], start=top):
            text = f"({n}) {row.text}" if n < 10 else f"    {row.text}"
            texts.append(text[:columns].ljust(columns) if n == at else text[:columns])
        preview = self._preview(rows[at].item, columns, lines - list_lines - 1) if rows and list_lines < lines else []
        key = (f"{columns}x{lines}", str(at - top), *texts, "", *preview)
        if self._view is None or self._view[0] != key:
            emulator = new_emulator(columns=columns, lines=lines)
            emulator.feed(b"\x1b[?7l\x1b[?25l")  # no wrapping, no cursor
            for y, text in enumerate(texts):
                line = text.encode("utf-8", "surrogateescape")  # a directory's bytes that are not UTF-8
                if y + top == at:
                    line = _SELECTED_SGR + line + b"\x1b[0m"
                emulator.feed(b"\x1b[%dH" % (y + 1) + line)
            for y, text in enumerate(preview, start=list_lines + 1):
                emulator.feed(b"\x1b[%dH" % y + text.encode("utf-8", "surrogateescape"))
            self._view = (key, emulator)
        return self._view[1]

    @staticmethod
    def _preview(item: Session | Window, columns: int, lines: int) -> list[str]:
        """A rule, then the last `lines` non-blank-ended rows of the item's active pane."""
        window = item.active_window if isinstance(item, Session) else item
        pane = window.active_pane if window is not None else None
        if pane is None or lines < 1:
            return []
        screen = pane.emulator.capture().rstrip("\n").split("\n")
        while screen and not screen[-1].strip():
            screen.pop()
        rule = f"─ {pane.id} " + "─" * columns
        return [rule[:columns], *(row[:columns] for row in screen[-lines:])]
