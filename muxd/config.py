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
DEFAULT_SCROLLBACK_BYTES = 8 * 1024 * 1024
PTY_READ_CHUNK_BYTES = 64 * 1024
# Bytes a pane may hold unemulated before it stops reading its PTY (the child then blocks).
PANE_PENDING_MAX_BYTES = 4 * 1024 * 1024

# Requests
SEND_KEYS_MAX_BYTES = 1024 * 1024
CAPTURE_MAX_LINES = 1_000_000

# Daemon start-up, as seen from a client
DAEMON_START_TIMEOUT_S = 10.0
CLIENT_CONNECT_TIMEOUT_S = 5.0
