"""Pane control tools: list, create, send input, read, resize, kill."""

from __future__ import annotations

import asyncio
import os
from typing import Annotated, Any

import msgspec
from mcp_types import ToolAnnotations
from pydantic import Field

from muxd.config import (
    SUBMIT_GAP_S,
    DEFAULT_COLUMNS, DEFAULT_LINES, MAX_COLUMNS, MAX_LINES, MIN_COLUMNS, MIN_LINES, NAME_MAX_CHARS, PANE_TAGS_MAX,
    TAG_MAX_CHARS,
)
from muxd.errors import BadRequest
from muxd.executions.programs import is_one_execution
from muxd.keys import key_name_to_text
from muxd.mcp_server.link import current_client
from muxd.mcp_server.read_cursor import CURSOR_MAX_CHARS, content_lines, cursor_end, lines_since, make_cursor
from muxd.mcp_server.registry import ToolRegistry
from muxd.mcp_server.schemas import (
    KillPaneOutput, ListPanesOutput, PaneOutput, ReadPaneOutput, ResizePaneOutput, SendInputOutput,
)
from muxd.mcp_server.summary_tools import READ_ONLY, PaneId
from muxd.protocol.messages import (
    CapturePane, KillPane, ListPanes, NewSession, PaneInfo, ResizePane, SendKeys, Spawn, Summary,
)

READ_PANE_LINES_DEFAULT = 40
READ_PANE_LINES_MAX = 1000
SEND_INPUT_TEXT_MAX_CHARS = 64 * 1024
SEND_INPUT_KEYS_MAX = 64
CREATE_PANE_ARGS_MAX = 256
CREATE_PANE_ENV_MAX = 128
CREATE_PANE_ARG_MAX_CHARS = 32 * 1024  # one argument or one environment value
CREATE_PANE_PATH_MAX_CHARS = 4096  # PATH_MAX

MODERATE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                           open_world_hint=False)
IDEMPOTENT = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                             open_world_hint=False)
DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True,
                              open_world_hint=False)

Columns = Annotated[int, Field(description="width", ge=MIN_COLUMNS, le=MAX_COLUMNS)]
Lines = Annotated[int, Field(description="height", ge=MIN_LINES, le=MAX_LINES)]
# PaneInfo's fields an orchestrator acts on; the tmux-format rest (window ids, layout, cursor,
# scrollback counters) is the CLI's `list-panes --json`.
_PANE_FIELDS = ("id", "session", "name", "tags", "command", "cwd", "pid", "foreground", "width", "height", "status",
                "exit_code", "created_at", "source", "attention", "attention_since", "attention_text")


def pane_record(pane: PaneInfo) -> PaneOutput:
    """A pane as MCP shows it: its main fields, the agent state cut to its type and state."""
    record: dict[str, Any] = {name: getattr(pane, name) for name in _PANE_FIELDS}
    record["tags"], record["command"] = list(pane.tags), list(pane.command)
    record["agent_type"] = pane.agent.agent_type
    record["state"] = pane.agent.activity.state
    if pane.emulator_failed:
        record["emulator_failed"] = True
    return record  # type: ignore[return-value]


def _check_count(field: str, items: list[Any] | dict[str, Any], most: int) -> None:
    if len(items) > most:
        raise BadRequest(f"{field} has {len(items)} entries, at most {most} allowed", field=field)


def _check_lengths(field: str, items: list[str], most: int) -> None:
    longest = max(map(len, items), default=0)
    if longest > most:
        raise BadRequest(f"{field}: an entry has {longest} characters, at most {most} allowed", field=field)


