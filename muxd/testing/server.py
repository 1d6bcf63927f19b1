"""A muxd server of its own for one test: private socket directory, CLI and client helpers."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

from muxd.client.connection import Client
from muxd.config import DAEMON_START_TIMEOUT_ENV, DAEMON_START_TIMEOUT_S
from muxd.paths import CACHE_DIR_ENV, cache_dir
from muxd.testing.patience import stretched
from muxd.testing.wait import wait_for_screen, wait_until

CLI_TIMEOUT_S = 30.0
_PANE_VARIABLES = ("MUXD_PANE", "MUXD_TOKEN", "MUXD_CLI_TOKEN", "MUXD_CONFIG")


class MuxdTestServer:
    """Start with `start()`, stop with `stop()`; `cli(...)` runs the real `muxd` command."""

    def __init__(self, name: str | None = None, *, env: dict[str, str] | None = None) -> None:
        self.name = name or f"t{uuid.uuid4().hex[:10]}"
        # Short on purpose: a UNIX socket path must fit in 108 bytes.
        self.socket_dir = Path(tempfile.mkdtemp(prefix="muxd-", dir="/tmp"))
        os.chmod(self.socket_dir, 0o700)
        # The database goes with the socket directory, so no test touches ~/.local/state.
        # A test run inside a muxd pane must not present that pane's token to this daemon.
        inherited = {k: v for k, v in os.environ.items() if k not in _PANE_VARIABLES}
        # Nor the user's config file (tmux -f /dev/null): a test that wants one names it.
        # Nor the user's ~/.bashrc: a shell pane of a loaded machine once took over 10 s in
        # one (`pyenv init` waiting on its rehash lock). Panes start in this empty HOME.
        home = self.socket_dir / "home"
        home.mkdir()
        # And their temporary files here, removed with it: the bun-built agent CLIs unpack a
        # 5-13 MB library into $TMPDIR at every start and leave it (6.6 GB in /tmp after two
        # days of suite runs on one machine, which filled its disk).
        scratch = self.socket_dir / "tmp"
        scratch.mkdir()
        # The daemon's log (in the state directory) goes there too, wherever the caller's
        # $XDG_STATE_HOME points.
        self.env = {**inherited, "MUXD_DB": str(self.socket_dir / f"{self.name}.db"),
                    "MUXD_CONFIG": os.devnull, "HOME": str(home), "TMPDIR": str(scratch),
                    "XDG_STATE_HOME": str(self.socket_dir / "state"),
                    # The user's cache, not the empty HOME's: each daemon would parse libghostty's
                    # declarations again (emulator/ghostty_ffi.py).
                    CACHE_DIR_ENV: str(cache_dir()), **(env or {}),
                    "MUXD_SOCKET_DIR": str(self.socket_dir)}
        self.pid: int | None = None

    @property
    def socket_path(self) -> Path:
        return self.socket_dir / f"{self.name}.sock"

    @property
    def log_path(self) -> Path:
        """The daemon's log, in the state directory of this server's environment (paths.log_path)."""
        return Path(self.env["XDG_STATE_HOME"]) / "muxd" / f"{self.name}.log"

    def start(self) -> MuxdTestServer:
        """Start the daemon, waiting for it as long as the machine's load says (patience.py)."""
        out = self.cli("start-server", check=True,
                       env={DAEMON_START_TIMEOUT_ENV: f"{stretched(DAEMON_START_TIMEOUT_S):.1f}"})
        assert out.returncode == 0, out.stderr
        self.pid = self._locked_pid()
        return self

    def cli(self, *args: str, check: bool = False, input: str | None = None, timeout: float = CLI_TIMEOUT_S,
            cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """Run `muxd -L NAME args…` as a user would (typed in `cwd`: by default this process's
        directory, with `env` added to the server's environment); stdout/stderr captured as text.
        `timeout` is a readiness ceiling, stretched by the machine's load."""
        result = subprocess.run([sys.executable, "-m", "muxd", "-L", self.name, *args],
                                env={**self.env, **(env or {})}, capture_output=True, text=True, input=input,
                                timeout=stretched(timeout), cwd=cwd)
        if check and result.returncode != 0:
            raise AssertionError(f"muxd {' '.join(args)} failed ({result.returncode}): {result.stderr}")
        return result

    def run_here(self, *args: str, check: bool = False) -> subprocess.CompletedProcess[str]:
        """Run `muxd -L NAME args…` as `cli()` does but in this process: the same CLI code with
        the server's environment, without starting an interpreter (~100 ms a command on a busy
        machine). Not for commands that attach, nor for ones that must start a server."""
        import contextlib
        import io

        from muxd.cli.main import main

        out, err = io.StringIO(), io.StringIO()
        saved = dict(os.environ)
        os.environ.clear()
        os.environ.update(self.env)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    code = main(["-L", self.name, *args])
                except SystemExit as exc:  # argparse's errors and --help
                    code = exc.code if isinstance(exc.code, int) else 1
        finally:
            os.environ.clear()
            os.environ.update(saved)
        result = subprocess.CompletedProcess(["muxd", "-L", self.name, *args], code, out.getvalue(), err.getvalue())
        if check and code != 0:
            raise AssertionError(f"muxd {' '.join(args)} failed ({code}): {result.stderr}")
        return result

    async def client(self, **kwargs: Any) -> Client:
        return await Client.connect(self.socket_path, **kwargs)

    # The looks below run their command in this process (`run_here`): waits poll them many
    # times, and an interpreter start a look (~70 ms of CPU) made the waiting tests a load of
    # their own on a 2-core machine. A test of the command itself runs it with `cli()`.

    def capture(self, target: str, *extra: str) -> str:
        """`capture-pane -p -t target extra…`: the pane's screen as text."""
        return self.run_here("capture-pane", "-p", "-t", target, *extra, check=True).stdout

    def panes(self, target: str) -> list[dict[str, Any]]:
        """`list-panes -t target --json`: the panes of a window or session."""
        return json.loads(self.run_here("list-panes", "-t", target, "--json", check=True).stdout)

    def windows(self, session: str) -> list[dict[str, Any]]:
        """`list-windows -t session --json`."""
        return json.loads(self.run_here("list-windows", "-t", session, "--json", check=True).stdout)

    def wait_for_text(self, target: str, text: str, *, timeout: float = 10.0) -> str:
        """Wait until the pane's screen shows `text`; return the screen."""
        return wait_for_screen(lambda: self.capture(target), lambda screen: text in screen, timeout=timeout,
                               message=f"{text!r} on pane {target}", screen_name=f"screen of {target}")

    def running(self) -> bool:
        if self.pid is None:
            return False
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        try:  # a zombie child of ours is not running either
            return os.waitpid(self.pid, os.WNOHANG) == (0, 0)
        except ChildProcessError:
            return _any_thread_alive(self.pid)

    def stop(self) -> None:
        if self.pid is None:  # started by a command of the test (new-session with no server), not start()
            self.pid = self._locked_pid()
        if self.pid is not None and self.running():
            try:
                os.kill(self.pid, signal.SIGTERM)
                wait_until(lambda: not self.running(), timeout=10, message="daemon exit")
            except ProcessLookupError:
                pass
            except AssertionError:
                os.kill(self.pid, signal.SIGKILL)
        shutil.rmtree(self.socket_dir, ignore_errors=True)

    def _locked_pid(self) -> int | None:
        """The pid in the daemon's lock file, if one holds it."""
        try:
            return int((self.socket_dir / f"{self.name}.lock").read_text().strip())
        except (OSError, ValueError):
            return None


def host_server(url: str, host: str, **env: str) -> MuxdTestServer:
    """A daemon (not started) of host `host` on the shared database `url` (issue 30), with `env`."""
    return MuxdTestServer(env={"MUXD_DB": url, "MUXD_HOST": host, **env})


class InProcessCli:
    """A MuxdTestServer whose `cli()` is `run_here()`: the same code as a `muxd` command, without
    an interpreter start each (for modules that run many commands)."""

    def __init__(self, server: MuxdTestServer) -> None:
        self.server = server

    def cli(self, *args: str, check: bool = False) -> subprocess.CompletedProcess[str]:
        return self.server.run_here(*args, check=check)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.server, name)


def _any_thread_alive(pid: int) -> bool:
    """Whether any thread of `pid` still lives. A killed daemon's main thread turns zombie while
    its other threads (the database writer) are still exiting, and until the last one is gone
    the process keeps its files, the listening socket among them."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    return any(_proc_state(f"{pid}/task/{task}") not in ("Z", "X") for task in tasks)


def process_alive(pid: int) -> bool:
    """Whether `pid` is a live process (neither gone nor a zombie)."""
    return _proc_state(pid) not in ("Z", "X")


def _proc_state(pid: int | str) -> str:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"
