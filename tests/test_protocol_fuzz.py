"""Seeded protocol fuzzing against a real daemon: a few thousand hostile frames over a series
of connections (muxd/testing/protocol_fuzz.py; the long run is benchmarks/fuzz_protocol.py)."""

from __future__ import annotations

import json

from muxd.testing.proc import tracebacks_in
from muxd.testing.protocol_fuzz import (
    FUZZ_PANE, FUZZ_PANE_COMMAND, FUZZ_SESSION, FrameFuzzer, ProtocolFuzzRun,
)

FUZZ_SEED = 1
FUZZ_FRAMES = 8000
# Codes a hostile frame may earn; anything else (`internal` above all) is a defect.
EXPECTED_CODES = {"ok", "bad_request", "not_found", "conflict", "forbidden"}


def test_hostile_frames_get_typed_answers_and_break_nothing(muxd_server):
    s = muxd_server
    s.cli("new-session", "-d", "-s", FUZZ_SESSION, "--", *FUZZ_PANE_COMMAND, check=True)
    tally = ProtocolFuzzRun(s.socket_path, FrameFuzzer(FUZZ_SEED, FUZZ_PANE, FUZZ_SESSION)).run(frames=FUZZ_FRAMES)
    report = tally.summary()
    assert tally.frames_sent == FUZZ_FRAMES and tally.connections >= 10, report
    # Every intact frame was answered, nothing but framing damage closed a connection, and
    # framing damage always did.
    assert tally.replies_missing == 0 and tally.connections_dropped == 0 and tally.left_open == 0, report
    assert set(tally.replies_by_code) <= EXPECTED_CODES, report
    assert tally.replies_by_code["bad_request"] > FUZZ_FRAMES // 3, report  # refused, not ignored
    panes = json.loads(s.cli("list-panes", "-a", "--json", check=True).stdout)
    assert [(p["id"], p["status"]) for p in panes] == [(FUZZ_PANE, "running")]
    assert tracebacks_in(s.log_path.read_text()) == 0
