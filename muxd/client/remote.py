"""A muxd server on another host, reached over OpenSSH (`muxd -H ssh://user@host[:port] …`).

The client runs `ssh [-p PORT] [user@]host muxd -L NAME proxy [--start]` with its standard input
and output one end of a socket pair, and speaks its usual protocol through the other end as
through the server's own socket: the blocking client, the async client and attach each take the
socket from here, so this is the one place that knows of ssh. No port is opened, no credential
made: ssh authenticates, and the proxy (cli/proxy_command.py) connects to the remote server's
socket as the ssh user, whom that server's peer-uid check then sees.

Before the stream the proxy writes one line: `ready`, or `error CODE MESSAGE` (no server there,
say). No line at all is ssh failing (host unreachable, login refused, muxd not on the remote
PATH): ssh's last words on its standard error, kept in a file, then say why, in one line.
"""

from __future__ import annotations

import os
import shlex
import socket
import subprocess
import tempfile
from typing import IO
from urllib.parse import urlsplit

from muxd.errors import BadRequest, HostUnreachable, MuxdError, error_from_code
from muxd.socket_names import DEFAULT_SERVER_NAME, PROXY_READY, REMOTE_SCHEME, check_server_name

# The ssh client and its options, as git's GIT_SSH_COMMAND (split as the shell would): `ssh -i KEY
# -o …`. Options every time belong in ~/.ssh/config (ControlMaster saves each command a login).
SSH_COMMAND_ENV = "MUXD_SSH_COMMAND"
# How the remote shell runs muxd, when not as `muxd` on its PATH: `~/.local/bin/muxd`, or
# `env MUXD_SOCKET_DIR=/srv/muxd muxd` for a server in another socket directory.
REMOTE_COMMAND_ENV = "MUXD_REMOTE_COMMAND"
PROXY_LINE_MAX_BYTES = 4096  # the proxy's first line; an error's message is short
SSH_EXIT_WAIT_S = 5.0  # for an ssh that closed its output to exit, and say how
COMMAND_NOT_FOUND_STATUS = 127  # the remote shell's, for a muxd it cannot find

# ssh processes whose socket was closed, reaped by the next connection: one never waited for
# stays a zombie (a long-lived `muxd mcp -H` opens one for each wait_for).
_leaving: list[subprocess.Popen[bytes]] = []


def is_remote(address: str) -> bool:
    """Whether `address` (what a client connects to) names a server on another host."""
    return address.startswith(REMOTE_SCHEME)


def host_address(url: str, server_name: str = DEFAULT_SERVER_NAME) -> str:
    """The address of server `server_name` on the host `url` names (`ssh://[user@]host[:port]`):
    the URL with the server's name as its path. BadRequest for a URL that is not one."""
    host = _parse(url, what="host URL")
    if host.name is not None:
        raise BadRequest(f"host URL {url!r} has a path: name the server with -L NAME")
    return f"{host.display}/{check_server_name(server_name)}"


class _Host:
    def __init__(self, user: str | None, host: str, port: int | None, name: str | None, display: str) -> None:
        self.user, self.host, self.port, self.name, self.display = user, host, port, name, display


def _parse(address: str, *, what: str = "address") -> _Host:
    parts = urlsplit(address)
    try:
        port = parts.port
    except ValueError:
        port = -1
    host, user = parts.hostname or "", parts.username
    if (parts.scheme != "ssh" or not host or port == -1 or parts.password is not None or parts.query
            or parts.fragment or host.startswith("-") or (user or "").startswith("-")):
        raise BadRequest(f"invalid {what} {address!r}: expected ssh://[user@]host[:port]")
    name = parts.path.strip("/") or None
    netloc = parts.netloc.rsplit("@", 1)[-1]
    display = f"ssh://{user + '@' if user else ''}{netloc}"
    return _Host(user, host, port, name, display)


