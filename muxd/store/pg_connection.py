"""`PgConnection`: a psycopg 3 connection dressed as the part of `sqlite3.Connection` the store's
table modules use (`execute`, `executemany`, `in_transaction`), so that one copy of their logic
runs on either database (MUXD_DB=postgresql://…, issue 30).

The store's SQL is written with SQLite's `?` placeholders; here they become psycopg's `%s` (and
a literal `%` becomes `%%`), outside quoted text, once per statement text. The statements that
differ between the two databases are asked of `database.is_postgres(c)` by their modules.

A transaction opened with `transaction(c, immediate=True)` (store/database.py) takes SQLite's
write lock before it reads. PostgreSQL locks rows instead: while such a transaction is open
`locking` is True, and the reads of what it will move lock those rows (`database.lock_clause`).

This module never imports psycopg: it wraps a connection someone else opened.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import Any, Protocol

from muxd.config import DB_NETWORK_SILENCE_MAX_S
from muxd.store.database import DATABASE_NOW

_STATEMENTS_CACHED = 512


class _Cursor(Protocol):
    rowcount: int

    def execute(self, query: str, params: Sequence[Any] | None = None) -> Any: ...

    def executemany(self, query: str, params_seq: Iterable[Sequence[Any]]) -> None: ...

    def fetchone(self) -> tuple[Any, ...] | None: ...

    def fetchall(self) -> list[tuple[Any, ...]]: ...

    def nextset(self) -> bool | None: ...

    def __iter__(self) -> Iterator[tuple[Any, ...]]: ...


class _Psycopg(Protocol):
    """What is used of a psycopg.Connection (autocommit=True)."""

    info: Any
    adapters: Any

    def cursor(self) -> _Cursor: ...

    def close(self) -> None: ...


@lru_cache(maxsize=_STATEMENTS_CACHED)
def psycopg_sql(sql: str) -> str:
    """`sql` with its `?` placeholders as `%s` and its `%` as `%%`; quoted text ('…', "…") and
    `--` comments keep their `?` (a comment's apostrophe opens no quote)."""
    out: list[str] = []
    quote: str | None = None
    i = 0
    while i < len(sql):
        char = sql[i]
        if quote is None and sql.startswith("--", i):
            end = sql.find("\n", i)
            end = len(sql) if end < 0 else end
            out.append(sql[i:end].replace("%", "%%"))
            i = end
            continue
        if quote is not None:
            if char == quote:
                quote = None
        elif char in ("'", '"'):
            quote = char
        elif char == "?":
            char = "%s"
        out.append("%%" if char == "%" else char)
        i += 1
    return "".join(out)


class PgConnection:
    """One psycopg connection in autocommit mode (a statement outside BEGIN … COMMIT commits alone,
    as sqlite3's isolation_level=None)."""

    postgres = True

    def __init__(self, conn: _Psycopg) -> None:
        import psycopg  # loaded already: it made `conn`
        from psycopg.types.string import TextLoader

        self.raw = conn
        self.locking = False
        # Leases are judged by the database's clock (database.judged_now): daemons sharing it
        # may run on hosts whose clocks disagree. Off only where a test pins the time.
        self.database_clock = True
        self.began_at: float | None = None  # the open transaction's now(), with database_clock
        self.driver_error: type[Exception] = psycopg.Error  # database.driver_error
        # JSON columns come back as their text, as from SQLite: the table modules decode it
        # (msgspec, into their own types), one code path for both databases.
        for name in ("json", "jsonb"):
            conn.adapters.register_loader(name, TextLoader)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> _Cursor:
        cursor = self.raw.cursor()
        if params:
            cursor.execute(psycopg_sql(sql), params)
        else:  # psycopg reads no placeholders then (and allows several statements): sent as written
            cursor.execute(sql)
        return cursor

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> _Cursor:
        cursor = self.raw.cursor()
        cursor.executemany(psycopg_sql(sql), rows)
        return cursor

    @property
    def in_transaction(self) -> bool:
        from psycopg.pq import TransactionStatus  # only reached with psycopg installed: it made `raw`

        return bool(self.raw.info.transaction_status != TransactionStatus.IDLE)

    @contextmanager
    def transaction(self, *, immediate: bool) -> Iterator[PgConnection]:
        """BEGIN … COMMIT (ROLLBACK on error); `immediate`: the rows read to be moved are locked.
        Never inside another (PostgreSQL would only warn, and the inner COMMIT end the outer
        transaction): refused, as SQLite refuses it."""
        if self.in_transaction:
            raise RuntimeError("a transaction is open already: transactions do not nest")
        # A move's time comes with its BEGIN, not a round trip of its own (database.judged_now); a
        # read's transaction may need to be set up first (SET TRANSACTION), and needs no time.
        if immediate and self.database_clock:
            began = self.execute(f"BEGIN; SELECT {DATABASE_NOW}")
            began.nextset()
            self.began_at = float(began.fetchone()[0])  # type: ignore[index]
        else:
            self.execute("BEGIN")
        self.locking = immediate
        try:
            yield self
        except BaseException:
            if self.in_transaction:
                self.execute("ROLLBACK")
            raise
        finally:
            self.locking = False
            self.began_at = None
        self.execute("COMMIT")

    @property
    def gone(self) -> bool:
        """Whether the connection is closed or broke (the server went away): no job can use it."""
        return bool(self.raw.closed)

    def close(self) -> None:
        self.raw.close()



def network_bounds(silence_max_s: float = DB_NETWORK_SILENCE_MAX_S) -> dict[str, int]:
    """libpq's options that end a TCP connection whose server has said nothing (to a keepalive, or
    about what was sent) for about `silence_max_s`, and a connect that long: a daemon's calls wait
    on a lost server that long at most, not as long as the system would."""
    seconds = max(3, math.ceil(silence_max_s))
    return {"connect_timeout": seconds, "keepalives": 1, "keepalives_idle": seconds // 3,
            "keepalives_interval": max(1, seconds // 9), "keepalives_count": 3, "tcp_user_timeout": seconds * 1000}


def connect(url: str, **options: Any) -> PgConnection:
    """A new autocommit connection to the PostgreSQL database at `url`, with libpq's `options`
    (connect_timeout…) over the URL's; psycopg's errors as they are."""
    import psycopg  # the extra muxd[postgres]: imported only when a PostgreSQL URL is used

    return PgConnection(psycopg.connect(url, autocommit=True, **options))
