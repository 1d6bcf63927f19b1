"""Codex CLI tool cells: `• Ran cmd`, `• Running cmd`, `• Explored` with its `Read`/`List`
items, `• Edited file (+1 -0)`, `• Called server.tool(…)`; which tool each is, and every
tool use on a screen as `ToolSighting`s."""

from __future__ import annotations

from collections.abc import Sequence

from muxd.detectors._lazy_re import lazy_compile
from muxd.detectors._text import LineMemo
from muxd.detectors.state import ToolSighting

# The shell tool Codex asks approval for; its name is not on screen.
EXEC_TOOL = "exec_command"
PATCH_TOOL = "apply_patch"
TOOL_CELL = lazy_compile(
    r"^[•◦] (?P<verb>Ran|Running|Explored|Exploring|Edited|Editing|Added|Deleted|Called|Calling|"
    r"Searched|Searching|Viewed|Updated Plan|Waited|Waiting for background terminal|Interacted)\b\s*(?P<rest>.*)$"
)
RUNNING_VERBS = frozenset({"Running", "Exploring", "Editing", "Calling", "Searching",
                           "Waiting for background terminal"})
# A running cell's verb once it is done: both frames count as one use.
_DONE_VERB = {"Running": "Ran", "Editing": "Edited", "Calling": "Called", "Searching": "Searched"}
_EXPLORE_ITEM = lazy_compile(r"^\s+(?:└\s+)?(?P<item>(?:Read|List|Search|Listed|Searched)\s+\S.*)$")


def cell_tool(line: str) -> str:
    """The tool a cell shows: exec_command, apply_patch, an MCP tool's name, web_search, …"""
    match = TOOL_CELL.match(line)
    verb = match.group("verb") if match else ""
    if verb in ("Edited", "Editing", "Added", "Deleted"):
        return PATCH_TOOL
    if verb in ("Called", "Calling") and match:
        return match.group("rest").split("(")[0].strip() or "mcp"
    if verb in ("Searched", "Searching"):
        return "web_search"
    if verb == "Viewed":
        return "view_image"
    if verb == "Updated Plan":
        return "update_plan"
    return EXEC_TOOL


def tool_sightings(lines: Sequence[str]) -> list[ToolSighting]:
    """Every finished tool cell on screen (`Ran X`, `Edited Y`…): in-progress ones are skipped,
    so a command the user declines is never counted."""
    sightings: list[ToolSighting] = []
    parsed = list(map(_SIGHTING_LINES.__getitem__, lines))
    if parsed.count(_TEXT_ROW) + parsed.count(_INDENTED_ROW) == len(parsed):
        return sightings  # the common case, told without a loop: no cell, no explored item
    exploring = False
    for cell, sighting, keeps_exploring in parsed:
        if cell is not None:
            exploring = cell == "explore"
            if sighting is not None:
                sightings.append(sighting)
            continue
        if exploring:
            if sighting is not None:
                sightings.append(sighting)
                continue
            exploring = keeps_exploring
    return sightings


def _sighting_line(line: str) -> tuple[str | None, ToolSighting | None, bool]:
    """What one line means to tool_sightings: (None, or the kind of tool cell it starts:
    "explore", "running", "done"; the tool use it shows (for a line that is not a cell:
    if it is an item under `Explored`); whether an indented line keeps an Explored cell open)."""
    match = TOOL_CELL.match(line)
    if match:
        verb = match.group("verb")
        if verb in ("Explored", "Exploring"):
            return "explore", None, False
        if verb in _DONE_VERB:
            return "running", None, False  # still running or awaiting approval: a use once done
        rest = match.group("rest").strip()
        return "done", ToolSighting(cell_tool(line), f"{verb} {rest}".strip()), False
    item = _EXPLORE_ITEM.match(line)
    if item:
        return None, ToolSighting(EXEC_TOOL, item.group("item").strip()), not line[:1].strip() and bool(line.strip())
    return _INDENTED_ROW if not line[:1].strip() and line.strip() else _TEXT_ROW


# What most rows are to tool_sightings: no cell and no item; indented, or not.
_INDENTED_ROW: tuple[str | None, ToolSighting | None, bool] = (None, None, True)
_TEXT_ROW: tuple[str | None, ToolSighting | None, bool] = (None, None, False)


_SIGHTING_LINES = LineMemo(_sighting_line)
