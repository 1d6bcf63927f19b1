"""Which token a client presents to the daemon, decided in one place.

- `muxd mcp` (stdio or HTTP) is how an agent inside a pane drives muxd, so it presents the
  pane's own `MUXD_TOKEN` (an agent-scoped token the daemon put there): started inside a pane,
  it sees only that pane and the panes granted to it. `--token` overrides. Started inside a
  pane with no token at all (an agent CLI that kept MUXD_TOKEN from it), it refuses rather than
  act as the socket owner, unless told to (`--as-owner`; cli/mcp_commands.py).
- The human CLI behaves as tmux does inside tmux: `muxd ls` typed in a muxd shell pane acts as
  the socket owner and sees everything. It presents a token only when asked to (`--token` or
  `MUXD_CLI_TOKEN`), e.g. to try what a token may do.

A secret on the command line (`--token T`) is readable by every user of the machine in `ps` for
as long as the process runs, so `--token-file FILE` and the environment are the ways to give
one; `--token` still works and warns.

Tokens confine what MCP clients (and anyone holding only a token, e.g. over HTTP) can do; they
are not a sandbox for a program already running as the socket's owner, which can always reach
the socket directly.
"""

from __future__ import annotations

from muxd._environ import getenv
from muxd.config import TOKEN_FILE_MAX_BYTES
from muxd.errors import BadRequest

ENV_AGENT_TOKEN = "MUXD_TOKEN"
ENV_CLI_TOKEN = "MUXD_CLI_TOKEN"
TOKEN_IN_ARGV_WARNING = ("warning: --token shows the secret to every user of this machine (ps); "
                         "give it with --token-file FILE or ${variable} instead")


def _clean(value: str | None) -> str | None:
    value = (value or "").strip()
    return value or None


def read_token_file(path: str) -> str:
    """The token in file `path` (its first line); bad_request if it cannot be read or is empty."""
    try:
        import os  # only for a token file: a tmux shim call imports no os (muxd/_environ.py)

        with open(os.path.expanduser(path), "rb") as fh:
            data = fh.read(TOKEN_FILE_MAX_BYTES + 1)
    except OSError as exc:
        raise BadRequest(f"cannot read --token-file {path}: {exc.strerror or exc}", field="token_file") from exc
    lines = data.decode("utf-8", "replace").splitlines()
    if len(data) > TOKEN_FILE_MAX_BYTES or not lines or not lines[0].strip():
        raise BadRequest(f"--token-file {path} does not hold a token on its first line", field="token_file")
    return lines[0].strip()


def _chosen(flag: str | None, file: str | None, variable: str, env: dict[str, str] | None) -> str | None:
    if file:
        return read_token_file(file)
    return _clean(flag) or _clean(getenv(variable) if env is None else env.get(variable))


def token_from_env(flag: str | None = None, env: dict[str, str] | None = None, *,
                   file: str | None = None) -> str | None:
    """The token of `muxd mcp`: from `file` (--token-file), else `flag` (--token), else $MUXD_TOKEN,
    else none (system)."""
    return _chosen(flag, file, ENV_AGENT_TOKEN, env)


def cli_token(flag: str | None = None, env: dict[str, str] | None = None, *,
              file: str | None = None) -> str | None:
    """The token of the human CLI: from `file` (--token-file), else `flag` (--token), else
    $MUXD_CLI_TOKEN, else none."""
    return _chosen(flag, file, ENV_CLI_TOKEN, env)


def argv_token_warning(variable: str) -> str:
    """What to print when a secret was given with --token."""
    return TOKEN_IN_ARGV_WARNING.replace("{variable}", variable)
