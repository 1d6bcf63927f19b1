"""The output shape of `wait_for`, one TypedDict for its kinds of wait: one pane (its fields at
the top), several panes or panes needing attention (`panes`), executions (`executions`).

A pane's `summary` is agent_summary's result without recent output, and an execution is a row
of list_recent_executions: their schemas are those tools' own, not repeated here.
"""

from __future__ import annotations

from typing import Any

from typing_extensions import NotRequired, TypedDict


class WaitPaneOutput(TypedDict):
    pane_id: str
    state: str | None
    summary: dict[str, Any] | None  # agent_summary's shape; null once the pane is gone
    matched: NotRequired[bool]
    reason: NotRequired[str]
    elapsed_s: NotRequired[float]
    exit_code: NotRequired[int | None]
    line: NotRequired[str]          # the screen line the pattern matched
    # A pane needing attention: what it needs (waiting, limited, failed, finished), since when, its words.
    attention: NotRequired[str]
    since: NotRequired[float]
    question: NotRequired[str | None]
    error: NotRequired[str | None]
    resets_at: NotRequired[float | None]
    execution_id: NotRequired[str | None]


class WaitForOutput(TypedDict):
    matched: bool
    reason: str       # state, pattern, exited, all, any, attention, ended, timed_out
    elapsed_s: float
    since: NotRequired[float | None]  # attention: the newest need's start (pass as `after` next time)
    panes: NotRequired[list[WaitPaneOutput]]
    executions: NotRequired[list[dict[str, Any]]]
    # One pane waited on: its fields.
    pane_id: NotRequired[str]
    state: NotRequired[str | None]
    exit_code: NotRequired[int | None]
    line: NotRequired[str]
    summary: NotRequired[dict[str, Any] | None]
