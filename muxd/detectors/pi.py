"""pi (the pi coding agent, 0.73: an inline TUI of its own): state from the rows around its
editor, which sits between two rules above a two-row footer.

     $ for i in 1 2 3; do echo step $i; sleep 1; done   <- bash tool: `Elapsed` while it runs,
     step 1                                                `Took` once done
     Elapsed 1.0s
     Error: 500 fake overload                           <- a failed request
     ⠴ Retrying (1/3) in 2s... (escape to cancel)       <- spinner (`Working...`) while busy
    ──────────────────────────────────────────
     please change the colour                           <- editor (the draft)
    ──────────────────────────────────────────
    /tmp/work (main)                                    <- cwd (git branch)
    ↑1.3k ↓17 $0.001 0.5%/128k (auto)      fake-model   <- tokens in/out, cost, context, model

pi asks before nothing (it has no permission dialogs): no AwaitingConfirmation is read. An
overlay that replaces the editor (the /model picker, /settings) reads Unknown.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from msgspec.structs import replace

from muxd.detectors._agent_cli import (
    agent_confidence,
    error_kind,
    exit_or_dialog,
    input_hidden,
    last_non_empty,
)
from muxd.detectors._lazy_re import lazy_compile
from muxd.detectors._text import LineMemo, join_input_rows, parse_count, parse_duration, stripped_rows
from muxd.detectors.base import ScreenContext
from muxd.detectors.state import AgentError, AgentState, Detection, ToolSighting

NAME = "pi"
_PROCESS_NAMES = frozenset({"pi"})
_PACKAGES = ("@mariozechner/pi-coding-agent", "pi-coding-agent/dist")
# Non-blank rows under the editor's lower rule: the footer's two and any extension's status rows.
FOOTER_ROWS_MAX = 4
# Rows of a draft between the editor's rules.
EDITOR_ROWS_MAX = 12
# Non-blank rows above the spinner searched for the running tool or the turn's error.
TURN_ROWS_MAX = 40
SCREEN_CONFIDENCE = 0.9
# pi's editor stays at rest for ~1 s after Enter before `Working...` (measured live, a loaded
# machine): that Idle reads Unknown this long at most (submit_uptake.py).
PI_SUBMIT_UPTAKE_S = 3.0

_RULE = lazy_compile(r"^[─━]{20,}$")
# `↑1.3k ↓17 R12 W3 $0.001 (sub) 0.5%/128k (auto)   fake-model • medium`; `?%/128k` before a request.
_STATS = lazy_compile(
    r"^\s*(?:↑(?P<up>[\d.,]+[kM]?)\s+)?(?:↓(?P<down>[\d.,]+[kM]?)\s+)?(?:[RW][\d.,]+[kM]?\s+)*"
    r"(?:\$(?P<cost>[\d.]+)\s+)?(?:\(sub\)\s+)?(?P<pct>[\d.]+|\?)%/(?P<window>[\d.,]+[kM]?)"
    r"(?:\s+\(auto\))?(?:\s{2,}(?P<model>\S.*?))?\s*$")
_BANNER = lazy_compile(r"^\s?pi v\d+\.\d+")
_SPINNER = lazy_compile(r"^\s*[\u2800-\u28ff]\s+(?P<desc>\S.*?)(?:\s+\(esc(?:ape)? to cancel\))?\s*$")
_RETRYING = lazy_compile(r"^Retrying\b")
_BASH = lazy_compile(r"^\s*\$ (?P<command>\S.*)$")
_TOOL_TIME = lazy_compile(r"^\s*(?P<word>Elapsed|Took) (?P<seconds>[\d.]+)s\s*$")
_ERROR = lazy_compile(r"^\s*Error: (?P<message>\S.*?)\s*$")


class PiDetector:
    name = NAME
    submit_uptake_s = PI_SUBMIT_UPTAKE_S

    def identify(self, ctx: ScreenContext) -> float:
        # pi leaves its transcript above the shell prompt, nothing of its own: an exit is not told
        return agent_confidence(ctx, _PROCESS_NAMES, _PACKAGES, _screen_score, lambda lines: False)

    def detect(self, ctx: ScreenContext, prev: AgentState | None) -> Detection:
        lines: list[str] = stripped_rows(ctx.lines)
        tools = _tool_sightings(lines)
        found = exit_or_dialog(ctx, NAME, lines, tools, lambda *_args, **_kw: None, lambda _rows: None)
        if found is not None:
            return found
        editor = _editor(lines)
        if editor is None:
            return replace(input_hidden(NAME, lines, "no-editor"), tools_seen=tools)
        upper, lower, stats_row = editor
        stats = _STATS_ROWS[lines[stats_row]]
        facts = _footer_facts(stats)
        spinner_row = _row_above(lines, upper)
        spinner = _SPINNERS[lines[spinner_row]] if spinner_row is not None else None
        error = _turn_error(lines, spinner_row if spinner is not None else upper)
        if spinner is not None and spinner_row is not None:
            running = _running_tool(lines, spinner_row)
            if running is not None:
                return Detection(agent_type=NAME, state="ToolUse", rule="tool-running", line=lines[running[0]].strip(),
                                 description=spinner, elapsed_s=running[1], tool=running[2], tools_seen=tools,
                                 error=error, **facts)
            return Detection(agent_type=NAME, state="Thinking", rule="spinner", line=lines[spinner_row].strip(),
                             description=spinner, tools_seen=tools, error=error if _RETRYING.match(spinner) else None,
                             **facts)
        draft = join_input_rows(lines[upper + 1:lower], ctx.columns)
        return Detection(agent_type=NAME, state="Idle", rule="editor", line=lines[stats_row].strip(),
                         tools_seen=tools, error=error, input_text=draft, **facts)


def _editor(lines: Sequence[str]) -> tuple[int, int, int] | None:
    """(upper rule, lower rule, footer stats row) of the editor, when the screen ends with it."""
    last = last_non_empty(lines)
    if last is None:
        return None
    stats_row = None
    seen = 0
    for row in range(last[0], -1, -1):
        line = lines[row]
        if _RULES[line]:
            if stats_row is None:
                return None
            lower = row
            break
        if line.strip():
            if stats_row is None and _STATS_ROWS[line] is not None:
                stats_row = row
            seen += 1
            if seen > FOOTER_ROWS_MAX:
                return None
    else:
        return None
    for row in range(lower - 1, max(-1, lower - EDITOR_ROWS_MAX - 2), -1):
        if _RULES[lines[row]]:
            return row, lower, stats_row
    return None


def _footer_facts(stats: re.Match[str] | None) -> dict[str, object]:
    """tokens (in + out), cost, context left and model from the footer's stats row."""
    if stats is None:
        return {}
    up, down = (parse_count(stats.group(key) or "0") or 0 for key in ("up", "down"))
    pct = stats.group("pct")
    model = stats.group("model")
    return {"tokens": up + down if stats.group("up") or stats.group("down") else None,
            "cost_usd": float(stats.group("cost")) if stats.group("cost") else None,
            "context_left_pct": round(100.0 - float(pct), 1) if pct != "?" else None,
            "model": model.split(" • ")[0].strip() if model else None}


