"""Which Cline session a process runs, from Cline's sessions database (`<CLINE_DB_DATA_DIR or
<data>/db>/sessions.db`, SQLite in WAL mode, read as _sqlite.py says; `<data>` is Cline's data
directory, see locate.py): its `sessions` table names each session's id, the pid of the CLI
that runs it and its cwd. The session's messages are in `<CLINE_SESSION_DATA_DIR or
<data>/sessions>/<id>/<id>.messages.json`."""

from __future__ import annotations

import re
from pathlib import Path

from muxd.executions.session_logs._sqlite import query

DATABASE_NAME = "sessions.db"
DATABASE_PARTS = 2  # `db/sessions.db` below the data directory
# The sessions looked at for a cwd when none is the process's own: the newest this many.
SESSIONS_LOOKED_AT = 16
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
    rows = query(database, "SELECT session_id, pid FROM sessions WHERE cwd = ? AND is_subagent = 0 "
                 "ORDER BY started_at DESC LIMIT ?", (cwd, SESSIONS_LOOKED_AT), owner_uid=owner_uid,
                 layout_parts=DATABASE_PARTS)
    found = [str(sid) for sid, pid in rows or [] if pid in pids] or [str(sid) for sid, _ in (rows or [])[:1]]
    return next((sid for sid in found if _SESSION_ID.fullmatch(sid) and sid not in (".", "..")), None)
