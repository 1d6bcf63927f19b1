"""socket_names and _environ stand in for os in a tmux shim call (which imports no os): the same
variables, paths and directory making as os gives, on tricky inputs, in a process without os."""

import os
import posixpath
import subprocess
import sys
from pathlib import Path

import pytest

import muxd
from muxd.socket_names import ensure_private_dir, socket_file, split_path
from muxd.testing.patience import stretched

PATHS = ["", "/", "//", "///", "a", "a/", "a//", "/a", "//a", "///a", "/a/b", "/a/b/", "/a//b", "a/b/c.sock",
         "./x", "../x.sock", "/tmp/muxd-0/t.sock", "/ä/ö ü/x", "/a/b//", "//a//b///c"]


@pytest.mark.parametrize("path", PATHS)
def test_split_path_is_posixpaths(path):
    assert split_path(path) == posixpath.split(path)


@pytest.mark.parametrize("directory", ["/", "//", "/tmp/d", "rel", ".", "/tmp/ä ö"])
def test_socket_file_joins_as_os_path_join(monkeypatch, directory):
    monkeypatch.setenv("MUXD_SOCKET_DIR", directory)
    assert socket_file("x") == os.path.join(str(Path(directory)), "x.sock")


def test_a_process_without_os_reads_the_environment_as_os_does(tmp_path):
    """Run where os is never imported (python -S), with names and values os codes specially."""
    env = {"PATH": os.environ.get("PATH", ""), "MUXD_SOCKET_DIR": str(tmp_path / "dir ü"),
           "ODD": "a\udcff b=c", "EMPTY": ""}
    code = ("import sys; from muxd._environ import getenv; from muxd.socket_names import socket_dir_text; "
            "print(repr((getenv('ODD'), getenv('EMPTY'), getenv('NOPE'), socket_dir_text(), 'os' in sys.modules)))")
    result = subprocess.run([sys.executable, "-S", "-P", "-c", code], capture_output=True, text=True,
                            env={**env, "PYTHONPATH": str(Path(muxd.__file__).parent.parent)},
                            timeout=stretched(30), check=True)
    assert result.stdout == repr(("a\udcff b=c", "", None, str(tmp_path / "dir ü"), False)) + "\n"


def test_once_os_is_loaded_its_changes_are_read(monkeypatch):
    from muxd._environ import getenv

    monkeypatch.setenv("MUXD_TEST_CHANGED", "now")
    assert getenv("MUXD_TEST_CHANGED") == "now"
    monkeypatch.delenv("MUXD_TEST_CHANGED")
    assert getenv("MUXD_TEST_CHANGED") is None


def test_the_socket_directory_is_made_as_makedirs_makes_it(tmp_path):
    deep = tmp_path / "a" / "b"
    ensure_private_dir(str(deep), "remedy")  # parents too
    assert deep.is_dir() and deep.stat().st_mode & 0o777 == 0o700
    ensure_private_dir(str(deep), "remedy")  # there already
    (tmp_path / "file").write_text("")
    for taken in (tmp_path / "file", tmp_path / "file" / "below"):
        with pytest.raises(OSError) as ours:
            ensure_private_dir(str(taken), "remedy")
        with pytest.raises(OSError) as theirs:
            os.makedirs(taken, mode=0o700, exist_ok=True)
        assert type(ours.value) is type(theirs.value)
    with pytest.raises(FileNotFoundError):
        ensure_private_dir("", "remedy")
