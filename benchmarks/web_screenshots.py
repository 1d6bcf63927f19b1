"""The README's pictures of `muxd web`: a private daemon with a few fake agents (one waiting for
a yes, one at work, others idle), some executions in its history (one failed) and tasks in
every column, served by `muxd web` and photographed by headless Debian Chromium (Selenium, as
the browser tests drive it) as PNGs under docs/web/.

    .venv/bin/python benchmarks/web_screenshots.py            # ~1 min; writes docs/web/*.png
    .venv/bin/python benchmarks/web_screenshots.py --out /tmp/shots --width 1200 --height 800

A page that does not exist in this tree (404) is skipped and said so. Nothing here is measured:
it lives beside the benchmarks because it starts the same private daemon they do.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from muxd.client.connection import Client  # noqa: E402
from muxd.protocol.task_messages import (ClaimTask, CompleteTask, CreateTask, ReviewTask,  # noqa: E402
                                         UpdateTaskStatus, VerificationSpec)
from muxd.testing.fake_agent_panes import agent_state, ask, start_fake_agent  # noqa: E402
from muxd.testing.server import MuxdTestServer  # noqa: E402
from muxd.testing.wait import wait_until  # noqa: E402
from muxd.testing.web import WebClient, WebView, browser_wait, log_in, make_token, start_browser  # noqa: E402

DOCS_WEB = Path(__file__).resolve().parent.parent / "docs" / "web"
BUSY_THINK_S = 3600.0  # the busy agent's turn outlasts the pictures
TURN_TIMEOUT_S = 60.0
# (file, path, what the page must show before it is taken: a CSS selector).
PAGES: tuple[tuple[str, str, str], ...] = (
    ("agents.png", "/", '#grid[data-connected="live"] .needs-you article'),
    ("tasks.png", "/tasks", '#grid[data-connected="live"] section.column article'),
    ("charts.png", "/charts", "svg.chart"),
    ("history.png", "/history", "main table"),
    ("failures.png", "/failures", "main"),
)


def fill(server: MuxdTestServer) -> dict[str, str]:
    """The fleet and its history: the panes by role."""
    planner = start_fake_agent(server, "planner")
    reviewer = start_fake_agent(server, "reviewer")
    builder = start_fake_agent(server, "builder", env={"MUXD_FAKE_THINK_S": str(BUSY_THINK_S)})
    docs = start_fake_agent(server, "docs", agent="codex")
    for pane, prompt in ((planner, "plan the parser rewrite"), (docs, "update the changelog"),
                         (planner, "split the lexer into its own module")):
        server.cli("submit", "-t", pane, "--wait", prompt, check=True)
    # One turn that failed: its time limit ran out.
    server.cli("submit", "-t", planner, "--timeout", "1", "--wait", "think about the flaky test for a while")
    wait_until(lambda: agent_state(server, planner) not in ("Thinking", "Generating", "ToolUse"),
               timeout=TURN_TIMEOUT_S, message="the timed-out turn over")
    server.cli("submit", "-t", builder, "build the release and run the test suite", check=True)
    wait_until(lambda: agent_state(server, builder) not in ("Idle", None), timeout=TURN_TIMEOUT_S,
               message="the builder at work")
    ask(server, reviewer)
    asyncio.run(_tasks(server))
    return {"planner": planner, "reviewer": reviewer, "builder": builder, "docs": docs}


async def _tasks(server: MuxdTestServer) -> None:
    """Tasks in every column of the board."""
    client = await Client.connect(server.socket_path)
    manual = VerificationSpec(kind="manual")
    try:
        async def made(title: str, priority: int = 2) -> str:
            reply = await client.call(CreateTask, title=title, plan="parser", priority=priority, verification=manual)
            return str(reply.task.id)

        async def worked(title: str) -> str:
            task_id = await made(title)
            await client.call(ClaimTask, task_id=task_id)
            await client.call(UpdateTaskStatus, task_id=task_id, status="in_progress")
            return task_id

        await made("Write the grammar's error messages", 1)
        await made("Benchmark the new lexer", 3)
        await client.call(ClaimTask, task_id=await made("Port the old tests"))
        await worked("Split the lexer into its own module")
        for title in ("Tokenise string escapes", "Handle tabs in indentation"):
            await client.call(CompleteTask, task_id=await worked(title))
        done = await worked("Rename the AST nodes")
        await client.call(CompleteTask, task_id=done)
        await client.call(ReviewTask, task_id=done, verdict="approve")
        failed = await worked("Drop Python 3.9 support")
        await client.call(CompleteTask, task_id=failed)
        await client.call(ReviewTask, task_id=failed, verdict="reject", comment="not this release", final=True)
    finally:
        await client.close()


def take(server: MuxdTestServer, view: WebView, panes: dict[str, str], out: Path, width: int, height: int) -> None:
    driver = start_browser()
    try:
        # The page's own size, whatever the window around it takes.
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                               {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        log_in(driver, view, make_token(server, "execute_advanced", "you"))
        web = WebClient(view.origin)
        web.login(make_token(server, "view_only", "probe"))
        executions = json.loads(server.run_here("history", "--json", check=True).stdout)["executions"]
        # The planner's first turn: a prompt, its response and its sources.
        first = next((e["id"] for e in reversed(executions) if e.get("status") == "success"), None)
        pages = [*PAGES, ("pane.png", f"/pane/{quote(panes['reviewer'], safe='')}", "main")]
        if first:
            pages.append(("execution.png", f"/execution/{quote(first, safe='')}", "main"))
        for name, path, ready in pages:
            if web.get(path).status == 404 and path != "/failures":
                print(f"skipped {path}: not in this tree", flush=True)
                continue
            driver.get(view.origin + path)
            browser_wait(driver, lambda d: d.execute_script("return document.querySelector(arguments[0]) !== null;",
                                                            ready), f"{path} drawn")
            target = out / name
            driver.save_screenshot(str(target))
            print(f"{target} ({target.stat().st_size // 1024} KB)", flush=True)
    finally:
        driver.quit()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DOCS_WEB)
    parser.add_argument("--width", type=int, default=1200)
    parser.add_argument("--height", type=int, default=800)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    server = MuxdTestServer().start()
    view = None
    try:
        print("starting the fake agents and their history …", flush=True)
        panes = fill(server)
        view = WebView(server)
        take(server, view, panes, args.out, args.width, args.height)
    finally:
        if view is not None:
            view.stop()
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
