"""Every tunable limit and default of muxd, defined once, with its unit in the name."""

from __future__ import annotations

PROTOCOL_VERSION = 1
# The tmux muxd answers as (`muxd tmux -V`, #{version}): tools gate features on it, and libtmux
# accepts 3.2a and later.
TMUX_VERSION = "3.3a"

# Wire framing: a 4-byte big-endian length, then a msgpack body of at most this size.
MAX_FRAME_BYTES = 16 * 1024 * 1024

# Panes
DEFAULT_COLUMNS = 80
DEFAULT_LINES = 24
MIN_COLUMNS = 2
MAX_COLUMNS = 1000
MIN_LINES = 1
MAX_LINES = 1000
# select-layout main-horizontal / main-vertical: the main pane's size (tmux's main-pane-height
# and main-pane-width defaults).
MAIN_PANE_HEIGHT_LINES = 24
MAIN_PANE_WIDTH_COLUMNS = 80
LAYOUT_TEXT_MAX_CHARS = 8192  # a tmux layout string given to select-layout (tmux's own limit)
# Session, window and pane names, and a pane's tags (muxd/daemon/panes/names.py; the protocol's
# field bounds too).
NAME_MAX_CHARS = 64
PANE_TAGS_MAX = 32
TAG_MAX_CHARS = 64
# Memory a pane's scrollback may hold (rows.row_size_bytes: a row's UTF-8 text + 32 bytes).
# 2 MiB keeps ~18,700 full 80-column rows, ~60,000 short ones (tmux keeps 2,000 lines by
# default); 30 panes with full histories take 20-65 MB (benchmarks/bench_scrollback_memory.py).
DEFAULT_SCROLLBACK_BYTES = 2 * 1024 * 1024
SCROLLBACK_BYTES_MAX = 1024 * 1024 * 1024  # what $MUXD_SCROLLBACK_BYTES / --scrollback-bytes may ask
# The daemon's C heap (daemon/core/heap.py): freed memory up to this much stays at each heap's
# top rather than going back to the kernel and faulting back in (glibc's default: 128 KiB);
# allocations from this size on are mappings of their own (a transcript of a long turn).
HEAP_KEEP_FREED_BYTES = 8 * 1024 * 1024
HEAP_MMAP_FROM_BYTES = 4 * 1024 * 1024
HISTORY_START = -(10**6)  # capture-pane `-S -`: the line number that reaches the oldest scrollback line
PTY_READ_CHUNK_BYTES = 64 * 1024
# One readable callback reads at most this much from a pane's PTY before letting others run.
PTY_READ_BUDGET_PER_WAKEUP_BYTES = 256 * 1024
# Bytes a pane may hold unemulated before it stops reading its PTY (the child then blocks),
# and the level it must drain to before reading again. More would not emulate any faster,
# only let the screen fall further behind the program (seconds, for escape-heavy output).
PANE_PENDING_MAX_BYTES = 512 * 1024
PANE_PENDING_RESUME_BYTES = PANE_PENDING_MAX_BYTES // 2
# While someone types into an attached client, a pane nobody attends leaves its PTY unread this
# long after each read: its program blocks meanwhile (a PTY holds ~20 KiB, so such a flood goes
# at ~10 MB/s at most) and the loop is idle for the keys (daemon/panes/pane.py,
# EmulationTurns.paces_reads).
PANE_READ_PAUSE_S = 0.002
PANE_PACED_READ_BYTES = 16 * 1024  # what each such read takes at most (about a full PTY)
# A pane whose output only a viewer sees (an attached client's active pane, not typed into) is read
# at most about as often as that client draws output (ATTACH_OUTPUT_FRAME_INTERVAL_S): after a read
# it leaves its PTY unread this long, so a 60 Hz TUI costs one read and one emulation a frame, not
# two, and its screen is as fresh at each frame as before. Only while its output is slow (less
# than PANE_PACED_READ_BYTES in each of the last two pauses' time): a flood is never held back.
PANE_WATCHED_READ_PAUSE_S = 1 / 30
# The pause lasts this much longer: the viewer's next frame reads what waits first (its client
# catches its panes up, daemon/client_side/attached.py), so that frame shows output just read, in
# the same wakeup; the pause's end reads only when no frame comes.
PANE_WATCHED_PAUSE_OVERRUN_S = 0.010
# Pane output is emulated in turns of the event loop (daemon/panes/emulation.py): all panes with
# output waiting share this much time per turn, then clients and other panes are served.
EMULATION_TURN_BUDGET_S = 0.001
# Output is fed to an emulator in slices sized to take about this long at the rate that
# pane's output has been emulating, within these bounds (the first slice assumes the guess).
EMULATION_SLICE_S = 0.001
EMULATION_SLICE_MIN_BYTES = 512
EMULATION_SLICE_MAX_BYTES = 32 * 1024
EMULATION_RATE_GUESS_BYTES_PER_S = 1_000_000
# A pane a person is at (typed into, shown as a client's active pane) gets its output emulated
# first, up to this long a turn; past it, it floods and shares the turns (daemon/panes/emulation.py).
EMULATION_ATTENDED_BUDGET_S = 0.01
# While someone types into an attached client or a request was read within EMULATION_REQUEST_RECENT_S,
# the loop idles after each emulation turn for this share of the turn's length, at least EMULATION_REST_MIN_S
# (daemon/panes/emulation.py): a flood then gets half a core.
EMULATION_REST_PER_TURN = 1.0
EMULATION_REST_MIN_S = EMULATION_TURN_BUDGET_S
EMULATION_REQUEST_RECENT_S = 0.2
# Input just went to a pane's program (keys, send-keys): bulk turns hold off this long at most
# until its output (the echo) is read, so that it is not read and drawn behind a turn; and hold
# again only this many holds' time later, so that a pane typed into without end starves no flood.
EMULATION_ANSWER_HOLD_S = 0.003
EMULATION_ANSWER_HOLDS_APART = 4
# Input this recent makes a pane attended: someone waits for its answer (an echo, a prompt).
PANE_TYPING_S = 0.5
# Input waiting for a program that does not read it: send-keys beyond this is refused, keys of
# attached clients (see PANE_INPUT_STALL_S) and the emulator's replies are dropped (a pane is
# not a memory sink).
PANE_INPUT_PENDING_MAX_BYTES = 2 * 1024 * 1024
# An attached client's input is not read while its pane has more than half that waiting (a big
# paste goes at the program's pace, none of it dropped) unless the program has read nothing for
# this long: then it is not reading, and the client's other keys (C-b d) must get through.
PANE_INPUT_STALL_S = 1.0
# A hung-up program gets this long to exit before SIGKILL (kill-pane, and the daemon's end).
PANE_HANGUP_GRACE_S = 2.0

