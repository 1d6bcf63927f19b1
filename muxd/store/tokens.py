"""The tokens and grants tables. A token row keeps the sha256 of its secret, never the secret."""

from __future__ import annotations

import json
import sqlite3

import msgspec

from muxd.store.database import is_postgres, transaction
from muxd.store.hosts import HOST_SQL, OWN_ROWS


class TokenRecord(msgspec.Struct, frozen=True):
    id: str
    name: str
    hash: str
    kind: str                      # "user" | "agent"
    tier: str
    panes: tuple[str, ...] | None  # None: every pane; else bound to these panes
    created_at: float
    revoked_at: float | None = None
    revoked_reason: str | None = None
    scopes: tuple[str, ...] | None = None  # None: the default of its kind (daemon/access/control.py)


ACCESS_CHANNEL = "muxd_access"  # where a token's change is told to the daemons of a shared database
LIVE_NAME = "tokens_live_name"  # the unique index of live tokens' names: its name is in the driver's error
_COLUMNS = "id, name, hash, kind, tier, panes, created_at, revoked_at, revoked_reason, scopes"


def _record(row: tuple[object, ...]) -> TokenRecord:
    panes = row[5]
    return TokenRecord(id=str(row[0]), name=str(row[1]), hash=str(row[2]), kind=str(row[3]),
                       tier=str(row[4]),
                       panes=tuple(json.loads(str(panes))) if panes is not None else None,
                       created_at=float(row[6]),  # type: ignore[arg-type]
                       revoked_at=None if row[7] is None else float(row[7]),  # type: ignore[arg-type]
                       revoked_reason=None if row[8] is None else str(row[8]),
                scopes=tuple(json.loads(str(row[9]))) if row[9] is not None else None)


def _tell_the_fleet(db: sqlite3.Connection, token_id: str) -> None:
    """On a shared PostgreSQL database, tell the other daemons that token `token_id` changed (when
    the caller's transaction commits: daemon/access/token_feed.py listens); nothing on SQLite."""
    if is_postgres(db):
        db.execute(f"SELECT pg_notify('{ACCESS_CHANNEL}', ?)", (token_id,))


def insert_token(db: sqlite3.Connection, token: TokenRecord, *, unless_there: bool = False) -> None:
    # ON CONFLICT DO NOTHING, not INSERT OR IGNORE: SQLite and PostgreSQL both read it.
    unless = " ON CONFLICT DO NOTHING" if unless_there else ""
    db.execute(f"INSERT INTO tokens ({_COLUMNS}, host) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, {HOST_SQL}){unless}",
               (token.id, token.name, token.hash, token.kind, token.tier,
                None if token.panes is None else json.dumps(list(token.panes)),
                token.created_at, token.revoked_at, token.revoked_reason,
                None if token.scopes is None else json.dumps(list(token.scopes))))
    _tell_the_fleet(db, token.id)


def revoke_token(db: sqlite3.Connection, token_id: str, at: float, reason: str) -> None:
    with transaction(db):
        db.execute("UPDATE tokens SET revoked_at = ?, revoked_reason = ? WHERE id = ? AND revoked_at IS NULL",
                   (at, reason, token_id))
        db.execute("DELETE FROM grants WHERE token_id = ?", (token_id,))
        _tell_the_fleet(db, token_id)


def load_tokens(db: sqlite3.Connection) -> list[TokenRecord]:
    """The tokens this host honours, revoked ones included, oldest first: every token not bound to
    panes (valid fleet-wide), and the pane-bound ones of this host (store/hosts.py): another host's
    pane %3 is not this one's."""
    return [_record(row) for row in db.execute(
        f"SELECT {_COLUMNS} FROM tokens WHERE panes IS NULL OR {OWN_ROWS} ORDER BY created_at, id")]


def load_token(db: sqlite3.Connection, token_id: str) -> list[TokenRecord]:
    """Token `token_id` as `load_tokens` would have it ([]: not one this host honours)."""
    return [_record(row) for row in db.execute(
        f"SELECT {_COLUMNS} FROM tokens WHERE id = ? AND (panes IS NULL OR {OWN_ROWS})", (token_id,))]


def add_grant(db: sqlite3.Connection, token: TokenRecord, pane_id: str, at: float) -> None:
    """The grant, and its token's row should that not be stored yet: a pane's own token is written
    in the background (daemon/access/control.py), and a failed write of it must not fail its grants."""
    with transaction(db):
        insert_token(db, token, unless_there=True)
        db.execute(f"INSERT INTO grants (token_id, pane_id, granted_at, host) VALUES (?, ?, ?, {HOST_SQL}) "
                   "ON CONFLICT DO NOTHING",
                   (token.id, pane_id, at))


def remove_grant(db: sqlite3.Connection, token_id: str, pane_id: str) -> None:
    db.execute("DELETE FROM grants WHERE token_id = ? AND pane_id = ?", (token_id, pane_id))


def remove_grants_of_pane(db: sqlite3.Connection, pane_id: str) -> None:
    """Drop the grants of this host's pane `pane_id` (another host's pane of that id is another pane)."""
    db.execute(f"DELETE FROM grants WHERE pane_id = ? AND {OWN_ROWS}", (pane_id,))


def load_grants(db: sqlite3.Connection) -> dict[str, set[str]]:
    """This host's grants: token id -> the pane ids granted to it."""
    grants: dict[str, set[str]] = {}
    for token_id, pane_id in db.execute(f"SELECT token_id, pane_id FROM grants WHERE {OWN_ROWS}"):
        grants.setdefault(str(token_id), set()).add(str(pane_id))
    return grants


def forget_pane_bindings(db: sqlite3.Connection, at: float) -> int:
    """At start-up: pane ids restart with the daemon, so every pane-bound token and grant of this
    host's previous run refers to panes that are gone. Revoke those tokens, drop those grants; other
    hosts' (a shared database) are theirs, live."""
    with transaction(db):
        count = db.execute("UPDATE tokens SET revoked_at = ?, revoked_reason = 'pane gone (server restarted)' "
                           f"WHERE revoked_at IS NULL AND panes IS NOT NULL AND {OWN_ROWS}", (at,)).rowcount
        db.execute(f"DELETE FROM grants WHERE {OWN_ROWS}")
    return count
