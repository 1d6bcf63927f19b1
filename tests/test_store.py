"""The SQLite store and the access state kept in it: file modes, migrations, hashed tokens,
what survives a reopen (a daemon restart) and what does not (pane-bound tokens, grants)."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import stat
from pathlib import Path
from typing import Any

import pytest

from muxd.daemon.access.control import SYSTEM, AccessControl
from muxd.daemon.access.request_rules import REQUEST_RULES, rule_for
from muxd.daemon.access.tiers import check_tier, tier_needed
from muxd.errors import BadRequest, Forbidden, Internal, StoreUnavailable, Unauthorized
from muxd.protocol import messages as m
from muxd.config import DB_BUSY_TIMEOUT_S
from muxd.store.database import Database, busy_timeout_from_env
from muxd.store.location import db_path
from muxd.store.schema import MIGRATIONS


def _file_bytes(path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*"))


def test_database_is_private_migrated_and_wal(tmp_path: Path) -> None:
    path = tmp_path / "state" / "muxd" / "s.db"
    db = Database(str(path))
    try:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
        assert db.call_sync(lambda c: c.execute("PRAGMA user_version").fetchone()[0]) == len(MIGRATIONS)
        assert db.call_sync(lambda c: c.execute("PRAGMA journal_mode").fetchone()[0]) == "wal"
        tables = db.call_sync(lambda c: {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type='table'")})
        assert {"tokens", "grants", "audit"} <= tables
    finally:
        db.close()
    Database(str(path)).close()  # reopening an up-to-date file migrates nothing and works


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    with sqlite3.connect(path) as raw:
        raw.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    with pytest.raises(Internal, match="newer than this muxd"):
        Database(str(path))


def test_the_busy_timeout_is_the_environments_and_a_held_database_is_waited_out_that_long(tmp_path: Path) -> None:
    assert busy_timeout_from_env({}) == busy_timeout_from_env({"MUXD_DB_BUSY_TIMEOUT_S": " "}) == DB_BUSY_TIMEOUT_S
    for bad in ("soon", "0", "-1", "nan", "inf"):
        with pytest.raises(BadRequest, match=f"^MUXD_DB_BUSY_TIMEOUT_S must be a number of seconds above 0, got '{bad}'$"):
            busy_timeout_from_env({"MUXD_DB_BUSY_TIMEOUT_S": bad})
    path = tmp_path / "held.db"
    access = AccessControl.open("a", {"MUXD_DB": str(path), "MUXD_DB_BUSY_TIMEOUT_S": "0.2"})
    other = sqlite3.connect(path, isolation_level=None)
    try:
        assert access.db.busy_timeout_s == 0.2
        other.execute("BEGIN EXCLUSIVE")
        with pytest.raises(StoreUnavailable, match="^the database is locked: creating token late: database is locked$"):
            asyncio.run(access.create_token(tier="view_only", name="late"))
    finally:
        other.close()
        access.close()


def test_db_path_follows_muxd_db_then_xdg_state_home(tmp_path: Path) -> None:
    assert db_path("work", {"MUXD_DB": str(tmp_path / "x.db")}) == str(tmp_path / "x.db")
    assert db_path("work", {"MUXD_DB": ":memory:"}) == ":memory:"
    url = "postgresql://muxd@/fleet?host=~/sockets"  # a URL is PostgreSQL's: kept whole, never expanded
    assert db_path("work", {"MUXD_DB": url}) == url
    assert db_path("work", {"MUXD_DB": "~/x.db"}) == os.path.expanduser("~/x.db")
    old = os.environ.get("XDG_STATE_HOME")
    os.environ["XDG_STATE_HOME"] = str(tmp_path)
    try:
        assert db_path("work", {}) == str(tmp_path / "muxd" / "work.db")
    finally:
        if old is None:
            del os.environ["XDG_STATE_HOME"]
        else:
            os.environ["XDG_STATE_HOME"] = old


def test_tokens_are_stored_hashed_and_survive_a_reopen(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    env = {"MUXD_DB": str(path)}
    access = AccessControl.open("a", env)

    async def changes() -> tuple[tuple[Any, str], str, str, tuple[Any, str]]:
        user = await access.create_token(tier="execute_basic", name="ci-bot")
        revoked, revoked_secret = await access.create_token(tier="admin", name="old")
        await access.revoke(revoked, "test")
        agent_secret = access.issue_agent_token("%3")
        bound = await access.create_token(tier="view_only", name="watcher", panes=["%4"])
        await access.grant(bound[0], "%5")
        return user, revoked_secret, agent_secret, bound

    (user, user_secret), revoked_secret, agent_secret, (bound, bound_secret) = asyncio.run(changes())
    assert access.principal_for(agent_secret).name == "agent:%3"
    assert access.visible(access.principal_for(bound_secret)) == {"%4", "%5"}
    access.close()

    stored = _file_bytes(path)
    for secret in (user_secret, revoked_secret, agent_secret, bound_secret):
        assert secret.encode() not in stored
    assert user.hash.encode() in stored  # the sha256 is what is kept

    again = AccessControl.open("a", env)  # as a restarted daemon
    try:
        principal = again.principal_for(user_secret)
        assert (principal.name, principal.tier, principal.scoped) == ("token:ci-bot", "execute_basic", False)
        for gone in (revoked_secret, agent_secret, bound_secret):  # revoked; pane-bound: its panes are gone
            with pytest.raises(Unauthorized):
                again.principal_for(gone)
        assert again.principal_for(None) is SYSTEM
        names = {t.name: t.revoked_reason for t in again.tokens(include_revoked=True)}
        assert names["agent:%3"] == "pane gone (server restarted)" and names["old"] == "test"
        # The name of a token revoked with its pane is free again (a new %3 gets agent:%3).
        assert again.principal_for(again.issue_agent_token("%3")).name == "agent:%3"
        with pytest.raises(BadRequest, match="invalid token name"):
            asyncio.run(again.create_token(tier="admin", name="has space"))
        with pytest.raises(BadRequest, match="unknown tier"):
            asyncio.run(again.create_token(tier="root"))
    finally:
        again.close()


def test_tiers_against_risks() -> None:
    assert tier_needed("safe", read_only=True) == "view_only"
    assert [tier_needed(r) for r in ("safe", "moderate", "dangerous", "admin", "nonsense")] == [
        "execute_basic", "execute_advanced", "admin", "admin", "admin"]
    check_tier("token:x", "execute_advanced", "send-keys", "moderate")
    with pytest.raises(Forbidden, match="needs tier admin or higher; token:x has execute_advanced") as caught:
        check_tier("token:x", "execute_advanced", "kill-pane", "dangerous")
    assert caught.value.detail["needed_tier"] == "admin"
    with pytest.raises(Forbidden, match="needs tier execute_basic"):
        check_tier("token:v", "view_only", "some_tool", "safe", read_only=False)


def test_every_protocol_request_has_a_risk() -> None:
    unclassified = [t.__name__ for t in m.Request.__args__ if t is not m.Hello and t not in REQUEST_RULES]
    assert unclassified == []
    assert rule_for(type("Future", (), {})).risk == "dangerous"  # unknown: the worst case
    assert rule_for(m.SendKeys).risk == "moderate" and rule_for(m.KillPane).risk == "dangerous"
    assert rule_for(m.CapturePane).read_only and not rule_for(m.ResizePane).read_only
    assert rule_for(m.KillServer).risk == "admin" and rule_for(m.CreateToken).risk == "admin"


def test_the_audit_keeps_only_the_newest_rows(tmp_path: Path) -> None:
    from muxd.store import audit

    db = Database(str(tmp_path / "a.db"))
    try:
        def row(n: int) -> m.AuditRow:
            return m.AuditRow(ts=float(n), principal="system", kind="mcp", tool=f"t{n}", args_sha256="0" * 64,
                              status="ok", error_code=None, rows=0, latency_ms=1.0)

        for n in range(1, 26):
            db.call_sync(lambda c, n=n: audit.append(c, [row(n)], keep_rows=8, prune_every=5))
        kept = db.call_sync(lambda c: audit.recent(c, limit=100))
        # Pruned at row 25 down to the newest 8 (ids 18..25); between prunes it may hold more.
        assert [r.tool for r in kept] == [f"t{n}" for n in range(25, 17, -1)]
        db.call_sync(lambda c: audit.append(c, [row(26)], keep_rows=8, prune_every=5))
        assert len(db.call_sync(lambda c: audit.recent(c, limit=100))) == 9  # not yet at a batch boundary
    finally:
        db.close()
