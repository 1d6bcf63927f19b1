"""Which Cline session a process runs, from Cline's sessions database (`<CLINE_DB_DATA_DIR or
<data>/db>/sessions.db`, SQLite in WAL mode; `<data>` is Cline's data directory, see
locate.py): its `sessions` table names each session's id, the pid of the CLI that runs it and
its cwd. The session's messages are in `<CLINE_SESSION_DATA_DIR or <data>/sessions>/<id>/
<id>.messages.json`.

The database is opened read-only (`mode=ro`), and only once the database file, its WAL and its
index have been checked as a log is (_open.py: regular files of the agent's user with one name,
reached without following a link below the data directory). SQLite opens them again by name
after the check (Python's sqlite3 cannot pass SQLITE_OPEN_NOFOLLOW): a link swapped in between
is the one window left."""

from __future__ import annotations

import os
import re
import sqlite3
import urllib.parse
from pathlib import Path

from muxd.executions.session_logs._open import open_log

DATABASE_NAME = "sessions.db"
# The WAL and its index, which SQLite opens beside the database (the index read-write, to take
# a reader's mark: a link there would have it write into whatever the link names).
COMPANION_SUFFIXES = ("-wal", "-shm")
DATABASE_PARTS = 2  # `db/sessions.db` below the data directory
# The sessions looked at for a cwd when none is the process's own: the newest this many.
SESSIONS_LOOKED_AT = 16
# SQLite gives up on a database another process holds locked after this long (ms).
BUSY_TIMEOUT_MS = 200
# A session id is one name: `1795973501037_rt07o`; anything else is not taken as a directory.
_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")


def messages_path(data: Path, env: dict[str, str], cwd: str, pids: list[int], owner_uid: int) -> Path | None:
    """The messages file of the session one of `pids` runs (else the newest session in `cwd`),
    `data` being Cline's data directory; None (no database, not ours, no such session yet)."""
    database = Path(env.get("CLINE_DB_DATA_DIR", "").strip() or data / "db") / DATABASE_NAME
    session_id = _session_of(database, pids, cwd, owner_uid)
    if session_id is None:
        return None
    sessions = Path(env.get("CLINE_SESSION_DATA_DIR", "").strip() or data / "sessions")
    return sessions / session_id / f"{session_id}.messages.json"


def _session_of(database: Path, pids: list[int], cwd: str, owner_uid: int) -> str | None:
    companions = [Path(f"{database}{suffix}") for suffix in COMPANION_SUFFIXES]
    if not _is_log(database, owner_uid) or any(os.path.lexists(p) and not _is_log(p, owner_uid) for p in companions):
        return None
    uri = f"file:{urllib.parse.quote(str(database))}?mode=ro"
    try:
        connection = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False)
    except sqlite3.Error:
        return None
    try:
        rows = connection.execute(
            "SELECT session_id, pid FROM sessions WHERE cwd = ? AND is_subagent = 0 "
            "ORDER BY started_at DESC LIMIT ?", (cwd, SESSIONS_LOOKED_AT)).fetchall()
    except sqlite3.Error:
        return None  # not Cline's schema (another release), locked, or not a database at all
    finally:
        connection.close()
    found = [str(sid) for sid, pid in rows if pid in pids] or [str(sid) for sid, _ in rows[:1]]
    return next((sid for sid in found if _SESSION_ID.fullmatch(sid) and sid not in (".", "..")), None)


def _is_log(path: Path, owner_uid: int) -> bool:
    try:
        os.close(open_log(path, owner_uid=owner_uid, layout_parts=DATABASE_PARTS))
    except OSError:
        return False
    return True