# Requests
SEND_KEYS_MAX_BYTES = 1024 * 1024
# Backpressure on a connection (muxd/daemon/core/connection.py): while more than the high-water mark
# of its replies wait to be sent, the daemon reads none of its requests, until they drain
# below the low-water mark (asyncio's own defaults, which attached clients' drain per frame
# relies on); and at most this many of its requests run at once.
CONNECTION_WRITE_HIGH_WATER_BYTES = 64 * 1024
CONNECTION_WRITE_LOW_WATER_BYTES = 16 * 1024
CONNECTION_REQUESTS_IN_FLIGHT_MAX = 16
CAPTURE_MAX_LINES = 1_000_000
MAX_ROW_NUMBER = 2**62  # a running row number (Captured.first_row): far beyond any pane's life

# The daemon's log (NAME.log beside the socket): rotated at this size, keeping this many old
# files; one message is written at most LOG_REPEATS_PER_WINDOW times per LOG_REPEAT_WINDOW_S.
LOG_FILE_MAX_BYTES = 8 * 1024 * 1024
LOG_FILE_BACKUPS = 2
LOG_REPEATS_PER_WINDOW = 10
LOG_REPEAT_WINDOW_S = 60.0

# Daemon start-up, as seen from a client
DAEMON_START_TIMEOUT_S = 10.0
# A slow or loaded machine (and the test harness, muxd/testing/patience.py) may allow longer.
DAEMON_START_TIMEOUT_ENV = "MUXD_START_TIMEOUT_S"
CLIENT_CONNECT_TIMEOUT_S = 5.0
# The prefix key of attached clients, as tmux names it (--prefix and $MUXD_PREFIX choose another;
# muxd/daemon/client_side/prefix_keys.py has what follows it).
DEFAULT_PREFIX = "C-b"

