"""The tokens, grants and audit tables (store/tokens.py, store/audit.py) on SQLite and on
PostgreSQL (issue 30): a token reads back as written and is stored once, a revocation drops its
grants, a start forgets the pane-bound tokens, a live name is unique, and the audit keeps its
newest rows, filtered as asked."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

import pytest

from muxd.store import audit, tokens
from muxd.store.audit_row import AuditRow
from muxd.store.database import driver_error
from muxd.store.tokens import TokenRecord

NOW = 1_700_000_000.0


@pytest.fixture
def connect_store(connect_either: Callable[[], sqlite3.Connection]) -> Callable[[], sqlite3.Connection]:
    return connect_either


def token(token_id: str, name: str, *, panes: tuple[str, ...] | None = None) -> TokenRecord:
    return TokenRecord(id=token_id, name=name, hash=f"sha-{token_id}", kind="agent" if panes else "user",
                       tier="execute_basic", panes=panes, created_at=NOW, scopes=("tasks:read",) if panes else None)


def test_tokens_and_grants_read_back_and_go_with_their_panes(store: sqlite3.Connection) -> None:
    user, agent = token("tk-1", "ci-bot"), token("tk-2", "agent:%3", panes=("%3",))
    tokens.insert_token(store, user)
    tokens.add_grant(store, agent, "%3", NOW)  # writes the pane's token too, if it is not there yet
    tokens.add_grant(store, agent, "%3", NOW + 1)  # again: once
    tokens.insert_token(store, agent, unless_there=True)
    assert tokens.load_tokens(store) == [user, agent]
    assert tokens.load_grants(store) == {"tk-2": {"%3"}}
    with pytest.raises(driver_error(store)):  # a live name is unique
        tokens.insert_token(store, token("tk-3", "ci-bot"))
    tokens.revoke_token(store, "tk-1", NOW + 2, "by hand")
    tokens.insert_token(store, token("tk-3", "ci-bot"))  # a revoked token frees its name
    assert tokens.forget_pane_bindings(store, NOW + 3) == 1 and tokens.load_grants(store) == {}
    revoked = {t.id: (t.revoked_at, t.revoked_reason) for t in tokens.load_tokens(store)}
    assert revoked == {"tk-1": (NOW + 2, "by hand"), "tk-2": (NOW + 3, "pane gone (server restarted)"),
                       "tk-3": (None, None)}


def test_the_audit_keeps_its_newest_rows_filtered_as_asked(store: sqlite3.Connection) -> None:
    def row(n: int, principal: str, status: str = "ok") -> AuditRow:
        return AuditRow(ts=NOW + n, principal=principal, kind="mcp", tool=f"tool{n % 2}",
                        args_sha256=audit.args_sha256({"n": n}), status=status, error_code=None, rows=n,
                        latency_ms=0.5)

    rows = [row(n, "user:a" if n % 3 else "agent:%1", "error" if n == 7 else "ok") for n in range(12)]
    audit.append(store, rows[:5], keep_rows=6, prune_every=10)
    audit.append(store, rows[5:], keep_rows=6, prune_every=10)  # the ids pass 10: the oldest go
    assert audit.recent(store, limit=100) == rows[:5:-1]
    assert audit.recent(store, limit=2, tool="tool1") == [rows[11], rows[9]]
    assert audit.recent(store, limit=100, principal=frozenset({"agent:%1"})) == [rows[9], rows[6]]
    assert audit.recent(store, limit=100, status="error") == [rows[7]]
