"""The native emulator's pre-parsed C declarations (emulator/ghostty_ffi.py): built once, kept in
the cache directory, built again when pyghostty changes or the stored copy is damaged, and a
daemon that cannot keep them still runs its panes on libghostty."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from muxd.emulator import ghostty_ffi
from muxd.emulator.ghostty_ffi import CACHE_KEEP, CACHE_PREFIX, preparsed_ffi
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until

_SOURCE_OF_A_FRESH_PROCESS = "from muxd.emulator import ghostty_ffi; print(ghostty_ffi.FFI_SOURCE)"


@pytest.fixture
def package(tmp_path: Path) -> Path:
    """A copy of pyghostty's declaration files, free to be edited."""
    copy = tmp_path / "pyghostty"
    copy.mkdir()
    for name in ("__init__.py", "_cdef.py", "_ffi.py"):
        shutil.copyfile(ghostty_ffi.package_dir() / name, copy / name)
    return copy


def _stored(directory: Path) -> list[Path]:
    return sorted(directory.glob(f"{CACHE_PREFIX}*"))


def _fresh_process_source(env: dict[str, str]) -> str:
    """FFI_SOURCE as a new interpreter with `env` added sees it."""
    environ = {k: v for k, v in os.environ.items() if k != "MUXD_CACHE_DIR"}
    result = subprocess.run([sys.executable, "-c", _SOURCE_OF_A_FRESH_PROCESS], env={**environ, **env},
                            capture_output=True, text=True, check=True, timeout=120)
    return result.stdout.strip()


def test_built_once_then_loaded_from_the_cache(package: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    ffi, source = preparsed_ffi(package, cache)
    assert source == "generated" and len(_stored(cache)) == 1
    again, source = preparsed_ffi(package, cache)
    assert source == "cache"
    assert again.sizeof("GhosttyPointS") == ffi.sizeof("GhosttyPoint") == 24
    lib = again.dlopen(ghostty_ffi.library_path(ghostty_ffi.package_dir()))
    assert lib.GHOSTTY_SUCCESS == 0
    terminal = again.new("GhosttyTerminal*")
    assert lib.ghostty_terminal_new(again.NULL, terminal, 20, 5) == lib.GHOSTTY_SUCCESS
    lib.ghostty_terminal_free(terminal[0])


def test_a_new_pyghostty_version_builds_it_again_keeping_a_few_old_copies(package: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    preparsed_ffi(package, cache)
    [first] = _stored(cache)
    os.utime(first, (1, 1))  # surely the oldest, whatever the file system's clock granularity
    init = package / "__init__.py"
    original = init.read_text()
    for version in range(CACHE_KEEP):
        init.write_text(original.replace("__version__", f"__version__ = '9.9.{version}'\n_was_version", 1))
        _, source = preparsed_ffi(package, cache)
        assert source == "generated"
    assert len(_stored(cache)) == CACHE_KEEP and first not in _stored(cache)  # the oldest went
    init.write_text(original.replace("__version__", f"__version__ = '9.9.{CACHE_KEEP - 1}'\n_was_version", 1))
    assert preparsed_ffi(package, cache)[1] == "cache"  # a version met before: no rebuild


@pytest.mark.parametrize("damage", ["flipped", "truncated", "empty"])
def test_a_damaged_copy_is_built_again(package: Path, tmp_path: Path, damage: str,
                                       caplog: pytest.LogCaptureFixture) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    preparsed_ffi(package, cache)
    [stored] = _stored(cache)
    data = bytearray(stored.read_bytes())
    if damage == "flipped":
        data[len(data) // 2] ^= 0x40
    stored.write_bytes(bytes(data[: len(data) // 2] if damage == "truncated" else b"" if damage == "empty" else data))
    with caplog.at_level(logging.WARNING, logger=ghostty_ffi.__name__):
        ffi, source = preparsed_ffi(package, cache)
    assert source == "generated" and "damaged" in caplog.text
    assert ffi.sizeof("GhosttyPointS") == 24
    assert preparsed_ffi(package, cache)[1] == "cache"


def test_a_cache_that_cannot_be_written_still_gives_the_parsed_declarations(package: Path, tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    ffi, source = preparsed_ffi(package, blocked / "muxd")
    assert source == "generated, not saved"
    assert ffi.sizeof("GhosttyPointS") == 24


def test_a_fresh_process_uses_the_cache_it_built(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert _fresh_process_source({"XDG_CACHE_HOME": str(cache)}) == "generated"
    assert _fresh_process_source({"XDG_CACHE_HOME": str(cache)}) == "cache"
    assert (cache / "muxd").stat().st_mode & 0o777 == 0o700


def test_a_cache_others_can_write_to_is_never_run(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert _fresh_process_source({"XDG_CACHE_HOME": str(cache)}) == "generated"
    os.chmod(cache / "muxd", 0o777)  # someone else could plant code there now
    assert _fresh_process_source({"XDG_CACHE_HOME": str(cache)}) == "pyghostty"


def test_the_daemon_runs_panes_on_libghostty_without_a_usable_cache(tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    server = MuxdTestServer(env={"MUXD_EMULATOR": "ghostty", "MUXD_CACHE_DIR": str(blocked / "muxd")}).start()
    try:
        status = server.cli("server", "status", check=True).stdout
        assert any(line.split() == ["emulator", "ghostty"] for line in status.splitlines())
        server.cli("new-session", "-d", "-s", "s", "printf '\\033[1mbold\\033[0m ok\\n'; exec cat", check=True)
        wait_until(lambda: "bold ok" in server.capture("s"), timeout=20, message="the pane's output")
        assert "\x1b[1mbold" in server.cli("capture-pane", "-p", "-e", "-t", "s", check=True).stdout
    finally:
        server.stop()