def ssh_argv(address: str, *, start: bool = False) -> list[str]:
    """The ssh command line that runs `muxd proxy` for the server at `address` (a host_address)."""
    host = _parse(address)
    remote = os.environ.get(REMOTE_COMMAND_ENV) or "muxd"
    command = f"{remote} -L {shlex.quote(host.name or DEFAULT_SERVER_NAME)} proxy{' --start' if start else ''}"
    destination = f"{host.user}@{host.host}" if host.user else host.host
    port = ["-p", str(host.port)] if host.port is not None else []
    # -T: no terminal there (the stream is binary), and so no escape character here either.
    return [*shlex.split(os.environ.get(SSH_COMMAND_ENV) or "ssh"), "-T", *port, "--", destination, command]


class SshSocket(socket.socket):
    """This end of the socket pair whose other end is `ssh`'s standard input and output."""

    __slots__ = ("ssh", "ssh_errors")
    ssh: subprocess.Popen[bytes] | None
    ssh_errors: IO[bytes]  # ssh's standard error, read only when it fails

    def close(self) -> None:
        super().close()
        ssh = getattr(self, "ssh", None)
        if ssh is not None:  # it exits once the remote side has seen this end close
            self.ssh = None
            self.ssh_errors.close()
            _leaving.append(ssh)


def open_remote(address: str, *, start: bool = False) -> SshSocket:
    """A socket to the server at `address` (a host_address), past the proxy's `ready`; `start`:
    the proxy starts that server if none runs. HostUnreachable when ssh fails, the proxy's own
    error (ServerNotRunning, …) when it could not reach the server; either names the host."""
    host = _parse(address)
    _leaving[:] = [ssh for ssh in _leaving if ssh.poll() is None]
    ours, theirs = socket.socketpair()
    errors: IO[bytes] = tempfile.TemporaryFile()
    try:
        ssh = subprocess.Popen(ssh_argv(address, start=start), stdin=theirs, stdout=theirs, stderr=errors)
    except OSError as exc:
        for end in (ours, theirs, errors):
            end.close()
        raise HostUnreachable(f"cannot reach {host.display}: cannot run ssh: {exc.strerror or exc}",
                              host=host.display) from exc
    theirs.close()
    end = SshSocket(fileno=ours.detach())
    end.ssh, end.ssh_errors = ssh, errors
    try:
        line = _first_line(end)
        if line == PROXY_READY:
            return end
        raise _failure(host, line, ssh, errors)
    except BaseException:
        end.close()
        raise


def _first_line(end: socket.socket) -> bytes:
    """The proxy's line, read a byte at a time: what follows it is the server's, not ours to take."""
    line = bytearray()
    while len(line) < PROXY_LINE_MAX_BYTES:
        byte = end.recv(1)
        if not byte or byte == b"\n":
            break
        line += byte
    return bytes(line)


def _failure(host: _Host, line: bytes, ssh: subprocess.Popen[bytes], errors: IO[bytes]) -> MuxdError:
    """The error to raise for a proxy that did not say `ready`: its own, or ssh's."""
    text = line.decode("utf-8", "replace")
    if text.startswith("error "):
        _, code, message = (text.split(" ", 2) + [""])[:3]
        return error_from_code(code, f"{host.display}: {message}")
    try:
        status = ssh.wait(SSH_EXIT_WAIT_S)
    except subprocess.TimeoutExpired:
        ssh.kill()
        status = ssh.wait()
    errors.seek(0)
    said = [row.strip() for row in errors.read().decode("utf-8", "replace").splitlines() if row.strip()]
    if text:  # a login shell that prints, or no shell at all (nologin): not muxd's proxy
        why = f"the host answered {text[:200]!r}, not muxd's proxy"
    else:
        why = said[-1] if said else f"ssh exited with status {status}"
    if status == COMMAND_NOT_FOUND_STATUS:
        why += f" (is muxd on the remote PATH? ${REMOTE_COMMAND_ENV} names the command to run there)"
    return HostUnreachable(f"cannot reach {host.display}: {why}", host=host.display)
