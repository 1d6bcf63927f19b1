"""Copy mode of a pane: how far back into its scrollback the attached clients look, a cursor
to move around it, and the selected text.

Pure: the state is one offset per pane (0 = the live screen), a cursor and a selection,
shared by every client of the session as in tmux (the mode belongs to the pane, not to a
client). Keys are tmux's vi copy-mode keys (the word motions w, b, e are in copy_words);
`emacs_key` turns the emacs table's into them (mode-keys emacs).
Points are (running row number, column): a row's number (Emulator.rows_scrolled + its
visible row) never changes, so the cursor and a selection stay on their text while the view
scrolls or new output arrives.
"""

from __future__ import annotations

from dataclasses import dataclass

from muxd.copy_geometry import PaneGeometry, Point
from muxd.daemon.client_side.copy_search import find
from muxd.daemon.client_side.copy_words import next_word_start, previous_word_start, word_end

WHEEL_SCROLL_LINES = 3  # tmux scrolls five; three feels closer to a plain terminal

_UP = (b"\x1b[A", b"\x1bOA", b"k")
_DOWN = (b"\x1b[B", b"\x1bOB", b"j")
_LEFT = (b"\x1b[D", b"\x1bOD", b"h")
_RIGHT = (b"\x1b[C", b"\x1bOC", b"l")
_LINE_START = (b"0", b"\x1b[H", b"\x1bOH", b"\x1b[1~")
_LINE_END = (b"$", b"\x1b[F", b"\x1bOF", b"\x1b[4~")
_SCROLL_UP = (b"\x19",)    # C-y: the view moves, the cursor stays on its text
_SCROLL_DOWN = (b"\x05",)  # C-e
_PAGE_UP = (b"\x1b[5~", b"\x02")
_PAGE_DOWN = (b"\x1b[6~", b"\x06")
_HALF_PAGE_UP = (b"\x15",)    # C-u
_HALF_PAGE_DOWN = (b"\x04",)  # C-d
_BEGIN_SELECTION = (b" ", b"v")
_COPY = (b"\r", b"y")
_CLEAR_OR_LEAVE = (b"\x1b",)  # clears a selection; with none, leaves
_LEAVE = (b"q", b"\x03")

# tmux's emacs copy-mode keys (mode-keys emacs), each as the vi key that does the same here.
# Keys both tables share (arrows, Home/End, PageUp/PageDown, n, N, q) pass as they are;
# any other key does nothing in emacs mode (`k` is no motion there).
_EMACS_AS_VI = {
    b"\x10": b"k", b"\x0e": b"j", b"\x02": b"h", b"\x06": b"l",   # C-p C-n C-b C-f
    b"\x01": b"0", b"\x05": b"$",                                 # C-a C-e
    b"\x1bv": b"\x1b[5~", b"\x16": b"\x1b[6~",                      # M-v C-v
    b"\x00": b" ", b"\x1bw": b"y", b"\x17": b"y",                    # C-Space M-w C-w
    b"\x07": b"\x1b", b"\x1b": b"q", b"\x03": b"q",                  # C-g (clear) Escape C-c
    b"\x13": b"/", b"\x12": b"?",                                  # C-s C-r
    b"\x1bf": b"e", b"\x1bb": b"b", b"\x1b<": b"g", b"\x1b>": b"G",   # M-f M-b M-< M->
}
_SHARED_KEYS = frozenset((*_UP[:2], *_DOWN[:2], *_LEFT[:2], *_RIGHT[:2], *_LINE_START[1:], *_LINE_END[1:],
                          b"\x1b[5~", b"\x1b[6~", b"n", b"N", b"q"))


def emacs_key(key: bytes) -> bytes | None:
    """The key vi's table has for what `key` does in tmux's emacs copy mode; None: nothing."""
    return key if key in _SHARED_KEYS else _EMACS_AS_VI.get(key)


# What `key` asks of its caller besides the new state; SEARCH_*: ask for the text to find, then
# call `search`.
STAY, LEAVE, COPY, SEARCH_DOWN, SEARCH_UP = "stay", "leave", "copy", "search down", "search up"


