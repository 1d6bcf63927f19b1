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

# The history's tallies (migration 4), kept by triggers as SQLite's migration 8 keeps them. A
# row's hour: floor, as SQLite's CAST truncates (PostgreSQL's CAST would round); -1: no time.
_HOUR = "coalesce(floor(r.at / 3600)::bigint, -1)"
_FAILURE = "r.status IN ('failed', 'timeout', 'interrupted') AND r.stack_hash IS NOT NULL"


_SUMMED = ("agent_name", "kind", "status", "at", "cost_usd", "tokens_used", "duration_ms")


def _sums(table: str, column: str, stretch: str, key: str, value: str, own: str) -> str:
    """The statements moving the row `r`'s count and sums in `table`, keyed by its `stretch` of
    time in `column` (an hour, a day) then `key` (", host" since migration 9)."""
    return f"""
        INSERT INTO {table} AS t VALUES (r.agent_name, r.kind, r.status, {stretch}, sign,
                sign * coalesce(r.cost_usd, 0), sign * (r.cost_usd IS NOT NULL)::int,
                sign * coalesce(r.tokens_used, 0), sign * coalesce(r.duration_ms, 0),
                sign * (r.duration_ms IS NOT NULL)::int{value})
            ON CONFLICT (agent_name, kind, status, {column}{key}) DO UPDATE SET n = t.n + excluded.n,
                cost = t.cost + excluded.cost, costs = t.costs + excluded.costs, tokens = t.tokens + excluded.tokens,
                duration_ms = t.duration_ms + excluded.duration_ms, durations = t.durations + excluded.durations;
        IF sign < 0 THEN  -- an hour left with nothing goes: pruned hours leave no zeros behind
            DELETE FROM {table} WHERE agent_name = r.agent_name AND kind = r.kind AND status = r.status
                AND {column} = {stretch}{own} AND n = 0;
        END IF;"""


def _tallies(by_host: bool) -> dict[str, tuple[str, tuple[str, ...]]]:
    """name -> (the statements adding the row `r` times `sign`, the columns that move it).
    `by_host`: each tally's key ends in the row's host (migration 9), so that every tally row
    has one writer, its host's daemon; without it (migration 4, whose text must not change),
    every host's turns moved the same rows and their batches deadlocked."""
    key, value, own = (", host", ", r.host", " AND host = r.host") if by_host else ("", "", "")
    return {
        "status_counts": (f"""
        INSERT INTO execution_status_counts AS t VALUES (r.status, sign{value})
            ON CONFLICT (status{key}) DO UPDATE SET n = t.n + excluded.n;""", ("status",)),
        "hours": (_sums("execution_hours", "hour", _HOUR, key, value, own), _SUMMED),
        "failures": (f"""
        IF NOT ({_FAILURE}) THEN
            RETURN;
        END IF;
        INSERT INTO failure_counts AS t VALUES (r.stack_hash, sign{value})
            ON CONFLICT (stack_hash{key}) DO UPDATE SET n = t.n + excluded.n;
        INSERT INTO failure_hours AS t VALUES (r.stack_hash, {_HOUR}, sign{value})
            ON CONFLICT (stack_hash, hour{key}) DO UPDATE SET n = t.n + excluded.n;
        IF sign < 0 THEN
            DELETE FROM failure_counts WHERE stack_hash = r.stack_hash{own} AND n = 0;
            DELETE FROM failure_hours WHERE stack_hash = r.stack_hash AND hour = {_HOUR}{own} AND n = 0;
        END IF;""", ("status", "stack_hash", "at")),
    }


_TALLIES = _tallies(by_host=False)


def _tally(name: str, by_host: bool = False, replace: str = "", body: str = "") -> str:
    """A tally's function: the row `r` counted `sign` times (`replace`: 'OR REPLACE '; `body`:
    its statements when the tally is not one of `_tallies`')."""
    body = body or _tallies(by_host)[name][0]
    return f"""
    CREATE {replace}FUNCTION executions_{name}(r executions, sign integer) RETURNS void LANGUAGE plpgsql AS $$
    BEGIN {body}
    END $$;"""


