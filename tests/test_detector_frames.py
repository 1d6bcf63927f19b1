"""The detectors on real screens of situations that must not read Idle (issue 25), captured
from the real CLIs in muxd panes of 60x18 to 200x60 against the scripted model servers:
Gemini's long shell command ("! Shell awaiting input", the ⊶/⊷ glyph), Aider's `/run` and a
slow first reply with nothing drawn, Claude Code's background agent, "Exit plan mode?",
wrapped options and its /help, /status, /cost overlays and /model picker, Codex's "Task is
still running" dialog and wrapped options. The Codex frames named `bgterminal` are modelled:
a real frame whose status row says "· 1 background terminal running" (noted in the labels).

Each frame goes through what `muxd detect` does, at its own size, with the cursor where the
pane had it (a capture does not keep it); tests/detector_data/issue25/labels.tsv says what
the screen shows. `benchmarks/bench_detectors.py --corpus tests/detector_data/issue25` gives
the figures.

tests/detector_data/cline_kilo holds Cline's and Kilo's real screens (issue 32) at 50x16 to
120x40, labelled with the tokens, model and error they show as well: an empty cell there
says the screen shows none.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from muxd.detectors.base import ScreenContext
from muxd.detectors.registry import load_detectors
from muxd.detectors.replay import detect_saved_screen
from muxd.detectors.state import AgentState

DATA = Path(__file__).parent / "detector_data"
# Each corpus, and whether its labels say the tokens, model and error (issue 25's do not).
CORPORA = {"issue25": False, "cline_kilo": True}
DETECTORS = load_detectors()
BY_NAME = {detector.name: detector for detector in DETECTORS}


def _frames() -> list[dict[str, str]]:
    frames = []
    for corpus in CORPORA:
        with (DATA / corpus / "labels.tsv").open(encoding="utf-8") as labels:
            frames += [{**row, "file": f"{corpus}/{row['file']}", "corpus": corpus}
                       for row in csv.DictReader(labels, delimiter="\t")]
    return frames


FRAMES = _frames()


def _size(row: dict[str, str]) -> tuple[int, int]:
    columns, lines = row["size"].split("x")
    return int(columns), int(lines)


def _cursor(row: dict[str, str]) -> tuple[int, int]:
    x, y = row["cursor"].split(",")
    return int(x), int(y)


def _optional(text: str) -> str | None:
    return text or None


def assert_reads_as_labelled(state: AgentState, row: dict[str, str]) -> None:
    """The agent, state, spinner text, elapsed time, tool and confirmation a labels row says."""
    got = state.activity
    assert (state.agent_type, got.state) == (row["agent"], row["state"]), (state.evidence, row["note"])
    assert got.description == _optional(row["description"])
    assert got.elapsed_s == (int(row["elapsed_s"]) if row["elapsed_s"] else None)
    assert state.tool == _optional(row["tool"])
    if row["confirmation"]:
        assert state.confirmation is not None
        assert state.confirmation.prompt == row["confirmation"]
        assert state.confirmation.options == row["options"].split(" | ")
    else:
        assert state.confirmation is None


@pytest.mark.parametrize("row", FRAMES, ids=[row["file"].split("/")[-1].removesuffix(".txt") for row in FRAMES])
def test_frame_reads_as_labelled(row: dict[str, str]) -> None:
    path = DATA / row["file"]
    columns, lines = _size(row)
    state = detect_saved_screen(path.read_bytes(), DETECTORS, columns=columns, lines=lines, cursor=_cursor(row))
    assert_reads_as_labelled(state, row)
    # Background work is read by the detector (the runner publishes what it reads).
    frame = ScreenContext(lines=path.read_text(encoding="utf-8").split("\n"), columns=columns, cursor=_cursor(row))
    assert BY_NAME[row["agent"]].detect(frame, None).background == int(row["background"])
    if CORPORA[row["corpus"]]:
        assert state.session.tokens_used == (int(row["tokens"]) if row["tokens"] else None)
        assert state.session.model == _optional(row["model"])
        assert (state.error.message if state.error else None) == _optional(row["error"])


def test_every_situation_at_several_sizes() -> None:
    sizes: dict[str, set[str]] = {}
    for row in FRAMES:
        situation = "_".join(row["file"].split("/")[-1].split("_")[:2])
        sizes.setdefault(situation, set()).add(row["size"])
    assert all(len(found) >= 4 for found in sizes.values()), sizes
