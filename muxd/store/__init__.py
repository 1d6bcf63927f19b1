"""muxd's SQLite database: tokens, grants and the audit trail (stdlib sqlite3, WAL).

`Database` owns one connection used only by its writer thread, so the event loop never waits
on the disk; `tokens.py` and `audit.py` hold the SQL of their tables.
"""