# ---- access control, tokens, audit (muxd/store, muxd/daemon/access/control.py)
# Random bytes behind each token secret (`muxd_` + url-safe base64 of them).
TOKEN_SECRET_BYTES = 32
TOKEN_NAME_MAX_CHARS = 64
# A --token-file holds one token on its first line; anything bigger is not one.
TOKEN_FILE_MAX_BYTES = 4096
# Tier of the token every spawned pane gets in MUXD_TOKEN (env MUXD_AGENT_TIER overrides).
AGENT_TOKEN_TIER_DEFAULT = "execute_advanced"
# A refused token (a Hello to the daemon, a bearer token to `muxd mcp --http`) is logged once,
# then as one count per this many seconds however many follow (muxd/sampled_log.py).
REFUSED_TOKEN_LOG_INTERVAL_S = 60.0
# `muxd mcp --http` asks the daemon whether bearer tokens it has not seen are live by their sha256,
# in one check-tokens request of at most this many at a time (a made-up token costs no daemon
# connection). Everything waiting goes in the next request; past this many waiting: 429, retry.
TOKEN_CHECK_BATCH_MAX = 1024
TOKEN_CHECK_TIMEOUT_S = 10.0          # the daemon's answer to one check-tokens request
TOKEN_CHECK_RETRY_AFTER_S = 1         # what a 429 (too many waiting) or 503 (no daemon) tells to wait
# Tokens the daemon said are live that `muxd mcp --http` remembers (sha256): they go straight to
# their own connection's Hello, never waiting behind tokens nobody has seen.
MCP_KNOWN_TOKENS_MAX = 4096
# Audit history queries: rows per answer.
AUDIT_HISTORY_LIMIT_DEFAULT = 50
AUDIT_HISTORY_LIMIT_MAX = 1000
AUDIT_TOOL_MAX_CHARS = 200
AUDIT_ERROR_CODE_MAX_CHARS = 64
# How long an MCP server waits for the daemon to take an audit record before giving up (logged).
AUDIT_SEND_TIMEOUT_S = 1.0
# The audit keeps the newest this many rows (~150 bytes each); older ones go in batches of
# AUDIT_PRUNE_EVERY_ROWS, so a busy orchestrator cannot grow the database without bound.
AUDIT_KEEP_ROWS = 1_000_000
AUDIT_PRUNE_EVERY_ROWS = 1_000
# Audit rows wait in memory for the writer at most this many (~0.5 KB each); a caller that
# records calls faster waits for room (muxd/daemon/access/audit_queue.py). They are written this many
# per transaction, so the writer keeps up with a flood.
AUDIT_QUEUE_MAX_ROWS = 10_000
AUDIT_BATCH_ROWS = 500
# Audit rows lost (the queue full for a denied request, or the store refusing a batch) are
# logged once, then as one count per this many seconds.
AUDIT_LOSS_LOG_INTERVAL_S = 60.0
# A write (or a read) that finds the database locked by another process retries for this long,
# then fails with store_unavailable: long enough for a checkpoint or a backup's brief lock, short
# enough that a caller hears of a stuck database in seconds ($MUXD_DB_BUSY_TIMEOUT_S: the tests
# that hold the database from another process wait out less).
DB_BUSY_TIMEOUT_S = 5.0
# A PostgreSQL server over TCP that goes silent (a network cut, its host gone) fails the connection
# after about this long (libpq's keepalives and tcp_user_timeout), not the system's quarter of an
# hour: the calls waiting behind it hear store_unavailable (issue 30). A Unix socket ignores it.
DB_NETWORK_SILENCE_MAX_S = 30.0
# The daemon's host identity ($MUXD_HOST, default the machine's hostname; muxd/store/hosts.py): recorded
# on every row it writes, so daemons sharing one PostgreSQL database each know their own rows.
ENV_HOST = "MUXD_HOST"
HOST_NAME_MAX_CHARS = 63  # a DNS label's limit: a short hostname always fits
# Live state across hosts (daemon/work/fleet_presence.py, store/fleet.py; PostgreSQL only): each
# daemon writes its host's heartbeat this often, judged on the database's clock. A few seconds:
# one tiny UPDATE per beat costs a fleet of dozens of hosts nothing, and a host killed shows stale
# in about FLEET_STALE_AFTER_S rather than minutes.
FLEET_BEAT_INTERVAL_S = 5.0
# A host whose last heartbeat is older than this (database clock) is stale: its panes' states read
# Unknown, and the first daemon to see it so interrupts its running executions. Three beats
# missed: one slow write (the busy timeout, DB_BUSY_TIMEOUT_S) never makes a live host stale.
# $MUXD_FLEET_STALE_S sets it (tests make it short); the beat then comes at least thrice within it.
FLEET_STALE_AFTER_S = 3 * FLEET_BEAT_INTERVAL_S
ENV_FLEET_STALE = "MUXD_FLEET_STALE_S"
# A host stale this long (database clock) is forgotten: its heartbeat row and published panes go,
# so a machine retired or renamed stops being listed as stale for ever; its history stays. A day:
# a host down overnight or for a long reboot is still shown (stale) when someone looks, one gone
# for good is not listed past the next day. Never before it is stale and taken over (the bound is
# at least FLEET_STALE_AFTER_S's). $MUXD_FLEET_FORGET_S sets it (tests make it short).
FLEET_FORGET_AFTER_S = 24 * 3600.0
ENV_FLEET_FORGET = "MUXD_FLEET_FORGET_S"
# A daemon writes its panes' summaries at most this often: an agent streaming a turn changes
# state many times a second, a reader on another host needs it within a second or so.
FLEET_PUBLISH_MIN_INTERVAL_S = 0.3
# And tells the others it did (daemon/work/fleet_news.py): each hears of the fleet's changes at most
# this often, one local fleet-changed event per host heard of meanwhile. The writers' own pace: a
# busy fleet of dozens of hosts wakes a live board a few times a second, not dozens.
FLEET_HEARD_MIN_INTERVAL_S = FLEET_PUBLISH_MIN_INTERVAL_S
# An action for another host's pane (store/host_actions.py): how long the asking daemon waits for
# the owner's answer before it answers `pending` (the owner is down: it applies it when it starts),
# and how often a wait for another host's execution reads its row (a lost notification aside,
# an end is told at once).
HOST_ACTION_ANSWER_WAIT_S = 3.0
HOST_EXECUTION_POLL_S = 1.0
HOST_HEARD_KEPT = 1024  # answers and ends told before anyone waited for them, kept for a late waiter
HOST_ACTIONS_KEPT_S = 7 * 86400.0  # an answered action is forgotten this long after (its execution's row stays)
# At open the daemon checks the file's structure (`PRAGMA quick_check`) for at most this long, then
# starts on what it checked (~130 MB/s: a bigger file's damage is found when it is met).
DB_OPEN_CHECK_MAX_S = 2.0

