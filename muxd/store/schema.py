"""The schema as an ordered list of migrations; `PRAGMA user_version` counts those applied."""

from __future__ import annotations

MIGRATIONS: tuple[str, ...] = (
    # 1: tokens (only the sha256 of a secret is ever stored), grants, the audit trail.
    """
    CREATE TABLE tokens (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        hash TEXT NOT NULL UNIQUE,
        kind TEXT NOT NULL CHECK (kind IN ('user', 'agent')),
        tier TEXT NOT NULL,
        panes TEXT,                -- JSON list of pane ids; NULL: every pane
        created_at REAL NOT NULL,
        revoked_at REAL,
        revoked_reason TEXT
    );
    -- A name is unique among live tokens; a revoked one frees its name (agent:%3 after a restart).
    CREATE UNIQUE INDEX tokens_live_name ON tokens(name) WHERE revoked_at IS NULL;
    CREATE TABLE grants (
        token_id TEXT NOT NULL REFERENCES tokens(id),
        pane_id TEXT NOT NULL,
        granted_at REAL NOT NULL,
        PRIMARY KEY (token_id, pane_id)
    );
    CREATE TABLE audit (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        ts REAL NOT NULL,
        principal TEXT NOT NULL,
        kind TEXT NOT NULL,        -- 'mcp' (a tool call) or 'request' (a protocol request)
        tool TEXT NOT NULL,
        args_sha256 TEXT NOT NULL, -- sha256 of the canonical JSON of the arguments, never them
        status TEXT NOT NULL,      -- ok | error | denied | rate_limited | timeout
        error_code TEXT,
        rows INTEGER NOT NULL DEFAULT 0,
        latency_ms REAL NOT NULL DEFAULT 0
    );
    CREATE INDEX audit_ts ON audit(ts);
    CREATE INDEX audit_tool_ts ON audit(tool, ts);
    CREATE INDEX audit_principal_ts ON audit(principal, ts);
    """,
)
