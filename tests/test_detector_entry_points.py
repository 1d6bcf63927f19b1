"""The detector plug-ins' entry points read without importlib.metadata
(detectors/plugin_entry_points.py) are the ones importlib.metadata lists, in its order."""

from __future__ import annotations

import sys
from importlib.metadata import entry_points as metadata_entry_points
from pathlib import Path

import pytest

from muxd.detectors import plugin_entry_points
from muxd.detectors.plugin_entry_points import entry_points
from muxd.detectors.registry import ENTRY_POINT_GROUP

PLUGIN_DIR = Path(__file__).parent / "plugin_data"


def _metadata(group: str) -> list[tuple[str, str]]:
    return [(entry.name, entry.value) for entry in metadata_entry_points(group=group)]


def _dist(root: Path, directory: str, text: str | None) -> None:
    (root / directory).mkdir(parents=True)
    if text is not None:
        (root / directory / "entry_points.txt").write_text(text)


@pytest.mark.parametrize("group", [ENTRY_POINT_GROUP, "console_scripts", "pytest11", "no.such.group"])
def test_the_installed_distributions_give_what_importlib_metadata_gives(group: str) -> None:
    assert entry_points(group) == _metadata(group)


def test_plugins_on_several_path_entries_as_importlib_metadata_reads_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    group = ENTRY_POINT_GROUP
    _dist(first, "Demo_Plugin-1.0.dist-info", f"# a comment\n[{group}]\n one = first_demo:One \n\n[other]\nx = y\n")
    _dist(second, "demo.plugin-2.0.dist-info", f"[{group}]\none = second_demo:One\n")  # the same name: hidden
    _dist(second, "other_plugin.egg-info", f"[{group}]\ntwo=other:Two\nthree = other:Three\n")
    _dist(second, "bare-1.0.dist-info", None)  # no entry_points.txt
    _dist(second, "unrelated-1.0.dist-info", "[console_scripts]\nu = u:main\n")
    monkeypatch.syspath_prepend(str(second))
    monkeypatch.syspath_prepend(str(PLUGIN_DIR))
    monkeypatch.syspath_prepend(str(first))
    assert plugin_entry_points._read(group, sys.path) is not None  # read here, not by the fallback
    ours = entry_points(group)
    assert ours == _metadata(group)
    assert ours[:2] == [("one", "first_demo:One"), ("demo", "muxd_demo_detector:DemoDetector")]
    assert ("one", "second_demo:One") not in ours and ("two", "other:Two") in ours


def test_a_zip_on_the_path_is_left_to_importlib_metadata(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    archive = tmp_path / "plugins.zip"
    archive.write_bytes(b"")
    monkeypatch.syspath_prepend(str(archive))
    assert plugin_entry_points._read(ENTRY_POINT_GROUP, sys.path) is None
    assert entry_points(ENTRY_POINT_GROUP) == _metadata(ENTRY_POINT_GROUP)


def test_the_daemon_path_imports_no_importlib_metadata() -> None:
    import subprocess

    script = ("import sys; from muxd.detectors.registry import load_detectors; load_detectors(); "
              "print('importlib.metadata' in sys.modules, 'email' in sys.modules)")
    out = subprocess.run([sys.executable, "-P", "-c", script], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.split() == ["False", "False"]
