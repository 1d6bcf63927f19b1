"""Which token a client presents to the daemon, decided in one place.

- `muxd mcp` (stdio or HTTP) is how an agent inside a pane drives muxd, so it presents the
  pane's own `MUXD_TOKEN` (an agent-scoped token the daemon put there): started inside a pane,
  it sees only that pane and the panes granted to it. `--token` overrides.
- The human CLI behaves as tmux does inside tmux: `muxd ls` typed in a muxd shell pane acts as
  the socket owner and sees everything. It presents a token only when asked to (`--token` or
  `MUXD_CLI_TOKEN`), e.g. to try what a token may do.

Tokens confine what MCP clients (and anyone holding only a token, e.g. over HTTP) can do; they
are not a sandbox for a program already running as the socket's owner, which can always reach
the socket directly.
"""

from __future__ import annotations

import os

ENV_AGENT_TOKEN = "MUXD_TOKEN"
ENV_CLI_TOKEN = "MUXD_CLI_TOKEN"


def _clean(value: str | None) -> str | None:
    value = (value or "").strip()
    return value or None


def token_from_env(flag: str | None = None, env: dict[str, str] | None = None) -> str | None:
    """The token of `muxd mcp`: `flag` (--token) if given, else $MUXD_TOKEN, else none (system)."""
    env = dict(os.environ) if env is None else env
    return _clean(flag) or _clean(env.get(ENV_AGENT_TOKEN))


def cli_token(flag: str | None = None, env: dict[str, str] | None = None) -> str | None:
    """The token of the human CLI: `flag` (--token) if given, else $MUXD_CLI_TOKEN, else none."""
    env = dict(os.environ) if env is None else env
    return _clean(flag) or _clean(env.get(ENV_CLI_TOKEN))
