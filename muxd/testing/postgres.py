"""A private PostgreSQL cluster for one test session: `initdb` into a temporary directory, the
server on a Unix socket in that directory and no TCP port, started with `pg_ctl`, stopped and
deleted after. `PostgresCluster().start()` (or `with PostgresCluster() as cluster:`) gives it;
`cluster.url(cluster.create_database())` the `postgresql://` URL of a fresh database.

initdb and the server refuse to run as root, and CI runs as root: there they run as an
unprivileged system user (Debian's `postgres`, or `muxd-postgres`, made when neither exists)
that owns the directory. Debian keeps the binaries off PATH (/usr/lib/postgresql/<version>/bin):
they are looked for there too, the newest version first.
"""

from __future__ import annotations

import glob
import os
import pwd
import re
import shutil
import subprocess
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from urllib.parse import quote

from muxd.testing.patience import stretched
from muxd.testing.wait import wait_until

SERVER_USERS = ("postgres", "muxd-postgres")  # who runs the cluster under root; the last one is made if need be
SUPERUSER = "muxd"                            # the cluster's superuser role (initdb -U)
START_TIMEOUT_S = 30.0                        # machine time for the server to accept connections
COMMAND_TIMEOUT_S = 60.0                      # initdb, pg_ctl stop, createdb
_DEBIAN_BINS = "/usr/lib/postgresql/*/bin"
_READY = "ready"                              # postmaster.pid's last line once connections are accepted
# What the server's log says of a client it refuses while starting or stopping: not its own failure.
_CLIENT_REFUSALS = ("the database system is starting up", "the database system is shutting down",
                    "the database system is not yet accepting connections")
# Throwaway data: nothing is flushed to disk, and the server stays small beside a test suite.
_SERVER_SETTINGS = {
    "listen_addresses": "''", "fsync": "off", "synchronous_commit": "off", "full_page_writes": "off",
    "shared_buffers": "32MB", "max_connections": "200", "log_min_messages": "warning",
}


class PostgresUnavailable(RuntimeError):
    """PostgreSQL is not installed here (the message says what was looked for and how to get it)."""


def find_bin_dir() -> Path:
    """The directory holding initdb, pg_ctl and postgres: PATH's, else Debian's newest version's."""
    on_path = shutil.which("initdb")
    candidates = [Path(on_path).resolve().parent] if on_path else []
    versions = sorted(glob.glob(_DEBIAN_BINS), key=lambda d: [int(n) for n in re.findall(r"\d+", d)], reverse=True)
    candidates += [Path(d) for d in versions]
    for directory in candidates:
        if all((directory / tool).is_file() for tool in ("initdb", "pg_ctl", "postgres")):
            return directory
    raise PostgresUnavailable(f"PostgreSQL is not installed: no initdb, pg_ctl and postgres on PATH nor in "
                              f"{_DEBIAN_BINS} (Debian: apt-get install postgresql, as .ci/run does)")


@dataclass(frozen=True)
class ServerUser:
    """Who the server runs as: None fields for this process's own user."""

    name: str | None = None
    uid: int | None = None
    gid: int | None = None


def server_user() -> ServerUser:
    """This process's user, unless it is root: then the first of SERVER_USERS that exists (the
    last one is made as a system user when none does)."""
    if os.geteuid() != 0:
        return ServerUser()
    for name in SERVER_USERS:
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            continue
        return ServerUser(name, entry.pw_uid, entry.pw_gid)
    name = SERVER_USERS[-1]
    subprocess.run(["useradd", "--system", "--user-group", "--no-create-home", "--home-dir", "/nonexistent",
                    "--shell", "/usr/sbin/nologin", name], check=True, capture_output=True, text=True,
                   timeout=stretched(COMMAND_TIMEOUT_S))
    entry = pwd.getpwnam(name)
    return ServerUser(name, entry.pw_uid, entry.pw_gid)


