"""`FramePainter`: the escape bytes that turn the frame last painted on a client into the next.

One painter per attached client. It remembers the last frame and what the outer terminal's
state is (SGR, cursor, mirrored modes), and emits only the changed cells of changed rows:
an unchanged row costs a tuple compare, an unchanged frame costs nothing.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from itertools import compress, count, groupby, repeat
from operator import is_not, itemgetter, lt, ne, sub

from muxd.emulator.cell import BLANK, DEFAULT_STYLE, PADDING, Style, StyledRow
from muxd.emulator.sgr import SGR_RESET, sgr_transition
from muxd.emulator.vt_row import VtRow

from .cells import terminal_safe
from .frame import Frame, FrameRow
from .split_row import SplitRow, same_piece

# Two changed stretches of a row closer than this are painted as one: rewriting a few
# unchanged cells is cheaper than a cursor move.
SPAN_GAP_CELLS = 6
# A changed blank tail at least this long is erased with EL instead of written as spaces.
ERASE_TAIL_MIN_CELLS = 5
_SGR_MEMO_MAX_ENTRIES = 4096

SYNC_BEGIN = "\x1b[?2026h"  # synchronized output: the terminal shows the paint all at once
SYNC_END = "\x1b[?2026l"
_RESET_AND_CLEAR = "\x1b[0m\x1b[H\x1b[2J"
# The mouse reporting our client always wants: buttons, wheel and drags (moves with a button
# held, for selections) in SGR encoding. A pane asking for all motion (1003) gets it mirrored.
BASE_MOUSE_TRACKING = 1002
SGR_MOUSE = 1006
_TRACKING_MODES = (1003,)  # stronger than the base, most reporting first
# With the mouse option off, only a pane that asks gets reports: its own mode, strongest first.
_PANE_TRACKING_MODES = (1003, 1002, 1000)
_NO_TRACKING = 0
# Pane modes the outer terminal mirrors (set, reset) besides mouse tracking.
_MIRRORED = {
    1: ("\x1b[?1h", "\x1b[?1l"),  # DECCKM: application cursor keys
    66: ("\x1b=", "\x1b>"),  # application keypad (DECKPAM / DECKPNM)
    2004: ("\x1b[?2004h", "\x1b[?2004l"),  # bracketed paste
}

_data = itemgetter(0)
_style_of = itemgetter(slice(1, None))


def _plain_spans(old: StyledRow, new: StyledRow) -> list[tuple[int, int]] | None:
    """`_spans` of the changed columns of two plain-text rows, found from their text and style
    runs (a step per run, not a cell compare per column: a TUI restyles whole rows every
    frame); None when their widths differ."""
    old_text, new_text = old.text, new.text
    size = len(new_text)
    if len(old_text) != size:
        return None
    # Between two cuts both rows keep one style each: its first cells tell the whole stretch.
    old_starts, new_starts = old.style_starts, new.style_starts
    if len(old_starts) == 1 and len(new_starts) == 1:
        restyled = [(0, size)] if old.styles[0] != new.styles[0] else []  # type: ignore[index]
    else:
        cuts = sorted({0, *old_starts, *new_starts, size})
        old_style, new_style = old.style_at, new.style_at
        restyled = [(start, stop) for start, stop in zip(cuts, cuts[1:])
                    if stop <= size and old_style(start) != new_style(start)]
    if restyled == [(0, size)]:
        return [(0, size - 1)]
    retexted = compress(count(), map(ne, old_text, new_text))
    if not restyled:
        return _spans(list(retexted))
    changed = set(retexted)
    for start, stop in restyled:
        changed.update(range(start, stop))
    return _spans(sorted(changed))


def _style_cuts(fields: list[tuple[object, ...]], size: int) -> list[int]:
    """Where the style runs of `size` cells start, and `size`, from the cells by field (as
    zip(*cells)): a field the whole row shares (most of them, in most rows) costs one count in
    C, and only the fields that vary are compared cell by cell (never a style made per cell)."""
    cuts: set[int] = set()
    for field in fields[1:]:
        if field.count(field[0]) != size:
            cuts.update(compress(count(1), map(ne, field[1:], field)))
    return [0, *sorted(cuts), size]


def _spans(changed: list[int]) -> list[tuple[int, int]]:
    """Ascending changed columns as (first, last) stretches, split where two are further apart
    than SPAN_GAP_CELLS (none when they are one run, as in a TUI's redrawn row: no per-cell
    work then)."""
    if not changed:
        return []
    if changed[-1] - changed[0] + 1 == len(changed):
        return [(changed[0], changed[-1])]
    gaps = map(sub, changed[1:], changed)
    breaks = list(compress(count(1), map(lt, repeat(SPAN_GAP_CELLS), gaps)))
    firsts = [0, *breaks]
    lasts = [i - 1 for i in breaks] + [len(changed) - 1]
    return [(changed[f], changed[l]) for f, l in zip(firsts, lasts)]


def _plain_blank_tail(row: StyledRow) -> int:
    """`_blank_tail` of a plain-text row, from its text and runs."""
    text, starts, styles = row.text, row.style_starts, row.styles
    if styles[-1] != DEFAULT_STYLE:  # type: ignore[index]
        return len(text)  # the last run is styled: no blank tail (a TUI's row, mostly)
    run = len(starts)
    while run and styles[run - 1] == DEFAULT_STYLE:  # type: ignore[index]
        run -= 1
    default_from = starts[run] if run < len(starts) else len(text)
    return max(len(text.rstrip(" ")), default_from)


def enter_terminal_bytes() -> bytes:
    """Outer terminal set-up on attach: alternate screen, cleared, mouse button reports (SGR)."""
    return (
        f"\x1b[?1049h{_RESET_AND_CLEAR}\x1b[?{BASE_MOUSE_TRACKING}h\x1b[?{SGR_MOUSE}h"
    ).encode()


def leave_terminal_bytes() -> bytes:
    """Undo `enter_terminal_bytes` and any mirrored mode: the terminal as the shell left it."""
    modes_off = "".join(reset for _, reset in _MIRRORED.values())
    mouse_off = "".join(f"\x1b[?{mode}l" for mode in (*_PANE_TRACKING_MODES, SGR_MOUSE))
    return f"{modes_off}{mouse_off}{SYNC_END}\x1b[0m\x1b[?25h\x1b[?1049l".encode()


class FramePainter:
    """Paints frames on one client's terminal (which `enter_terminal_bytes` prepared)."""

    def __init__(self) -> None:
        self._sgr_memo: dict[tuple[Style, Style], str] = {}
        self.mouse = True  # the mouse option: muxd takes the mouse (False: only a pane that asks)
        self.invalidate()

    def invalidate(self) -> None:
        """Forget what the terminal shows: the next paint is a full redraw."""
        self._last: Frame | None = None
        self._style: Style = DEFAULT_STYLE
        self._cursor: tuple[int, int] | None = None  # None: unknown (e.g. pending wrap)
        self._cursor_visible: bool | None = None
        self._mirrored: frozenset[int] | None = None
        self._tracking: int | None = None
        self._modes_mirrored: frozenset[int] | None = None  # the frame modes and mouse option
        self._mouse_mirrored: bool | None = None  # `_mirror_modes` last saw

    def paint(self, frame: Frame) -> bytes:
        """Bytes that make the terminal show `frame` (b"" when nothing changed)."""
        out: list[str] = []
        last = self._last
        if last is None or last.columns != frame.columns or last.lines != frame.lines:
            out.append(_RESET_AND_CLEAR)
            self._style = DEFAULT_STYLE
            self._cursor = (0, 0)
            blank = (BLANK,) * frame.columns
            old_rows: tuple[FrameRow, ...] | list[FrameRow] = [blank] * frame.lines
        else:
            old_rows = last.rows
        paint_row, append, columns = self._paint_row, out.append, frame.columns
        for y, old, new in zip(count(), old_rows, frame.rows):
            if old is new:
                continue
            if type(new) is VtRow:
                if type(old) is VtRow and old.vt == new.vt:  # type: ignore[attr-defined]
                    continue
                if new.columns != columns:  # type: ignore[attr-defined]  # (only after a bug upstream)
                    paint_row(out, y, (BLANK,) * columns, new.cells)  # type: ignore[attr-defined]
                    continue
                # _paint_vt_row at column 0, inline: a full-screen TUI has every row of every
                # frame painted here.
                vt, width = new.vt, new.width  # type: ignore[attr-defined]
                append(f"\x1b[{y + 1}H")
                if self._style is not DEFAULT_STYLE and self._style != DEFAULT_STYLE and not vt.startswith(SGR_RESET):
                    append(SGR_RESET)
                append(vt)
                self._style = DEFAULT_STYLE
                if width < columns:
                    append("\x1b[K")
                    self._cursor = (width, y)
                else:
                    self._cursor = None  # at the edge: pending wrap
            elif type(new) is SplitRow:
                self._paint_split_row(out, y, old, new, columns)  # type: ignore[arg-type]
            elif type(old) is VtRow or type(old) is SplitRow:
                paint_row(out, y, old.cells, new)  # type: ignore[attr-defined]  # (what it drew, as cells)
            elif old != new:
                paint_row(out, y, old, new)
        drew = bool(out)
        self._mirror_modes(out, frame.modes)
        if frame.cursor_visible and self._cursor != frame.cursor:
            self._move(out, *frame.cursor)
        if frame.cursor_visible != self._cursor_visible:
            out.append("\x1b[?25h" if frame.cursor_visible else "\x1b[?25l")
            self._cursor_visible = frame.cursor_visible
        self._last = frame
        if not out:
            return b""
        if drew:  # the cursor's final place is part of the atomic update too
            out.insert(0, SYNC_BEGIN)
            out.append(SYNC_END)
        return "".join(out).encode("utf-8", "replace")

    # -- rows -------------------------------------------------------------------------

    def _paint_vt_row(self, out: list[str], x: int, y: int, row: VtRow, columns: int) -> None:
        """Draw `row` whole from its escape text at column `x`: its text, then the rest of its
        width erased in the default style."""
        if self._cursor != (x, y):
            self._move(out, x, y)
        vt = row.vt
        if self._style is not DEFAULT_STYLE and self._style != DEFAULT_STYLE and not vt.startswith(SGR_RESET):
            out.append(SGR_RESET)
        out.append(vt)
        self._style = DEFAULT_STYLE  # a VtRow ends in the default style
        end = x + row.columns
        if row.width < row.columns:
            blanks = row.columns - row.width
            # To the client's edge: EL; short of it (a pane beside another): ECH, which stops there.
            out.append("\x1b[K" if end == columns else f"\x1b[{blanks}X")
            self._cursor = (x + row.width, y)
        else:
            self._cursor = (end, y) if end < columns else None  # at the edge: pending wrap

    def _paint_split_row(self, out: list[str], y: int, old: FrameRow, new: SplitRow, columns: int) -> None:
        """Paint the pieces of `new` that differ from the same pieces of `old` (all of them
        unless `old` is a SplitRow cut the same way)."""
        pieces = new.pieces
        if type(old) is SplitRow and list(map(len, old.pieces)) == list(map(len, pieces)):  # type: ignore[attr-defined]
            olds: tuple[FrameRow | None, ...] = old.pieces  # type: ignore[attr-defined]
        else:
            olds = (None,) * len(pieces)
        x = 0
        for before, piece in zip(olds, pieces):
            if before is None or not same_piece(before, piece):
                if type(piece) is VtRow:
                    self._paint_vt_row(out, x, y, piece, columns)  # type: ignore[arg-type]
                else:
                    self._move(out, x, y)
                    for style, group in groupby(piece, _style_of):
                        self._set_style(out, style)  # type: ignore[arg-type]
                        out.append("".join(map(_data, group)))
                    end = x + len(piece)
                    self._cursor = (end, y) if end < columns else None
            x += len(piece)

    def _paint_row(self, out: list[str], y: int, old: FrameRow, new: FrameRow) -> None:
        # Plain rows (no wide characters, and no cells to make), tested inline: a full-screen
        # TUI has every row of every frame painted here.
        plain = type(new) is StyledRow and new.styles is not None  # type: ignore[attr-defined]
        spans = (_plain_spans(old, new) if plain and type(old) is StyledRow and old.styles is not None  # type: ignore[attr-defined, arg-type]
                 else None)
        if spans is None:
            # Cells mostly are shared flyweights: an identity test in C rules out most of the
            # row; a few candidates left are compared by value one by one, many all at once in C.
            candidates = list(compress(count(), map(is_not, old, new)))
            if 2 * len(candidates) < len(new):
                changed = [x for x in candidates if old[x] != new[x]]
            else:
                changed = list(compress(count(), map(ne, old, new)))
            if len(old) != len(new):  # only after a bug upstream; repaint the row whole
                changed = list(range(len(new)))
            spans = _spans(changed)
        if not spans:
            return
        columns = len(new.text) if plain else len(new)  # type: ignore[union-attr]
        if plain and len(new.style_starts) == 1 and spans[0] == (0, columns - 1) and new.styles[0] != DEFAULT_STYLE:  # type: ignore[union-attr, index]
            # A whole row in one style that is not the default (a TUI's row, redrawn): what
            # the loop below writes, in three steps (no blank tail to erase in a styled row).
            self._move(out, 0, y)
            self._set_style(out, new.styles[0])  # type: ignore[union-attr, index]
            out.append(new.text)  # type: ignore[union-attr]
            self._cursor = None  # at the edge: pending wrap
            return
        for index, (start, end) in enumerate(spans):
            if not plain:
                if new[start].data == PADDING and start > 0:
                    start -= 1  # never paint the right half of a wide character alone
                if end + 1 < columns and new[end + 1].data == PADDING:
                    end += 1
            tail = columns
            if index == len(spans) - 1 and columns - end <= ERASE_TAIL_MIN_CELLS:
                tail = _plain_blank_tail(new) if plain else _blank_tail(new)  # type: ignore[arg-type]
            if end + 1 - max(start, tail) >= ERASE_TAIL_MIN_CELLS:
                if tail > start:
                    self._write(out, y, start, new, tail, plain)
                self._move(out, max(start, tail), y)
                self._set_style(out, DEFAULT_STYLE)
                out.append("\x1b[K")
            else:
                self._write(out, y, start, new, end + 1, plain)

    def _write(self, out: list[str], y: int, x: int, row: FrameRow, stop: int, plain: bool) -> None:
        """Write row[x:stop] at (x, y); `plain`: the row is a plain StyledRow."""
        self._move(out, x, y)
        set_style = self._set_style
        if plain:
            # The row says where its style changes and what each run's style is: a step per
            # run, none per cell, and no cell made.
            starts, styles, text = row.style_starts, row.styles, row.text  # type: ignore[union-attr]
            if len(starts) == 1:  # one style: one step
                set_style(out, styles[0])  # type: ignore[index]
                out.append(text[x:stop])
                self._cursor = (stop, y) if stop < len(text) else None  # at the edge: pending wrap
                return
            first, last = bisect_right(starts, x) - 1, bisect_left(starts, stop)
            cuts = [x, *starts[first + 1 : last], stop]
            for start, end, style in zip(cuts, cuts[1:], styles[first:last]):  # type: ignore[index]
                set_style(out, style)
                out.append(text[start:end])
            self._cursor = (stop, y) if stop < len(text) else None  # at the edge: pending wrap
            return
        cells = row[x:stop]
        fields = list(zip(*cells))  # the row by field: its characters, then each style field
        text = "".join(fields[0]) if fields else ""
        if len(text) == len(cells) and text.isascii():
            # One character per cell: each style run is a slice of `text`, found by comparing
            # neighbouring styles in C; no second join, no per-cell Python step.
            cuts = _style_cuts(fields, len(cells))
            for start, end in zip(cuts, cuts[1:]):
                set_style(out, cells[start][1:])  # type: ignore[arg-type]
                out.append(text[start:end])
        else:
            for style, group in groupby(terminal_safe(cells), _style_of):
                set_style(out, style)
                out.append("".join(map(_data, group)))
        self._cursor = (stop, y) if stop < len(row) else None  # at the edge: pending wrap

    def _set_style(self, out: list[str], style: Style) -> None:
        current = self._style
        if style is current or style == current:
            return
        key = (current, style)
        sequence = self._sgr_memo.get(key)
        if sequence is None:
            if len(self._sgr_memo) >= _SGR_MEMO_MAX_ENTRIES:
                self._sgr_memo.clear()
            sequence = self._sgr_memo[key] = sgr_transition(current, style)
        out.append(sequence)
        self._style = style

    def _move(self, out: list[str], x: int, y: int) -> None:
        cursor = self._cursor
        if cursor == (x, y):
            return
        if cursor is not None and cursor[1] == y:
            step = x - cursor[0]
            if step > 0:
                out.append("\x1b[C" if step == 1 else f"\x1b[{step}C")
            else:
                out.append("\b" if step == -1 else f"\x1b[{-step}D")
        elif x == 0:
            out.append(f"\x1b[{y + 1}H")
        else:
            out.append(f"\x1b[{y + 1};{x + 1}H")
        self._cursor = (x, y)

    # -- modes ------------------------------------------------------------------------

    def _mirror_modes(self, out: list[str], modes: frozenset[int]) -> None:
        if modes is self._modes_mirrored and self.mouse is self._mouse_mirrored:
            return  # (the same set as last frame: an emulator hands out one until a mode changes)
        self._modes_mirrored, self._mouse_mirrored = modes, self.mouse
        wanted = modes & _MIRRORED.keys()
        known = self._mirrored
        if wanted != known:
            for mode, (on, off) in _MIRRORED.items():
                if known is None or (mode in wanted) != (mode in known):
                    out.append(on if mode in wanted else off)
            self._mirrored = frozenset(wanted)
        if self.mouse:
            tracking = next((mode for mode in _TRACKING_MODES if mode in modes), BASE_MOUSE_TRACKING)
        else:
            tracking = next((mode for mode in _PANE_TRACKING_MODES if mode in modes), _NO_TRACKING)
        current = self._tracking
        if tracking != current:
            # Terminals differ on whether 1000/1002/1003 are one setting or three flags: turn
            # the stronger one off explicitly, then set the one wanted.
            if current is None:
                out.extend(f"\x1b[?{mode}l" for mode in _PANE_TRACKING_MODES if mode != tracking)
                out.append(f"\x1b[?{SGR_MOUSE}h")
            elif current > tracking:
                out.append(f"\x1b[?{current}l")
            if tracking != _NO_TRACKING:
                out.append(f"\x1b[?{tracking}h")
            self._tracking = tracking


def _blank_tail(row: FrameRow) -> int:
    """Where the run of default blanks ending the row starts (len(row) if none)."""
    x = len(row)
    while x > 0 and row[x - 1] == BLANK:
        x -= 1
    return x
