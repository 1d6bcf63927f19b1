"""Which daemon wrote a row: the host identity ($MUXD_HOST, default the hostname) and how the store
records it (issue 30).

Each connection that writes knows its daemon's host, and the SQL asks it with `muxd_host()`, one
text on both databases: on SQLite a function registered on the connection, on PostgreSQL a
function of the schema reading the session's setting `muxd.host`. So a table module writes the
host without being handed it, and the start-up statements that assume the database is the
daemon's own (revoke the pane tokens of the last run, interrupt its running executions) say
`OWN_ROWS` and touch only this host's rows on a database several daemons share.

Rows written before hosts were recorded (a SQLite file from before migration 9) have host '':
a SQLite file had one daemon, so `OWN_ROWS` counts them as its own.
"""

from __future__ import annotations

import re
import socket
import sqlite3
from collections.abc import Mapping

from muxd.config import ENV_HOST, HOST_NAME_MAX_CHARS
from muxd.errors import BadRequest

HOST_SQL = "muxd_host()"


def own(host: str) -> str:
    """SQL true when the host `host` (a column, an expression) is this daemon's, or '' (a row from
    before hosts were kept)."""
    return f"{host} IN ({HOST_SQL}, '')"


OWN_ROWS = own("host")
# Letters, digits, '.', '_', '-': a hostname's characters. Never '@', which qualifies principals
# (agent:%3@host) on a shared database.
_HOST = re.compile(rf"^[A-Za-z0-9][A-Za-z0-9._-]{{0,{HOST_NAME_MAX_CHARS - 1}}}$")


def check_host(host: str, where: str) -> str:
    """`host` when it is a valid host identity; BadRequest in one line saying what `where` gave."""
    if not _HOST.match(host):
        raise BadRequest(f"{where} must be 1-{HOST_NAME_MAX_CHARS} letters, digits, '.', '_' or '-' (starting with "
                         f"a letter or digit), got {host!r}", field=ENV_HOST)
    return host


def host_from_env(env: Mapping[str, str]) -> str:
    """The daemon's host identity: $MUXD_HOST, else the machine's hostname (its first label when
    the whole name is too long); BadRequest for a value that cannot be one."""
    given = env.get(ENV_HOST, "").strip()
    if given:
        return check_host(given, ENV_HOST)
    name = socket.gethostname()
    if len(name) > HOST_NAME_MAX_CHARS:
        name = name.split(".")[0]
    return check_host(name, f"the hostname (set {ENV_HOST} to name this host)")


def pane_principal(pane_id: str, host: str | None) -> str:
    """The principal of pane `pane_id`'s own token: agent:%3, or agent:%3@host when `host` is given
    (a database daemons share: each host has a pane %3, and its claims, quotas and audit rows
    must not pass for another's)."""
    return f"agent:{pane_id}" if host is None else f"agent:{pane_id}@{host}"


def sent_from(principal: str, host: str) -> str:
    """`principal` of host `host`'s daemon as the fleet records what it asked of another host's
    pane (issue 30): qualified with `host` (`system@alpha`, `token:ci@alpha`), unless it is
    already (a pane agent's `agent:%3@alpha`). The owner runs the action under this name and
    grants it nothing by it: no rule of the owner's names a principal of another host."""
    return principal if principal.endswith(f"@{host}") else f"{principal}@{host}"


def use_host(c: object, host: str) -> None:
    """Make `host` what `muxd_host()` answers on connection `c` (SQLite's or a PgConnection)."""
    if isinstance(c, sqlite3.Connection):
        c.create_function("muxd_host", 0, lambda: host, deterministic=True)
    else:
        c.execute("SELECT set_config('muxd.host', ?, false)", (host,))  # type: ignore[attr-defined]


def host_of(c: sqlite3.Connection) -> str:
    """The host `muxd_host()` answers on `c`."""
    return str(c.execute(f"SELECT {HOST_SQL}").fetchone()[0])
