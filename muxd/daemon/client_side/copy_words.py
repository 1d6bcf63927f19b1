"""Word motions of copy mode (vi's `w`, `b`, `e`), over rows of text by running row number.

A word is a run of letters, digits and `_`, or a run of other non-blank characters; blanks,
and the end of every row, separate words (as in vi and tmux's vi copy mode). Pure: rows come
from `text_of(row number)`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from muxd.copy_geometry import Point

WORD_MOTION_MAX_ROWS = 2000  # how far one key press looks for the next or previous word

_BLANK, _WORD, _PUNCT = 0, 1, 2


def _kind(char: str) -> int:
    if char.isspace() or not char:
        return _BLANK
    return _WORD if char.isalnum() or char == "_" else _PUNCT


def _forward(text_of: Callable[[int], str], start: Point, last_row: int) -> Iterator[tuple[Point, int]]:
    """Points after `start` in reading order with their kind; a row's end yields one blank."""
    row, column = start
    stop = min(last_row, row + WORD_MOTION_MAX_ROWS)
    text = text_of(row)
    column += 1
    while True:
        while column < len(text):
            yield (row, column), _kind(text[column])
            column += 1
        yield (row, max(column, len(text))), _BLANK  # the row's end separates words
        row += 1
        if row > stop:
            return
        text, column = text_of(row), 0


def _backward(text_of: Callable[[int], str], start: Point, first_row: int) -> Iterator[tuple[Point, int]]:
    """Points before `start` in reverse reading order with their kind."""
    row, column = start
    stop = max(first_row, row - WORD_MOTION_MAX_ROWS)
    text = text_of(row)
    column = min(column, len(text)) - 1
    while True:
        while column >= 0:
            yield (row, column), _kind(text[column])
            column -= 1
        row -= 1
        if row < stop:
            return
        text = text_of(row)
        yield (row, len(text)), _BLANK  # the end of the row above separates words
        column = len(text) - 1


def _kind_at(text_of: Callable[[int], str], point: Point) -> int:
    text = text_of(point[0])
    return _kind(text[point[1]]) if point[1] < len(text) else _BLANK


def next_word_start(text_of: Callable[[int], str], start: Point, last_row: int) -> Point:
    """`w`: the first character of the next word (`start` itself when there is none)."""
    current = _kind_at(text_of, start)
    for point, kind in _forward(text_of, start, last_row):
        if kind != current and kind != _BLANK:
            return point
        current = kind
    return start


def word_end(text_of: Callable[[int], str], start: Point, last_row: int) -> Point:
    """`e`: the last character of this word, or of the next one when already at its end."""
    return _end_of_first_word(_forward(text_of, start, last_row), start)


def previous_word_start(text_of: Callable[[int], str], start: Point, first_row: int) -> Point:
    """`b`: the first character of this word, or of the one before when already at its start."""
    return _end_of_first_word(_backward(text_of, start, first_row), start)


def _end_of_first_word(points: Iterator[tuple[Point, int]], start: Point) -> Point:
    """The last point of the first word that `points` walk into (`start` if none): walking
    backwards, that is the word's first character."""
    previous: tuple[Point, int] | None = None
    for point, kind in points:
        if previous is not None and previous[1] != _BLANK and kind != previous[1]:
            return previous[0]
        previous = (point, kind)
    return previous[0] if previous is not None and previous[1] != _BLANK else start
