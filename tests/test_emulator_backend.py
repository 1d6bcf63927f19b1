"""Choosing the emulator backend: MUXD_EMULATOR, the native default, the pyte fallback when
the native library cannot load."""

from __future__ import annotations

import logging
import sys

import pytest

from muxd.emulator import Emulator, backend
from muxd.emulator.backend import new_emulator


def test_default_is_the_native_core(monkeypatch: pytest.MonkeyPatch) -> None:
    from muxd.emulator.ghostty_backend import GhosttyEmulator

    monkeypatch.delenv("MUXD_EMULATOR", raising=False)
    assert type(new_emulator(20, 5)) is GhosttyEmulator


def test_env_selects_ghostty(monkeypatch: pytest.MonkeyPatch) -> None:
    from muxd.emulator.ghostty_backend import GhosttyEmulator

    monkeypatch.setenv("MUXD_EMULATOR", "ghostty")
    assert type(new_emulator(20, 5)) is GhosttyEmulator
    monkeypatch.setenv("MUXD_EMULATOR", "pyte")
    assert type(new_emulator(20, 5)) is Emulator


def test_unknown_name_gives_the_default(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    from muxd.emulator.ghostty_backend import GhosttyEmulator

    monkeypatch.setenv("MUXD_EMULATOR", "vt9000")
    assert type(new_emulator(20, 5)) is GhosttyEmulator
    assert "vt9000" in caplog.text


def test_falls_back_to_pyte_once_logged_when_pyghostty_cannot_load(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.delenv("MUXD_EMULATOR", raising=False)  # the default asked for: the suite may run with pyte chosen
    monkeypatch.setattr(backend, "_ghostty_class", None)
    for module in ("muxd.emulator.ghostty_backend", "muxd.emulator.ghostty_ffi"):  # imported anew, without pyghostty
        monkeypatch.delitem(sys.modules, module, raising=False)
    monkeypatch.setitem(sys.modules, "pyghostty", None)  # import fails as if not installed
    with caplog.at_level(logging.WARNING, logger="muxd.emulator.backend"):
        first = new_emulator(20, 5)
        second = new_emulator(20, 5)
    assert type(first) is Emulator and type(second) is Emulator
    assert caplog.text.count("cannot load") == 1


@pytest.mark.parametrize(("choice", "expected"), [(None, "ghostty"), ("pyte", "pyte"), ("ghostty", "ghostty")])
def test_server_status_says_which_backend_runs(choice: str | None, expected: str) -> None:
    from muxd.testing.server import MuxdTestServer

    server = MuxdTestServer(env={"MUXD_EMULATOR": choice or ""}).start()
    try:
        out = server.cli("server", "status", check=True).stdout
    finally:
        server.stop()
    assert any(line.split() == ["emulator", expected] for line in out.splitlines())


@pytest.mark.parametrize("choice", ["pyte", "ghostty"])
def test_warm_up_builds_the_tables_and_never_raises(monkeypatch: pytest.MonkeyPatch,
                                                    caplog: pytest.LogCaptureFixture, choice: str) -> None:
    from muxd.emulator import line_layout

    monkeypatch.setenv("MUXD_EMULATOR", choice)
    line_layout._odd_char.cache_clear()
    backend.warm_up()
    assert line_layout._odd_char.cache_info().currsize == 1
    emulator = backend.new_emulator(80, 24)
    for output in backend._WARM_UP_OUTPUT:
        emulator.feed(output)
    assert emulator.skipped_chars > 0  # its flood takes the skipping path, the one that costs most to start

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("no emulator today")

    monkeypatch.setattr(backend, "new_emulator", broken)
    with caplog.at_level(logging.ERROR, logger="muxd.emulator.backend"):
        backend.warm_up()
    assert "warming up the emulator failed" in caplog.text