def _kept(name: str, kept: tuple[str, tuple[str, ...]] | None = None) -> str:
    """A tally's function and the triggers that call it: an update moves the row only when one
    of the tally's columns changed (most saves of a running execution change none), as SQLite's
    triggers do. `kept`: (its statements, its columns) when it is not one of `_TALLIES`."""
    body, columns = kept or ("", _TALLIES[name][1])
    changed = " OR ".join(f"OLD.{c} IS DISTINCT FROM NEW.{c}" for c in columns)
    return f"""{_tally(name, body=body)}
    CREATE FUNCTION executions_{name}_kept() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP <> 'INSERT' THEN PERFORM executions_{name}(OLD, -1); END IF;
        IF TG_OP <> 'DELETE' THEN PERFORM executions_{name}(NEW, 1); END IF;
        RETURN NULL;
    END $$;
    CREATE TRIGGER executions_{name}_rows AFTER INSERT OR DELETE ON executions
        FOR EACH ROW EXECUTE FUNCTION executions_{name}_kept();
    CREATE TRIGGER executions_{name}_update AFTER UPDATE ON executions
        FOR EACH ROW WHEN ({changed}) EXECUTE FUNCTION executions_{name}_kept();"""


# Migration 9: the tallies keyed by host as well, rebuilt from the rows. TRUNCATE first: it waits
# for the writes in flight (their triggers hold tally rows) and keeps new ones out until the
# commit, so the recount sees every row the tallies had counted.
_TALLY_KEYS = {"execution_status_counts": "status", "execution_hours": "agent_name, kind, status, hour",
               "failure_counts": "stack_hash", "failure_hours": "stack_hash, hour"}
_FAILED = "WHERE status IN ('failed', 'timeout', 'interrupted') AND stack_hash IS NOT NULL"
_ROW_HOUR = _HOUR.replace("r.at", "at")  # the hour of each row the recount reads
_TALLIES_BY_HOST = "\n".join((
    f"TRUNCATE {', '.join(_TALLY_KEYS)};",
    *(f"ALTER TABLE {table} ADD COLUMN host text NOT NULL, DROP CONSTRAINT {table}_pkey, "
      f"ADD PRIMARY KEY ({key}, host);" for table, key in _TALLY_KEYS.items()),
    *(_tally(name, by_host=True, replace="OR REPLACE ") for name in _TALLIES),
    "INSERT INTO execution_status_counts SELECT status, count(*), host FROM executions GROUP BY status, host;",
    f"INSERT INTO execution_hours SELECT agent_name, kind, status, {_ROW_HOUR}, count(*), coalesce(sum(cost_usd), 0), "
    "count(cost_usd), coalesce(sum(tokens_used), 0), coalesce(sum(duration_ms), 0), count(duration_ms), host "
    "FROM executions GROUP BY 1, 2, 3, 4, host;",
    f"INSERT INTO failure_counts SELECT stack_hash, count(*), host FROM executions {_FAILED} "
    "GROUP BY 1, host;",
    f"INSERT INTO failure_hours SELECT stack_hash, {_ROW_HOUR}, count(*), host FROM executions "
    f"{_FAILED} GROUP BY 1, 2, host;",
))

# Migration 10: the timeline's tallies, as SQLite's migration 10 keeps them, by host as the
# others since migration 9. A row's bucket in a span: floor, as SQLite's CAST truncates.
_SPANS = "unnest(ARRAY[900, 3600, 21600, 86400]) span"
_SPAN_BUCKET = "coalesce(floor(r.at / span)::bigint, -1)"
_SPANS_KEPT = (f"""
        INSERT INTO execution_spans AS t SELECT span, {_SPAN_BUCKET}, r.agent_name, r.kind, sign,
                sign * (r.status IN ('failed', 'timeout', 'interrupted'))::int, sign * coalesce(r.tokens_used, 0),
                sign * coalesce(r.cost_usd, 0), sign * (r.cost_usd IS NOT NULL)::int, r.host FROM {_SPANS}
            ON CONFLICT (span, bucket, agent_name, kind, host) DO UPDATE SET n = t.n + excluded.n,
                failures = t.failures + excluded.failures, tokens = t.tokens + excluded.tokens,
                cost = t.cost + excluded.cost, costs = t.costs + excluded.costs;
        IF sign < 0 THEN
            DELETE FROM execution_spans WHERE (span, bucket) IN (SELECT span, {_SPAN_BUCKET} FROM {_SPANS})
                AND agent_name = r.agent_name AND kind = r.kind AND host = r.host AND n = 0;
        END IF;""", ("agent_name", "kind", "status", "at", "cost_usd", "tokens_used"))

# Migration 11: SQLite's day tallies and scope counts (its migration 11), by host as the others.
# A row's day is its hour's, integer division (bigint / int truncates), as SQLite's.
_DAY = "coalesce(floor(r.at / 3600)::bigint / 24, -1)"
_SCOPE_COUNTS_KEPT = ("""
        INSERT INTO execution_scope_counts AS t VALUES (r.pane_key, coalesce(r.principal, ''), r.status, sign, r.host)
            ON CONFLICT (pane_key, principal, status, host) DO UPDATE SET n = t.n + excluded.n;
        IF sign < 0 THEN
            DELETE FROM execution_scope_counts WHERE pane_key = r.pane_key AND principal = coalesce(r.principal, '')
                AND status = r.status AND host = r.host AND n = 0;
        END IF;""", ("pane_key", "principal", "status"))

