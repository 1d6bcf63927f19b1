"""A caller's regex over a pane's screen, in bounded time whatever the pattern.

Patterns come from MCP callers (a view_only token is enough), so they run on RE2, whose
matching time is linear in the text: no pattern can backtrack for hours the way
`^(a|aa)+$x` does in Python's `re`. What RE2 cannot run in linear time (backreferences,
lookaround) is refused, and so is a pattern whose compiled program is so large that even
linear time over a screen would be long (checked under a small memory budget, so compiling
a huge one fails fast). Each check compiles the pattern afresh on one of a few worker
threads (RE2 releases the GIL while matching) with the engine's memory capped, and looks at
a capped amount of text: the event loop keeps serving every other call, and the engine's
memory is at most WAIT_MATCH_THREADS x WAIT_PATTERN_MEMORY_BYTES however many waits run.
"""

from __future__ import annotations

import asyncio
import re
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import re2

from muxd.errors import BadRequest
from muxd.mcp_server.limits import (
    WAIT_MATCH_THREADS, WAIT_PATTERN_COMPILE_MEMORY_BYTES, WAIT_PATTERN_MAX_CHARS, WAIT_PATTERN_MEMORY_BYTES,
    WAIT_PATTERN_PROGRAM_MAX, WAIT_SCREEN_MAX_CHARS,
)

SYNTAX = "RE2 syntax: no backreferences or lookaround"
_TOO_LARGE = "pattern too large"  # RE2's words for a program over its memory budget
_executor: ThreadPoolExecutor | None = None


def _compiled(pattern: str, max_mem_bytes: int) -> Any:
    options = re2.Options()
    options.max_mem = max_mem_bytes
    options.log_errors = False  # RE2 would print every refused pattern to stderr
    regex = re2.compile(pattern, options)
    re2.purge()  # re2's module cache would keep up to 128 compiled patterns, and their memory
    return regex


def _engine_error(exc: re2.error) -> str:
    reason = exc.args[0] if exc.args else exc
    return reason.decode(errors="replace") if isinstance(reason, bytes) else str(reason)


def _too_complex(steps: str) -> BadRequest:
    return BadRequest(f"pattern is too complex: it compiles to {steps} steps, at most {WAIT_PATTERN_PROGRAM_MAX} "
                      "allowed (shorten counted repeats like {n} and Unicode classes)", field="pattern")


class ScreenPattern:
    """A checked caller pattern; `last_matching_line` finds the bottom-most screen line it matches."""

    def __init__(self, pattern: str) -> None:
        """Check `pattern`; a BadRequest (field `pattern`) says why it cannot be run."""
        if not pattern or len(pattern) > WAIT_PATTERN_MAX_CHARS:
            raise BadRequest(f"pattern must have 1-{WAIT_PATTERN_MAX_CHARS} characters", field="pattern")
        try:
            size = _compiled(pattern, WAIT_PATTERN_COMPILE_MEMORY_BYTES).programsize
        except re2.error as exc:
            reason = _engine_error(exc)
            if _TOO_LARGE in reason:
                raise _too_complex("too many") from None
            try:
                re.compile(pattern)
            except re.error:
                raise BadRequest(f"pattern is not a valid regex: {reason}", field="pattern") from None
            # Valid for Python, not for RE2: a construct that needs backtracking.
            raise BadRequest(f"pattern cannot be matched in linear time ({SYNTAX}): {reason}",
                             field="pattern") from None
        if size > WAIT_PATTERN_PROGRAM_MAX:
            raise _too_complex(str(size))
        self.pattern = pattern

    def last_matching_line_sync(self, text: str) -> str | None:
        """The bottom-most line of `text` (of its last WAIT_SCREEN_MAX_CHARS characters) that matches."""
        if len(text) > WAIT_SCREEN_MAX_CHARS:
            text = text[-WAIT_SCREEN_MAX_CHARS:]
            text = text[text.find("\n") + 1:]  # a cut line is not the line the screen shows
        regex = _compiled(self.pattern, WAIT_PATTERN_MEMORY_BYTES)  # its memory lives as long as this check
        return next((line for line in reversed(text.split("\n")) if regex.search(line)), None)

    async def last_matching_line(self, text: str) -> str | None:
        """`last_matching_line_sync` on a worker thread, so the event loop is never held up."""
        global _executor
        if _executor is None:
            _executor = ThreadPoolExecutor(WAIT_MATCH_THREADS, thread_name_prefix="muxd-wait-match")
        return await asyncio.get_running_loop().run_in_executor(_executor, self.last_matching_line_sync, text)
