"""PostgreSQL's errors as muxd's: one `StoreUnavailable` whose one-line message says what
happened, with the same `reason`s as SQLite's (sqlite_errors.py) where the cause is the same,
and `unreachable`, `timeout` and `denied` for what only a server over a network does.

Kinds come from the SQLSTATE (https://www.postgresql.org/docs/current/errcodes-appendix.html):
the exact code first, then its two-character class. A connection that failed before the server
said anything has no SQLSTATE: unreachable.
"""

from __future__ import annotations

from muxd.errors import StoreUnavailable
from muxd.store.sqlite_errors import DAMAGED, one_line

UNREACHABLE = "unreachable"
_UNREACHABLE = (UNREACHABLE, "the database cannot be reached")
_REFUSED = ("denied", "the database refused access")
_BY_CODE: dict[str, tuple[str, str]] = {
    "53100": ("full", "the database is full (disk full)"),
    "53300": (UNREACHABLE, "the database has no connection free"),
    "55P03": ("locked", "the database is locked"),
    "57014": ("timeout", "the database did not answer in time"),
    "25006": ("read_only", "the database is read-only"),
    "3D000": ("cant_open", "the database cannot be opened (there is no such database)"),
    "XX001": (DAMAGED, "the database is damaged"),
    "XX002": (DAMAGED, "the database is damaged (an index)"),
    "42501": _REFUSED,
}
_BY_CLASS: dict[str, tuple[str, str]] = {
    "08": _UNREACHABLE,                                        # connection exception
    "57": _UNREACHABLE,                                        # shut down, or starting
    "28": _REFUSED,                                            # invalid authorization
    "40": ("locked", "the database is busy (a conflict with another writer)"),  # deadlock, serialization
    "58": ("io", "the database could not be read or written (I/O error)"),
}
_OTHER = ("failed", "the database failed")


def sqlstate(exc: BaseException) -> str | None:
    """The SQLSTATE of a psycopg error (None: the server said none)."""
    return getattr(exc, "sqlstate", None)


def failure_kind(exc: BaseException) -> tuple[str, str]:
    """(a short stable kind, the sentence that says it) for psycopg's `exc`."""
    code = sqlstate(exc)
    if code is None:
        return _connection_failure(exc) if type(exc).__name__ == "OperationalError" else _OTHER
    return _BY_CODE.get(code) or _BY_CLASS.get(code[:2], _OTHER)


def _connection_failure(exc: BaseException) -> tuple[str, str]:
    """A connection that failed or broke. libpq gives no SQLSTATE for one the server refused while
    it connected, only its FATAL line (in the server's language: English by default)."""
    said = str(exc)
    if "FATAL:" not in said:
        return _UNREACHABLE
    if "database" in said and "does not exist" in said:
        return _BY_CODE["3D000"]
    return _REFUSED


def unavailable(exc: BaseException, doing: str) -> StoreUnavailable:
    """`StoreUnavailable` for `exc`, met while `doing` ("claiming task …"): one line, no traceback."""
    kind, headline = failure_kind(exc)
    said = one_line(exc)
    return StoreUnavailable(f"{headline}: {doing}: {said}", reason=kind, sqlstate=sqlstate(exc),
                            found=f"{said}, found {doing}")