# The history's indexes that order by `at` (migration 6): name, the columns before `at`, those after
# it, the rows indexed. Each becomes (…, at NULLS FIRST, …, seq): read backwards that is the
# newest-first order exactly (at DESC NULLS LAST, seq DESC: execution_queries.NEWEST_FIRST), read
# forwards prune's (at NULLS FIRST, seq). With PostgreSQL's default (NULLs last ascending, so first
# read backwards) every newest-first page sorted all the rows it matched; SQLite's indexes order
# NULLs so already, and end in the rowid.
_BY_TIME = (
    ("executions_at", "", "", ""),
    ("executions_agent_at", "agent_name, ", "", ""),
    ("executions_status_at", "status, ", "", ""),
    ("executions_trigger_at", "triggered_by, ", "", ""),
    ("executions_pane_at", "pane_key, ", "", ""),
    ("executions_principal_at", "principal, ", "", "WHERE principal IS NOT NULL"),
    ("executions_task_at", "task_id, ", "", "WHERE task_id IS NOT NULL"),
    ("executions_failures", "stack_hash, ", ", status", _FAILED),
    ("executions_agent_kind_status", "agent_name, kind, status, ",
     ", cost_usd, tokens_used, duration_ms, agent_type", ""),
)
_NEWEST_FIRST_INDEXES = "\n".join(
    f"DROP INDEX {name}; CREATE INDEX {name} ON executions({before}at NULLS FIRST{after}, seq) {where};"
    for name, before, after, where in _BY_TIME)

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
    # migration 1, with migration 3's token scopes). Pane-bound tokens and grants name one daemon's
    # panes: migration 5 says whose (the host column).
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
    # 4: the execution history (SQLite's migrations 2 and 4 to 8 as they stand): executions, their
    # transcripts, the indexes of the history's queries and the tallies triggers keep.
    f"""
    CREATE TABLE executions (
        seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        id text COLLATE "C" NOT NULL UNIQUE,
        pane_id text NOT NULL,
        pane_key text NOT NULL,
        agent_name text NOT NULL,
        agent_type text,
        kind text NOT NULL,
        status text NOT NULL,
        triggered_by text NOT NULL,
        principal text,
        message text,
        response text,
        error_type text,
        error_message text,
        stack_hash text,
        exit_code bigint,
        queued_at double precision,
        started_at double precision,
        completed_at double precision,
        at double precision,
        duration_ms bigint,
        timeout_s double precision,
        tokens_used bigint,
        cost_usd double precision,
        context_used bigint,
        context_max bigint,
        session_id text,
        tool_calls jsonb,
        files_written jsonb,
        task_id text COLLATE "C",
        trace_id text,
        span_id text,
        attempt bigint,
        idempotency_key text,
        sources jsonb,
        transcript_bytes bigint NOT NULL DEFAULT 0,
        transcript_truncated boolean NOT NULL DEFAULT false,  -- a bool in Execution (SQLite: 0 or 1)
        cost_source text,
        cost_model text,
        cost_price_date text
    );
    CREATE INDEX executions_at ON executions(at);
    CREATE INDEX executions_agent_at ON executions(agent_name, at);
    CREATE INDEX executions_status_at ON executions(status, at);
    CREATE INDEX executions_trigger_at ON executions(triggered_by, at);
    CREATE INDEX executions_pane_at ON executions(pane_key, at);
    CREATE INDEX executions_principal_at ON executions(principal, at) WHERE principal IS NOT NULL;
    CREATE INDEX executions_task_at ON executions(task_id, at) WHERE task_id IS NOT NULL;
    CREATE INDEX executions_trace ON executions(trace_id) WHERE trace_id IS NOT NULL;
    CREATE UNIQUE INDEX executions_idempotency_scoped ON executions(principal, pane_key, idempotency_key)
        WHERE idempotency_key IS NOT NULL;
    CREATE INDEX executions_failures ON executions(stack_hash, at, status)
        WHERE status IN ('failed', 'timeout', 'interrupted') AND stack_hash IS NOT NULL;
    CREATE INDEX executions_agent_kind_status ON executions(agent_name, kind, status, at, cost_usd, tokens_used,
                                                            duration_ms, agent_type);
    CREATE INDEX executions_tail ON executions(right(id, 8));
    CREATE INDEX executions_failures_pane ON executions(pane_key, at, stack_hash)
        WHERE status IN ('failed', 'timeout', 'interrupted') AND stack_hash IS NOT NULL;
    CREATE INDEX executions_failures_principal ON executions(principal, at, stack_hash)
        WHERE status IN ('failed', 'timeout', 'interrupted') AND stack_hash IS NOT NULL;
    CREATE TABLE execution_transcripts (
        execution_id text COLLATE "C" PRIMARY KEY,
        data bytea NOT NULL,
        raw_bytes bigint NOT NULL,
        truncated integer NOT NULL DEFAULT 0,
        extra jsonb
    );
    CREATE TABLE execution_status_counts (
        status text PRIMARY KEY,
        n bigint NOT NULL
    );
    CREATE TABLE execution_hours (
        agent_name text NOT NULL,
        kind text NOT NULL,
        status text NOT NULL,
        hour bigint NOT NULL,
        n bigint NOT NULL,
        cost double precision NOT NULL,
        costs bigint NOT NULL,
        tokens bigint NOT NULL,
        duration_ms bigint NOT NULL,
        durations bigint NOT NULL,
        PRIMARY KEY (agent_name, kind, status, hour)
    );
    CREATE TABLE failure_counts (
        stack_hash text PRIMARY KEY,
        n bigint NOT NULL
    );
    CREATE TABLE failure_hours (
        stack_hash text NOT NULL,
        hour bigint NOT NULL,
        n bigint NOT NULL,
        PRIMARY KEY (stack_hash, hour)
    );
    {_kept("status_counts")}
    {_kept("hours")}
    {_kept("failures")}
    """,
    # 5: the host that wrote each row (MUXD_HOST, store/hosts.py; SQLite's migration 9). muxd_host()
    # answers the session's muxd.host, which each daemon's connection sets (NULL where none was
    # set, which no host column takes: a row of no host is never written); the table modules name
    # it in their INSERTs, the defaults cover a writer that does not. Rows already there take the
    # migrating daemon's host. A live pane-bound token's name is unique per host, a fleet-wide
    # token's in the fleet.
    """
    CREATE FUNCTION muxd_host() RETURNS text LANGUAGE sql STABLE AS $$ SELECT current_setting('muxd.host', true) $$;
    ALTER TABLE executions ADD COLUMN host text NOT NULL DEFAULT muxd_host();
    ALTER TABLE tasks ADD COLUMN host text NOT NULL DEFAULT muxd_host();
    ALTER TABLE task_events ADD COLUMN host text NOT NULL DEFAULT muxd_host();
    ALTER TABLE task_reviews ADD COLUMN host text NOT NULL DEFAULT muxd_host();
    ALTER TABLE knowledge_entries ADD COLUMN host text NOT NULL DEFAULT muxd_host();
    ALTER TABLE audit ADD COLUMN host text NOT NULL DEFAULT muxd_host();
    ALTER TABLE tokens ADD COLUMN host text NOT NULL DEFAULT muxd_host();
    ALTER TABLE grants ADD COLUMN host text NOT NULL DEFAULT muxd_host();
    DROP INDEX tokens_live_name;
    CREATE UNIQUE INDEX tokens_live_name ON tokens((CASE WHEN panes IS NULL THEN '' ELSE host END), name)
        WHERE revoked_at IS NULL;
    """,
    # 6: the history's indexes by time in the newest-first order (_BY_TIME above).
    _NEWEST_FIRST_INDEXES,
    # 7: live state across hosts (store/fleet.py): each daemon's heartbeat, on the database's
    # clock, and its panes' agent summaries as it last published them. No SQLite twin: a lone
    # daemon answers for its panes itself.
    """
    CREATE TABLE fleet_hosts (
        host text COLLATE "C" PRIMARY KEY,
        pid integer NOT NULL,
        started_at double precision NOT NULL,
        beat_at timestamptz NOT NULL,
        stale_since timestamptz
    );
    CREATE TABLE fleet_panes (
        host text COLLATE "C" NOT NULL REFERENCES fleet_hosts(host) ON DELETE CASCADE,
        pane_id text COLLATE "C" NOT NULL,
        state text NOT NULL,
        agent_type text,
        pane jsonb NOT NULL,
        summary jsonb NOT NULL,
        observed_at double precision NOT NULL,
        published_at timestamptz NOT NULL,
        PRIMARY KEY (host, pane_id)
    );
    """,
    # 8: what a daemon asks another host's to do to its panes (store/host_actions.py); no
    # SQLite twin: a SQLite file has one daemon.
    """
    CREATE TABLE host_actions (
        seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        kind text NOT NULL CHECK (kind IN ('send', 'cancel', 'dispatch')),
        host text NOT NULL,
        from_host text NOT NULL,
        pane_id text,
        execution_id text COLLATE "C",
        principal text NOT NULL,
        request jsonb NOT NULL,
        state text NOT NULL CHECK (state IN ('pending', 'claimed', 'done', 'refused', 'withdrawn')),
        answer jsonb,
        error_code text,
        error_message text,
        error_detail jsonb,
        created_at double precision NOT NULL,
        answered_at double precision
    );
    CREATE INDEX host_actions_pending ON host_actions(host, seq) WHERE state IN ('pending', 'claimed');
    CREATE INDEX host_actions_execution ON host_actions(execution_id) WHERE execution_id IS NOT NULL;
    """,
    # 9: the history's tallies keyed by host too (_TALLIES_BY_HOST above): each host's daemon
    # alone writes its rows, so hosts no longer queue, or deadlock, on the same tally rows; a
    # fleet-wide answer sums the hosts' (store/execution_tallies.py). SQLite keeps migration 8's
    # tallies: a file has one daemon.
    _TALLIES_BY_HOST,
    # 10: the timeline's tallies (SQLite's migration 10; _SPANS_KEPT above). The triggers first:
    # creating them waits for the writes in flight and holds new ones until the commit, so the
    # count from the rows misses none and counts none twice.
    f"""
    CREATE TABLE execution_spans (
        span integer NOT NULL,
        bucket bigint NOT NULL,
        agent_name text NOT NULL,
        kind text NOT NULL,
        n bigint NOT NULL,
        failures bigint NOT NULL,
        tokens bigint NOT NULL,
        cost double precision NOT NULL,
        costs bigint NOT NULL,
        host text NOT NULL,
        PRIMARY KEY (span, bucket, agent_name, kind, host)
    );
    {_kept("spans", _SPANS_KEPT)}
    INSERT INTO execution_spans SELECT span, {_SPAN_BUCKET.replace("r.at", "at")}, agent_name, kind, count(*),
        count(*) FILTER (WHERE status IN ('failed', 'timeout', 'interrupted')), coalesce(sum(tokens_used), 0),
        coalesce(sum(cost_usd), 0), count(cost_usd), host FROM executions, {_SPANS} GROUP BY 1, 2, 3, 4, host;
    CREATE INDEX executions_pane_sums ON executions(pane_key, at) INCLUDE (agent_name, kind, status, tokens_used,
                                                                           cost_usd);
    CREATE INDEX executions_principal_sums ON executions(principal, at) INCLUDE (pane_key, agent_name, kind, status,
                                                                                 tokens_used, cost_usd)
        WHERE principal IS NOT NULL;
    """,
    # 11: the day tallies and scope counts (SQLite's migration 11), the triggers first as in 10.
    # The indexes of a pane's and a principal's failures stay: PostgreSQL groups a token's
    # failures read once, as before (execution_queries' `postgres`), and reads a partial index's
    # predicate columns without the row.
    f"""
    CREATE TABLE execution_days (LIKE execution_hours);  -- the hourly tallies' columns, a day for an hour
    ALTER TABLE execution_days RENAME COLUMN hour TO day;
    ALTER TABLE execution_days ADD PRIMARY KEY (agent_name, kind, status, day, host);
    {_kept("days", (_sums("execution_days", "day", _DAY, ", host", ", r.host", " AND host = r.host"), _SUMMED))}
    INSERT INTO execution_days SELECT agent_name, kind, status, {_DAY.replace("r.at", "at")}, count(*),
        coalesce(sum(cost_usd), 0), count(cost_usd), coalesce(sum(tokens_used), 0), coalesce(sum(duration_ms), 0),
        count(duration_ms), host FROM executions GROUP BY 1, 2, 3, 4, host;
    CREATE TABLE execution_scope_counts (
        pane_key text NOT NULL,
        principal text NOT NULL,
        status text NOT NULL,
        n bigint NOT NULL,
        host text NOT NULL,
        PRIMARY KEY (pane_key, principal, status, host)
    );
    CREATE INDEX execution_scope_counts_principal ON execution_scope_counts(principal);
    {_kept("scope_counts", _SCOPE_COUNTS_KEPT)}
    INSERT INTO execution_scope_counts SELECT pane_key, coalesce(principal, ''), status, count(*), host
        FROM executions GROUP BY 1, 2, 3, host;
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