# ---- execution history (muxd/store/sqlite_executions.py)
# Retention: ended executions older than this many days, or beyond the newest this many rows
# (~1 KB each without transcripts), are forgotten ($MUXD_HISTORY_KEEP_DAYS, $MUXD_HISTORY_KEEP_ROWS;
# muxd/store/retention.py parses them).
EXECUTIONS_KEEP_DAYS = 30
EXECUTIONS_KEEP_ROWS = 1_000_000
# Raw output bytes kept per execution (the start is kept, the rest dropped and the transcript
# marked truncated; the tracker applies it): $MUXD_TRANSCRIPT_MAX_BYTES.
TRANSCRIPT_MAX_BYTES = 4 * 1024 * 1024
TRANSCRIPT_MAX_BYTES_MAX = 256 * 1024 * 1024  # what $MUXD_TRANSCRIPT_MAX_BYTES may ask (a row is one blob)
# Reads run on this many threads, each with its own read-only connection, so they wait neither
# on the event loop nor behind the writer (WAL lets readers and one writer work at once).
HISTORY_READER_THREADS = 2
# Pruning deletes this many executions per writer transaction, so other writes slip in between:
# at a million rows a batch of 250 holds the writer 3-13 ms, one of 1,000 20-40 ms (each row is
# in a dozen indexes), for the same total time (benchmarks/bench_history_queries.py).
HISTORY_PRUNE_BATCH_ROWS = 250
# A history write nobody awaits (save_soon) that fails is logged once per kind (disk full,
# locked, …) per this many seconds, then as one count (muxd/sampled_log.py).
HISTORY_WRITE_FAILURE_LOG_INTERVAL_S = 60.0
# A row of a turn a person began (nobody was told its id; for its end: nobody waits for it) may
# wait this long for the rows of other panes' turns to be written in one transaction with it: a
# round of prompts to a fleet starts its turns within a second, and turns of the same length end
# so. It is in memory meanwhile (found by every lookup); a daemon killed then loses that write:
# no row of a turn begun, or the end of one (left `interrupted` at the next start) (issue 29).
HISTORY_UNTOLD_ROW_WITHIN_S = 1.0
# The `running` row of such a turn waits longer: a turn that ends within this long is written
# once, as it ended (its end's save takes the waiting row's place), not twice. Agents' turns of
# a few seconds are most of a busy fleet's writes. A query of the history has the rows put off
# written first; a daemon killed meanwhile loses the row of a turn begun this long ago at most,
# as above (issue 29, goal 5b).
HISTORY_UNTOLD_RUNNING_ROW_WITHIN_S = 10.0
# How long the daemon waits at shutdown for queued database writes.
STORE_CLOSE_TIMEOUT_S = 5.0
# Background writes (a pane's token, its revocation) a PostgreSQL server that cannot be reached
# did not take are kept, at most this many (the oldest dropped past it), and written when it
# can be reached again (store/pg_database.py; issue 30).
DB_KEPT_WRITES_MAX = 10_000
# Executions whose row the database would not take (full, locked) wait in memory and are written
# again (muxd/daemon/work/execution_backlog.py): at most this many records; past it the oldest is
# dropped, logged and counted (server status), and a lookup of it answers store_unavailable.
EXECUTION_BACKLOG_MAX_COUNT = 1000
# ...with their transcripts (compressed bytes) up to this much; past it a new one keeps none.
EXECUTION_BACKLOG_TRANSCRIPT_MAX_BYTES = 64 * 1024 * 1024
# Written again this long after a failure, doubling to the max (and at once when another write
# succeeds); at most this many records per transaction.
EXECUTION_BACKLOG_RETRY_FIRST_S = 1.0
EXECUTION_BACKLOG_RETRY_MAX_S = 30.0
EXECUTION_BACKLOG_WRITE_BATCH = 50
DB_FILE_MODE = 0o600
DB_DIR_MODE = 0o700
# Call metrics (muxd/daemon/access/call_metrics.py) keep this many tool names, and this many error codes
# per tool; later ones are counted under one overflow key, so no caller can grow them (or the
# metrics reply: ~2 MB at worst, with 200-character names) without bound. muxd has ~20 tools and
# ~15 error codes.
METRICS_TOOLS_MAX = 128
METRICS_ERROR_CODES_MAX = 24
# Per-tool call latency histogram bounds (Prometheus `le`), in milliseconds.
LATENCY_BUCKETS_MS = (5.0, 10.0, 25.0, 50.0, 100.0, 250.0, 500.0, 1000.0, 2500.0, 5000.0, 10000.0, 30000.0)
# Histogram bounds of /metrics' execution and task durations (Prometheus `le`), in seconds: a
# command takes seconds, an agent's turn minutes, a task up to days.
EXECUTION_DURATION_BUCKETS_S = (1.0, 5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0)
TASK_DURATION_BUCKETS_S = (60.0, 300.0, 900.0, 1800.0, 3600.0, 7200.0, 14400.0, 28800.0, 86400.0, 259200.0)

