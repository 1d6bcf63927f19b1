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
    # 2: the execution history (muxd/store/sqlite_executions.py). `at` (started, else queued) is
    # what lists sort and windows filter on; each index below serves one query of the store.
    """
    CREATE TABLE executions (
        seq INTEGER PRIMARY KEY,   -- insertion order: breaks ties between rows of the same instant
        id TEXT NOT NULL UNIQUE,   -- exec_{ms}_{hex}
        pane_id TEXT NOT NULL,
        pane_key TEXT NOT NULL,
        agent_name TEXT NOT NULL,
        agent_type TEXT,
        kind TEXT NOT NULL,
        status TEXT NOT NULL,
        triggered_by TEXT NOT NULL,
        principal TEXT,
        message TEXT,
        response TEXT,
        error_type TEXT,           -- the ExecutionError, flat so failures group by stack_hash
        error_message TEXT,
        stack_hash TEXT,
        exit_code INTEGER,
        queued_at REAL,
        started_at REAL,
        completed_at REAL,
        -- COALESCE(started_at, queued_at), written with the row: a plain column, because SQLite
        -- never reads a generated column from an index, and stats must be answered from one.
        at REAL,
        duration_ms INTEGER,
        timeout_s REAL,
        tokens_used INTEGER,
        cost_usd REAL,
        context_used INTEGER,
        context_max INTEGER,
        session_id TEXT,
        tool_calls TEXT,           -- JSON list; NULL: none
        files_written TEXT,        -- JSON list; NULL: none
        task_id TEXT,
        trace_id TEXT,
        span_id TEXT,
        attempt INTEGER,
        idempotency_key TEXT,
        sources TEXT,              -- JSON object; NULL: none
        transcript_bytes INTEGER NOT NULL DEFAULT 0,
        transcript_truncated INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX executions_at ON executions(at);
    CREATE INDEX executions_agent_at ON executions(agent_name, at);
    -- Per-agent stats read one slice per agent and status of this index, never a row.
    CREATE INDEX executions_agent_status ON executions(agent_name, status, at, cost_usd, tokens_used,
                                                       duration_ms);
    CREATE INDEX executions_status_at ON executions(status, at);  -- also the active ones
    CREATE INDEX executions_trigger_at ON executions(triggered_by, at);
    CREATE INDEX executions_pane_at ON executions(pane_key, at);
    CREATE INDEX executions_principal_at ON executions(principal, at) WHERE principal IS NOT NULL;
    CREATE INDEX executions_task_at ON executions(task_id, at) WHERE task_id IS NOT NULL;
    CREATE INDEX executions_trace ON executions(trace_id) WHERE trace_id IS NOT NULL;
    CREATE UNIQUE INDEX executions_idempotency ON executions(idempotency_key)
        WHERE idempotency_key IS NOT NULL;
    -- Failures only (status included to answer from the index alone). The store's queries
    -- repeat this WHERE word for word, or SQLite would not use the index.
    CREATE INDEX executions_failures ON executions(stack_hash, at, status)
        WHERE status IN ('failed', 'timeout', 'interrupted') AND stack_hash IS NOT NULL;
    CREATE TABLE execution_transcripts (
        execution_id TEXT PRIMARY KEY,
        data BLOB NOT NULL,        -- zlib-compressed output
        raw_bytes INTEGER NOT NULL,
        truncated INTEGER NOT NULL DEFAULT 0,
        extra TEXT                 -- JSON object; NULL: none
    );
    """,
)
