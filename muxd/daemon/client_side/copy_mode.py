"""Copy mode of a pane: how far back into its scrollback the attached clients look, a cursor
to move around it, and the selected text.

Pure: the state is one offset per pane (0 = the live screen), a cursor and a selection,
shared by every client of the session as in tmux (the mode belongs to the pane, not to a
client). It does tmux's copy-mode commands (`send -X cursor-up`…; the word motions are in
copy_words); the keys that run them are copy_keys.py's tables, and a user's bindings over them
(copy_mode_keys.py).
Points are (running row number, column): a row's number (Emulator.rows_scrolled + its
visible row) never changes, so the cursor and a selection stay on their text while the view
scrolls or new output arrives.
"""

from __future__ import annotations

from dataclasses import dataclass

from muxd.copy_geometry import PaneGeometry, Point
from muxd.daemon.client_side.copy_keys import VI_TABLE, default_command
from muxd.daemon.client_side.copy_search import find
from muxd.daemon.client_side.copy_words import next_word_start, previous_word_start, word_end

WHEEL_SCROLL_LINES = 3  # tmux scrolls five; three feels closer to a plain terminal

# What a key or command asks of its caller besides the new state: COPY copies the selection and
# leaves, COPY_STAY copies and clears it, COPY_KEEP copies and keeps it; SEARCH_*: ask for the
# text to find, then call `search`.
STAY, LEAVE, COPY, SEARCH_DOWN, SEARCH_UP = "stay", "leave", "copy", "search down", "search up"
COPY_STAY, COPY_KEEP = "copy and stay", "copy and keep"
_COPIES = {"copy-selection-and-cancel": COPY, "copy-pipe-and-cancel": COPY, "copy-selection": COPY_STAY,
           "copy-pipe": COPY_STAY, "copy-selection-no-clear": COPY_KEEP, "copy-pipe-no-clear": COPY_KEEP}
_MOVES = {"cursor-up": (-1, 0), "cursor-down": (1, 0), "cursor-left": (0, -1), "cursor-right": (0, 1)}


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
        """Apply one key of tmux's default vi table (copy_keys.py): what its command returns."""
        name = default_command(VI_TABLE, key)
        return STAY if name is None else self.command(name, pane)

    def command(self, name: str, pane: PaneGeometry, argument: str | None = None) -> str:
        """Apply one of tmux's copy-mode commands (copy_keys.COPY_COMMANDS): STAY, LEAVE (copy
        mode ends), COPY… (copy the selection, then as the outcome says) or SEARCH_…."""
        if name == "cancel" or (name == "clear-selection" and self.anchor is None):
            return LEAVE  # muxd's Escape leaves when there is nothing to clear
        if name == "clear-selection":
            self.anchor = self.end = None
            return STAY
        if name in _COPIES:
            if self.selection() is None:
                return LEAVE if _COPIES[name] == COPY else STAY
            return _COPIES[name]
        if name in ("search-forward", "search-backward"):
            if argument is None:
                return SEARCH_DOWN if name == "search-forward" else SEARCH_UP
            self.search(argument, name == "search-forward", pane)
            return STAY
        if name in ("search-again", "search-reverse"):
            if self.last_search is not None:
                text, forward = self.last_search
                self.search(text, forward == (name == "search-again"), pane)
                self.last_search = (text, forward)  # N searches the other way but keeps the direction
            return STAY
        if name == "other-end" and self.anchor is not None and self.cursor is not None:
            self.anchor, cursor = self.cursor, self.anchor
            self._place(*cursor, pane, follow=True)
            return STAY
        self.offset = min(self.offset, pane.history)
        row, column = self._cursor_or_bottom(pane)
        view_top = pane.top - self.offset
        page = max(1, pane.lines - 1)
        if name in _MOVES:
            row, column = row + _MOVES[name][0], column + _MOVES[name][1]
        elif name == "start-of-line":
            column = 0
        elif name == "end-of-line":
            column = pane.columns - 1
        elif name in ("scroll-up", "scroll-down"):  # the view moves, the cursor stays on its text
            self.scroll(1 if name == "scroll-up" else -1, pane.history)
        elif name in ("page-up", "page-down", "halfpage-up", "halfpage-down"):
            # The view moves and the cursor keeps its place on the screen, as in tmux.
            lines = page if name.startswith("page") else max(1, pane.lines // 2)
            lines = lines if name.endswith("up") else -lines
            self.scroll(lines, pane.history)
            row -= lines
        elif name == "history-top":
            row, column, self.offset = pane.first, 0, pane.history
        elif name == "history-bottom":
            row, column, self.offset = pane.last, 0, 0
        elif name in ("top-line", "middle-line", "bottom-line"):
            row = view_top + {"top-line": 0, "middle-line": (pane.lines - 1) // 2}.get(name, pane.lines - 1)
        elif name == "next-word" and pane.text_of is not None:
            row, column = next_word_start(pane.text_of, (row, column), pane.last)
        elif name == "next-word-end" and pane.text_of is not None:
            row, column = word_end(pane.text_of, (row, column), pane.last)
        elif name == "previous-word" and pane.text_of is not None:
            row, column = previous_word_start(pane.text_of, (row, column), pane.first)
        elif name == "begin-selection":
            self.anchor = self.cursor = (row, column)
        elif name == "select-line":  # the whole line, the cursor at its end
            self.anchor, column = (row, 0), pane.columns - 1
        self._place(row, column, pane, follow=name not in ("scroll-up", "scroll-down"))
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
