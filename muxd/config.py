"""Every tunable limit and default of muxd, defined once, with its unit in the name."""

from __future__ import annotations

PROTOCOL_VERSION = 1

# Wire framing: a 4-byte big-endian length, then a msgpack body of at most this size.
MAX_FRAME_BYTES = 16 * 1024 * 1024

# Panes
DEFAULT_COLUMNS = 80
DEFAULT_LINES = 24
MIN_COLUMNS = 2
MAX_COLUMNS = 1000
MIN_LINES = 1
MAX_LINES = 1000
# Memory a pane's scrollback may hold (rows.row_size_bytes: a row's UTF-8 text + 32 bytes).
# 2 MiB keeps ~18,700 full 80-column rows, ~60,000 short ones (tmux keeps 2,000 lines by
# default); 30 panes with full histories take 20-65 MB (benchmarks/bench_scrollback_memory.py).
DEFAULT_SCROLLBACK_BYTES = 2 * 1024 * 1024
PTY_READ_CHUNK_BYTES = 64 * 1024
# Bytes a pane may hold unemulated before it stops reading its PTY (the child then blocks).
PANE_PENDING_MAX_BYTES = 4 * 1024 * 1024

# Requests
SEND_KEYS_MAX_BYTES = 1024 * 1024
CAPTURE_MAX_LINES = 1_000_000
MAX_ROW_NUMBER = 2**62  # a running row number (Captured.first_row): far beyond any pane's life

# Daemon start-up, as seen from a client
DAEMON_START_TIMEOUT_S = 10.0
CLIENT_CONNECT_TIMEOUT_S = 5.0

# ---- access control, tokens, audit (muxd/store, muxd/daemon/access.py)
# Random bytes behind each token secret (`muxd_` + url-safe base64 of them).
TOKEN_SECRET_BYTES = 32
TOKEN_NAME_MAX_CHARS = 64
# Tier of the token every spawned pane gets in MUXD_TOKEN (env MUXD_AGENT_TIER overrides).
AGENT_TOKEN_TIER_DEFAULT = "execute_advanced"
# Audit history queries: rows per answer.
AUDIT_HISTORY_LIMIT_DEFAULT = 50
AUDIT_HISTORY_LIMIT_MAX = 1000
AUDIT_TOOL_MAX_CHARS = 200
# How long an MCP server waits for the daemon to take an audit record before giving up (logged).
AUDIT_SEND_TIMEOUT_S = 1.0
# The audit keeps the newest this many rows (~150 bytes each); older ones go in batches of
# AUDIT_PRUNE_EVERY_ROWS, so a busy orchestrator cannot grow the database without bound.
AUDIT_KEEP_ROWS = 1_000_000
AUDIT_PRUNE_EVERY_ROWS = 1_000
# How long the daemon waits at shutdown for queued database writes.
STORE_CLOSE_TIMEOUT_S = 5.0
DB_FILE_MODE = 0o600
DB_DIR_MODE = 0o700
# Per-tool call latency histogram bounds (Prometheus `le`), in milliseconds.
LATENCY_BUCKETS_MS = (5.0, 10.0, 25.0, 50.0, 100.0, 250.0, 500.0, 1000.0, 2500.0, 5000.0, 10000.0, 30000.0)

# Interactive attach (muxd attach): per-client rendering in the daemon
ATTACH_FRAME_INTERVAL_S = 1 / 60   # at most ~60 frames a second per client while its user types
ATTACH_OUTPUT_FRAME_INTERVAL_S = 1 / 30  # ~30 a second when only program output changes the screen
ATTACH_TYPING_S = 0.5              # input this recent counts as typing (the faster frame rate)
ATTACH_STATUS_REFRESH_S = 1.0      # redraw at least this often (elapsed times in the status line)
ATTACH_NOTICE_S = 3.0              # how long a notice stays in the status line
ATTACH_RENDER_FAILURES_MAX = 3     # consecutive failed frames before a client is detached
PASTE_BUFFERS_MAX = 50             # copied selections kept (tmux's buffer-limit), newest first
PASTE_BUFFER_MAX_CHARS = 1 << 20   # a selection longer than this is cut (a whole history can be MBs)
# Copies longer than this are not offered to the outer terminal's clipboard (OSC 52): many
# terminals refuse or choke on larger ones. They still go to muxd's buffer (C-b ]).
CLIPBOARD_MAX_CHARS = 100_000
