"""muxd/testing/proc.py's reading of a process's resident memory by what holds it."""

from __future__ import annotations

import os
import sqlite3

from muxd.testing.proc import ANONYMOUS, rss_by_mapping, rss_kib


def test_a_process_memory_is_split_by_what_holds_it_and_adds_up_to_its_rss() -> None:
    sqlite3.connect(":memory:").close()  # _sqlite3 and libsqlite3 mapped in this process
    before = rss_kib(os.getpid())
    groups = rss_by_mapping(os.getpid())
    after = rss_kib(os.getpid())
    assert before * 0.9 <= sum(groups.values()) <= after * 1.1
    assert groups[ANONYMOUS] > 0 and groups["python (interpreter, its C modules)"] > 0
    assert groups["libsqlite3"] > 0  # a shared library by its file's name, less the version
    assert "pytest" not in groups  # pure Python packages map nothing
    assert list(groups.values()) == sorted(groups.values(), reverse=True)