# Interactive attach (muxd attach): per-client rendering in the daemon
ATTACH_FRAME_INTERVAL_S = 1 / 60   # at most ~60 frames a second per client while its user types
ATTACH_OUTPUT_FRAME_INTERVAL_S = 1 / 30  # ~30 a second when only program output changes the screen
ATTACH_TYPING_S = 0.5              # input this recent counts as typing (the faster frame rate)
ATTACH_STATUS_REFRESH_S = 1.0      # redraw at least this often (elapsed times in the status line)
# A frame woken by pane output alone reuses a status line made this recently (making one looks at
# options, windows and agents: a 60 Hz TUI would make 30 a second, each the same as the last).
ATTACH_STATUS_REUSE_S = 0.25
ATTACH_NOTICE_S = 3.0              # how long a notice stays in the status line (display-time's default)
DISPLAY_PANES_S = 1.0              # C-b q: how long pane numbers stay up (tmux's display-panes-time)
COMMAND_PROMPT_TIMEOUT_S = 30.0    # C-b : a command still running after this is killed
COMMAND_PROMPT_HISTORY_MAX = 100   # C-b : lines Up brings back (tmux's prompt-history-limit)
CLI_OUTPUT_MAX_BYTES = 1024 * 1024  # of a command the prompt or a hook runs: its output kept (each stream)
ATTACH_RENDER_FAILURES_MAX = 3     # consecutive failed frames before a client is detached
PASTE_BUFFERS_MAX = 50             # copied selections kept (tmux's buffer-limit), newest first
PASTE_BUFFER_MAX_CHARS = 1 << 20   # a selection longer than this is cut (a whole history can be MBs)
# A request holding argument bytes that are not UTF-8 is decoded a second, unchecked way (its
# limits checked after): the largest one a set-buffer of a full buffer's bytes needs, no more.
OS_BYTES_BODY_MAX_BYTES = 4 * PASTE_BUFFER_MAX_CHARS + 4096
# pipe-pane: pane output its command has not read yet, beyond which more is dropped (the pane
# never waits for the command).
PIPE_PANE_BUFFER_MAX_BYTES = 1024 * 1024
# Hooks on events (set-hook; muxd/daemon/attention/hooks_runner.py). Each hook's commands run in
# `muxd` processes of the daemon's: at most HOOK_RUNS_MAX hooks at once, HOOK_RUNS_WAITING_MAX
# more waiting (a storm of events beyond that is dropped, and logged), a command (and what it
# started in the background) killed after HOOK_COMMAND_TIMEOUT_S.
HOOK_RUNS_MAX = 4
HOOK_RUNS_WAITING_MAX = 64
HOOK_COMMAND_TIMEOUT_S = 60.0
HOOK_COMMAND_MAX_CHARS = 16 * 1024  # one hook's command line
HOOK_DROPS_LOG_INTERVAL_S = 60.0    # dropped hook runs are logged at most this often, then counted
# The config file (source-file at server start) runs in a muxd process of its own, given this long.
CONFIG_LOAD_TIMEOUT_S = 5.0
# Copies longer than this are not offered to the outer terminal's clipboard (OSC 52): many
# terminals refuse or choke on larger ones. They still go to muxd's buffer (C-b ]).
CLIPBOARD_MAX_CHARS = 100_000

