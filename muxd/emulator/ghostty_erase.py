"""When the native flood skipper may drop `ESC [ K` (erase to the end of the line) from a run.

`grep --color` writes one around every match (`ESC[01;31m ESC[K match ESC[m ESC[K`), so a
flood of matches was never skipped and cost muxd its whole layout through libghostty. In a
run of simple lines every line starts at column 0 of a blank row (the skip's condition: only
blank rows from the cursor down, and rows scrolled in are blank), so an erase there changes
nothing when

- the pen's background is the default one: the erased cells would take it (ghostty erases with
  the pen's background colour, as xterm does), and no row scrolled in with a coloured one;
- the cursor is not at the right margin with a wrap pending: the erase would clear the last
  cell and the pending wrap. Lines shorter than the pane (in cells, so in characters for ASCII
  and half that otherwise, a character being at most two cells; no tabs) never get there.

Both are checked for a whole run with string searches in C, never line by line in Python:
the checks must cost far less than laying the lines out.
"""

from __future__ import annotations

import functools
import re

from .csi_params import parse_csi_params
from .flood_text import ERASE_LINE
from .line_layout import SGR_SAMPLE_CHARS, SGR_SEQUENCE, WHOLE_SGR


def sets_background(sgr: str) -> bool:
    """Whether any SGR sequence in `sgr` may set a background colour (a parameter 40-48 or
    100-107; the same numbers inside an extended colour are counted too, to be safe)."""
    return any(_kind_sets_background(params) for params in set(SGR_SEQUENCE.findall(sgr)))


@functools.lru_cache(maxsize=256)
def _kind_sets_background(params: str) -> bool:
    return any(40 <= value <= 48 or 100 <= value <= 107 for value in parse_csi_params(params))


def _run_sets_background(run: str) -> bool:
    """sets_background(run) for a run whose escapes are SGR and ERASE_LINE alone: the kinds of
    SGR in its first characters, if they and the erases account for every ESC (counting is
    C work; a regex match a sequence is not), else every sequence."""
    kinds = set(WHOLE_SGR.findall(run, 0, SGR_SAMPLE_CHARS))
    if sum(map(run.count, kinds)) + run.count(ERASE_LINE) != run.count("\x1b"):
        return sets_background(run)
    return any(_kind_sets_background(kind[2:-1]) for kind in kinds)


@functools.lru_cache(maxsize=16)
def _long_line(limit: int) -> re.Pattern[str]:
    """A line feed followed by `limit` characters of one line (a CR before the next LF counts)."""
    return re.compile(f"\n[^\n]{{{limit}}}")


def erasing_changes_nothing(run: str, columns: int, pen: str) -> bool:
    """Whether every ERASE_LINE in `run` (simple lines from a line's start, but for the erases)
    leaves the screen as it was, the run starting with the pen `pen` (module docstring)."""
    if "\t" in run or sets_background(pen) or _run_sets_background(run):
        return False
    limit = columns if run.isascii() else columns // 2
    first = run.find("\n")
    if first < limit and _long_line(limit).search(run) is None:  # every line shorter: no split
        return True
    return not any(ERASE_LINE in line for line in run.split("\r\n") if len(line) >= limit)
