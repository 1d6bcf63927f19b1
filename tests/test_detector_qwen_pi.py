"""The Qwen Code and pi detectors on real screens (issue 32), captured from the real CLIs in muxd
panes of 60x18 to 120x40 against the scripted model servers by
`benchmarks/record_check_frames.py --out tests/detector_data/issue32 --agent qwen --agent pi`;
labels.tsv says what each screen shows (scripted.tsv what the script was doing then).

Qwen Code is a Gemini CLI fork and draws Gemini's boxes: no Qwen screen, process or exit may
read as Gemini, and no Gemini screen as Qwen; nor may a screen of either, or pi's, read as any
agent when node runs some other program's bin (a fork muxd does not know). pi's spinner reads `Working...` whether the model
is silent or its answer streams: those frames are labelled Thinking (muxd cannot tell).
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from muxd.detectors._agent_cli import FOREIGN_PROCESS_CONFIDENCE_MAX
from muxd.detectors.base import ScreenContext
from muxd.detectors.registry import IDENTIFY_THRESHOLD, choose, load_detectors
from muxd.detectors.replay import detect_saved_screen
from test_detector_frames import _cursor, _optional, _size, assert_reads_as_labelled

DATA = Path(__file__).parent / "detector_data" / "issue32"
GEMINI_DATA = Path(__file__).parent / "detector_data" / "issue25" / "gemini"
DETECTORS = load_detectors()
BY_NAME = {detector.name: detector for detector in DETECTORS}

with (DATA / "labels.tsv").open(encoding="utf-8") as _labels:
    FRAMES = list(csv.DictReader(_labels, delimiter="\t"))


def _frame_id(row: dict[str, str]) -> str:
    return row["file"].split("/")[-1].removesuffix(".txt")


@pytest.mark.parametrize("row", FRAMES, ids=[_frame_id(row) for row in FRAMES])
def test_frame_reads_as_labelled(row: dict[str, str]) -> None:
    columns, lines = _size(row)
    # An exit frame is the last screen of a pane whose program has exited.
    state = detect_saved_screen((DATA / row["file"]).read_bytes(), DETECTORS, columns=columns, lines=lines,
                                cursor=_cursor(row), exited=row["state"] == "Exited")
    assert_reads_as_labelled(state, row)
    assert state.session.tokens_used == (int(row["tokens"]) if row["tokens"] else None)
    assert state.session.model == _optional(row["model"])
    assert state.session.id == _optional(row["session_id"])
    assert (state.error.message if state.error else None) == _optional(row["error"])


@pytest.mark.parametrize("row", FRAMES, ids=[_frame_id(row) for row in FRAMES])
def test_no_other_detector_claims_the_frame(row: dict[str, str]) -> None:
    columns, _lines = _size(row)
    frame = ScreenContext(lines=(DATA / row["file"]).read_text(encoding="utf-8").split("\n"), columns=columns)
    claims = {d.name: d.identify(frame) for d in DETECTORS if d.name != row["agent"]}
    assert max(claims.values()) < IDENTIFY_THRESHOLD, claims


@pytest.mark.parametrize("path", sorted(GEMINI_DATA.glob("*.txt"))[:12], ids=lambda path: path.stem)
def test_qwen_leaves_gemini_screens_alone(path: Path) -> None:
    frame = ScreenContext(lines=path.read_text(encoding="utf-8").split("\n"), columns=100)
    assert BY_NAME["qwen"].identify(frame) < IDENTIFY_THRESHOLD
    assert BY_NAME["pi"].identify(frame) < IDENTIFY_THRESHOLD


@pytest.mark.parametrize(("argv", "agent"), [
    (["node", "/home/u/.npm-global/lib/node_modules/.bin/qwen"], "qwen"),
    (["node", "--max-old-space-size=8192", "/usr/lib/node_modules/@qwen-code/qwen-code/cli.js"], "qwen"),
    (["qwen"], "qwen"),
    (["node", "/home/u/.npm-global/bin/pi"], "pi"),
    (["node", "/usr/lib/node_modules/@mariozechner/pi-coding-agent/dist/cli.js"], "pi"),
    (["node", "/usr/lib/node_modules/@google/gemini-cli/dist/index.js"], "gemini"),
])
def test_the_process_in_front_names_the_agent(argv: list[str], agent: str) -> None:
    qwen_screen = (DATA / "qwen" / "qwen_rest_100x30_04.txt").read_text(encoding="utf-8").split("\n")
    frame = ScreenContext(lines=qwen_screen if agent == "gemini" else [], process_name=argv[0], process_argv=argv)
    chosen, score = choose(DETECTORS, frame)
    assert (chosen.name if chosen else None, score) == (agent, 1.0)


def test_every_situation_at_several_sizes() -> None:
    sizes: dict[str, set[str]] = {}
    for row in FRAMES:
        situation = "_".join(_frame_id(row).split("_")[:2])
        sizes.setdefault(situation, set()).add(row["size"])
    assert all(len(found) >= 4 for found in sizes.values()), sizes


@pytest.mark.parametrize("screen", [GEMINI_DATA / "gemini_longshell_100x30_02.txt",
                                    DATA / "qwen" / "qwen_rest_100x30_04.txt", DATA / "pi" / "pi_rest_100x30_09.txt"],
                         ids=lambda path: path.stem)
def test_an_agent_muxd_does_not_know_is_taken_for_none(screen: Path) -> None:
    """Another fork drawing the same screen, run by node from its own bin: no agent is claimed."""
    frame = ScreenContext(lines=screen.read_text(encoding="utf-8").split("\n"), columns=100, process_name="node",
                          process_argv=["node", "/home/u/.npm-global/lib/node_modules/.bin/some-fork"])
    assert choose(DETECTORS, frame) == (None, pytest.approx(FOREIGN_PROCESS_CONFIDENCE_MAX))


def test_the_draft_in_the_input_box_is_read() -> None:
    qwen = (DATA / "qwen" / "qwen_rest_100x30_09.txt").read_text(encoding="utf-8").split("\n")
    qwen = [line.replace(">   Type your message or @path/to/file", "> please fix the bug") for line in qwen]
    pi = (DATA / "pi" / "pi_rest_100x30_09.txt").read_text(encoding="utf-8").split("\n")
    lower_rule = max(row for row, line in enumerate(pi) if line.startswith("────"))
    pi[lower_rule - 1] = "please fix the bug"
    for agent, lines in (("qwen", qwen), ("pi", pi)):
        found = BY_NAME[agent].detect(ScreenContext(lines=lines, columns=100), None)
        assert (found.state, found.input_text) == ("Idle", "please fix the bug"), agent
    # the placeholder (Qwen) and the empty editor (pi) are no draft
    for agent, name in (("qwen", "qwen_rest_100x30_09.txt"), ("pi", "pi_rest_100x30_09.txt")):
        lines = (DATA / agent / name).read_text(encoding="utf-8").split("\n")
        assert BY_NAME[agent].detect(ScreenContext(lines=lines, columns=100), None).input_text is None


def test_qwen_still_starting_is_not_idle() -> None:
    """The end of a real 60x18 screen of Qwen starting: it drops what is submitted meanwhile."""
    rows = ["  Tips: Type / to open the command popup; Tab", "  autocompletes slash commands and saved prompts.", "",
            "─" * 60, "> please fail", "─" * 60, "  ⠼ Initializing..."]
    found = BY_NAME["qwen"].detect(ScreenContext(lines=rows, columns=60), None)
    assert (found.state, found.rule) == ("Unknown", "starting")
