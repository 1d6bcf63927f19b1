"""`stack_hash`: the same failure gets the same hash, whichever pane, run or moment it hit.

An error's text is normalised before hashing: what differs between two occurrences of one
cause (numbers, hex and uuid ids, paths, timestamps, durations, quoted values) is replaced by
a placeholder, so "rate limited, retry in 12s (req_01H…)" and "… in 3s (req_09A…)" group.
"""

from __future__ import annotations

import hashlib
import re

STACK_HASH_HEX_CHARS = 16

# Order matters: the most specific shapes first, so a uuid is not eaten digit by digit.
_NORMALISERS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?"), "<time>"),
    (re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?(?:\s?[AaPp][Mm])?\b"), "<time>"),
    (re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"), "<id>"),
    (re.compile(r"\b(?:req|msg|exec|call|toolu|chatcmpl|resp|run|sess)_[A-Za-z0-9_]+"), "<id>"),
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), "<hex>"),
    (re.compile(r"\b(?=[0-9a-fA-F]*\d)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{7,}\b"), "<hex>"),
    # Path segments hold a letter: "attempt 3/10" is not a path.
    (re.compile(r"(?:~|\.{1,2})?(?:/[\w.@%+-]*[A-Za-z_][\w.@%+-]*)+/?"), "<path>"),
    (re.compile(r"\b[A-Za-z]:\\[^\s'\"]+"), "<path>"),
    (re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s|sec|secs|seconds?|m|min|minutes?|h|hours?)\b"), "<duration>"),
    (re.compile(r"\d+(?:\.\d+)?"), "<n>"),
    (re.compile(r"'[^']*'|\"[^\"]*\"|`[^`]*`"), "<value>"),
)
_SPACES = re.compile(r"\s+")


def normalise_error(text: str) -> str:
    """`text` with its varying parts replaced by placeholders, lower-cased, spaces collapsed."""
    out = text
    for pattern, placeholder in _NORMALISERS:
        out = pattern.sub(placeholder, out)
    return _SPACES.sub(" ", out).strip().lower()


def stack_hash(error_type: str, message: str) -> str:
    """A stable hex hash of the error's type and normalised message."""
    key = f"{error_type.strip().lower()}\n{normalise_error(message)}"
    return hashlib.sha256(key.encode()).hexdigest()[:STACK_HASH_HEX_CHARS]
