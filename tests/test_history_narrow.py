"""`muxd history`, `failures`, `stats` and `task ls` in narrow terminals (issue 28), run on a real
terminal of 40 and 80 columns: every line fits, each id is its short id, whole on one line, and
that shown id pastes into `show`, `cancel`, `history --trace` and `task show`; an ambiguous one
is a one-line error naming the candidates."""

from __future__ import annotations

import json
import sys

from rich.cells import cell_len

from muxd.testing.fake_agent_panes import start_fake_agent
from muxd.testing.pty_run import run_in_pty
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until

WIDTHS = (40, 80)
TRACE = "0af7651916cd43dd8448eb211c80319c"
WORKER = "a-worker-with-a-rather-long-name"


def as_json(s: MuxdTestServer, *args: str) -> dict:
    return json.loads(s.cli(*args, "--json", check=True).stdout)


def on_terminal(s: MuxdTestServer, columns: int, *args: str) -> list[str]:
    """The lines `muxd args…` writes on a terminal `columns` wide (none of them blank)."""
    status, out = run_in_pty([sys.executable, "-m", "muxd", "-L", s.name, *args], s.env, columns)
    assert status == 0, out
    lines = [line for line in out.splitlines() if line.strip()]
    assert all(cell_len(line) <= columns for line in lines), "\n".join(lines)
    return lines


def shown_ids(lines: list[str], heading: str = "ID") -> list[str]:
    """The ids of a table's column `heading` (its first), one a row."""
    assert lines[0].split()[0] == heading, lines
    return [line.split()[0] for line in lines[1:]]


def names(short: str, full: str) -> bool:
    return len(short) >= 6 and (full[-8:].startswith(short) or full == short)


def test_history_fits_the_terminal_and_its_short_ids_paste(muxd_server: MuxdTestServer) -> None:
    s = muxd_server
    start_fake_agent(s, WORKER)
    for attempt in ("1", "2"):
        s.cli("submit", "-t", WORKER, f"refactor the authentication middleware (attempt {attempt})", "--wait",
              "--trace-id", TRACE, "--attempt", attempt, check=True)
    s.cli("run", "--wait", "--", "sh", "-c", "echo building every module of the project; exit 3")
    s.cli("run", "--", "sleep", "600", check=True)
    wait_until(lambda: as_json(s, "history", "--active")["total"] == 1, timeout=15, message="sleep running")
    executions = as_json(s, "history")["executions"]  # newest first, as the table
    full = [e["id"] for e in executions]

    for columns in WIDTHS:
        lines = on_terminal(s, columns, "history")
        heading = lines[0].split()
        assert len(lines) == 1 + len(full), lines  # one line an execution: no cell folded
        assert {"STATUS", "MESSAGE"} <= set(heading) and ("AGENT" in heading) == (columns == 80)
        short = shown_ids(lines)
        assert all(names(a, b) for a, b in zip(short, full)), (short, full)
        assert any("refactor the" in line for line in lines[1:]), lines  # a message cut, not cut up
        failures = on_terminal(s, columns, "failures")
        assert any(line.startswith(short[1]) for line in failures)  # the failed run, by the same short id
        stats = on_terminal(s, columns, "stats")
        assert stats[0].split()[0] == "AGENT" and any(line.startswith(WORKER[:10]) for line in stats)

    for shown, whole in zip(short, full):
        assert as_json(s, "show", shown)["execution"]["id"] == whole
    for columns in WIDTHS:  # one execution in full: its whole id on one line, whatever the width
        assert any(line.split() in (["id", full[1]], [full[1]]) for line in on_terminal(s, columns, "show", short[1]))
    traced = as_json(s, "history", "--trace", short[-1])["executions"]
    assert [e["attempt"] for e in traced] == [2, 1]
    running = short[0]
    assert s.cli("cancel", running, check=True).stdout.split()[0] == full[0]
    # A run is cancelled as a person would, with a Ctrl-C: it ends, by its exit status.
    wait_until(lambda: as_json(s, "show", running)["execution"]["status"] not in ("pending", "running"),
               timeout=15, message="the run cancelled by its short id")

    # Piped, the table keeps its short ids; --full-ids gives the whole ones.
    assert shown_ids(s.cli("history", check=True).stdout.splitlines()) == short
    assert shown_ids(s.cli("history", "--full-ids", check=True).stdout.splitlines()) == full

    ambiguous = s.cli("show", "exec_1")  # every id of this century starts so
    assert ambiguous.returncode != 0 and len(ambiguous.stderr.strip().splitlines()) == 1
    assert ambiguous.stderr.startswith("muxd: execution exec_1 is ambiguous: ")
    assert all(whole in ambiguous.stderr for whole in sorted(full)[:4])
    unknown = next(h for h in ("000000", "ffffff", "123456") if not any(e[-8:].startswith(h) for e in full))
    missing = s.cli("cancel", unknown)
    assert missing.returncode != 0 and missing.stderr.strip().splitlines() == [f"muxd: no execution {unknown}"]


def test_task_ls_fits_the_terminal_and_its_short_ids_paste(muxd_server: MuxdTestServer) -> None:
    s = muxd_server
    for n in range(3):
        s.cli("task", "add", f"migrate the billing service's database schema, part {n}", "--plan",
              "a-plan-with-a-long-name", check=True)
    tasks = [t["id"] for t in as_json(s, "task", "ls")["tasks"]]
    for columns in WIDTHS:
        lines = on_terminal(s, columns, "task", "ls")
        assert len(lines) == 1 + len(tasks) and "STATE" in lines[0] and "TITLE" in lines[0], lines
        short = shown_ids(lines)
        assert all(whole.startswith(shown) and len(shown) >= 8 for shown, whole in zip(short, tasks))
        assert any("migrate the" in line for line in lines[1:])
    for shown, whole in zip(short, tasks):
        assert as_json(s, "task", "show", shown)["task"]["id"] == whole
    for columns in WIDTHS:
        shown_task = on_terminal(s, columns, "task", "show", short[0])
        assert any(line.split() in (["id", tasks[0]], [tasks[0]]) for line in shown_task), shown_task
        assert as_json(s, "history", "--task", shown)["total"] == 0  # taken as the task, not refused
    rejected = s.cli("task", "approve", "zz")
    assert rejected.returncode != 0 and len(rejected.stderr.strip().splitlines()) == 1