# ---- request field bounds (muxd/protocol/fields.py): msgspec checks them while decoding, from
# each string's, list's and map's header, so no frame builds objects far beyond its own size.
LABEL_MAX_CHARS = 256                  # short words: client, tier, status, prefix key, tool, token
TARGET_MAX_CHARS = 1024                # `session:window.pane` of the longest names, and then some
PATH_MAX_CHARS = 4096                  # Linux's PATH_MAX
SEND_KEYS_MAX_COUNT = 100_000
SEND_KEY_MAX_CHARS = 4 * SEND_KEYS_MAX_BYTES  # hex input spends three characters a byte ("1b ")
SPAWN_ARGS_MAX_COUNT = 65_536
SPAWN_ARG_MAX_CHARS = 128 * 1024       # the kernel's MAX_ARG_STRLEN: exec refuses longer ones
ENV_ENTRIES_MAX_COUNT = 4096
ENV_NAME_MAX_CHARS = 1024
ENV_VALUE_MAX_CHARS = 128 * 1024       # MAX_ARG_STRLEN again: the kernel copies env like argv
PANE_LIST_MAX_COUNT = 10_000           # pane targets in one request (subscribe, token scope)
# One AttachInput message; `muxd attach` sends a bigger paste in pieces of this size.
ATTACH_INPUT_MAX_BYTES = 64 * 1024
# Numbers that are stored or bound into a query: within SQLite's 64-bit integers, and within sense.
AUDIT_ROWS_MAX_COUNT = 1_000_000_000   # items a recorded MCP call answered (record-call `rows`)
AUDIT_LATENCY_MAX_MS = 86_400_000.0    # a recorded call's latency: a day (MCP calls time out at 300 s)
LIST_OFFSET_MAX_ROWS = 1_000_000_000   # rows a history or task listing may skip

