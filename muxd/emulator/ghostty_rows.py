"""`NativeRowCells`: visible rows of a libghostty-vt terminal as muxd `Cell`s, one native call a row.

Reading a row cell by cell (two cffi calls a cell, ~3 us) was most of what drawing a busy pane
for an attached client cost. Here one call gives a row's raw cells (the render state's
CELLS_RAW view: 64 bits a cell holding its content tag, codepoint, style id and width). The row
is cut into runs of one style id by C-level loops over those ints, each run's style is read
once, and each raw value becomes a shared `Cell` through a dict kept per style: a row costs a
few native calls and no Python step per cell. A row of plain ASCII (most rows of a TUI) skips
the ints: it is tested and its text taken from the raw bytes read as one big integer, its runs
found by a regex over the bytes, and it makes no `Cell` at all unless a reader asks (the
painter draws it from its text and runs). Only a cell holding several codepoints (a letter and
its combining mark) is read on its own. Rows come out as `StyledRow`s, which tell the painter
where their style changes.

(The VT formatter writes a row in one call too, but it writes the unwritten cells after a styled
run as spaces in that style, which would paint them so; the raw cells say which are unwritten,
`vt_drawable`, and ghostty_vt_rows.py draws the rows it can from the formatter.)
"""

from __future__ import annotations

import re
import weakref
from itertools import compress, count, repeat
from operator import and_, is_, ne, rshift

from .ghostty_ffi import ffi, init_sized, lib

from .cell import BLANK, DEFAULT_STYLE, PADDING, Cell, Style, StyledRow, styled_row
from .rows import Row, canonical_runs, row_from_screen_cells
from .sgr import intern_style

# The raw cell's layout (ghostty's page.Cell, a packed u64), checked against the library's own
# accessors at import (`layout_matches`): a library that packs it differently is read the slow way.
_TAG_MASK = 0x3
_CODEPOINT_SHIFT, _CODEPOINT_MASK = 2, 0x1FFFFF
_STYLE_ID_SHIFT, _STYLE_ID_MASK = 26, 0xFFFF
_WIDE_SHIFT, _WIDE_MASK = 42, 0x3

_TAG_GRAPHEME = lib.GHOSTTY_CELL_CONTENT_CODEPOINT_GRAPHEME
_TAG_BG_PALETTE = lib.GHOSTTY_CELL_CONTENT_BG_COLOR_PALETTE
_TAG_BG_RGB = lib.GHOSTTY_CELL_CONTENT_BG_COLOR_RGB
_WIDE_TAIL = lib.GHOSTTY_CELL_WIDE_SPACER_TAIL

# Cells made once per (style, raw value); a dict past this many is emptied, and so is the set of
# per-style dicts (a rainbow of styles cannot grow them without bound).
CELLS_PER_STYLE_MAX = 4096
STYLES_KEPT_MAX = 1024

_NAMES = ("black", "red", "green", "brown", "blue", "magenta", "cyan", "white")
PALETTE_NAMES = _NAMES + tuple("bright" + name for name in _NAMES)

# A row's raw cells as bytes (little-endian): bytes 0-2 hold the content tag and the codepoint,
# 3-5 the style id (from bit 2 of byte 3) and the width (bits 2-3 of byte 5).
_RAW_CELL_BYTES = 8
# A run of raw cells whose bytes 3-5 (the style id and the width) are alike, matched in C.
_STYLE_RUNS = re.compile(rb"(?s)...(...)..(?:...\1..)*")
# A run of cells blank in the default style (codepoint 0 or a space, style id 0, one cell
# wide, no flags).
_DEFAULT_BLANKS = re.compile(rb"(?s)(?:[\0\x80]\0\0\0\0\0..)*")

# A plain ASCII cell has none of these bits: the content tag, codepoint bits 7 and up, the width.
_NOT_PLAIN_CELL = int.from_bytes(bytes((_TAG_MASK, 0xFE, 0xFF, 0, 0, _WIDE_MASK << (_WIDE_SHIFT - 40), 0, 0)), "little")
_STYLE_BITS = 0xFFFFFF << 24  # bytes 3-5: the style id and the width
# A plain cell's byte 0 holds its codepoint's bits 0-5 above the (zero) tag, byte 1 its bit 6.
_LOW_CODEPOINT_BITS = bytes(byte >> _CODEPOINT_SHIFT for byte in range(256))
_row_masks: dict[int, tuple[int, int, int]] = {}


