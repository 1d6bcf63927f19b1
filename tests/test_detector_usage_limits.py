"""The detectors on the real CLIs' usage-limit screens (issue 26), captured by
benchmarks/record_limit_frames.py at 60x18, 80x24 and 120x40 against the scripted model servers
answering 429 with the provider's reset: Claude Code's 5-hour limit (its own auto-continue
armed), its weekly limit's dialog, an API key's plain 429 and the screen once it continued by
itself; Codex's usage limit reset today and in three days, and a 429 it gave up retrying;
Gemini CLI's quota dialog with and without a reset, and its error once Stop was chosen.

Each frame is read as `muxd detect` reads it, at the time it was captured
(tests/detector_data/usage_limits/labels.tsv, `captured_at`), in UTC, the time zone it was
captured in (Codex words its reset in local time): `limit.message` and `limit.resets_at` are
what the screen says. Where the error scrolled out of a short pane, nothing on screen says it:
Idle.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

import pytest

from muxd.detectors.registry import load_detectors
from muxd.detectors.replay import detect_saved_screen
from muxd.testing.patience import stretched

DATA = Path(__file__).parent / "detector_data" / "usage_limits"
DETECTORS = load_detectors()

with (DATA / "labels.tsv").open(encoding="utf-8") as _labels:
    FRAMES = list(csv.DictReader(_labels, delimiter="\t"))


@pytest.fixture(autouse=True)
def utc_local_time(local_zone: Callable[[str], None]) -> None:
    local_zone("UTC")  # the zone the frames were captured in


def _pair(text: str, sep: str) -> tuple[int, int]:
    first, second = text.split(sep)
    return int(first), int(second)


@pytest.mark.parametrize("row", FRAMES, ids=[row["file"].split("/")[-1].removesuffix(".txt") for row in FRAMES])
def test_limit_reads_as_labelled(row: dict[str, str]) -> None:
    columns, lines = _pair(row["size"], "x")
    state = detect_saved_screen((DATA / row["file"]).read_bytes(), DETECTORS, columns=columns, lines=lines,
                                cursor=_pair(row["cursor"], ","), now=float(row["captured_at"]))
    assert (state.agent_type, state.activity.state) == (row["agent"], row["state"]), (state.evidence, row["note"])
    if row["state"] != "UsageLimited":
        assert state.limit is None
        return
    assert state.limit is not None and state.limit.message == row["message"]
    resets = state.limit.resets_at
    shown = "" if resets is None else datetime.fromtimestamp(resets, timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    assert shown == row["resets_at"]
    assert state.error is not None and state.error.message == row["message"]
    assert not state.is_awaiting_input and not state.is_awaiting_confirmation
    if row["question"]:  # a dialog about the limit: its question and options are kept
        assert state.confirmation is not None
        assert (state.confirmation.prompt, state.confirmation.options) == (row["question"], row["options"].split(" | "))
    else:
        assert state.confirmation is None


def test_every_agent_and_situation_at_three_sizes() -> None:
    sizes: dict[str, set[str]] = {}
    for row in FRAMES:
        situation = "_".join(row["file"].split("/")[-1].split("_")[:2])
        sizes.setdefault(situation, set()).add(row["size"])
    assert {situation.split("_")[0] for situation in sizes} == {"claude", "codex", "gemini"}
    assert all(found == {"60x18", "80x24", "120x40"} for found in sizes.values()), sizes


def test_muxd_detect_reads_a_saved_limit_as_on_screen_now() -> None:
    frame = DATA / "claude" / "claude_fivehour_80x24_01.txt"
    asked = time.time()
    out = subprocess.run([sys.executable, "-m", "muxd", "detect", str(frame), "--json"], capture_output=True,
                         text=True, timeout=stretched(60), check=True).stdout
    state = json.loads(out)
    assert state["activity"]["state"] == "UsageLimited"
    # "resets 9:35pm (UTC)": the coming one, within a day of now
    assert asked - 60 <= state["limit"]["resets_at"] <= asked + 86_400
    assert datetime.fromtimestamp(state["limit"]["resets_at"], timezone.utc).strftime("%H:%M") == "21:35"