class PostgresCluster:
    """One private cluster. `url(database)` connects over its socket as SUPERUSER, trusted (no
    password: only this machine's users who can reach the directory can reach the socket)."""

    def __init__(self, bin_dir: Path | None = None, *, settings: dict[str, str] | None = None) -> None:
        """`settings`: server settings (postgresql.conf's names) over this module's."""
        self.bin_dir = bin_dir or find_bin_dir()
        self.settings = {**_SERVER_SETTINGS, **(settings or {})}
        self.user = server_user()
        # Short on purpose: the socket's path (DIR/.s.PGSQL.5432) must fit in 108 bytes.
        self.directory = Path(tempfile.mkdtemp(prefix="muxd-pg-", dir="/tmp"))
        self.data_dir = self.directory / "data"
        self.log_path = self.directory / "server.log"
        self.port = 5432  # names the socket file only: there is no TCP listener
        self.started = False
        self._log_start = 0  # where the current start's lines begin in the log
        if self.user.uid is not None:
            os.chown(self.directory, self.user.uid, self.user.gid if self.user.gid is not None else -1)

    # ------------------------------------------------------------------ running

    def _run(self, tool: str, *args: str) -> subprocess.CompletedProcess[str]:
        """Run one of the cluster's binaries as the server's user; its failure names its output."""
        env = {name: value for name, value in os.environ.items() if not name.startswith("PG")}
        result = subprocess.run([str(self.bin_dir / tool), *args], capture_output=True, text=True, env=env,
                                cwd=self.directory, user=self.user.uid, group=self.user.gid,
                                extra_groups=[] if self.user.uid is not None else None,
                                timeout=stretched(COMMAND_TIMEOUT_S))
        if result.returncode != 0:
            raise RuntimeError(f"{tool} {' '.join(args)} failed ({result.returncode}): "
                               f"{(result.stderr or result.stdout).strip()}{self._log_tail()}")
        return result

    def _log_tail(self, since: int = 0) -> str:
        """The log's end (from byte `since`), for an error message."""
        try:
            with self.log_path.open("rb") as fh:
                fh.seek(since)
                text = fh.read().decode(errors="replace").strip()
        except OSError:
            return ""
        return f"\n--- {self.log_path} ---\n{text[-2000:]}" if text else ""

    def start(self) -> PostgresCluster:
        """initdb, start the server, and wait until it accepts connections."""
        try:
            self._run("initdb", "-D", str(self.data_dir), "-U", SUPERUSER, "--auth=trust", "--encoding=UTF8",
                      "--no-locale", "--no-sync")
            self.start_server()
        except BaseException:
            self.stop()
            raise
        return self

    def start_server(self) -> None:
        """Start the server on the cluster made already (again, after `stop_server`), and wait
        until it accepts connections."""
        options = " ".join(f"-c {name}={value}" for name, value in
                           {**self.settings, "unix_socket_directories": f"'{self.directory}'",
                            "port": str(self.port)}.items())
        self._log_start = self.log_path.stat().st_size if self.log_path.exists() else 0  # this start's lines after
        # -W: pg_ctl does not wait; the readiness is waited on below, at the machine's pace.
        self._run("pg_ctl", "-D", str(self.data_dir), "-l", str(self.log_path), "-o", options, "-W", "start")
        self.started = True
        wait_until(self._ready, timeout=START_TIMEOUT_S, message="the PostgreSQL server accepting connections")

    def stop_server(self, mode: str = "fast") -> None:
        """Stop the server, keeping the cluster: `fast` ends its clients' connections and writes
        what they committed (synchronous_commit is off: `immediate`, a crash, may lose the last
        commits, which is all `stop` needs)."""
        if self.started:
            self.started = False
            self._run("pg_ctl", "-D", str(self.data_dir), "-m", mode, "-w", "stop")

    def _ready(self) -> bool:
        """Whether postmaster.pid says the server accepts connections; RuntimeError if it stopped."""
        try:
            lines = (self.data_dir / "postmaster.pid").read_text().splitlines()
        except FileNotFoundError:
            lines = []
        if lines and lines[-1].strip() == _READY:
            return True
        said = self._log_tail(self._log_start)
        # A client that connects while the server starts is refused with a FATAL of its own
        # ("the database system is starting up"): only the others say the server failed.
        failures = [line for line in said.splitlines()
                    if ("FATAL" in line or "PANIC" in line) and not any(m in line for m in _CLIENT_REFUSALS)]
        if failures:
            raise RuntimeError(f"the PostgreSQL server did not start{said}")
        return False

    def stop(self) -> None:
        """Stop the server (immediately: nothing in it is kept) and delete the directory."""
        try:
            self.stop_server("immediate")
        finally:
            shutil.rmtree(self.directory, ignore_errors=True)

    def __enter__(self) -> PostgresCluster:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    # ------------------------------------------------------------------ using

    def url(self, database: str = "postgres") -> str:
        """The libpq URL of `database` over this cluster's socket (what MUXD_DB takes)."""
        return f"postgresql://{SUPERUSER}@/{quote(database)}?host={quote(str(self.directory), safe='')}" \
               f"&port={self.port}"

    def create_database(self, name: str | None = None, *, template: str | None = None) -> str:
        """A new database (named `name`, else a fresh name): empty, or a copy of `template` (a
        database nobody is connected to); its name."""
        name = name or f"t{uuid.uuid4().hex[:12]}"
        copy = ["-T", template] if template else []
        self._run("createdb", "-h", str(self.directory), "-p", str(self.port), "-U", SUPERUSER, *copy, name)
        return name

    def drop_database(self, name: str) -> None:
        """Drop `name`, ending the sessions still connected to it."""
        self._run("dropdb", "-h", str(self.directory), "-p", str(self.port), "-U", SUPERUSER, "--force", name)
