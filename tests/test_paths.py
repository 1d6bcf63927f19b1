"""The socket directory and the files in it stay private: a directory others can write to is
refused, and links planted where the lock or the log go are never followed."""

from __future__ import annotations

import json
import logging
import os
import stat
from pathlib import Path

import pytest

from muxd.daemon.core.log_file import PrivateRotatingFileHandler, RepeatLimiter
from muxd.errors import Forbidden
from muxd.paths import open_private
from muxd.testing.server import MuxdTestServer


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def started(server: MuxdTestServer) -> MuxdTestServer:
    result = server.cli("start-server")
    assert result.returncode == 0, result.stderr
    server.pid = int((server.socket_dir / f"{server.name}.lock").read_text().strip())
    return server


@pytest.mark.parametrize("mode", [0o1777, 0o777, 0o770], ids=["1777", "0777", "0770"])
def test_a_socket_directory_others_can_write_to_is_refused(muxd_unstarted: MuxdTestServer, mode: int) -> None:
    server = muxd_unstarted
    os.chmod(server.socket_dir, mode)
    for command in (["start-server"], ["new-session", "-d", "--", "true"], ["ls"]):
        result = server.cli(*command)
        assert result.returncode == 1, (command, result.stdout, result.stderr)
        assert f"is writable by others (mode {mode:04o})" in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert mode_of(server.socket_dir) == mode  # refused, not silently changed
    assert not server.socket_path.exists()
    os.chmod(server.socket_dir, 0o750)  # only readable by the group: nothing can be planted; tightened
    started(server)
    assert mode_of(server.socket_dir) == 0o700


def test_links_planted_for_the_lock_and_the_log_are_not_followed(muxd_unstarted: MuxdTestServer,
                                                                  tmp_path: Path) -> None:
    server = muxd_unstarted
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    lock, log = server.socket_dir / f"{server.name}.lock", server.log_path
    log.parent.mkdir(mode=0o700, parents=True)
    for planted, how, words in ((lock, os.symlink, "is a symbolic link"), (log, os.symlink, "is a symbolic link"),
                                (lock, os.link, "a hard link"), (log, os.link, "a hard link")):
        for left in (lock, log):  # what the previous attempt made
            left.unlink(missing_ok=True)
        how(victim, planted)
        result = server.cli("start-server")
        assert result.returncode == 1 and words in result.stderr, (planted.name, result.stderr)
        assert victim.read_text() == "precious\n" and mode_of(victim) == 0o644
    planted.unlink()
    started(server)
    assert victim.read_text() == "precious\n"


def test_the_log_and_the_lock_are_private(muxd_unstarted: MuxdTestServer) -> None:
    server = muxd_unstarted
    server.log_path.parent.mkdir(mode=0o700, parents=True)
    server.log_path.write_text("an old log, once world-readable\n")
    os.chmod(server.log_path, 0o644)
    started(server)
    server.cli("new-session", "-d", "--", "sleep", "600", check=True)  # the log records command lines
    assert mode_of(server.log_path) == 0o600
    assert mode_of(server.socket_dir / f"{server.name}.lock") == 0o600
    assert "sleep 600" in server.log_path.read_text()


def test_the_log_is_kept_in_the_state_directory_not_the_socket_directory(muxd_unstarted: MuxdTestServer) -> None:
    """/tmp (the socket directory) is wiped at reboot: what a server said before it died stays."""
    server = muxd_unstarted
    state = Path(server.env["XDG_STATE_HOME"]) / "muxd"
    started(server)
    server.cli("new-session", "-d", "--", "sleep", "600", check=True)
    assert (state / f"{server.name}.log").is_file() and "sleep 600" in (state / f"{server.name}.log").read_text()
    assert not (server.socket_dir / f"{server.name}.log").exists()
    assert mode_of(state) == 0o700 and mode_of(state / f"{server.name}.log") == 0o600
    status = server.cli("server", "status", "--json", check=True).stdout
    assert json.loads(status)["log"] == str(state / f"{server.name}.log")
    help_text = " ".join(server.cli("start-server", "--help", check=True).stdout.split())
    assert "logs to $XDG_STATE_HOME/muxd/NAME.log" in help_text, help_text


def test_a_state_directory_others_can_write_to_is_refused(muxd_unstarted: MuxdTestServer) -> None:
    server = muxd_unstarted
    state = Path(server.env["XDG_STATE_HOME"]) / "muxd"
    state.mkdir(parents=True)
    os.chmod(state, 0o777)
    result = server.cli("start-server")
    assert result.returncode == 1 and "is writable by others (mode 0777)" in result.stderr, result.stderr
    assert "choose another XDG_STATE_HOME" in result.stderr and not server.socket_path.exists()
    os.chmod(state, 0o755)  # readable only: tightened, and the server starts
    started(server)
    assert mode_of(state) == 0o700


def test_open_private_refuses_what_is_not_a_plain_file_of_ours(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(Forbidden, match="not a plain file"):
        open_private(tmp_path / "fifo", os.O_RDWR)
    fd = open_private(tmp_path / "new", os.O_WRONLY)
    os.close(fd)
    assert mode_of(tmp_path / "new") == 0o600


def _record(message: str, created: float) -> logging.LogRecord:
    record = logging.LogRecord("muxd.test", logging.WARNING, __file__, 1, message, ("x",), None)
    record.created = created
    return record


def test_repeats_of_one_message_are_thinned_and_counted() -> None:
    limiter = RepeatLimiter(limit=3, window_s=60.0)
    passed = [limiter.filter(_record("refused %s", 1000.0 + i)) for i in range(50)]
    assert passed == [True] * 3 + [False] * 47
    assert limiter.filter(_record("another message %s", 1001.0))  # counted apart
    later = _record("refused %s", 1061.0)
    assert limiter.filter(later)
    assert later.getMessage() == "refused x [and 47 more like this not logged]"


def test_the_log_rotates_at_its_size(tmp_path: Path) -> None:
    path = tmp_path / "d.log"
    handler = PrivateRotatingFileHandler(path, maxBytes=10_000, backupCount=2, encoding="utf-8")
    logger = logging.getLogger("muxd.test.rotation")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        for i in range(2000):
            logger.warning("line %d of a log that a client keeps feeding", i)
    finally:
        logger.removeHandler(handler)
        handler.close()
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["d.log", "d.log.1", "d.log.2"]
    assert all((tmp_path / f).stat().st_size <= 10_000 for f in files)
    assert all(mode_of(tmp_path / f) == 0o600 for f in files)
