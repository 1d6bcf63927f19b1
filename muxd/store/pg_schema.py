"""The PostgreSQL schema (MUXD_DB=postgresql://…, issue 30) as an ordered list of migrations, keyed
as SQLite's are: the version is how many were applied, kept in `muxd_schema` (SQLite keeps it in
PRAGMA user_version). A migration's text never changes once shipped.

Not SQLite's history replayed: each table group arrives whole, as SQLite has it now. Differences
kept on purpose: identity columns for `seq`, `jsonb` for JSON (read back as text, see
pg_connection.py), `double precision` epoch seconds, ids compared bytewise (COLLATE "C": short
ids are prefix ranges, which a linguistic collation would reorder), and partial indexes that
PostgreSQL's planner matches by implication (no INDEXED BY).

Several daemons may start on one database at once: `migrate` holds an advisory lock while it
reads the version and applies what is missing, all in one transaction (PostgreSQL's DDL is
transactional), so exactly one of them migrates and the others see its result.
"""

from __future__ import annotations

from muxd.errors import Internal
from muxd.store.pg_connection import PgConnection

# pg_advisory_xact_lock's key for migrating: any constant muxd alone uses ('muxd' in ASCII).
MIGRATION_LOCK_KEY = 0x6D757864

PG_MIGRATIONS: tuple[str, ...] = (
    # 1: the task queue (store/task_store.py): plans, tasks with their claims and leases,
    # dependencies, events and reviews (SQLite's migration 3, less knowledge and quotas).
    """
    CREATE TABLE plans (
        id text COLLATE "C" PRIMARY KEY,
        name text NOT NULL UNIQUE,
        created_at double precision NOT NULL
    );
    CREATE TABLE tasks (
        seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        id text COLLATE "C" NOT NULL UNIQUE,
        title text NOT NULL,
        description text NOT NULL DEFAULT '',
        plan_id text COLLATE "C" REFERENCES plans(id),
        priority integer NOT NULL CHECK (priority BETWEEN 0 AND 1000),
        state text NOT NULL CHECK (state IN ('ready', 'claimed', 'in_progress', 'needs_review', 'done',
                                             'failed')),
        verification jsonb NOT NULL,
        verification_result jsonb,
        context jsonb NOT NULL DEFAULT '{}',
        output jsonb,
        external_ref text,
        claimed_by text,
        claimed_at double precision,
        lease_expires_at double precision,
        lease_s integer,
        attempts integer NOT NULL DEFAULT 0,
        last_error text,
        feedback text,
        created_by text,
        created_at double precision NOT NULL,
        updated_at double precision NOT NULL,
        completed_at double precision
    );
    CREATE INDEX tasks_ready ON tasks(priority, created_at, seq) WHERE state = 'ready';
    CREATE INDEX tasks_plan_ready ON tasks(plan_id, priority, created_at, seq) WHERE state = 'ready';
    CREATE INDEX tasks_leases ON tasks(lease_expires_at) WHERE state IN ('claimed', 'in_progress');
    CREATE INDEX tasks_state_created ON tasks(state, created_at);
    CREATE INDEX tasks_plan_created ON tasks(plan_id, created_at);
    CREATE INDEX tasks_holder ON tasks(claimed_by) WHERE claimed_by IS NOT NULL;
    CREATE TABLE task_deps (
        task_id text COLLATE "C" NOT NULL,
        depends_on text COLLATE "C" NOT NULL,
        PRIMARY KEY (task_id, depends_on)
    );
    CREATE INDEX task_deps_on ON task_deps(depends_on);
    CREATE TABLE task_events (
        seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        task_id text COLLATE "C" NOT NULL,
        at double precision NOT NULL,
        kind text NOT NULL,
        actor text,
        from_state text,
        to_state text,
        detail jsonb
    );
    CREATE INDEX task_events_task ON task_events(task_id, seq);
    CREATE TABLE task_reviews (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        task_id text COLLATE "C" NOT NULL,
        at double precision NOT NULL,
        reviewer text NOT NULL,
        verdict text NOT NULL CHECK (verdict IN ('approve', 'reject', 'comment')),
        comment text,
        blocking integer NOT NULL DEFAULT 0,
        resolved_at double precision
    );
    CREATE INDEX task_reviews_task ON task_reviews(task_id, id);
    CREATE INDEX task_reviews_open ON task_reviews(task_id) WHERE blocking = 1 AND resolved_at IS NULL;
    """,
    # 2: knowledge (store/knowledge.py) and quotas (SQLite's migration 3, the rest of it). FTS5's
    # table is a column here: the entry's words, stemmed as English (as FTS5's porter tokenizer
    # does), kept by PostgreSQL with the row and searched through a GIN index.
    """
    CREATE TABLE knowledge_entries (
        seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        id text COLLATE "C" NOT NULL UNIQUE,
        title text,
        content text NOT NULL,
        tags jsonb,
        source text NOT NULL,
        source_task_id text COLLATE "C",
        created_by text,
        created_at double precision NOT NULL,
        words tsvector GENERATED ALWAYS AS (
            to_tsvector('english', coalesce(title, '')) || to_tsvector('english', content)
            || jsonb_to_tsvector('english', coalesce(tags, '[]'), '["string"]')) STORED
    );
    CREATE INDEX knowledge_task ON knowledge_entries(source_task_id) WHERE source_task_id IS NOT NULL;
    CREATE INDEX knowledge_words ON knowledge_entries USING gin (words);
    CREATE TABLE task_knowledge (
        task_id text COLLATE "C" NOT NULL,
        knowledge_id text COLLATE "C" NOT NULL,
        kind text NOT NULL,
        PRIMARY KEY (task_id, knowledge_id, kind)
    );
    CREATE TABLE quotas (
        principal text NOT NULL,
        name text NOT NULL,
        used integer NOT NULL DEFAULT 0,
        PRIMARY KEY (principal, name)
    );
    """,
    # 3: tokens (the sha256 of a secret, never the secret), grants, the audit trail (SQLite's
    # migration 1, with migration 3's token scopes). Not yet shared by several hosts: pane-bound
    # tokens and grants name one daemon's panes, and a host column comes with MUXD_HOST.
    """
    CREATE TABLE tokens (
        id text COLLATE "C" PRIMARY KEY,
        name text NOT NULL,
        hash text NOT NULL UNIQUE,
        kind text NOT NULL CHECK (kind IN ('user', 'agent')),
        tier text NOT NULL,
        panes jsonb,
        created_at double precision NOT NULL,
        revoked_at double precision,
        revoked_reason text,
        scopes jsonb
    );
    CREATE UNIQUE INDEX tokens_live_name ON tokens(name) WHERE revoked_at IS NULL;
    CREATE TABLE grants (
        token_id text COLLATE "C" NOT NULL REFERENCES tokens(id),
        pane_id text NOT NULL,
        granted_at double precision NOT NULL,
        PRIMARY KEY (token_id, pane_id)
    );
    CREATE TABLE audit (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        ts double precision NOT NULL,
        principal text NOT NULL,
        kind text NOT NULL,
        tool text NOT NULL,
        args_sha256 text NOT NULL,
        status text NOT NULL,
        error_code text,
        rows integer NOT NULL DEFAULT 0,
        latency_ms double precision NOT NULL DEFAULT 0
    );
    CREATE INDEX audit_ts ON audit(ts);
    CREATE INDEX audit_tool_ts ON audit(tool, ts);
    CREATE INDEX audit_principal_ts ON audit(principal, ts);
    """,
)