def _masks(size: int) -> tuple[int, int, int]:
    """For a row of `size` cells read as one integer: `_NOT_PLAIN_CELL` and `_STYLE_BITS` in
    each cell, and a 1 in each cell's lowest bit (a cell's value times it is in every cell)."""
    masks = _row_masks.get(size)
    if masks is None:
        ones = int.from_bytes(b"\1" + bytes(_RAW_CELL_BYTES - 1), "little")
        ones = int.from_bytes(ones.to_bytes(_RAW_CELL_BYTES, "little") * size, "little")
        masks = _row_masks[size] = (_NOT_PLAIN_CELL * ones, _STYLE_BITS * ones, ones)
    return masks


# Stands for a cell whose text must be read on its own (several codepoints): never kept.
_GRAPHEME = Cell("\x00grapheme")
_BACKGROUND_ONLY_BIT = 0x2  # in the content tag: bg_color_palette (2) and bg_color_rgb (3)

_row_iterator_free = lib.ghostty_render_state_row_iterator_free
_row_cells_free = lib.ghostty_render_state_row_cells_free
_row_get = lib.ghostty_render_state_row_get
_iterator_next = lib.ghostty_render_state_row_iterator_next
_cells_select = lib.ghostty_render_state_row_cells_select
_cells_get = lib.ghostty_render_state_row_cells_get
_CELLS_RAW = lib.GHOSTTY_RENDER_STATE_ROW_DATA_CELLS_RAW
_CELLS = lib.GHOSTTY_RENDER_STATE_ROW_DATA_CELLS
_CELL_STYLE = lib.GHOSTTY_RENDER_STATE_ROW_CELLS_DATA_STYLE
_GRAPHEMES_LEN = lib.GHOSTTY_RENDER_STATE_ROW_CELLS_DATA_GRAPHEMES_LEN
_GRAPHEMES_BUF = lib.GHOSTTY_RENDER_STATE_ROW_CELLS_DATA_GRAPHEMES_BUF


def colour_name(c: object, default: str = "default") -> str:
    """A native style colour as muxd names it: a pyte name for 0-15, "N" above, "rrggbb"."""
    tag = c.tag  # type: ignore[attr-defined]
    if tag == lib.GHOSTTY_STYLE_COLOR_PALETTE:
        index = c.value.palette  # type: ignore[attr-defined]
        return PALETTE_NAMES[index] if index < 16 else str(index)
    if tag == lib.GHOSTTY_STYLE_COLOR_RGB:
        rgb = c.value.rgb  # type: ignore[attr-defined]
        return f"{rgb.r:02x}{rgb.g:02x}{rgb.b:02x}"
    return default


def native_style(st: object) -> Style:
    """A native `GhosttyStyle` as a shared muxd `Style`."""
    return intern_style((colour_name(st.fg_color), colour_name(st.bg_color), bool(st.bold),  # type: ignore[attr-defined]
                         bool(st.italic), st.underline != 0, bool(st.strikethrough),  # type: ignore[attr-defined]
                         bool(st.inverse), bool(st.blink), bool(st.faint), bool(st.invisible),  # type: ignore[attr-defined]
                         bool(st.overline)))  # type: ignore[attr-defined]


def background_only_style(cell: int, content: int) -> Style:
    """The style of a cell that holds only a background (erased with a colour set)."""
    if content == _TAG_BG_PALETTE:
        index = ffi.new("uint32_t*")
        lib.ghostty_cell_get(cell, lib.GHOSTTY_CELL_DATA_COLOR_PALETTE, index)
        index = index[0] & 0xFF
        return intern_style(("default", PALETTE_NAMES[index] if index < 16 else str(index)) + DEFAULT_STYLE[2:])
    rgb = ffi.new("GhosttyColorRgb*")
    lib.ghostty_cell_get(cell, lib.GHOSTTY_CELL_DATA_COLOR_RGB, rgb)
    return intern_style(("default", f"{rgb.r:02x}{rgb.g:02x}{rgb.b:02x}") + DEFAULT_STYLE[2:])


def _cell(raw: int, style: Style) -> Cell:
    """The muxd cell for raw value `raw` whose style id resolved to `style`."""
    tag = raw & _TAG_MASK
    if tag == _TAG_BG_PALETTE or tag == _TAG_BG_RGB:
        return Cell(" ", *background_only_style(raw, tag))
    if (raw >> _WIDE_SHIFT) & _WIDE_MASK == _WIDE_TAIL:
        text = PADDING
    elif tag == _TAG_GRAPHEME:
        return _GRAPHEME
    else:
        codepoint = (raw >> _CODEPOINT_SHIFT) & _CODEPOINT_MASK
        text = chr(codepoint) if codepoint else " "
    if text == " " and style is DEFAULT_STYLE:
        return BLANK
    return Cell(text, *style)