@dataclass
class CopyMode:
    offset: int = 0
    cursor: Point | None = None  # None until placed (the caller puts it on the pane's cursor)
    anchor: Point | None = None  # where the selection began (Space / v, or a mouse press)
    end: Point | None = None     # its other end: the cursor, or the mouse while dragging
    entered_by_drag: bool = False  # a drag entered it: the copy ends it, as in tmux
    last_search: tuple[str, bool] | None = None  # (text, forward): what n and N repeat

    def selection(self) -> tuple[Point, Point] | None:
        """(first, last) selected cell in reading order, both included."""
        if self.anchor is None or self.end is None:
            return None
        return (self.anchor, self.end) if self.anchor <= self.end else (self.end, self.anchor)

    def scroll(self, lines: int, history: int) -> None:
        """Positive `lines` goes back in time; clamped to [0, history]."""
        self.offset = min(max(self.offset + lines, 0), history)

    def key(self, key: bytes, pane: PaneGeometry) -> str:
        """Apply one key: STAY, LEAVE (copy mode ends) or COPY (copy the selection, then end)."""
        if key in _LEAVE or (key in _CLEAR_OR_LEAVE and self.anchor is None):
            return LEAVE
        if key in _CLEAR_OR_LEAVE:
            self.anchor = self.end = None
            return STAY
        if key in _COPY:
            return COPY if self.selection() is not None else LEAVE
        if key in (b"/", b"?"):
            return SEARCH_DOWN if key == b"/" else SEARCH_UP
        if key in (b"n", b"N") and self.last_search is not None:
            text, forward = self.last_search
            self.search(text, forward == (key == b"n"), pane)
            self.last_search = (text, forward)  # N searches the other way but keeps the direction
            return STAY
        self.offset = min(self.offset, pane.history)
        row, column = self._cursor_or_bottom(pane)
        page = max(1, pane.lines - 1)
        if key in _UP:
            row -= 1
        elif key in _DOWN:
            row += 1
        elif key in _LEFT:
            column -= 1
        elif key in _RIGHT:
            column += 1
        elif key in _LINE_START:
            column = 0
        elif key in _LINE_END:
            column = pane.columns - 1
        elif key in _SCROLL_UP or key in _SCROLL_DOWN:
            self.scroll(1 if key in _SCROLL_UP else -1, pane.history)
        elif key in _PAGE_UP or key in _PAGE_DOWN or key in _HALF_PAGE_UP or key in _HALF_PAGE_DOWN:
            # The view moves and the cursor keeps its place on the screen, as in tmux.
            lines = page if key in _PAGE_UP or key in _PAGE_DOWN else max(1, pane.lines // 2)
            lines = lines if key in _PAGE_UP or key in _HALF_PAGE_UP else -lines
            self.scroll(lines, pane.history)
            row -= lines
        elif key == b"g":
            row, column, self.offset = pane.first, 0, pane.history
        elif key == b"G":
            row, column, self.offset = pane.last, 0, 0
        elif key == b"w" and pane.text_of is not None:
            row, column = next_word_start(pane.text_of, (row, column), pane.last)
        elif key == b"e" and pane.text_of is not None:
            row, column = word_end(pane.text_of, (row, column), pane.last)
        elif key == b"b" and pane.text_of is not None:
            row, column = previous_word_start(pane.text_of, (row, column), pane.first)
        elif key in _BEGIN_SELECTION:
            self.anchor = self.cursor = (row, column)
        self._place(row, column, pane, follow=key not in _SCROLL_UP and key not in _SCROLL_DOWN)
        return STAY

    def search(self, text: str, forward: bool, pane: PaneGeometry) -> bool:
        """Move the cursor to the nearest match of `text` (the view follows); False if none."""
        self.last_search = (text, forward)
        if pane.rows_text is None:
            return False
        found = find(pane.rows_text, text, self._cursor_or_bottom(pane), forward=forward,
                     first=pane.first, last=pane.last)
        if found is not None:
            self._place(*found, pane, follow=True)
        return found is not None

    def _cursor_or_bottom(self, pane: PaneGeometry) -> Point:
        """Where keys act from: the cursor, or before it is placed the live screen's last row."""
        return self.cursor if self.cursor is not None else (pane.last, 0)

    def wheel(self, direction: int, pane: PaneGeometry) -> bool:
        """A wheel notch (-1 up, +1 down); False when scrolled down past the bottom: leave."""
        if direction > 0 and self.offset <= 0:
            return False
        self.scroll(-direction * WHEEL_SCROLL_LINES, pane.history)
        if self.cursor is not None:
            self._place(*self.cursor, pane, follow=False)
        return not (direction > 0 and self.offset == 0)

    def _place(self, row: int, column: int, pane: PaneGeometry, *, follow: bool) -> None:
        """Move the cursor (clamped to the rows kept); `follow`: scroll the view to it,
        else keep it on the view (as tmux does when the view scrolls under it)."""
        row = min(max(row, pane.first), pane.last)
        view_top = pane.top - self.offset
        if follow:
            if row < view_top:
                self.offset = pane.top - row
            elif row > view_top + pane.lines - 1:
                self.offset = pane.top + pane.lines - 1 - row
            self.offset = min(max(self.offset, 0), pane.history)
        else:
            row = min(max(row, view_top), view_top + pane.lines - 1)
        self.cursor = (row, min(max(column, 0), pane.columns - 1))
        if self.anchor is not None:
            self.end = self.cursor