# ---- executions (muxd/executions/tracker.py)
# An agent back at its prompt must stay there this long before its turn is over (an agent
# flickers through its prompt between a tool's result and its next request).
EXECUTION_IDLE_SETTLE_S = 1.0
# A pane's execution timer fires this long after its deadline: uvloop rounds a delay to the
# millisecond, so one set for the deadline may fire up to half a millisecond early, find nothing
# due, and set one of 0 ms, again and again until the deadline passes (ten ticks where one does).
EXECUTION_TIMER_SLACK_S = 0.002
# A delivered prompt whose turn was never seen busy (too short for two looks) ends once the
# agent is at its prompt and this long has passed since delivery.
EXECUTION_TURN_UNSEEN_S = 3.0
# ...but only once the screen shows the prompt's echo (an agent slow to take the prompt, on a
# loaded machine, is not done yet): looked for again this often, up to this long.
EXECUTION_TURN_RECHECK_S = 0.5
EXECUTION_TURN_UNSHOWN_S = 15.0
# ...and while its text stays in the agent's input box (an Enter the CLI took as part of the
# typing: Codex does when the text reaches it late), Enter is pressed again, at most this many
# times this far apart; a prompt still there after EXECUTION_TURN_UNSHOWN_S was never taken.
EXECUTION_RESUBMITS_MAX = 3
EXECUTION_RESUBMIT_GAP_S = 1.5
# Prompts that may wait for one pane; more is refused (conflict).
EXECUTION_QUEUE_MAX = 100
# A prompt's own time limit (send_task timeout_s / muxd submit --timeout): default and bounds.
EXECUTION_TIMEOUT_DEFAULT_S = 1800.0
EXECUTION_TIMEOUT_MAX_S = 86400.0
# A prompt's text (send_task, muxd submit), and the lists of the history's queries.
PROMPT_MAX_CHARS = 256 * 1024
EXECUTION_LIST_LIMIT_MAX = 100
# The history over time (the web view's charts): the shortest bucket, and the most one answer holds.
TIMELINE_BUCKET_MIN_S = 60
TIMELINE_BUCKETS_MAX = 1000
EXECUTION_IDS_MAX_COUNT = 100           # executions one wait may name
EXECUTION_WAIT_MAX_S = 300.0            # the longest a call may wait for executions to end
SCREEN_WAIT_MAX_S = 60.0                # the longest a screen-html request may wait for a pane's output
# TUIs built on ink (Gemini CLI) take a CR in the same read as the text for a pasted newline:
# the Enter that submits a prompt goes as its own write, this long after the text.
SUBMIT_GAP_S = 0.05
# A transcript rendered to text keeps at most this many rows (its newest).
TRANSCRIPT_RENDER_MAX_ROWS = 20_000
# An agent writes the last lines of a turn to its session log just after it redraws its
# prompt: the log is read again for up to this long until the turn is complete there.
SESSION_LOG_SETTLE_S = 1.0
# A running daemon forgets history past the retention (muxd/store/retention.py) this often.
HISTORY_PRUNE_INTERVAL_S = 3600.0
# Looks at /proc that found no session log for an agent process before muxd stops looking for
# it (a CLI that keeps none; one execution looks twice, at its start and its end).
SESSION_LOG_MISSES_MAX = 2
# The logs are read on this many threads, one job at a time per pane: a pane whose log read
# hangs (a file on a stuck mount) holds one thread and delays only its own executions.
SESSION_LOG_READER_THREADS = 4
# An ended execution waits at most this long for its pane's log (longer than SESSION_LOG_SETTLE_S
# plus a whole bounded read); past it the screen's facts are kept, and a pane whose job has
# waited or run that long gets no more log jobs until it is done.
SESSION_LOG_BUDGET_S = 5.0
# A log line longer than this, or nested deeper, is skipped like a torn one, before it is
# decoded (a line of 100,000 brackets made the decoder raise RecursionError).
SESSION_LOG_LINE_MAX_BYTES = 2 * 1024 * 1024
SESSION_LOG_JSON_DEPTH_MAX = 128
# A small JSON file a CLI keeps beside its logs (Gemini's projects.json): at most this much is read.
SESSION_LOG_INDEX_MAX_BYTES = 1024 * 1024

