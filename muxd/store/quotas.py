"""Per-principal counters checked against a limit: the knowledge_stored quota of seed 001."""

from __future__ import annotations

import sqlite3

from muxd.errors import QuotaExceeded

KNOWLEDGE_STORED = "knowledge_stored"
_UNITS = {KNOWLEDGE_STORED: "knowledge entries"}  # how a quota's message names what it counts


def used(c: sqlite3.Connection, principal: str, name: str) -> int:
    """How much of quota `name` the principal has used."""
    row = c.execute("SELECT used FROM quotas WHERE principal = ? AND name = ?", (principal, name)).fetchone()
    return int(row[0]) if row is not None else 0


def check(c: sqlite3.Connection, principal: str, name: str, adding: int, limit: int) -> None:
    """Nothing when `adding` more stays within `limit`; QuotaExceeded otherwise."""
    so_far = used(c, principal, name)
    if so_far + adding > limit:
        raise QuotaExceeded(f"{principal} has stored {so_far} of {limit} {_UNITS.get(name, name)}; {adding} more "
                            f"would exceed the {name} quota", principal=principal, quota=name, used=so_far,
                            limit=limit, adding=adding)


def bump(c: sqlite3.Connection, principal: str, name: str, n: int) -> None:
    """Count `n` more against quota `name` (one statement: its own transaction unless in one)."""
    c.execute("INSERT INTO quotas (principal, name, used) VALUES (?, ?, ?) "
              "ON CONFLICT (principal, name) DO UPDATE SET used = used + excluded.used", (principal, name, n))