def register_pane_tools(tools: ToolRegistry) -> None:
    @tools.tool(category="panes", risk="safe", annotations=READ_ONLY)
    async def list_panes() -> ListPanesOutput:
        """Every pane with its session, name, tags, command, size, status and agent state."""
        panes = (await current_client().call(ListPanes, all=True)).panes
        return {"panes": [pane_record(p) for p in panes]}

    @tools.tool(category="panes", risk="moderate", annotations=MODERATE)
    async def create_pane(
        command: Annotated[list[str], Field(description="program and arguments; empty runs the user's shell")] = [],
        name: Annotated[str | None, Field(description="a unique name to target the pane by")] = None,
        tags: Annotated[list[str], Field(description="free tags, e.g. worker")] = [],
        cwd: Annotated[str | None, Field(description="absolute working directory (default: where muxd mcp runs)")] = None,
        env: Annotated[dict[str, str], Field(description="extra environment variables")] = {},
        columns: Columns = DEFAULT_COLUMNS,
        lines: Lines = DEFAULT_LINES,
    ) -> PaneOutput:
        """Start a program (an agent CLI or a shell) in a new pane of its own session; returns the pane."""
        _check_count("command", command, CREATE_PANE_ARGS_MAX)
        _check_count("env", env, CREATE_PANE_ENV_MAX)
        _check_count("tags", tags, PANE_TAGS_MAX)
        _check_lengths("command", command, CREATE_PANE_ARG_MAX_CHARS)
        _check_lengths("env", [*env, *env.values()], CREATE_PANE_ARG_MAX_CHARS)
        _check_lengths("tags", tags, TAG_MAX_CHARS)
        _check_lengths("name", [name or ""], NAME_MAX_CHARS)
        _check_lengths("cwd", [cwd or ""], CREATE_PANE_PATH_MAX_CHARS)
        if cwd is not None and not os.path.isabs(cwd):
            raise BadRequest(f"cwd must be an absolute path, got {cwd!r}", field="cwd")
        # Like the CLI: a pane starts where its caller is, i.e. where the MCP client launched us.
        # A command (not a shell, not an agent CLI) is recorded in the history as one execution.
        spawn = Spawn(command=command, cwd=cwd or os.getcwd(), env=env, pane_name=name, tags=tags,
                      record_as="mcp" if is_one_execution(command) else None)
        reply = await current_client().call(NewSession, columns=columns, lines=lines, spawn=spawn)
        record = pane_record(reply.pane)
        if reply.execution_id is not None:  # wait_for execution_id=… / get_execution_result follow it
            record["execution_id"] = reply.execution_id
        return record

    @tools.tool(category="panes", risk="moderate", annotations=MODERATE)
    async def send_input(
        pane_id: PaneId,
        text: Annotated[str, Field(description="text typed as is")] = "",
        keys: Annotated[list[str], Field(description="key names sent after the text: Enter, Escape, C-c, Up, F5…")] = [],
        submit: Annotated[bool, Field(description="press Enter at the end, as a separate write")] = False,
    ) -> SendInputOutput:
        """Type text and/or keys into a pane, e.g. a prompt for an agent with submit=true."""
        if len(text) > SEND_INPUT_TEXT_MAX_CHARS:
            raise BadRequest(f"text has {len(text)} characters, at most {SEND_INPUT_TEXT_MAX_CHARS} allowed",
                             field="text")
        _check_count("keys", keys, SEND_INPUT_KEYS_MAX)
        unknown = [k for k in keys if key_name_to_text(k) is None]
        if unknown:
            raise BadRequest(f"keys: unknown key name(s) {', '.join(map(repr, unknown))}", field="keys")
        if not (text or keys or submit):
            raise BadRequest("send_input needs text, keys or submit", field="text")
        if text:
            await current_client().call(SendKeys, target=pane_id, keys=[text], literal=True)
        if keys:
            await current_client().call(SendKeys, target=pane_id, keys=keys)
        if submit:
            if text or keys:
                await asyncio.sleep(SUBMIT_GAP_S)
            await current_client().call(SendKeys, target=pane_id, keys=["Enter"])
        return {"pane_id": pane_id, "sent_chars": len(text), "keys": len(keys), "submitted": submit}

    @tools.tool(category="panes", risk="safe", annotations=READ_ONLY)
    async def read_pane(
        pane_id: PaneId,
        lines: Annotated[int, Field(description="the last N lines of screen and scrollback", ge=1,
                                    le=READ_PANE_LINES_MAX)] = READ_PANE_LINES_DEFAULT,
        strip_ansi: Annotated[bool, Field(description="plain text (true) or with colour escapes")] = True,
        cursor: Annotated[str | None, Field(
            description="the cursor a previous read_pane returned: only lines new since then",
            max_length=CURSOR_MAX_CHARS)] = None,
    ) -> ReadPaneOutput:
        """The raw text of a pane's last lines, and a cursor to read only new ones next time.

        Costly in tokens: prefer agent_summary to check on agents.
        """
        client = current_client()
        resolved = (await client.call(Summary, target=pane_id)).summary.pane_id

        async def capture(**where: Any) -> tuple[list[str], int]:
            captured = await client.call(CapturePane, target=resolved, escapes=not strip_ansi, **where)
            return content_lines(captured.text), captured.first_row

        # `lines` rows of scrollback plus the screen always hold the last `lines` lines of content.
        last_lines = {"start": -lines}
        record: dict[str, Any] = {"pane_id": pane_id}
        if cursor is None:
            rows, first_row = await capture(**last_lines)
            shown = rows[-lines:]
        else:
            # Only from the anchor on: row numbers stay put as the pane scrolls (see read_cursor.py).
            rows, first_row = await capture(from_row=max(0, cursor_end(cursor, resolved) - 2))
            since = lines_since(cursor, resolved, rows, first_row)  # valid only with the same strip_ansi
            record["redrawn"] = since.redrawn
            if since.redrawn:
                rows, first_row = await capture(**last_lines)
                shown = rows[-lines:]
            else:
                shown = since.lines[-lines:]
                record["skipped"] = max(0, len(since.lines) - lines)
                record["repeated_last_line"] = since.repeated_last_line
        record.update(lines=len(shown), text="\n".join(shown), cursor=make_cursor(resolved, rows, first_row))
        return record  # type: ignore[return-value]

    @tools.tool(category="panes", risk="moderate", annotations=IDEMPOTENT)
    async def resize_pane(pane_id: PaneId, columns: Columns, lines: Lines) -> ResizePaneOutput:
        """Change a pane's size; the program sees SIGWINCH. In a split, the dividers move as far as
        the neighbours allow (bad_request when no divider runs that way)."""
        await current_client().call(ResizePane, target=pane_id, columns=columns, lines=lines)
        return {"pane_id": pane_id, "columns": columns, "lines": lines}

    @tools.tool(category="panes", risk="dangerous", annotations=DESTRUCTIVE)
    async def kill_pane(pane_id: PaneId) -> KillPaneOutput:
        """Kill a pane's program and remove the pane. Cannot be undone."""
        await current_client().call(KillPane, target=pane_id)
        return {"pane_id": pane_id, "killed": True}