# ---- the task queue (seed 001; muxd/tasks, muxd/store/task_store.py, muxd/daemon/work/tasks.py)
TASK_PRIORITY_MAX = 1000               # 0 is the most urgent; priorityLte is bounded by this
TASK_PRIORITY_DEFAULT = 500
TASK_LEASE_DEFAULT_S = 900             # claim_task leaseSec: default and bounds
TASK_LEASE_MIN_S = 60
TASK_LEASE_MAX_S = 3600
TASK_NEXT_LIMIT_DEFAULT = 5            # get_next_actionable limit: default and bound
TASK_NEXT_LIMIT_MAX = 20
TASK_LIST_LIMIT_DEFAULT = 20           # list_tasks page: default and bound
TASK_LIST_LIMIT_MAX = 100
TASK_LEARNINGS_MAX = 20                # complete_task learnings
TASK_DEPENDS_MAX = 50                  # depends_on of one task
TASK_TITLE_MAX_CHARS = 200
TASK_TEXT_MAX_CHARS = 64 * 1024        # description, reason, review comment
TASK_JSON_MAX_BYTES = 256 * 1024       # context and output, as JSON
TASK_VERIFY_COMMANDS_MAX = 20
# A task released (a failed dispatch, an expired lease) this many times fails instead of
# going back to ready (env MUXD_TASK_MAX_ATTEMPTS).
TASK_MAX_ATTEMPTS_DEFAULT = 3
# How often the daemon returns tasks with expired leases to ready (each operation also does,
# first, so a claim never sees a lease that has run out).
TASK_LEASE_SWEEP_S = 1.0
# verificationEtaSec as seed 001 gives it (manual: null).
TASK_VERIFY_ETA_CI_S = 60
TASK_VERIFY_ETA_COMMANDS_S = 30
TASK_VERIFY_TIMEOUT_S = 1800.0         # a verification command's own time limit
TASK_VERIFY_OUTPUT_MAX_CHARS = 4000    # the failing output's tail kept on the task
# The verifier commands of the CI-bound kinds; {externalRef} is replaced by the task's
# external_ref, shell-quoted (env MUXD_VERIFY_GITHUB_PR / MUXD_VERIFY_GITLAB_MR).
TASK_VERIFY_GITHUB_PR_DEFAULT = "gh pr checks {externalRef}"
TASK_VERIFY_GITLAB_MR_DEFAULT = "glab ci status --branch {externalRef}"
# The knowledge digest of get_next_actionable: top entries and the least score shown.
KNOWLEDGE_DIGEST_TOP = 3
KNOWLEDGE_DIGEST_MIN_SCORE = 0.5
KNOWLEDGE_SEARCH_LIMIT_MAX = 50
# A failing digest (a broken full-text index) is logged once per this many seconds, then as a count:
# get_next_actionable answers without it, for every task it returns.
KNOWLEDGE_DIGEST_FAILURE_LOG_INTERVAL_S = 60.0
KNOWLEDGE_TEXT_MAX_CHARS = 8000        # one learning's content
KNOWLEDGE_TAGS_MAX = 10
# Knowledge entries one principal may store (the knowledge_stored quota; env MUXD_KNOWLEDGE_QUOTA).
KNOWLEDGE_STORED_QUOTA_DEFAULT = 10_000
# Scopes a token may carry; pane (agent) tokens get AGENT_SCOPES_DEFAULT (env MUXD_AGENT_SCOPES).
TASK_SCOPES = ("tasks:read", "tasks:write")
AGENT_SCOPES_DEFAULT = "tasks:read,tasks:write"
# muxd task run: how often a dispatcher renews the lease of the task its pane works on.
DISPATCH_HEARTBEAT_S = 30.0

# ---- watching panes that run in tmux (muxd tmux watch)
TMUX_SEED_HISTORY_LINES = 2000         # scrollback copied into an adopted pane's screen
TMUX_SEND_KEYS_CHUNK_BYTES = 1024      # input bytes per `send-keys -H` command line
TMUX_COMMAND_TIMEOUT_S = 10.0          # a tmux query (discovery, a pane's seed capture)

# ---- the agents' own hooks (muxd hook; muxd/daemon/panes/hook_intake.py)
HOOK_PAYLOAD_MAX_CHARS = 64 * 1024     # one hook event's JSON, as the agent CLI wrote it
HOOK_JSON_DEPTH_MAX = 32               # arrays/objects inside each other in one payload
HOOK_EVENTS_PER_S = 20.0               # a pane's sustained rate of hook events
HOOK_EVENTS_BURST = 60                 # events a pane may send at once (a burst of tool calls)
# `muxd hook` never holds the agent up: it gives up on a daemon this slow and exits 0.
HOOK_CONNECT_TIMEOUT_S = 1.0
HOOK_REPLY_TIMEOUT_S = 2.0
