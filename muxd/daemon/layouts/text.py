"""A tmux layout string (#{window_layout}, `select-layout "bb62,159x48,0,0{79x48,0,0,0,…}"`) read
back into a tree: checked as tmux checks it (checksum, sizes that add up, one cell per pane),
the window's panes given to its cells in order, as tmux 3.3 assigns them."""

from __future__ import annotations

import re
from collections.abc import Hashable, Sequence

from muxd.daemon.layouts.layout import Cell, layout_checksum, leaf, node
from muxd.daemon.layouts.sets import consistent
from muxd.errors import BadRequest

# WxH,X,Y and, for a pane's cell, ",ID" (digits not starting the next sibling's WxH)
_CELL = re.compile(r"(\d+)x(\d+),(\d+),(\d+)(?:,(\d+)(?=[,}\]]|$))?")
_CLOSING = {"{": "}", "[": "]"}


def parse_layout(text: str, panes: Sequence[Hashable]) -> Cell:
    """The tree `text` describes, its leaves holding `panes` in order (BadRequest: not a layout
    for these panes)."""
    checksum, _, body = text.partition(",")
    if not re.fullmatch(r"[0-9a-fA-F]{4}", checksum) or int(checksum, 16) != layout_checksum(body):
        raise BadRequest(f"invalid layout: {text}", layout=text)
    queue = list(panes)
    wanted = body.count("x") - sum(1 for _ in re.finditer(r"\d+x\d+,\d+,\d+[{\[]", body))
    if wanted != len(queue):
        raise BadRequest(f"have {len(queue)} panes but need {wanted}", layout=text)
    root, end = _cell(body, 0, queue, text)
    if end != len(body) or not consistent(root):
        raise BadRequest(f"invalid layout: {text}", layout=text)
    return root


def _cell(body: str, at: int, queue: list[Hashable], text: str) -> tuple[Cell, int]:
    match = _CELL.match(body, at)
    if match is None:
        raise BadRequest(f"invalid layout: {text}", layout=text)
    columns, lines = int(match[1]), int(match[2])
    at = match.end()
    opening = body[at:at + 1]
    if opening not in _CLOSING:
        return leaf(queue.pop(0), columns, lines), at
    cell = node("lr" if opening == "{" else "tb", columns, lines)
    at += 1
    while True:
        child, at = _cell(body, at, queue, text)
        cell.add(child)
        separator = body[at:at + 1]
        at += 1
        if separator == _CLOSING[opening]:
            return cell, at
        if separator != ",":
            raise BadRequest(f"invalid layout: {text}", layout=text)
