"""Text that came from a program or a client, made safe to put on someone's terminal.

A pane name, a tag, a window title or a working directory can hold ESC and the rest of C0/C1:
printed raw, `ESC ] 52 ; …` writes the reader's clipboard and other sequences move their
cursor or retitle their window. Bidirectional overrides reorder what the reader sees. Such
characters are shown as escapes instead (`\\x1b`, `\\u202e`), so nothing is hidden either.
"""

from __future__ import annotations

import re

# C0 and DEL, C1, the line and paragraph separators, and the bidirectional controls.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _escape(found: re.Match[str]) -> str:
    code = ord(found.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def has_unsafe(text: str) -> bool:
    """True if `text` holds a character that acts on a terminal instead of being shown."""
    return _UNSAFE.search(text) is not None


def visible(text: str) -> str:
    """`text` with every character that would act on a terminal shown as its escape."""
    return _UNSAFE.sub(_escape, text) if _UNSAFE.search(text) else text
