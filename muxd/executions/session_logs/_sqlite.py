"""Reading an agent's SQLite store on a pane's behalf (Cline's sessions database, Kilo's
kilo.db): read-only (`mode=ro`), and only once the database file, its WAL and its index have
been checked as a log is (_open.py: regular files of the agent's user with one name, reached
without following a link below the CLI's own directory). SQLite opens them again by name after
the check (Python's sqlite3 cannot pass SQLITE_OPEN_NOFOLLOW): a link swapped in between is the
one window left."""

from __future__ import annotations

import os
import sqlite3
import urllib.parse
from pathlib import Path
from typing import Any

from muxd.executions.session_logs._open import open_log

# The WAL and its index, which SQLite opens beside the database (the index read-write, to take
# a reader's mark: a link there would have it write into whatever the link names).
COMPANION_SUFFIXES = ("-wal", "-shm")
# SQLite gives up on a database another process holds locked after this long (ms).
BUSY_TIMEOUT_MS = 200


def query(database: Path, sql: str, params: tuple[Any, ...], *, owner_uid: int,
          layout_parts: int) -> list[tuple[Any, ...]] | None:
    """The rows `sql` gives on the database at `database`; None if it is not one muxd reads
    (a link, another user's, not a database, another release's schema, held locked)."""
    companions = [Path(f"{database}{suffix}") for suffix in COMPANION_SUFFIXES]
    if not _is_log(database, owner_uid, layout_parts) or any(
            os.path.lexists(p) and not _is_log(p, owner_uid, layout_parts) for p in companions):
        return None
    uri = f"file:{urllib.parse.quote(str(database))}?mode=ro"
    try:
        connection = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False)
    except sqlite3.Error:
        return None
    try:
        return connection.execute(sql, params).fetchall()
    except sqlite3.Error:
        return None
    finally:
        connection.close()


def _is_log(path: Path, owner_uid: int, layout_parts: int) -> bool:
    try:
        os.close(open_log(path, owner_uid=owner_uid, layout_parts=layout_parts))
    except OSError:
        return False
    return True