class _StyleCells(dict):  # type: ignore[type-arg]
    """raw value -> Cell, for cells whose style id resolved to `style` (a style id means a
    style only within its page and while in use, so cells are kept by the style itself)."""

    __slots__ = ("style",)
    graphemes = 0  # cells of several codepoints met, ever: a row compares it before and after

    def __init__(self, style: Style) -> None:
        super().__init__()
        self.style = style

    def __missing__(self, raw: int) -> Cell:
        cell = _cell(raw, self.style)
        if cell is _GRAPHEME:
            _StyleCells.graphemes += 1
        else:
            if len(self) >= CELLS_PER_STYLE_MAX:
                self.clear()
            self[raw] = cell
        return cell


def _free(iterator: object, cells: object) -> None:
    _row_cells_free(cells)
    _row_iterator_free(iterator)


class NativeRowCells:
    """Reads rows of one render state (which its owner keeps updated) in ascending order."""

    def __init__(self, render_state: object) -> None:
        self._state = render_state
        self._iterator = ffi.new("GhosttyRenderStateRowIterator*")
        lib.ghostty_render_state_row_iterator_new(ffi.NULL, self._iterator)
        self._cells = ffi.new("GhosttyRenderStateRowCells*")
        lib.ghostty_render_state_row_cells_new(ffi.NULL, self._cells)
        # Freed by functions bound now (a finalizer must not look up cffi's `lib` attributes).
        weakref.finalize(self, _free, self._iterator[0], self._cells[0])
        self._view = ffi.new("GhosttyCellsView*")
        self._style = init_sized("GhosttyStyle")
        self._style_bytes = ffi.buffer(self._style)  # its bytes, a style's key below
        self._count = ffi.new("uint32_t*")
        self._by_style: dict[Style, _StyleCells] = {DEFAULT_STYLE: _StyleCells(DEFAULT_STYLE)}
        self._by_native: dict[bytes, _StyleCells] = {}
        self.generation = -1  # the owner's count of writes when the rows were last restarted
        self._next_y = 0  # the row the iterator goes to next

    def stale(self, generation: int, y: int) -> bool:
        """True when row `y` cannot be read without `restart`: the terminal was written since
        (`generation` moved on) or `y` is above the rows already passed."""
        return generation != self.generation or y < self._next_y

    def restart(self, generation: int) -> None:
        """Read from the top again, the render state having just been updated."""
        lib.ghostty_render_state_get(self._state, lib.GHOSTTY_RENDER_STATE_DATA_ROW_ITERATOR, self._iterator)
        self.generation = generation
        self._next_y = 0

    def _seek(self, y: int, columns: int) -> int | None:
        """Move to row `y`; the number of its cells to read, or None when there is no such row."""
        iterator = self._iterator[0]
        while self._next_y <= y:
            if not _iterator_next(iterator):
                return None
            self._next_y += 1
        view = self._view
        if _row_get(iterator, _CELLS_RAW, view):
            return None
        return min(view.len, columns)

    def compact_row(self, y: int, columns: int) -> Row | None:
        """Row `y` in compact form (what capture reads), up to its last cell that is not a
        default blank; None when the render state has no such row. A plain ASCII row becomes
        its text and runs straight from the raw bytes, with no `Cell`s made."""
        size = self._seek(y, columns)
        if size is None:
            return None
        plain = self._plain_runs(self._iterator[0], ffi.buffer(self._view.ptr, size * _RAW_CELL_BYTES)[:], size)
        if plain is None:
            return row_from_screen_cells(self._row_read(columns, size), False)
        text, starts, styles = plain
        stops = [*starts[1:], size]
        # Past the text, a last run in the default style is unwritten: left out.
        end = max(len(text.rstrip(" ")), starts[-1]) if styles[-1] is DEFAULT_STYLE else size
        runs: list[object] = []
        for start, stop, style in zip(starts, stops, styles):
            if start >= end:
                break
            length = min(stop, end) - start
            if runs and runs[-2] is style:
                runs[-1] += length  # type: ignore[operator]
            else:
                runs += (style, length)
        return Row(text[:end], canonical_runs(runs), False)

    def vt_drawable(self, ys: list[int], widths: list[int], columns: int) -> list[bool]:
        """For each row of `ys` (ascending), whether its first `widths` cells are all written
        and the rest default blanks (what a row drawn from the formatter's text needs:
        ghostty_vt_rows.py); False for a row the render state lacks."""
        drawable: list[bool] = []
        append, iterator, view, buffer, from_bytes = drawable.append, self._iterator[0], self._view, ffi.buffer, int.from_bytes
        next_y = self._next_y  # `_seek` inlined, as in `rows`
        for y, width in zip(ys, widths):
            while next_y <= y:
                if not _iterator_next(iterator):
                    self._next_y = next_y
                    return drawable + [False] * (len(ys) - len(drawable))
                next_y += 1
            if _row_get(iterator, _CELLS_RAW, view):
                append(False)
                continue
            size = view.len
            if size > columns:
                size = columns
            if width > size:
                append(False)
                continue
            data = buffer(view.ptr, size * _RAW_CELL_BYTES)[:]
            end = width * _RAW_CELL_BYTES
            # A cell is unwritten when its first three bytes are 0: a zero among the cells'
            # first bytes (rare: '@' has one) is looked at with the other two.
            firsts = data[0:end:_RAW_CELL_BYTES]
            if b"\0" in firsts and b"\0" in (
                    from_bytes(firsts, "little") | from_bytes(data[1:end:_RAW_CELL_BYTES], "little")
                    | from_bytes(data[2:end:_RAW_CELL_BYTES], "little")).to_bytes(width, "little"):
                append(False)
                continue
            # Past them: nothing but zeros (never written), or default blanks.
            append(width == size or data.count(0, end) == len(data) - end
                   or _DEFAULT_BLANKS.fullmatch(data, end) is not None)
        self._next_y = next_y
        return drawable

    def row(self, y: int, columns: int) -> tuple[Cell, ...] | None:
        """Row `y` as exactly `columns` cells; None when the render state has no such row."""
        size = self._seek(y, columns)
        return None if size is None else self._row_read(columns, size)

    def rows(self, ys: list[int], columns: int) -> list[tuple[Cell, ...]] | None:
        """Rows `ys` (ascending) as `row` gives each, in one pass; None when the render state
        lacks one of them."""
        rows = []
        iterator, view, read = self._iterator[0], self._view, self._row_read
        next_y = self._next_y  # `_seek` inlined: a full-screen TUI changes every row of every frame
        for y in ys:
            while next_y <= y:
                if not _iterator_next(iterator):
                    self._next_y = next_y
                    return None
                next_y += 1
            if _row_get(iterator, _CELLS_RAW, view):
                self._next_y = next_y
                return None
            rows.append(read(columns, min(view.len, columns)))
        self._next_y = next_y
        return rows

    def _row_read(self, columns: int, size: int) -> tuple[Cell, ...]:
        """The row the iterator is at as exactly `columns` cells, `size` of them read."""
        iterator, view = self._iterator[0], self._view
        plain = self._plain_runs(iterator, ffi.buffer(view.ptr, size * _RAW_CELL_BYTES)[:], size)
        if plain is not None:
            text, starts, styles = plain
            if size < columns:
                # The row's own runs, then the blank tail's: one run more, not one run in all.
                return StyledRow(text + " " * (columns - size), [*starts, size], [*styles, DEFAULT_STYLE])
            return StyledRow(text, starts, styles)
        raws = ffi.unpack(view.ptr, size)
        # Runs are cut where the bits from the style id up change: at every change of style
        # id (and of width, which costs only a cut more).
        ids = list(map(rshift, raws, repeat(_STYLE_ID_SHIFT)))
        graphemes = _StyleCells.graphemes
        first = ids[0] if ids else 0
        if ids.count(first) == len(ids):
            starts = [0]
            stops = [len(ids)]
        else:
            starts = [0, *compress(count(1), map(ne, ids[1:], ids))]
            stops = [*starts[1:], len(ids)]
        parts: list[Cell] = []
        background_only = False  # a cell erased in a colour has a style of its own, not its id's
        for start, stop in zip(starts, stops):
            style_id = ids[start] & _STYLE_ID_MASK
            run = raws[start:stop] if len(starts) > 1 else raws
            if not style_id:
                background_only = background_only or any(map(and_, run, repeat(_BACKGROUND_ONLY_BIT)))
            parts.extend(map(self._cells_of(iterator, style_id, start).__getitem__, run))
        cells = tuple(parts)
        if _StyleCells.graphemes != graphemes:
            cells = self._with_graphemes(iterator, cells, ids)
        if len(cells) < columns:
            if cells:
                starts.append(len(cells))
            cells += (BLANK,) * (columns - len(cells))
        return cells if background_only else styled_row(cells, starts)

    def _plain_runs(self, iterator: object, data: bytes, size: int) -> tuple[str, list[int], list[Style]] | None:
        """(text, where each style run starts, each run's style) of a row of plain ASCII; None
        for any other row."""
        if not size:
            return None
        # The row as one big integer: a few C-level operations on it test every cell at once.
        cells = int.from_bytes(data, "little")
        not_plain, style_bits, ones = _masks(size)
        if cells & not_plain:
            return None  # a grapheme, background-only or wide cell, or a codepoint past ASCII
        # Each cell's 7-bit codepoint (0: never written) from its first two bytes, every cell
        # at once: bits 0-5 from byte 0, and bit 6 (letters, mostly) from byte 1.
        codes = data[0::8].translate(_LOW_CODEPOINT_BITS)
        high = data[1::8]
        if high.count(0) != size:
            codes = (int.from_bytes(codes, "little") | int.from_bytes(high, "little") << 6).to_bytes(size, "little")
        text = codes.replace(b"\0", b" ").decode("ascii")
        first = cells & _STYLE_BITS
        if cells & style_bits == first * ones:  # every cell has the first one's style id
            return text, [0], [self._cells_of(iterator, (first >> _STYLE_ID_SHIFT) & _STYLE_ID_MASK, 0).style]
        low, high, top = data[3::8], data[4::8], data[5::8]
        starts = [match.start() >> 3 for match in _STYLE_RUNS.finditer(data)]
        return text, starts, [self._cells_of(iterator, (low[x] >> 2) | (high[x] << 6) | ((top[x] & 0x3) << 14), x).style
                              for x in starts]

    def _cells_of(self, iterator: object, style_id: int, x: int) -> _StyleCells:
        """The cells of the style that `style_id` (found at column `x`) is in this row."""
        if not style_id:
            return self._by_style[DEFAULT_STYLE]
        cells = self._cells[0]
        _row_get(iterator, _CELLS, self._cells)
        _cells_select(cells, x)
        native = self._style
        _cells_get(cells, _CELL_STYLE, native)
        key = self._style_bytes[:]
        known = self._by_native.get(key)
        if known is None:
            if len(self._by_native) >= STYLES_KEPT_MAX:
                self._by_native.clear()
                self._by_style = {DEFAULT_STYLE: self._by_style[DEFAULT_STYLE]}
            style = native_style(native)
            known = self._by_style.get(style)
            if known is None:
                known = self._by_style[style] = _StyleCells(style)
            self._by_native[key] = known
        return known

    def _with_graphemes(self, iterator: object, cells: tuple[Cell, ...], ids: list[int]) -> tuple[Cell, ...]:
        """`cells` with each cell of several codepoints read from the row itself."""
        fixed = list(cells)
        handle = self._cells[0]
        for x in compress(count(), map(is_, cells, repeat(_GRAPHEME))):
            style = self._cells_of(iterator, ids[x] & _STYLE_ID_MASK, x).style
            _row_get(iterator, _CELLS, self._cells)
            _cells_select(handle, x)
            length = self._count
            _cells_get(handle, _GRAPHEMES_LEN, length)
            buffer = ffi.new("uint32_t[]", max(length[0], 1))
            _cells_get(handle, _GRAPHEMES_BUF, buffer)
            fixed[x] = Cell("".join(map(chr, buffer[0:length[0]])) or " ", *style)
        return tuple(fixed)


def layout_matches() -> bool:
    """True when the library packs a raw cell as this module reads it."""
    raw = (0x1F600 << _CODEPOINT_SHIFT) | (517 << _STYLE_ID_SHIFT) | (_WIDE_TAIL << _WIDE_SHIFT) | _TAG_GRAPHEME
    out = ffi.new("uint32_t*")
    expected = ((lib.GHOSTTY_CELL_DATA_CODEPOINT, 0x1F600), (lib.GHOSTTY_CELL_DATA_CONTENT_TAG, _TAG_GRAPHEME),
                (lib.GHOSTTY_CELL_DATA_WIDE, _WIDE_TAIL))
    for key, value in expected:
        out[0] = 0
        if lib.ghostty_cell_get(raw, key, out) or out[0] != value:
            return False
    style_id = ffi.new("uint16_t*")
    return not lib.ghostty_cell_get(raw, lib.GHOSTTY_CELL_DATA_STYLE_ID, style_id) and style_id[0] == 517
