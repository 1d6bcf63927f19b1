"""client/remote.py without ssh: which host URLs it takes, and the ssh line it runs for them."""

from __future__ import annotations

import pytest

from muxd.client.remote import REMOTE_COMMAND_ENV, SSH_COMMAND_ENV, host_address, is_remote, ssh_argv
from muxd.errors import BadRequest


def test_host_address_names_the_server_as_its_path() -> None:
    assert host_address("ssh://me@box:2222", "work") == "ssh://me@box:2222/work"
    assert host_address("ssh://box/") == "ssh://box/default"
    assert host_address("ssh://[::1]:22", "w") == "ssh://[::1]:22/w"
    assert is_remote(host_address("ssh://box")) and not is_remote("/tmp/muxd-0/default.sock")


@pytest.mark.parametrize("url", ["http://box", "ssh://", "ssh://box/work", "ssh://box:x", "ssh://me:pw@box",
                                 "ssh://-oProxyCommand=x", "ssh://-me@box", "ssh://box?x=1", "box"])
def test_host_urls_refused(url: str) -> None:
    with pytest.raises(BadRequest):
        host_address(url)


def test_server_names_are_checked() -> None:
    with pytest.raises(BadRequest):
        host_address("ssh://box", "a b")


def test_ssh_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SSH_COMMAND_ENV, raising=False)
    monkeypatch.delenv(REMOTE_COMMAND_ENV, raising=False)
    assert ssh_argv("ssh://me@box:2222/work", start=True) == [
        "ssh", "-T", "-p", "2222", "--", "me@box", "muxd -L work proxy --start"]
    monkeypatch.setenv(SSH_COMMAND_ENV, "/opt/ssh -i 'my key' -o ControlMaster=auto")
    monkeypatch.setenv(REMOTE_COMMAND_ENV, "~/.local/bin/muxd")
    assert ssh_argv("ssh://[::1]/default") == [
        "/opt/ssh", "-i", "my key", "-o", "ControlMaster=auto", "-T", "--", "::1", "~/.local/bin/muxd -L default proxy"]