def _row_above(lines: Sequence[str], row: int) -> int | None:
    for index in range(row - 1, -1, -1):
        if lines[index].strip():
            return index
    return None


def _running_tool(lines: Sequence[str], spinner_row: int) -> tuple[int, int | None, str | None] | None:
    """(row, seconds so far, tool) of the bash tool still running above the spinner: the last
    block is its `Elapsed 3.0s` row (only bash shows one); the tool is named once its
    `$ command` row is on screen (a long output scrolls it off a short pane). None when the last
    block is anything else."""
    row = _row_above(lines, spinner_row)
    if row is None:
        return None
    timing = _TOOL_TIMES[lines[row]]
    if timing is None or timing[0] != "Elapsed":
        return None
    for index in range(row - 1, max(-1, row - TURN_ROWS_MAX), -1):
        if _BASH_ROWS[lines[index]] is not None:
            return index, timing[1], "bash"
    return row, timing[1], None


def _turn_error(lines: Sequence[str], end: int) -> AgentError | None:
    """The `Error: …` row that is the last block above row `end`."""
    row = _row_above(lines, end)
    if row is None:
        return None
    match = _ERROR.match(lines[row])
    if match is None:
        return None
    message = match.group("message")
    return AgentError(type=error_kind(message), message=message)


def _tool_sightings(lines: Sequence[str]) -> list[ToolSighting]:
    """Every bash tool use on screen: a `$ command` row with its `Elapsed`/`Took` row below it
    (before the next command), so a command still streaming in from the model is not counted
    until it runs, and the use is one however its timing row changes."""
    sightings: list[ToolSighting] = []
    command: str | None = None
    for line in lines:
        match = _BASH_ROWS[line]
        if match is not None:
            command = match
        elif command is not None and _TOOL_TIMES[line] is not None:
            sightings.append(ToolSighting("bash", f"bash {command}"))
            command = None
    return sightings


def _screen_score(lines: list[str]) -> float:
    if _editor(lines) is not None:
        return SCREEN_CONFIDENCE
    return SCREEN_CONFIDENCE if any(_BANNER.match(line) for line in lines[:8]) else 0.0


def _tool_time(line: str) -> tuple[str, int | None] | None:
    match = _TOOL_TIME.match(line)
    return (match.group("word"), parse_duration(f"{float(match.group('seconds')):.0f}s")) if match else None


_RULES = LineMemo(lambda line: bool(_RULE.match(line)))
_STATS_ROWS = LineMemo(_STATS.match)
_SPINNERS = LineMemo(lambda line: (m.group("desc") if (m := _SPINNER.match(line)) else None))
_TOOL_TIMES = LineMemo(_tool_time)
_BASH_ROWS = LineMemo(lambda line: (m.group("command").strip() if (m := _BASH.match(line)) else None))
