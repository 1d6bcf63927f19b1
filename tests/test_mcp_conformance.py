"""The official MCP conformance suite (`@modelcontextprotocol/conformance`, server mode) against
`muxd mcp --http`, with a baseline of the scenarios expected to fail, each with its reason.

The suite cannot send headers, so a forwarder adding the bearer token stands in front
(muxd/testing/bearer_proxy.py). It needs Node >= 22: `.ci/install-conformance` installs both
into .ci-tools/conformance/ (or $MUXD_CONFORMANCE_DIR); the test skips when they are not there.
It fails on any failing scenario the baseline does not name, on a baseline entry that now
passes (remove it), and on one the suite no longer runs.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from muxd.testing.bearer_proxy import BearerProxy
from muxd.testing.mcp_http import HttpMcp, create_token
from muxd.testing.patience import stretched
from muxd.testing.server import MuxdTestServer

CONFORMANCE_DIR_ENV = "MUXD_CONFORMANCE_DIR"
BASELINE = Path(__file__).parent / "mcp_conformance_baseline.txt"
SUITE_TIMEOUT_S = 900.0
# Result directories are named server-<scenario>-<ISO time>.
_RESULT_DIR = re.compile(r"^server-(?P<scenario>.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$")
_FAILED = ("FAILURE", "WARNING")


def conformance_bin() -> tuple[Path | None, str]:
    """The directory holding `node` (>= 22) and `conformance`, or None and why they are missing."""
    root = Path(__file__).resolve().parents[1]
    directory = Path(os.environ.get(CONFORMANCE_DIR_ENV) or root / ".ci-tools" / "conformance")
    bin_dir = directory / "node_modules" / ".bin"
    if all(os.access(bin_dir / name, os.X_OK) for name in ("node", "conformance")):
        return bin_dir, ""
    skip_note = directory / "conformance.skip"
    if skip_note.exists():
        return None, f"the MCP conformance suite is not installed: {skip_note.read_text().strip()}"
    return None, f"the MCP conformance suite is not installed in {directory}: run .ci/install-conformance"


def read_baseline(path: Path = BASELINE) -> dict[str, str]:
    """{scenario: why it is expected to fail}: one `scenario  reason` a line, `#` comments."""
    expected: dict[str, str] = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        scenario, _, reason = line.partition(" ")
        assert reason.strip(), f"{path.name}:{number}: {scenario} has no reason"
        assert scenario not in expected, f"{path.name}:{number}: {scenario} twice"
        expected[scenario] = reason.strip()
    return expected


def scenario_results(out: Path) -> dict[str, list[str]]:
    """{scenario: its failed checks, "id: message"} from the suite's output directory."""
    results: dict[str, list[str]] = {}
    for checks_file in sorted(out.glob("*/checks.json")):
        named = _RESULT_DIR.match(checks_file.parent.name)
        assert named, f"unexpected result directory {checks_file.parent.name}"
        checks = json.loads(checks_file.read_text())
        results[named["scenario"]] = [f"{c.get('id')}: {c.get('errorMessage') or c.get('description')}"
                                      for c in checks if c.get("status") in _FAILED]
    return results


def test_baseline_names_a_reason_for_each_scenario() -> None:
    assert read_baseline()  # parses, each entry with a reason


def test_conformance_suite(muxd_server: MuxdTestServer, tmp_path: Path) -> None:
    bin_dir, why = conformance_bin()
    if bin_dir is None:
        pytest.skip(why)
    expected = read_baseline()
    token = create_token(muxd_server, "admin")
    mcp = HttpMcp(muxd_server)
    upstream = urlsplit(mcp.url)
    out = tmp_path / "results"
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", "NO_COLOR": "1"}
    try:
        with BearerProxy((upstream.hostname or "127.0.0.1", upstream.port or 0), token) as proxy:
            run = subprocess.run([str(bin_dir / "conformance"), "server", "--url", proxy.url(upstream.path),
                                  "-o", str(out)], env=env, capture_output=True, text=True, timeout=stretched(SUITE_TIMEOUT_S))
    finally:
        assert mcp.stop() == 0
    results = scenario_results(out)
    assert results, f"the suite ran no scenario ({run.returncode}): {run.stdout[-2000:]}{run.stderr[-2000:]}"
    failing = {name: checks for name, checks in results.items() if checks}
    unexpected = {name: checks for name, checks in failing.items() if name not in expected}
    assert not unexpected, f"scenarios failing outside the baseline: {json.dumps(unexpected, indent=1)}"
    now_passing = sorted(name for name in expected if name in results and name not in failing)
    assert not now_passing, f"baseline entries that pass now (remove them from {BASELINE.name}): {now_passing}"
    not_run = sorted(name for name in expected if name not in results)
    assert not not_run, f"baseline entries the suite no longer runs: {not_run}"
    assert not any("Traceback" in line for line in mcp.log), "".join(mcp.log)
