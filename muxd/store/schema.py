"""The schema as an ordered list of migrations; `PRAGMA user_version` counts those applied."""

from __future__ import annotations

from collections.abc import Callable

# The history's tallies (migration 8), kept by triggers on executions. A migration's text must
# never change once shipped: these build migration 8's, so they stay as they are.
_HOUR = "coalesce(CAST({row}.at / 3600 AS INTEGER), -1)"  # an execution's hour; -1: no time
_FAILURE = "{row}.status IN ('failed', 'timeout', 'interrupted') AND {row}.stack_hash IS NOT NULL"


def _status_counts(row: str, sign: int) -> str:
    return (f"INSERT INTO execution_status_counts (status, n) VALUES ({row}.status, {sign}) "
            f"ON CONFLICT (status) DO UPDATE SET n = n + excluded.n;")


def _sums(table: str, column: str, stretch: str, row: str, sign: int) -> str:
    """The statements moving `row`'s count and sums in `table`, whose key ends in `column`, the
    row's `stretch` of time (an hour: migration 8's execution_hours; a day: migration 11's)."""
    stretch = stretch.format(row=row)
    sql = f"""
        INSERT INTO {table} VALUES ({row}.agent_name, {row}.kind, {row}.status, {stretch}, {sign},
                {sign} * coalesce({row}.cost_usd, 0), {sign} * ({row}.cost_usd IS NOT NULL),
                {sign} * coalesce({row}.tokens_used, 0), {sign} * coalesce({row}.duration_ms, 0),
                {sign} * ({row}.duration_ms IS NOT NULL))
            ON CONFLICT (agent_name, kind, status, {column}) DO UPDATE SET n = n + excluded.n,
                cost = cost + excluded.cost, costs = costs + excluded.costs, tokens = tokens + excluded.tokens,
                duration_ms = duration_ms + excluded.duration_ms, durations = durations + excluded.durations;"""
    if sign < 0:  # a stretch left with nothing goes: pruned hours leave no zeros behind
        sql += f"""
        DELETE FROM {table} WHERE agent_name = {row}.agent_name AND kind = {row}.kind
            AND status = {row}.status AND {column} = {stretch} AND n = 0;"""
    return sql


def _hours(row: str, sign: int) -> str:
    return _sums("execution_hours", "hour", _HOUR, row, sign)


def _failures(row: str, sign: int) -> str:
    hour, failure = _HOUR.format(row=row), _FAILURE.format(row=row)
    sql = f"""
        INSERT INTO failure_counts SELECT {row}.stack_hash, {sign} WHERE {failure}
            ON CONFLICT (stack_hash) DO UPDATE SET n = n + excluded.n;
        INSERT INTO failure_hours SELECT {row}.stack_hash, {hour}, {sign} WHERE {failure}
            ON CONFLICT (stack_hash, hour) DO UPDATE SET n = n + excluded.n;"""
    if sign < 0:
        sql += f"""
        DELETE FROM failure_counts WHERE stack_hash = {row}.stack_hash AND n = 0;
        DELETE FROM failure_hours WHERE stack_hash = {row}.stack_hash AND hour = {hour} AND n = 0;"""
    return sql


# The timeline's spans (migration 10), each a row of a subquery; a row's bucket in one.
_SPANS_S = (900, 3600, 21_600, 86_400)
_SPANS = " UNION ALL ".join(f"SELECT {span} AS span" for span in _SPANS_S)
_SPAN_BUCKET = "coalesce(CAST({row}.at / span AS INTEGER), -1)"
_FAILED_STATUSES = "'failed', 'timeout', 'interrupted'"


def _spans(row: str, sign: int) -> str:
    bucket = _SPAN_BUCKET.format(row=row)
    sql = f"""
        INSERT INTO execution_spans SELECT span, {bucket}, {row}.agent_name, {row}.kind, {sign},
                {sign} * ({row}.status IN ({_FAILED_STATUSES})), {sign} * coalesce({row}.tokens_used, 0),
                {sign} * coalesce({row}.cost_usd, 0), {sign} * ({row}.cost_usd IS NOT NULL) FROM ({_SPANS}) WHERE true
            ON CONFLICT (span, bucket, agent_name, kind) DO UPDATE SET n = n + excluded.n,
                failures = failures + excluded.failures, tokens = tokens + excluded.tokens,
                cost = cost + excluded.cost, costs = costs + excluded.costs;"""
    if sign < 0:  # a bucket left with nothing goes, as an hour does
        sql += f"""
        DELETE FROM execution_spans WHERE (span, bucket) IN (SELECT span, {bucket} FROM ({_SPANS}))
            AND agent_name = {row}.agent_name AND kind = {row}.kind AND n = 0;"""
    return sql


