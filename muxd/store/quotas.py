"""Per-principal counters held to a limit: the knowledge_stored quota of seed 001."""

from __future__ import annotations

import sqlite3

KNOWLEDGE_STORED = "knowledge_stored"
_UNITS = {KNOWLEDGE_STORED: "knowledge entries"}  # how a quota's message names what it counts


def used(c: sqlite3.Connection, principal: str, name: str) -> int:
    """How much of quota `name` the principal has used."""
    row = c.execute("SELECT used FROM quotas WHERE principal = ? AND name = ?", (principal, name)).fetchone()
    return int(row[0]) if row is not None else 0


def fit(c: sqlite3.Connection, principal: str, name: str, wanted: int, limit: int) -> tuple[int, str | None]:
    """How many of `wanted` more fit within `limit`, and, when not all of them do, why (one line)."""
    so_far = used(c, principal, name)
    fits = max(0, min(wanted, limit - so_far))
    if fits == wanted:
        return fits, None
    return fits, f"{principal} has stored {so_far} of its {limit} {_UNITS.get(name, name)} (the {name} quota)"


def bump(c: sqlite3.Connection, principal: str, name: str, n: int) -> None:
    """Count `n` more against quota `name` (one statement: its own transaction unless in one)."""
    c.execute("INSERT INTO quotas (principal, name, used) VALUES (?, ?, ?) "
              "ON CONFLICT (principal, name) DO UPDATE SET used = quotas.used + excluded.used", (principal, name, n))
