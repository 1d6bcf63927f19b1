"""The categories muxd's tools declare, and reading a `--tools` selection of them.

Without the SDK: `muxd mcp --tools …` checks its argument before anything heavy is imported.
"""

from __future__ import annotations

from muxd.errors import BadRequest

# Each tool declares one of these (registry.py refuses any other); `muxd mcp --tools` picks among them.
CATEGORIES: dict[str, str] = {
    "summary": "what agents are doing, cheaply: agent_summary, list_agents",
    "panes": "start, type into, read, resize, kill and wait on panes",
    "executions": "prompts sent as tracked executions and their history (seed 000, seed 003's tasks_*)",
    "tasks": "the task queue (seed 001): claim, report, complete, review, knowledge",
    "engine": "the tools themselves: list_tools, their metrics and call history",
}
CATEGORY_META_KEY = "muxd/category"  # where a tool's category is published, in its tools/list `_meta`


def parse_categories(text: str) -> frozenset[str]:
    """The categories of "summary,panes,…" (spaces allowed); bad_request naming an unknown one."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise BadRequest(f"--tools needs one or more of: {', '.join(CATEGORIES)}", field="tools")
    unknown = [name for name in names if name not in CATEGORIES]
    if unknown:
        raise BadRequest(f"--tools: unknown categor{'y' if len(unknown) == 1 else 'ies'} "
                         f"{', '.join(map(repr, unknown))}; known: {', '.join(CATEGORIES)}", field="tools")
    return frozenset(names)
