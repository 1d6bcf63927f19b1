"""A private OpenSSH server for the tests of `muxd -H ssh://…` (client/remote.py): on a loopback
port, with a throwaway host key and user key in a private directory, letting in by that key only
the user the tests run as. `ssh_env(server)` is what a client needs to reach `server` (a
MuxdTestServer of this machine, standing for the remote host's) through it."""

from __future__ import annotations

import os
import pwd
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from muxd.client.remote import REMOTE_COMMAND_ENV, SSH_COMMAND_ENV
from muxd.testing.wait import wait_until

SSHD_PATHS = ("/usr/sbin/sshd", "/usr/local/sbin/sshd")
PRIVILEGE_SEPARATION_DIR = "/run/sshd"  # sshd run as root refuses to start without it
SSHD_START_TIMEOUT_S = 10.0
SSHD_STOP_TIMEOUT_S = 5.0
# What the remote shell passes on to the daemon it might start (MuxdTestServer.env's own).
_SERVER_VARIABLES = ("MUXD_SOCKET_DIR", "MUXD_DB", "MUXD_CONFIG", "XDG_STATE_HOME", "HOME")


class SshdUnavailable(RuntimeError):
    """sshd or ssh is not installed here (the message says which, and the package to install)."""


def find_sshd() -> str:
    """sshd's absolute path (it re-executes itself, so it refuses a relative one)."""
    found = shutil.which("sshd") or next((path for path in SSHD_PATHS if os.access(path, os.X_OK)), None)
    if found is None:
        raise SshdUnavailable("sshd is not installed (Debian: apt-get install openssh-server)")
    for tool in ("ssh", "ssh-keygen"):
        if shutil.which(tool) is None:
            raise SshdUnavailable(f"{tool} is not installed (Debian: apt-get install openssh-client)")
    return os.path.abspath(found)


class PrivateSshd:
    def __init__(self) -> None:
        sshd = find_sshd()
        self.dir = Path(tempfile.mkdtemp(prefix="muxd-sshd-"))
        self.user = pwd.getpwuid(os.getuid()).pw_name
        for key in ("host_key", "user_key"):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.dir / key)], check=True)
        shutil.copy(self.dir / "user_key.pub", self.dir / "authorized_keys")
        self.port = _free_port()
        config = self.dir / "sshd_config"
        config.write_text("\n".join([
            f"Port {self.port}", "ListenAddress 127.0.0.1", f"HostKey {self.dir / 'host_key'}",
            f"AuthorizedKeysFile {self.dir / 'authorized_keys'}", "PasswordAuthentication no",
            "KbdInteractiveAuthentication no", "UsePAM no", "StrictModes no", "PidFile none",
            "PermitRootLogin prohibit-password", ""]))
        if os.getuid() == 0:
            os.makedirs(PRIVILEGE_SEPARATION_DIR, mode=0o755, exist_ok=True)
        self.log = open(self.dir / "sshd.log", "wb")
        self.process = subprocess.Popen([sshd, "-D", "-e", "-f", str(config)], stdin=subprocess.DEVNULL,
                                        stdout=self.log, stderr=self.log)
        try:
            wait_until(self._listening, timeout=SSHD_START_TIMEOUT_S, message="sshd listening")
        except BaseException:
            self.stop()
            raise

    def _listening(self) -> bool:
        if self.process.poll() is not None:
            raise AssertionError(f"sshd exited ({self.process.returncode}): {self.log_text()}")
        return "Server listening" in self.log_text()

    def log_text(self) -> str:
        return (self.dir / "sshd.log").read_text(errors="replace")

    @property
    def url(self) -> str:
        """The host URL of this machine through this sshd: `muxd -H URL …`."""
        return f"ssh://{self.user}@127.0.0.1:{self.port}"

    def ssh_command(self) -> str:
        """The ssh client line that logs in here by the test key, trusting no file of the user's."""
        return shlex.join(["ssh", "-F", "/dev/null", "-i", str(self.dir / "user_key"), "-o", "BatchMode=yes",
                           "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
                           "-o", "LogLevel=ERROR"])

    def ssh_env(self, server: Any) -> dict[str, str]:
        """The environment in which `muxd -H URL …` reaches `server` (a MuxdTestServer): this
        sshd's client options, and a remote command that runs this checkout's muxd in the
        server's environment (its socket directory above all)."""
        variables = [f"{name}={server.env[name]}" for name in _SERVER_VARIABLES if name in server.env]
        return {SSH_COMMAND_ENV: self.ssh_command(),
                REMOTE_COMMAND_ENV: shlex.join(["env", *variables, sys.executable, "-m", "muxd"])}

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(SSHD_STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def _free_port() -> int:
    """A loopback port free now: sshd binds it a moment later (should another take it first, sshd
    exits and the fixture fails saying so)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
