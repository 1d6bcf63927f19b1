"""SQLite's errors as muxd's: one `StoreUnavailable` whose one-line message says what happened."""

from __future__ import annotations

import sqlite3

from muxd.errors import StoreUnavailable

# Primary result codes (the low byte of an extended code), https://sqlite.org/rescode.html
_BUSY, _LOCKED, _READONLY, _IOERR, _CORRUPT, _FULL, _CANTOPEN, _NOTADB = 5, 6, 8, 10, 11, 13, 14, 26
_KINDS: dict[int, tuple[str, str]] = {
    _FULL: ("full", "the history database is full (disk full)"),
    _BUSY: ("locked", "the history database is locked"),
    _LOCKED: ("locked", "the history database is locked"),
    _READONLY: ("read_only", "the history database is read-only"),
    _IOERR: ("io", "the history database could not be read or written (I/O error)"),
    _CORRUPT: ("corrupt", "the history database is damaged"),
    _NOTADB: ("corrupt", "the history database is damaged (not a database)"),
    _CANTOPEN: ("cant_open", "the history database cannot be opened"),
}
_OTHER = ("failed", "the history database failed")


def failure_kind(exc: sqlite3.Error) -> tuple[str, str]:
    """(a short stable kind, the sentence that says it) for `exc`."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is None:  # raised by the sqlite3 module itself (a closed connection, a misuse)
        return _OTHER
    return _KINDS.get(code & 0xFF, _OTHER)


def unavailable(exc: sqlite3.Error, doing: str) -> StoreUnavailable:
    """`StoreUnavailable` for `exc`, met while `doing` ("saving exec_…"): one line, no traceback."""
    kind, headline = failure_kind(exc)
    said = " ".join(str(exc).split()) or type(exc).__name__
    return StoreUnavailable(f"{headline}: {doing}: {said}", reason=kind,
                            sqlite_error=getattr(exc, "sqlite_errorname", None))