def schema_version(c: PgConnection) -> int:
    """The migrations applied to the database (0: none, or not a muxd database yet)."""
    if c.execute("SELECT to_regclass('muxd_schema')").fetchone() == (None,):
        return 0
    row = c.execute("SELECT version FROM muxd_schema").fetchone()
    return int(row[0]) if row is not None else 0


def migrate(c: PgConnection) -> int:
    """Apply the migrations not yet applied, under the migration lock; returns the version now.
    Internal when the database is newer than this muxd."""
    with c.transaction(immediate=False):
        c.execute("SELECT pg_advisory_xact_lock(?)", (MIGRATION_LOCK_KEY,))
        c.execute("CREATE TABLE IF NOT EXISTS muxd_schema (version integer NOT NULL)")
        version = schema_version(c)
        if version > len(PG_MIGRATIONS):
            raise Internal(f"the database has schema version {version}, newer than this muxd "
                           f"({len(PG_MIGRATIONS)})", version=version)
        for script in PG_MIGRATIONS[version:]:
            c.execute(script)
        if version < len(PG_MIGRATIONS):
            c.execute("DELETE FROM muxd_schema")
            c.execute("INSERT INTO muxd_schema (version) VALUES (?)", (len(PG_MIGRATIONS),))
    return len(PG_MIGRATIONS)
