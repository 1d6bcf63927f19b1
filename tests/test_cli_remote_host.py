"""`muxd -H ssh://…` end to end: a private sshd on a loopback port (muxd/testing/sshd.py) stands
for the host, and a daemon of this machine with a socket directory of its own for that host's
server; the client reaches it only through ssh and `muxd proxy`."""

from __future__ import annotations

import asyncio
import json
import shlex
import subprocess
import sys

from muxd.socket_names import HOST_URL_ENV
from muxd.testing.mcp_stdio import call_ok, mcp_session, wait_budget_s
from muxd.testing.outer_terminal import outer_terminals
from muxd.testing.patience import stretched
from muxd.testing.proc import open_terminals
from muxd.testing.server import CLI_TIMEOUT_S, MuxdTestServer
from muxd.testing.sshd import PrivateSshd, _free_port
from muxd.testing.wait import wait_until


def remote(server: MuxdTestServer, sshd: PrivateSshd, *args: str, url: str | None = None,
           **env: str) -> subprocess.CompletedProcess[str]:
    """`muxd -H URL -L NAME args…` run in a client environment whose own socket directory is
    not the server's: only ssh can reach it."""
    client_env = {**server.env, "MUXD_SOCKET_DIR": str(server.socket_dir / "elsewhere"),
                  **sshd.ssh_env(server), **env}
    return subprocess.run([sys.executable, "-m", "muxd", "-H", url or sshd.url, "-L", server.name, *args],
                          env=client_env, capture_output=True, text=True, timeout=stretched(CLI_TIMEOUT_S))


