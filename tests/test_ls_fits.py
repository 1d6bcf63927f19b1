"""`muxd ls` on a narrow terminal drops and shortens columns instead of folding every cell;
piped, it stays complete."""

from __future__ import annotations

import sys
from pathlib import Path

from muxd.cli.render import PANE_COLUMNS, fit_table
from muxd.testing.server import MuxdTestServer

HEADINGS = [h for h, _ in PANE_COLUMNS]


def _row(**cells: str) -> list[str]:
    return [cells.get(h.lower(), "") for h in HEADINGS]


def _width(headings: list[str], rows: list[list[str]]) -> int:
    return sum(max(len(c) for c in column) for column in zip(headings, *rows)) + 2 * (len(headings) - 1)


ROWS = [
    _row(session="work", window="0:claude", pane="%0*", name="lead", command="claude --model opus",
         pid="4242", status="running", agent="claude", state="thinking", **{"for": "3m"},
         doing="Refactoring the authentication middleware for the new token store", tokens="12.5k",
         size="80x24", cwd="/home/someone/projects/a-very-long-project-name/services/auth"),
    _row(session="work", window="1:shell", pane="%1", command="bash", pid="4243", status="exited (1)",
         size="80x24", cwd="/home/someone"),
]


def test_a_wide_table_is_fitted_by_priority() -> None:
    headings, rows = fit_table(HEADINGS, ROWS, 80)
    assert _width(headings, rows) <= 80
    assert headings[:3] == ["SESSION", "WINDOW", "PANE"] and {"STATUS", "AGENT", "STATE", "DOING"} <= set(headings)
    assert "CWD" not in headings and "PID" not in headings
    doing = rows[0][headings.index("DOING")]
    assert doing.startswith("Refactoring") and doing.endswith("…")


def test_a_table_that_fits_loses_only_its_empty_columns() -> None:
    headings, rows = fit_table(HEADINGS, ROWS, 400)
    assert headings == HEADINGS  # NAME has one cell, so it stays
    assert rows == ROWS
    headings, _ = fit_table(HEADINGS, [row[:3] + [""] + row[4:] for row in ROWS], 400)
    assert "NAME" not in headings and len(headings) == len(HEADINGS) - 1


def test_a_split_narrower_still_keeps_the_pane_and_its_state() -> None:
    headings, rows = fit_table(HEADINGS, ROWS, 50)
    assert {"SESSION", "PANE", "STATUS", "STATE"} <= set(headings)
    assert "COMMAND" not in headings


def test_ls_in_an_80_column_pane_fits(muxd_server: MuxdTestServer, tmp_path: Path) -> None:
    deep = tmp_path / "a-rather-long-directory-name" / "and-another-long-one"
    deep.mkdir(parents=True)
    muxd_server.cli("new-session", "-d", "-s", "agents", "-c", str(deep), "--name", "worker-with-a-long-name",
                    "--", "sleep", "600", check=True)
    # The pane is a real 80-column terminal: ls, run inside it, sees 80 columns.
    ls = f"{sys.executable} -m muxd -L {muxd_server.name} ls; echo ls-done; exec sleep 600"
    muxd_server.cli("new-window", "-t", "agents", "--", "sh", "-c", ls, check=True)
    screen = muxd_server.wait_for_text("agents:1", "ls-done", timeout=15)
    lines = [line for line in screen.splitlines() if line.strip()]
    assert lines[0].split()[:3] == ["SESSION", "WINDOW", "PANE"] and "STATUS" in lines[0]
    assert "CWD" not in lines[0]
    assert len(lines) == 1 + 2 + 1  # heading, two panes, ls-done: no cell folded onto a second line
    piped = muxd_server.cli("ls", check=True).stdout
    assert "CWD" in piped.splitlines()[0] and str(deep) in piped  # piped output stays complete


def test_a_column_cut_before_another_was_dropped_grows_back() -> None:
    headings = ["ID", "AGENT", "MESSAGE"]
    rows = [["ab12cd", "a-worker-with-a-rather-long-name", "refactor the authentication middleware"]]
    steps = (("cut", "MESSAGE"), ("drop", "AGENT"))
    fitted, cut = fit_table(headings, rows, 40, steps)
    assert fitted == ["ID", "MESSAGE"] and _width(fitted, cut) <= 40
    assert cut[0][1] == "refactor the authentication mid…"  # 32 columns, not the 12 it was first cut to
