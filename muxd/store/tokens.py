"""The tokens and grants tables. A token row keeps the sha256 of its secret, never the secret."""

from __future__ import annotations

import json
import sqlite3

import msgspec

from muxd.store.database import transaction


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


def insert_token(db: sqlite3.Connection, token: TokenRecord, *, unless_there: bool = False) -> None:
    verb = "INSERT OR IGNORE" if unless_there else "INSERT"
    db.execute(f"{verb} INTO tokens ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
               (token.id, token.name, token.hash, token.kind, token.tier,
                None if token.panes is None else json.dumps(list(token.panes)),
                token.created_at, token.revoked_at, token.revoked_reason,
                None if token.scopes is None else json.dumps(list(token.scopes))))


def revoke_token(db: sqlite3.Connection, token_id: str, at: float, reason: str) -> None:
    with transaction(db):
        db.execute("UPDATE tokens SET revoked_at = ?, revoked_reason = ? WHERE id = ? AND revoked_at IS NULL",
                   (at, reason, token_id))
        db.execute("DELETE FROM grants WHERE token_id = ?", (token_id,))


def load_tokens(db: sqlite3.Connection) -> list[TokenRecord]:
    """Every token, revoked ones included, oldest first."""
    return [_record(row) for row in db.execute(f"SELECT {_COLUMNS} FROM tokens ORDER BY created_at, id")]


def add_grant(db: sqlite3.Connection, token: TokenRecord, pane_id: str, at: float) -> None:
    """The grant, and its token's row should that not be stored yet: a pane's own token is written
    in the background (daemon/access/control.py), and a failed write of it must not fail its grants."""
    with transaction(db):
        insert_token(db, token, unless_there=True)
        db.execute("INSERT OR IGNORE INTO grants (token_id, pane_id, granted_at) VALUES (?, ?, ?)",
                   (token.id, pane_id, at))


def remove_grant(db: sqlite3.Connection, token_id: str, pane_id: str) -> None:
    db.execute("DELETE FROM grants WHERE token_id = ? AND pane_id = ?", (token_id, pane_id))


def remove_grants_of_pane(db: sqlite3.Connection, pane_id: str) -> None:
    db.execute("DELETE FROM grants WHERE pane_id = ?", (pane_id,))


def load_grants(db: sqlite3.Connection) -> dict[str, set[str]]:
    grants: dict[str, set[str]] = {}
    for token_id, pane_id in db.execute("SELECT token_id, pane_id FROM grants"):
        grants.setdefault(str(token_id), set()).add(str(pane_id))
    return grants


def forget_pane_bindings(db: sqlite3.Connection, at: float) -> int:
    """At start-up: pane ids restart with the daemon, so every pane-bound token and grant of the
    previous run refers to panes that are gone. Revoke those tokens, drop all grants."""
    with transaction(db):
        count = db.execute("UPDATE tokens SET revoked_at = ?, revoked_reason = 'pane gone (server restarted)' "
                           "WHERE revoked_at IS NULL AND panes IS NOT NULL", (at,)).rowcount
        db.execute("DELETE FROM grants")
    return count
