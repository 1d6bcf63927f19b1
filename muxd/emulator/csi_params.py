"""CSI parameters as numbers ("" -> (0,), ";5" -> (0, 5)), the way pyte parses them: shared by
the pyte parser (parser.py) and the text layout both emulators use (line_layout.py,
source_block.py), which must not need pyte for it.
"""

from __future__ import annotations

# pyte clamps every CSI parameter to this value.
CSI_PARAM_MAX = 9999

PARAMS_MEMO: dict[str, tuple[int, ...]] = {}
PARAMS_MEMO_MAX_ENTRIES = 4096


def parse_csi_params(params: str) -> tuple[int, ...]:
    """Return CSI parameters the way pyte parses them ("" -> (0,), ";5" -> (0, 5))."""
    parsed = PARAMS_MEMO.get(params)
    if parsed is None:
        parsed = tuple(min(int(p or 0), CSI_PARAM_MAX) for p in params.split(";"))
        if len(PARAMS_MEMO) >= PARAMS_MEMO_MAX_ENTRIES:
            PARAMS_MEMO.clear()
        PARAMS_MEMO[params] = parsed
    return parsed
