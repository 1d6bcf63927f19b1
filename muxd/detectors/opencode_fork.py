"""opencode's screen read in Python: the base of Kilo's detector (kilo.py; Kilo is an opencode
fork). opencode itself is read by its manifest (manifests/opencode.toml); this class is not
registered under opencode's name.

opencode (opentui TUI, 1.x): a deliberately small detector. No real opencode screen was
captured for muxd; these markers come from public material only (opencode's TUI source and
issue quotes), so it reads the few rows under the input box and little else:

    ┃  Ask anything…                                   <- input box (left bar)
    ┃  Build  Big Pickle  OpenCode Zen                 <- agent, model, provider
     ⠋ esc interrupt                tab agents  ctrl+p commands   <- `esc interrupt` only while busy

A permission request replaces the input box with `△ Permission required`, a title
(`# Shell command`, `→ Edit src/a.ts`) and the buttons `Allow once  Allow always  Reject`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from muxd.detectors._agent_cli import agent_confidence, error_kind, is_shell_prompt
from muxd.detectors._lazy_re import lazy_compile
from muxd.detectors._text import LineMemo, join_input_rows
from muxd.detectors.base import ScreenContext
from muxd.detectors.state import AgentError, AgentState, Confirmation, Detection

NAME = "opencode"
_PROCESS_NAMES = frozenset({"opencode", ".opencode"})
_PACKAGES = ("opencode-ai", "/opencode-linux", "/opencode-darwin", "/opencode-windows")
# Non-empty rows at the bottom that hold the input box, its status row and a permission prompt.
BOTTOM_ROWS_MAX = 12
PERMISSION_OPTIONS = ("Allow once", "Allow always", "Reject")

_PERMISSION = lazy_compile(r"△\s+Permission required")
# `esc interrupt` under the box while a turn runs; Kilo's `⬝⬝■■⬝⬝⬝⬝` progress bar before it
# (alone on its row when a narrow pane wraps the words away).
_BUSY = lazy_compile(r"\besc (?:again to )?interrupt\b|\bpress esc to exit cancel\b|^\s*[⬝■]{4,}(?:\s|$)",
                   re.IGNORECASE)
# The spinner before the message: braille, or the `⬝⬝■■` progress bar (Kilo 7).
_RETRY = lazy_compile(
    r"^\s*(?:[┃│]\s*)?(?:[\u2800-\u28ff]\s+|[⬝■]+\s+)?(?P<message>\S.*?)\s*\[retrying (?:in \S+ )?attempt #\d+\]")
# In a narrow pane the status row wraps: `… 2.5K ctrl+p` over `commands`.
_IDLE_FOOTER = lazy_compile(r"\bctrl\+p commands\b|\btab agents\b|\bctrl\+p$")
_OLD_IDLE = lazy_compile(r"press enter to send the message, write \\ and enter to add a new line")
_THINKING_OLD = lazy_compile(r"█\s+Thinking\.\.\.")
_MODEL_ROW = lazy_compile(r"^\s*[┃│]?\s*(?:Build|Plan)\s{2}(?P<model>\S(?:.*?\S)?)\s{2,}\S")
_USAGE = lazy_compile(r"\b[\d,]+ \((?P<pct>\d{1,3})%\)(?: · \$(?P<cost>[\d.]+))?")
_TITLE = lazy_compile(r"^\s*(?:[┃│]\s*)?(?P<icon>[#→✱%◈◇←⟳⚙])\s+(?P<title>\S.*?)\s*$")
_INPUT_BAR = lazy_compile(r"^\s*┃ {0,2}")
# What opencode shows (dimmed) in an empty input box: "Ask anything... "<an example>"".
_PLACEHOLDER = lazy_compile(r"^Ask anything(?:\.\.\.|…)")
INPUT_FRAME_COLUMNS = 4  # the bar and the padding around the text
_ICON_TOOLS = {"%": "webfetch", "◈": "websearch", "◇": "codesearch", "←": "external_directory",
               "⟳": "doom_loop"}

_SIGNATURES: tuple[tuple[re.Pattern[str], float], ...] = (
    (_PERMISSION, 0.7),
    (_OLD_IDLE, 0.7),
    (lazy_compile(r"\besc (?:again to )?interrupt\b.*\bctrl\+p commands\b"), 0.75),
    (lazy_compile(r"\btab agents\b.*\bctrl\+p commands\b"), 0.7),
)


class OpencodeDetector:
    """opencode's screen; a fork that draws the same TUI (Kilo) subclasses it with its own
    process, mode names and marks."""

    name = NAME
    process_names = _PROCESS_NAMES
    packages = _PACKAGES
    model_row = _MODEL_ROW

    def identify(self, ctx: ScreenContext) -> float:
        return agent_confidence(ctx, self.process_names, self.packages, self.screen_score, self.exit_shown)

    def exit_shown(self, lines: list[str]) -> bool:
        # opencode's exit leaves nothing known on screen: a shell prompt never reads as opencode
        return False

    def screen_score(self, lines: list[str]) -> float:
        if fork_marked(lines):
            return 0.0  # a fork's own words (Kilo's modes, its name): not opencode
        return row_weight_of(lines)

    def detect(self, ctx: ScreenContext, prev: AgentState | None) -> Detection:
        name = self.name
        if ctx.exited:
            return Detection(agent_type=name, state="Exited", rule="pane-exited")
        bottom = _bottom(ctx.lines)
        if bottom and is_shell_prompt(bottom[-1]):
            # opencode left its alternate screen: the shell's own is back
            return Detection(agent_type=name, state="Exited", rule="shell-prompt", line=bottom[-1].strip())
        facts = self.facts(ctx.lines, bottom)
        for index, line in enumerate(bottom):
            # the prompt replaces the input box: input-box rows below it mean it is old text
            if _PERMISSION.search(line) and not any(_IDLE_FOOTER.search(row) or _BUSY.search(row)
                                                    for row in bottom[index + 1:]):
                options = [option for option in PERMISSION_OPTIONS if any(option in row for row in bottom[index:])]
                return Detection(agent_type=name, state="AwaitingConfirmation", rule="permission-required",
                                 line=line.strip(), tool=_permission_tool(bottom[index + 1:index + 3]),
                                 confirmation=Confirmation(prompt="Permission required", options=options), **facts)
        for line in reversed(bottom):
            retry = _RETRY.match(line)
            if retry:
                message = retry.group("message")
                return Detection(agent_type=name, state="Thinking", rule="retrying", line=line.strip(),
                                 error=AgentError(type=error_kind(message), message=message), **facts)
            if _BUSY.search(line) or _THINKING_OLD.search(line):
                return Detection(agent_type=name, state="Thinking", rule="esc-interrupt", line=line.strip(), **facts)
        idle = next((line for line in reversed(bottom) if _IDLE_FOOTER.search(line) or _OLD_IDLE.search(line)), None)
        if idle is not None:
            return Detection(agent_type=name, state="Idle", rule="input-footer", line=idle.strip(),
                             input_text=_draft(bottom, ctx.columns, self.model_row), **facts)
        return Detection(agent_type=name, state="Unknown", rule="no-footer", model=facts.get("model"))

    def facts(self, lines: Sequence[str], bottom: list[str]) -> dict[str, Any]:
        """The model, context and cost the rows under the input box show (Detection fields)."""
        model = next((m.group("model") for line in bottom if (m := self.model_row.match(line))), None)
        usage = next((m for line in bottom if (m := _USAGE.search(line))), None)
        return {"model": model, "context_left_pct": 100.0 - float(usage.group("pct")) if usage else None,
                "cost_usd": float(usage.group("cost")) if usage and usage.group("cost") else None}


def _draft(bottom: Sequence[str], columns: int, model_row: re.Pattern[str]) -> str | None:
    """The text typed in the input box: the rows behind its left bar above the agent and model
    row; None when it is empty or shows its placeholder."""
    row = next((index for index, line in enumerate(bottom) if model_row.match(line)), None)
    if row is None:
        return None
    rows: list[str] = []
    for line in reversed(bottom[:row]):
        bar = _INPUT_BAR.match(line)
        if bar is None:
            break
        rows.insert(0, line[bar.end():])
    text = join_input_rows(rows, columns - INPUT_FRAME_COLUMNS)
    return None if text is None or _PLACEHOLDER.match(text) else text


def row_weight_of(lines: list[str]) -> float:
    """The strongest opencode signature on the rows under the input box."""
    return max([_ROW_WEIGHTS[line] for line in _bottom(lines)], default=0.0)


def footer_shown(lines: list[str]) -> bool:
    """True when a row under the input box is one of opencode's status rows (at rest, busy,
    retrying) or its permission prompt."""
    return any(_IDLE_FOOTER.search(line) or _BUSY.search(line) or _PERMISSION.search(line) or _RETRY.match(line)
               for line in _bottom(lines))


def fork_marked(lines: list[str]) -> bool:
    """True when the rows under the input box hold a fork's own words (Kilo's)."""
    return any(_FORK_MARKS[line] for line in _bottom(lines))


def _row_weight(line: str) -> float:
    return max((weight for pattern, weight in _SIGNATURES if pattern.search(line)), default=0.0)


# The strongest signature on a row, by its text: every identify reads the same bottom rows.
_ROW_WEIGHTS = LineMemo(_row_weight)
# Kilo's words on a row under its input box: its mode names on the mode and model row
# (`┃  Code  · Fake Model Fake`), its name in a prompt ("Tell Kilo what to do differently").
KILO_MODE_ROW = lazy_compile(r"^\s*[┃│]?\s*(?:Code|Ask|Architect|Debug|Orchestrator|Review)\s+·\s+(?P<model>\S.*?)\s*$")
_KILO_WORDS = lazy_compile(r"\bKilo\b|\.kilo/")
_FORK_MARKS = LineMemo(lambda line: bool(KILO_MODE_ROW.match(line) or _KILO_WORDS.search(line)))


def _bottom(lines: Sequence[str]) -> list[str]:
    """The last BOTTOM_ROWS_MAX non-blank rows, trailing blanks cut, top to bottom."""
    bottom: list[str] = []
    for index in range(len(lines) - 1, -1, -1):  # from the bottom: the rows above are not read
        line = lines[index]
        if line.strip():
            bottom.append(line.rstrip())
            if len(bottom) == BOTTOM_ROWS_MAX:
                break
    bottom.reverse()
    return bottom


def _permission_tool(rows: Sequence[str]) -> str | None:
    """The permission kind from the title row under the header (`# Shell command` → bash)."""
    for row in rows:
        match = _TITLE.match(row)
        if not match:
            continue
        icon, title = match.group("icon"), match.group("title")
        if title.startswith("Call tool "):
            return title.removeprefix("Call tool ").strip()
        if icon == "#":
            return "task" if title.endswith(" Task") else "bash"
        if icon in ("→", "✱"):
            return title.split()[0].lower()
        return _ICON_TOOLS.get(icon)
    return None
