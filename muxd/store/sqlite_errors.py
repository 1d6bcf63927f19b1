"""SQLite's errors as muxd's: one `StoreUnavailable` whose one-line message says what happened.

One file holds tokens, grants, the audit, the history and the task queue: the message names the
database, and `doing` ("revoking token tk-…", "saving exec_…") says what was being stored."""

from __future__ import annotations

import sqlite3

from muxd.errors import StoreUnavailable

# Primary result codes (the low byte of an extended code), https://sqlite.org/rescode.html
_BUSY, _LOCKED, _READONLY, _IOERR, _CORRUPT, _FULL, _CANTOPEN, _NOTADB = 5, 6, 8, 10, 11, 13, 14, 26
DAMAGED = "corrupt"
_KINDS: dict[int, tuple[str, str]] = {
    _FULL: ("full", "the database is full (disk full)"),
    _BUSY: ("locked", "the database is locked"),
    _LOCKED: ("locked", "the database is locked"),
    _READONLY: ("read_only", "the database is read-only"),
    _IOERR: ("io", "the database could not be read or written (I/O error)"),
    _CORRUPT: (DAMAGED, "the database is damaged"),
    _NOTADB: (DAMAGED, "the database is damaged (not a database)"),
    _CANTOPEN: ("cant_open", "the database cannot be opened"),
}
_OTHER = ("failed", "the database failed")


def is_damage(exc: BaseException) -> bool:
    """Whether `exc` (SQLite's, or muxd's made of it) says the file itself is damaged."""
    if isinstance(exc, StoreUnavailable):
        return exc.detail.get("reason") == DAMAGED
    return isinstance(exc, sqlite3.Error) and failure_kind(exc)[0] == DAMAGED


def failure_kind(exc: sqlite3.Error) -> tuple[str, str]:
    """(a short stable kind, the sentence that says it) for `exc`."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is None:  # raised by the sqlite3 module itself (a closed connection, a misuse)
        return _OTHER
    return _KINDS.get(code & 0xFF, _OTHER)


def one_line(exc: BaseException) -> str:
    """What `exc` says, on one line (its type's name when it says nothing)."""
    return " ".join(str(exc).split()) or type(exc).__name__


def unavailable(exc: sqlite3.Error, doing: str) -> StoreUnavailable:
    """`StoreUnavailable` for `exc`, met while `doing` ("saving exec_…"): one line, no traceback."""
    kind, headline = failure_kind(exc)
    said = one_line(exc)
    return StoreUnavailable(f"{headline}: {doing}: {said}", reason=kind,
                            sqlite_error=getattr(exc, "sqlite_errorname", None), found=f"{said}, found {doing}")
