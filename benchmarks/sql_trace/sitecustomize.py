"""Loaded by the daemon of `history_index_needs.py` (this folder on its PYTHONPATH): every SQLite
connection the process opens writes each statement it runs, one a line, to $MUXD_SQL_TRACE."""

import os
import sqlite3
import threading

_path = os.environ.get("MUXD_SQL_TRACE")
_connect = sqlite3.connect
_lock = threading.Lock()


def _traced(*args, **kwargs):  # type: ignore[no-untyped-def]
    db = _connect(*args, **kwargs)
    if _path:
        def trace(sql: str) -> None:
            with _lock, open(_path, "a") as fh:
                fh.write(" ".join(sql.split()) + "\n")

        db.set_trace_callback(trace)
    return db


sqlite3.connect = _traced
