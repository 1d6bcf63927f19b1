"""`stack_hash`: the same failure gets the same hash, whichever pane, run or moment it hit.

An error's text is normalised before hashing: what differs between two occurrences of one
cause (numbers, hex and uuid ids, paths, timestamps, durations, quoted values) is replaced by
a placeholder, so "rate limited, retry in 12s (req_01H…)" and "… in 3s (req_09A…)" group.
"""

from __future__ import annotations

import functools
import hashlib
import re

STACK_HASH_HEX_CHARS = 16

# Order matters: the most specific shapes first, so a uuid is not eaten digit by digit.
_NORMALISERS: tuple[tuple[str, str], ...] = (
    (r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?", "<time>"),
    (r"\b\d{1,2}:\d{2}(?::\d{2})?(?:\s?[AaPp][Mm])?\b", "<time>"),
    (r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b", "<id>"),
    (r"\b(?:req|msg|exec|call|toolu|chatcmpl|resp|run|sess)_[A-Za-z0-9_]+", "<id>"),
    (r"\b0x[0-9a-fA-F]+\b", "<hex>"),
    (r"\b(?=[0-9a-fA-F]*\d)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{7,}\b", "<hex>"),
    # Path segments hold a letter: "attempt 3/10" is not a path.
    (r"(?:~|\.{1,2})?(?:/[\w.@%+-]*[A-Za-z_][\w.@%+-]*)+/?", "<path>"),
    (r"\b[A-Za-z]:\\[^\s'\"]+", "<path>"),
    (r"\b\d+(?:\.\d+)?\s?(?:ms|s|sec|secs|seconds?|m|min|minutes?|h|hours?)\b", "<duration>"),
    (r"\d+(?:\.\d+)?", "<n>"),
    (r"'[^']*'|\"[^\"]*\"|`[^`]*`", "<value>"),
)


@functools.cache
def _normalisers() -> tuple[tuple[re.Pattern[str], str], ...]:
    """_NORMALISERS compiled at the first error normalised, not at the daemon's start: its first
    reply waits on every module it imports, and none of these is needed before an error."""
    return tuple((re.compile(pattern), placeholder) for pattern, placeholder in _NORMALISERS)


def normalise_error(text: str) -> str:
    """`text` with its varying parts replaced by placeholders, lower-cased, spaces collapsed."""
    out = text
    for pattern, placeholder in _normalisers():
        out = pattern.sub(placeholder, out)
    return " ".join(out.split()).lower()


def stack_hash(error_type: str, message: str) -> str:
    """A stable hex hash of the error's type and normalised message."""
    key = f"{error_type.strip().lower()}\n{normalise_error(message)}"
    return hashlib.sha256(key.encode()).hexdigest()[:STACK_HASH_HEX_CHARS]