# The day tallies and scope counts (migration 11). A row's day is its hour's (integer division),
# so that a window of whole days and the hours before them never counts a row twice or misses
# one, whatever the rounding of `at / 86400` at a day's edge.
_DAY = "coalesce(CAST({row}.at / 3600 AS INTEGER) / 24, -1)"


def _days(row: str, sign: int) -> str:
    return _sums("execution_days", "day", _DAY, row, sign)


def _scope_counts(row: str, sign: int) -> str:
    # No principal is '' (the key holds no NULL); a scope naming '' reads the rows instead.
    sql = f"""
        INSERT INTO execution_scope_counts VALUES ({row}.pane_key, coalesce({row}.principal, ''), {row}.status, {sign})
            ON CONFLICT (pane_key, principal, status) DO UPDATE SET n = n + excluded.n;"""
    if sign < 0:
        sql += f"""
        DELETE FROM execution_scope_counts WHERE pane_key = {row}.pane_key
            AND principal = coalesce({row}.principal, '') AND status = {row}.status AND n = 0;"""
    return sql


def _kept(name: str, tally: Callable[[str, int], str], columns: tuple[str, ...], only: str = "") -> str:
    """The triggers that keep one tally: `tally(row, sign)` adds (1) or takes away (-1) the row
    NEW or OLD; an update moves it only when one of `columns` changed (most saves of a running
    execution change none); `only`: the rows it counts. Apart per tally, so each write runs only
    the statements of the tallies it moves."""
    def when(row: str) -> str:
        return f" WHEN {only.format(row=row)}" if only else ""

    changed = " OR ".join(f"OLD.{c} IS NOT NEW.{c}" for c in columns)
    counted = f" AND ({only.format(row='OLD')} OR {only.format(row='NEW')})" if only else ""
    return f"""
    CREATE TRIGGER executions_{name}_insert AFTER INSERT ON executions{when("NEW")} BEGIN {tally("NEW", 1)}
    END;
    CREATE TRIGGER executions_{name}_delete AFTER DELETE ON executions{when("OLD")} BEGIN {tally("OLD", -1)}
    END;
    CREATE TRIGGER executions_{name}_update AFTER UPDATE ON executions WHEN ({changed}){counted}
    BEGIN {tally("OLD", -1)} {tally("NEW", 1)}
    END;"""


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
    # 3: the task queue (muxd/store/task_store.py), its knowledge (knowledge.py), quotas, and the
    # scopes a token carries (tasks:read, tasks:write).
    """
    ALTER TABLE tokens ADD COLUMN scopes TEXT;  -- JSON list; NULL: the default of its kind
    CREATE TABLE plans (
        id TEXT PRIMARY KEY,       -- a uuid
        name TEXT NOT NULL UNIQUE,
        created_at REAL NOT NULL
    );
    CREATE TABLE tasks (
        seq INTEGER PRIMARY KEY,   -- insertion order: breaks ties of created_at
        id TEXT NOT NULL UNIQUE,   -- a uuid
        title TEXT NOT NULL,
        description TEXT NOT NULL DEFAULT '',
        plan_id TEXT REFERENCES plans(id),
        priority INTEGER NOT NULL CHECK (priority BETWEEN 0 AND 1000),
        state TEXT NOT NULL CHECK (state IN ('ready', 'claimed', 'in_progress', 'needs_review', 'done',
                                             'failed')),
        verification TEXT NOT NULL,        -- JSON Verification
        verification_result TEXT,          -- JSON VerificationResult; NULL: never verified
        context TEXT NOT NULL DEFAULT '{}',
        output TEXT,                       -- JSON object; NULL: not completed
        external_ref TEXT,
        claimed_by TEXT,
        claimed_at REAL,
        lease_expires_at REAL,
        lease_s INTEGER,           -- the claim's lease length: what a heartbeat renews it by
        attempts INTEGER NOT NULL DEFAULT 0,
        last_error TEXT,
        feedback TEXT,
        created_by TEXT,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        completed_at REAL
    );
    -- get_next_actionable reads ready tasks in (priority, created_at) order from these.
    CREATE INDEX tasks_ready ON tasks(priority, created_at, seq) WHERE state = 'ready';
    CREATE INDEX tasks_plan_ready ON tasks(plan_id, priority, created_at, seq) WHERE state = 'ready';
    CREATE INDEX tasks_leases ON tasks(lease_expires_at) WHERE state IN ('claimed', 'in_progress');
    CREATE INDEX tasks_state_created ON tasks(state, created_at);
    CREATE INDEX tasks_plan_created ON tasks(plan_id, created_at);
    CREATE INDEX tasks_holder ON tasks(claimed_by) WHERE claimed_by IS NOT NULL;
    CREATE TABLE task_deps (
        task_id TEXT NOT NULL,
        depends_on TEXT NOT NULL,
        PRIMARY KEY (task_id, depends_on)
    );
    CREATE INDEX task_deps_on ON task_deps(depends_on);
    CREATE TABLE task_events (
        seq INTEGER PRIMARY KEY,
        task_id TEXT NOT NULL,
        at REAL NOT NULL,
        kind TEXT NOT NULL,
        actor TEXT,
        from_state TEXT,
        to_state TEXT,
        detail TEXT                -- JSON object; NULL: none
    );
    CREATE INDEX task_events_task ON task_events(task_id, seq);
    CREATE TABLE task_reviews (
        id INTEGER PRIMARY KEY,
        task_id TEXT NOT NULL,
        at REAL NOT NULL,
        reviewer TEXT NOT NULL,
        verdict TEXT NOT NULL CHECK (verdict IN ('approve', 'reject', 'comment')),
        comment TEXT,
        blocking INTEGER NOT NULL DEFAULT 0,
        resolved_at REAL
    );
    CREATE INDEX task_reviews_task ON task_reviews(task_id, id);
    CREATE INDEX task_reviews_open ON task_reviews(task_id) WHERE blocking = 1 AND resolved_at IS NULL;
    CREATE TABLE knowledge_entries (
        seq INTEGER PRIMARY KEY,   -- the rowid of knowledge_fts
        id TEXT NOT NULL UNIQUE,   -- a uuid
        title TEXT,
        content TEXT NOT NULL,
        tags TEXT,                 -- JSON list; NULL: none
        source TEXT NOT NULL,
        source_task_id TEXT,
        created_by TEXT,
        created_at REAL NOT NULL
    );
    CREATE INDEX knowledge_task ON knowledge_entries(source_task_id) WHERE source_task_id IS NOT NULL;
    -- Full-text search over the entries (bm25): written with each entry, by the store.
    CREATE VIRTUAL TABLE knowledge_fts USING fts5(title, content, tags, tokenize = 'porter unicode61');
    CREATE TABLE task_knowledge (
        task_id TEXT NOT NULL,
        knowledge_id TEXT NOT NULL,
        kind TEXT NOT NULL,        -- 'produced': the task's learnings
        PRIMARY KEY (task_id, knowledge_id, kind)
    );
    CREATE TABLE quotas (
        principal TEXT NOT NULL,
        name TEXT NOT NULL,        -- 'knowledge_stored'
        used INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (principal, name)
    );
    """,
    # 4: an idempotency key names one execution per (principal, pane), not one in the whole
    # history: another principal's key, or the same key for another pane, is another key.
    """
    DROP INDEX executions_idempotency;
    CREATE UNIQUE INDEX executions_idempotency_scoped ON executions(principal, pane_key, idempotency_key)
        WHERE idempotency_key IS NOT NULL;
    """,
    # 5: whose figure cost_usd is ('agent' | 'estimate'), and for an estimate the model priced and
    # the date of the prices applied (muxd/executions/pricing.py). Older rows: NULL, unknown.
    """
    ALTER TABLE executions ADD COLUMN cost_source TEXT;
    ALTER TABLE executions ADD COLUMN cost_model TEXT;
    ALTER TABLE executions ADD COLUMN cost_price_date TEXT;
    """,
    # 6: per-agent stats count an agent's prompts apart from the commands run in its pane (and
    # muxd run windows are no agents): the covering index of stats gains `kind` (and the agent
    # type a summary row names), still read one slice per agent, kind and status.
    """
    DROP INDEX executions_agent_status;
    CREATE INDEX executions_agent_kind_status ON executions(agent_name, kind, status, at, cost_usd, tokens_used,
                                                            duration_ms, agent_type);
    """,
    # 7: short execution ids are cut from the random hex at an id's end (store/short_ids.py):
    # finding the ids a short id names, and the nearest tails of one, each read this index.
    """
    CREATE INDEX executions_tail ON executions(substr(id, -8));
    """,
    # 8: tallies, kept by triggers with every write, so that totals, per-agent stats and failure
    # patterns over a million executions read a few hundred rows instead of every index entry
    # (store/execution_tallies.py reads them): executions per status; per hour, agent, kind and
    # status, their count and sums; failures per fingerprint, in all and per hour. And the
    # failures of a pane or a principal, each in an index of their own.
    f"""
    CREATE TABLE execution_status_counts (
        status TEXT PRIMARY KEY,
        n INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE execution_hours (
        agent_name TEXT NOT NULL,
        kind TEXT NOT NULL,
        status TEXT NOT NULL,
        hour INTEGER NOT NULL,     -- CAST(at / 3600 AS INTEGER); -1: no time
        n INTEGER NOT NULL,
        cost REAL NOT NULL,        -- the sum of the known costs
        costs INTEGER NOT NULL,    -- how many were known
        tokens INTEGER NOT NULL,
        duration_ms INTEGER NOT NULL,
        durations INTEGER NOT NULL,
        PRIMARY KEY (agent_name, kind, status, hour)  -- a window of one agent, kind and status: one range
    ) WITHOUT ROWID;
    CREATE TABLE failure_counts (
        stack_hash TEXT PRIMARY KEY,
        n INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE failure_hours (
        stack_hash TEXT NOT NULL,
        hour INTEGER NOT NULL,
        n INTEGER NOT NULL,
        PRIMARY KEY (stack_hash, hour)
    ) WITHOUT ROWID;
    INSERT INTO execution_status_counts SELECT status, count(*) FROM executions GROUP BY status;
    INSERT INTO execution_hours SELECT agent_name, kind, status, {_HOUR.format(row="executions")}, count(*),
        total(cost_usd), count(cost_usd), coalesce(sum(tokens_used), 0), coalesce(sum(duration_ms), 0),
        count(duration_ms) FROM executions GROUP BY 1, 2, 3, 4;
    INSERT INTO failure_counts SELECT stack_hash, count(*) FROM executions
        WHERE {_FAILURE.format(row="executions")} GROUP BY 1;
    INSERT INTO failure_hours SELECT stack_hash, {_HOUR.format(row="executions")}, count(*) FROM executions
        WHERE {_FAILURE.format(row="executions")} GROUP BY 1, 2;
    -- A scoped token's failures (its panes', what it triggered) without reading their rows.
    CREATE INDEX executions_failures_pane ON executions(pane_key, at, stack_hash)
        WHERE status IN ('failed', 'timeout', 'interrupted') AND stack_hash IS NOT NULL;
    CREATE INDEX executions_failures_principal ON executions(principal, at, stack_hash)
        WHERE status IN ('failed', 'timeout', 'interrupted') AND stack_hash IS NOT NULL;
    {_kept("status_counts", _status_counts, ("status",))}
    {_kept("hours", _hours, ("agent_name", "kind", "status", "at", "cost_usd", "tokens_used", "duration_ms"))}
    {_kept("failures", _failures, ("status", "stack_hash", "at"), only=_FAILURE)}
    """,
    # 9: the host that wrote each row (MUXD_HOST, store/hosts.py), as on a PostgreSQL database that
    # daemons share: one row shape on both. Rows from before it have host ''. A live token's
    # name is unique per host when it is bound to panes (they are one host's), fleet-wide when not.
    """
    ALTER TABLE executions ADD COLUMN host TEXT NOT NULL DEFAULT '';
    ALTER TABLE tasks ADD COLUMN host TEXT NOT NULL DEFAULT '';
    ALTER TABLE task_events ADD COLUMN host TEXT NOT NULL DEFAULT '';
    ALTER TABLE task_reviews ADD COLUMN host TEXT NOT NULL DEFAULT '';
    ALTER TABLE knowledge_entries ADD COLUMN host TEXT NOT NULL DEFAULT '';
    ALTER TABLE audit ADD COLUMN host TEXT NOT NULL DEFAULT '';
    ALTER TABLE tokens ADD COLUMN host TEXT NOT NULL DEFAULT '';
    ALTER TABLE grants ADD COLUMN host TEXT NOT NULL DEFAULT '';
    DROP INDEX tokens_live_name;
    CREATE UNIQUE INDEX tokens_live_name ON tokens((CASE WHEN panes IS NULL THEN '' ELSE host END), name)
        WHERE revoked_at IS NULL;
    """,
    # 10: the timeline's tallies (store/execution_timeline.py, muxd web's charts): executions,
    # failures, tokens and costs per agent and kind in buckets of each span a chart reads (15
    # minutes, an hour, 6 hours, a UTC day), kept by triggers in the same transaction as the rows.
    # No status in the key: a window reads ~20 rows a bucket, not ~100 (a month by day 600, not
    # 43,000 hourly tallies). Counted from the rows, as the triggers count them.
    f"""
    CREATE TABLE execution_spans (
        span INTEGER NOT NULL,     -- seconds: {", ".join(map(str, _SPANS_S))}
        bucket INTEGER NOT NULL,   -- CAST(at / span AS INTEGER); -1: no time
        agent_name TEXT NOT NULL,
        kind TEXT NOT NULL,
        n INTEGER NOT NULL,
        failures INTEGER NOT NULL, -- of {_FAILED_STATUSES}
        tokens INTEGER NOT NULL,
        cost REAL NOT NULL,        -- the sum of the known costs
        costs INTEGER NOT NULL,    -- how many were known
        PRIMARY KEY (span, bucket, agent_name, kind)  -- a window of one span: one range
    ) WITHOUT ROWID;
    INSERT INTO execution_spans SELECT span, {_SPAN_BUCKET.format(row="executions")}, agent_name, kind, count(*),
        coalesce(sum(status IN ({_FAILED_STATUSES})), 0), coalesce(sum(tokens_used), 0), total(cost_usd),
        count(cost_usd) FROM executions, ({_SPANS}) GROUP BY 1, 2, 3, 4;
    {_kept("spans", _spans, ("agent_name", "kind", "status", "at", "cost_usd", "tokens_used"))}
    -- A scoped token's timeline from its panes' and its principal's rows (no tally splits by
    -- them): each a range of one of these, holding all the timeline sums, so no row is read.
    CREATE INDEX executions_pane_sums ON executions(pane_key, at, agent_name, kind, status, tokens_used, cost_usd);
    CREATE INDEX executions_principal_sums ON executions(principal, at, pane_key, agent_name, kind, status,
                                                         tokens_used, cost_usd) WHERE principal IS NOT NULL;
    """,
    # 11: issue 29's last misses at a million rows. A scoped token's failure patterns read, per
    # fingerprint, a range of its panes' and of its principal's indexes of failures alone: keyed
    # by pane or principal then fingerprint, with `status` (which SQLite otherwise checks in each
    # row) and, in the principal's, the pane (a row its panes show too is counted once). A token's total counts its panes and principal per
    # status (execution_scope_counts: a row's pane and principal are one key, so the OR of a
    # scope's terms sums each row once). Stats over days sum day tallies (execution_days, the
    # sums of execution_hours per UTC day): a week is ~30 rows an agent, kind and status, not 168.
    f"""
    DROP INDEX executions_failures_pane;
    CREATE INDEX executions_failures_pane ON executions(pane_key, stack_hash, at, status)
        WHERE status IN ('failed', 'timeout', 'interrupted') AND stack_hash IS NOT NULL;
    DROP INDEX executions_failures_principal;
    CREATE INDEX executions_failures_principal ON executions(principal, stack_hash, at, status, pane_key)
        WHERE status IN ('failed', 'timeout', 'interrupted') AND stack_hash IS NOT NULL;
    CREATE TABLE execution_days (
        agent_name TEXT NOT NULL,
        kind TEXT NOT NULL,
        status TEXT NOT NULL,
        day INTEGER NOT NULL,      -- CAST(at / 3600 AS INTEGER) / 24; -1: no time
        n INTEGER NOT NULL,
        cost REAL NOT NULL,
        costs INTEGER NOT NULL,
        tokens INTEGER NOT NULL,
        duration_ms INTEGER NOT NULL,
        durations INTEGER NOT NULL,
        PRIMARY KEY (agent_name, kind, status, day)
    ) WITHOUT ROWID;
    INSERT INTO execution_days SELECT agent_name, kind, status, {_DAY.format(row="executions")}, count(*),
        total(cost_usd), count(cost_usd), coalesce(sum(tokens_used), 0), coalesce(sum(duration_ms), 0),
        count(duration_ms) FROM executions GROUP BY 1, 2, 3, 4;
    {_kept("days", _days, ("agent_name", "kind", "status", "at", "cost_usd", "tokens_used", "duration_ms"))}
    CREATE TABLE execution_scope_counts (
        pane_key TEXT NOT NULL,
        principal TEXT NOT NULL,   -- '': none
        status TEXT NOT NULL,
        n INTEGER NOT NULL,
        PRIMARY KEY (pane_key, principal, status)
    ) WITHOUT ROWID;
    CREATE INDEX execution_scope_counts_principal ON execution_scope_counts(principal);
    INSERT INTO execution_scope_counts SELECT pane_key, coalesce(principal, ''), status, count(*) FROM executions
        GROUP BY 1, 2, 3;
    {_kept("scope_counts", _scope_counts, ("pane_key", "principal", "status"))}
    """,
)
