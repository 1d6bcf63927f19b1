"""`GridCells`: a libghostty-vt terminal's rows read cell by cell through grid references, a
few native calls a cell. The slow, always-right read: ghostty_backend.py takes it where the
native row reader (ghostty_rows.py) and the formatter cannot be trusted for a row (a row the
render state's copy lags behind, a wrapped row ending in a blank, no row reader at all)."""

from __future__ import annotations

from .cell import DEFAULT_STYLE, PADDING, Style
from .ghostty_ffi import ffi, init_sized, lib
from .ghostty_rows import background_only_style, native_style
from .rows import EMPTY_ROW, EMPTY_WRAPPED_ROW, Row, runs_from_cell_styles

_CELL_WIDE_TAIL = lib.GHOSTTY_CELL_WIDE_SPACER_TAIL
_TAG_GRAPHEME = lib.GHOSTTY_CELL_CONTENT_CODEPOINT_GRAPHEME
_TAG_BG_PALETTE = lib.GHOSTTY_CELL_CONTENT_BG_COLOR_PALETTE
_TAG_BG_RGB = lib.GHOSTTY_CELL_CONTENT_BG_COLOR_RGB
_CELL_KEYS = [lib.GHOSTTY_CELL_DATA_WIDE, lib.GHOSTTY_CELL_DATA_CONTENT_TAG, lib.GHOSTTY_CELL_DATA_CODEPOINT,
              lib.GHOSTTY_CELL_DATA_HAS_STYLING, lib.GHOSTTY_CELL_DATA_STYLE_ID]
_CELL_KEY_COUNT = len(_CELL_KEYS)


class GridCells:
    """Cell-by-cell reads of one native terminal `t`, with their out-parameters made once."""

    def __init__(self, t: object) -> None:
        self._t = t
        self._size = ffi.new("size_t*")
        self._bool = ffi.new("bool*")
        self._cell = ffi.new("GhosttyCell*")
        # ghostty_cell_get_multi's keys and out-parameters: wide, content tag, codepoint, styled, style id.
        self._cell_outs = (ffi.new("int*"), ffi.new("int*"), ffi.new("uint32_t*"), ffi.new("bool*"),
                           ffi.new("uint16_t*"))
        self._cell_keys = ffi.new("GhosttyCellData[]", _CELL_KEYS)
        self._cell_values = ffi.new("void*[]", [ffi.cast("void*", out) for out in self._cell_outs])
        self._row = ffi.new("GhosttyRow*")
        self._style = init_sized("GhosttyStyle")
        self._point = ffi.new("GhosttyPointS*")
        self._grid_ref = ffi.cast("GhosttyResult(*)(GhosttyTerminal, GhosttyPointS, GhosttyGridRef*)",
                                  ffi.addressof(lib, "ghostty_terminal_grid_ref"))

    def _ref(self, tag: int, y: int) -> object | None:
        point = self._point
        point.tag = tag
        point.value.x, point.value.y = 0, y
        ref = init_sized("GhosttyGridRef")
        if self._grid_ref(self._t, point[0], ref):
            return None
        return ref

    def read_row(self, tag: int, y: int, columns: int, styles: bool = True) -> Row:
        """Row `y` of `tag` (its written cells) as a Row."""
        got = self.read_cells(tag, y, columns, styles=styles, full=False)
        if got is None:
            return EMPTY_ROW
        cells, wrapped = got
        if not cells:
            return EMPTY_WRAPPED_ROW if wrapped else EMPTY_ROW
        texts = [text for text, _ in cells]
        text = "".join(texts)
        if not styles:
            return Row(text, (), wrapped)
        cell_styles = [style for _, style in cells]
        if cell_styles.count(DEFAULT_STYLE) == len(cell_styles):
            return Row(text, (), wrapped)
        one = len(text) == len(cells) and all(len(t) == 1 for t in texts)
        return Row(text, runs_from_cell_styles(cell_styles, texts, one), wrapped)

    def read_cells(self, tag: int, y: int, columns: int, *, styles: bool, full: bool) -> tuple[list[tuple[str, Style]], bool] | None:
        """Row `y` of `tag` as [(text, style)], up to the last written cell (all `columns`
        when `full`), and whether it soft-wraps; None when the row does not exist."""
        ref = self._ref(tag, y)
        if ref is None:
            return None
        row = self._row
        lib.ghostty_grid_ref_row(ref, row)
        flag = self._bool
        lib.ghostty_row_get(row[0], lib.GHOSTTY_ROW_DATA_WRAP, flag)
        wrapped = bool(flag[0])
        cell = self._cell
        wide_out, tag_out, cp_out, styled_out, sid_out = self._cell_outs
        keys, values, written = self._cell_keys, self._cell_values, self._size
        grid_ref_cell, cell_get_multi = lib.ghostty_grid_ref_cell, lib.ghostty_cell_get_multi  # looked up once
        style_cache: dict[int, Style] = {}
        out: list[tuple[str, Style]] = []
        last = -1
        for x in range(columns):
            ref.x = x
            grid_ref_cell(ref, cell)
            c = cell[0]
            cell_get_multi(c, _CELL_KEY_COUNT, keys, values, written)  # one call for five values
            wide, content, cp = wide_out[0], tag_out[0], cp_out[0]
            if wide == _CELL_WIDE_TAIL:
                text = PADDING
            elif content == _TAG_GRAPHEME:
                text = self._graphemes(ref, cp)
            elif cp and content != _TAG_BG_PALETTE and content != _TAG_BG_RGB:
                text = chr(cp)
            else:
                text = " "
            style = DEFAULT_STYLE
            if not styles:
                pass
            elif content == _TAG_BG_PALETTE or content == _TAG_BG_RGB:
                style = background_only_style(c, content)
            elif styled_out[0]:
                style = style_cache.get(sid_out[0]) or self._cell_style(ref, sid_out[0], style_cache)
            if cp or style is not DEFAULT_STYLE and style != DEFAULT_STYLE or wide == _CELL_WIDE_TAIL:
                last = x
            out.append((text, style))
        if not full:
            del out[last + 1:]
        return out, wrapped

    def _graphemes(self, ref: object, cp: int) -> str:
        n = self._size
        lib.ghostty_grid_ref_graphemes(ref, ffi.NULL, 0, n)
        buf = ffi.new("uint32_t[]", max(n[0], 1))
        if lib.ghostty_grid_ref_graphemes(ref, buf, len(buf), n):
            return chr(cp)
        return "".join(map(chr, buf[0:n[0]]))

    def _cell_style(self, ref: object, style_id: int, cache: dict[int, Style]) -> Style:
        """The style `style_id` of the row `ref` is in, read once a row (`cache`)."""
        st = self._style
        lib.ghostty_grid_ref_style(ref, st)
        style = cache[style_id] = native_style(st)
        return style
