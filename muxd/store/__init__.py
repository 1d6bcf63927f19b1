"""muxd's SQLite database: tokens, grants, the audit trail and the execution history (stdlib
sqlite3, WAL).

`Database` owns one connection used only by its writer thread, so the event loop never waits
on the disk; `tokens.py` and `audit.py` hold the SQL of their tables. The history
(`sqlite_executions.py`) writes through that thread and reads through `readers.py`; its rows
and queries are in `execution_rows.py` and `execution_queries.py`.
"""