def test_commands_reach_the_remote_server(muxd_server: MuxdTestServer, private_sshd: PrivateSshd) -> None:
    s, sshd = muxd_server, private_sshd
    made = remote(s, sshd, "new-session", "-d", "-s", "far", "--", "bash", "--norc", "--noprofile")
    assert made.returncode == 0, made.stderr
    assert [p["session"] for p in s.panes("far")] == ["far"]  # made in the host's server

    listed = remote(s, sshd, "list-panes", "-a", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [p["session"] for p in json.loads(listed.stdout)] == ["far"]

    sent = remote(s, sshd, "send-keys", "-t", "far", "echo far-$((6*7))", "Enter")
    assert sent.returncode == 0, sent.stderr
    s.wait_for_text("far", "far-42")
    # $MUXD_HOST_URL stands for -H
    captured = subprocess.run(
        [sys.executable, "-m", "muxd", "-L", s.name, "capture-pane", "-p", "-t", "far"],
        env={**s.env, "MUXD_SOCKET_DIR": str(s.socket_dir / "elsewhere"), **sshd.ssh_env(s), HOST_URL_ENV: sshd.url},
        capture_output=True, text=True, timeout=stretched(CLI_TIMEOUT_S))
    assert captured.returncode == 0, captured.stderr
    assert "far-42" in captured.stdout

    # a reply of some size crosses the relay whole (many reads and writes each way)
    remote(s, sshd, "send-keys", "-t", "far", "seq -f 'line-%05g' 1 20000", "Enter")
    s.wait_for_text("far", "line-20000")
    everything = remote(s, sshd, "capture-pane", "-p", "-S", "-", "-t", "far")
    assert everything.returncode == 0, everything.stderr
    assert everything.stdout == s.capture("far", "-S", "-") and everything.stdout.count("line-") >= 20000

    # watch (the async client): it found pane `far` there, and heard nothing of it die
    watched = remote(s, sshd, "watch", "--kind", "pane-died", "-t", "far", "--timeout", "0.3")
    assert (watched.returncode, watched.stderr) == (1, "muxd: no event within 0.3 s\n")


def test_a_command_that_creates_starts_the_remote_server(muxd_unstarted: MuxdTestServer,
                                                          private_sshd: PrivateSshd) -> None:
    s = muxd_unstarted
    assert "no server running" in remote(s, private_sshd, "ls").stderr  # ls starts none, there as here
    made = remote(s, private_sshd, "new-session", "-d", "-s", "born")
    assert made.returncode == 0, made.stderr
    s.pid = int((s.socket_dir / f"{s.name}.lock").read_text().strip())  # so the fixture stops it
    assert [p["session"] for p in s.panes("born")] == ["born"]
    # start-server there: the one running is kept (as here), and kill-server ends it
    assert remote(s, private_sshd, "start-server").returncode == 0
    assert s.running() and s.panes("born")
    assert remote(s, private_sshd, "kill-server").returncode == 0
    wait_until(lambda: not s.running(), timeout=10, message="the host's server stopped")
    started = remote(s, private_sshd, "start-server")
    assert started.returncode == 0, started.stderr
    s.pid = int((s.socket_dir / f"{s.name}.lock").read_text().strip())
    assert s.running() and s.cli("ls").returncode == 0


def test_attach_over_ssh_shows_the_remote_pane_and_detaches(muxd_server: MuxdTestServer,
                                                            private_sshd: PrivateSshd) -> None:
    s, sshd = muxd_server, private_sshd
    s.cli("new-session", "-d", "-s", "far", "--", "bash", "--norc", "--noprofile", check=True)
    s.cli("send-keys", "-t", "far", "PS1='far$ '; echo ready-$((6*7))", "Enter", check=True)
    s.wait_for_text("far", "ready-42")
    command = shlex.join([sys.executable, "-m", "muxd", "-H", sshd.url, "-L", s.name, "attach", "-t", "far"])
    with outer_terminals(s) as outer:
        term = outer()
        for name, value in {**sshd.ssh_env(s), "MUXD_SOCKET_DIR": str(s.socket_dir / "elsewhere")}.items():
            term.type(f"export {name}={shlex.quote(value)}", enter=True)
        term.type(command + "; echo attach-ended-$?", enter=True)
        term.wait_for("[far]")
        term.wait_for("ready-42")
        daemon = int((s.socket_dir / f"{s.name}.lock").read_text().strip())
        assert term.tty() not in open_terminals(daemon)  # no terminal through ssh: frames on the socket
        term.type("echo typed-$((7*6))", enter=True)  # keys cross ssh to the pane and its echo back
        term.wait_for("typed-42\n")
        assert "typed-42" in s.capture("far")
        term.keys("C-b", "d")
        screen = term.wait_for("attach-ended-0")
        assert "[detached (from session far)]" in screen
    assert s.panes("far")  # the remote session lives on


def test_mcp_serves_the_remote_servers_panes(muxd_server: MuxdTestServer, private_sshd: PrivateSshd) -> None:
    s = muxd_server
    s.cli("new-session", "-d", "-s", "far", "--", "bash", "--norc", "--noprofile", check=True)
    pane = s.panes("far")[0]["id"]

    async def served() -> None:
        env = {**private_sshd.ssh_env(s), HOST_URL_ENV: private_sshd.url,
               "MUXD_SOCKET_DIR": str(s.socket_dir / "elsewhere")}
        async with mcp_session(s, **env) as session:
            assert [p["id"] for p in (await call_ok(session, "list_panes"))["panes"]] == [pane]
            await call_ok(session, "send_input", pane_id=pane, text="echo mcp-$((6*7))", submit=True)
            # wait_for hears the pane's events on a connection of its own: a second ssh
            found = await call_ok(session, "wait_for", pane_id=pane, pattern=r"^mcp-\d+$",
                                  timeout_s=wait_budget_s(10))
            assert found["matched"] and found["line"] == "mcp-42"

    asyncio.run(served())


def test_ssh_failures_are_one_line_naming_the_host(muxd_server: MuxdTestServer,
                                                   private_sshd: PrivateSshd) -> None:
    s, sshd = muxd_server, private_sshd
    closed = f"ssh://{sshd.user}@127.0.0.1:{_free_port()}"
    refused = remote(s, sshd, "ls", url=closed)
    assert refused.returncode == 1
    assert refused.stderr.startswith(f"muxd: cannot reach {closed}: ") and "refused" in refused.stderr
    assert refused.stderr.count("\n") == 1, refused.stderr

    missing = remote(s, sshd, "ls", MUXD_REMOTE_COMMAND="/nonexistent/muxd")
    assert missing.returncode == 1 and missing.stderr.count("\n") == 1, missing.stderr
    assert missing.stderr.startswith(f"muxd: cannot reach {sshd.url}: ") and "remote PATH" in missing.stderr

    wrong_key = remote(s, sshd, "ls", MUXD_SSH_COMMAND=sshd.ssh_command().replace("user_key", "host_key"))
    assert wrong_key.returncode == 1 and wrong_key.stderr.count("\n") == 1, wrong_key.stderr
    assert "Permission denied" in wrong_key.stderr, wrong_key.stderr

    nobody = remote(s, sshd, "-L", "nosuch", "ls")  # the proxy's own error: no server of that name there
    assert nobody.returncode == 1
    assert nobody.stderr.startswith(f"muxd: {sshd.url}: no server running on "), nobody.stderr

    bad = remote(s, sshd, "ls", url="ssh://-oProxyCommand=x")
    assert bad.returncode == 1 and "invalid host URL" in bad.stderr, bad.stderr

    shim = s.run_here("-H", sshd.url, "tmux", "ls")  # said, not answered by this host's server
    assert shim.returncode == 1 and "-H does not apply to `muxd tmux`" in shim.stderr, shim.stderr
