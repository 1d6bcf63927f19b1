"""The entry points of one group (`muxd.detectors`) across the installed distributions, read
from their `entry_points.txt` directly: importlib.metadata would import email, zipfile, csv and
more (~1.5 MiB and tens of ms in a daemon's start) for what is a few directory listings and
file reads.

It lists what `importlib.metadata.entry_points(group=...)` lists, in the same order: the
`.dist-info` / `.egg-info` directories of each sys.path entry in turn (an editable install puts
its own in site-packages), a distribution found again under the same normalized name further on
ignored. Where that reading could differ (a zip or an .egg on sys.path, a metadata directory
whose name does not say its distribution, a meta-path finder that finds distributions of its
own) it asks importlib.metadata itself. A line without `=` is skipped (importlib.metadata raises).
"""

from __future__ import annotations

import os
import re
import sys
from importlib.machinery import PathFinder

_METADATA_SUFFIXES = (".dist-info", ".egg-info")
_SEPARATORS = re.compile(r"[-_.]+")


def entry_points(group: str) -> list[tuple[str, str]]:
    """(name, value) of each entry point of `group`, as importlib.metadata lists them."""
    found = _read(group, sys.path)
    if found is None:
        from importlib.metadata import entry_points as metadata_entry_points

        return [(entry.name, entry.value) for entry in metadata_entry_points(group=group)]
    return found


def _read(group: str, paths: list[str]) -> list[tuple[str, str]] | None:
    """The entry points of `group` on `paths`; None where importlib.metadata must decide."""
    if any(getattr(finder, "find_distributions", None) is not None
           for finder in sys.meta_path if finder is not PathFinder):
        return None
    seen: set[str] = set()
    found: list[tuple[str, str]] = []
    for entry in paths:
        root = entry or "."
        if os.path.basename(root).lower().endswith(".egg"):
            return None
        try:
            children = os.listdir(root)
        except NotADirectoryError:  # a zip on sys.path
            return None
        except OSError:
            continue
        by_name: dict[str, list[str]] = {}  # as importlib.metadata's Lookup groups them
        for child in children:
            if not child.lower().endswith(_METADATA_SUFFIXES):
                continue
            stem = child.rpartition(".")[0]
            name = _normalize(stem.partition("-")[0])
            if not child.endswith(_METADATA_SUFFIXES) or not name:
                return None  # its name would come from its METADATA file
            by_name.setdefault(name, []).append(child)
        for name, directories in by_name.items():
            if name not in seen:
                seen.add(name)
                found += _group_entries(os.path.join(root, directories[0], "entry_points.txt"), group)
    return found


def _normalize(name: str) -> str:
    """PEP 503 normalization with underscores, as importlib.metadata compares names."""
    return _SEPARATORS.sub("_", name).lower()


def _group_entries(path: str, group: str) -> list[tuple[str, str]]:
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError:  # no entry_points.txt: no entry points
        return []
    entries: list[tuple[str, str]] = []
    section = None
    for line in map(str.strip, text.splitlines()):
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line.strip("[]")
        elif section == group and "=" in line:
            name, _, value = line.partition("=")
            entries.append((name.strip(), value.strip()))
    return entries
