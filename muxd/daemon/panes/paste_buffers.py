"""Paste buffers, as tmux's: copies made in copy mode land in automatic buffers (`buffer0`,
`buffer1`, …, at most `buffer-limit` of them, the oldest dropped first); `set-buffer -b NAME`
makes named ones, which no limit drops. The newest buffer is the one a bare paste takes."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

from muxd.config import PASTE_BUFFERS_MAX
from muxd.errors import BadRequest, NotFound

SAMPLE_MAX_CHARS = 50  # list-buffers shows this much of each buffer, as tmux does


@dataclass
class PasteBuffer:
    name: str
    text: str
    automatic: bool
    order: int  # higher is newer


class PasteBuffers:
    def __init__(self, limit: Callable[[], int] = lambda: PASTE_BUFFERS_MAX) -> None:
        self.limit = limit  # the buffer-limit option (daemon/panes/options.py), read at each copy
        self._by_name: dict[str, PasteBuffer] = {}
        self._automatic_numbers = itertools.count()
        self._order = itertools.count()

    def newest_first(self) -> list[PasteBuffer]:
        return sorted(self._by_name.values(), key=lambda b: b.order, reverse=True)

    def keep(self, text: str) -> PasteBuffer:
        """A copy: a new automatic buffer, and the oldest automatic ones beyond the limit go."""
        buffer = self._add(f"buffer{next(self._automatic_numbers)}", text, automatic=True)
        automatic = [b for b in self.newest_first() if b.automatic]
        for old in automatic[self.limit():]:
            del self._by_name[old.name]
        return buffer

    def set(self, name: str | None, text: str, *, append: bool = False) -> PasteBuffer:
        """set-buffer: replace (or append to) the buffer `name`, a new automatic one if None."""
        if name is None:
            return self.keep(text)
        if not name or any(not ch.isprintable() for ch in name):
            raise BadRequest(f"invalid buffer name: {name!r}")
        old = self._by_name.get(name)
        if append and old is not None:
            text = old.text + text
        return self._add(name, text, automatic=old.automatic if old is not None else False)

    def get(self, name: str | None) -> PasteBuffer:
        """The buffer `name`, or the newest; NotFound as tmux words it."""
        if name is None:
            newest = self.newest_first()
            if not newest:
                raise NotFound("no buffers")
            return newest[0]
        buffer = self._by_name.get(name)
        if buffer is None:
            raise NotFound(f"no buffer {name}", buffer=name)
        return buffer

    def delete(self, name: str | None) -> None:
        if name is not None and name not in self._by_name:
            raise NotFound(f"unknown buffer: {name}", buffer=name)
        del self._by_name[self.get(name).name]

    def _add(self, name: str, text: str, *, automatic: bool) -> PasteBuffer:
        buffer = PasteBuffer(name=name, text=text, automatic=automatic, order=next(self._order))
        self._by_name[name] = buffer
        return buffer


def sample(text: str) -> str:
    """A buffer's start as list-buffers shows it: control characters escaped, as tmux's vis does."""
    out = []
    for ch in text[:SAMPLE_MAX_CHARS]:
        if ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\\":
            out.append("\\\\")
        elif ord(ch) < 32 or ord(ch) == 127:
            out.append(f"\\{ord(ch):03o}")
        else:
            out.append(ch)
    return "".join(out)
