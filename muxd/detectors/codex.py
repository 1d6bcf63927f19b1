"""OpenAI Codex CLI (Rust TUI, 0.16x): state from the bottom pane — approval dialog, status
line above the `›` composer, the turn below the last user message — and the exit summary.

Screen layout (inline viewport, newest at the bottom):

    › please run a shell command          <- last user message (history)
    • Running mkdir demo                  <- tool cell; `• Ran …` when done
    • The command finished.               <- answer text (streams with no status line)
      Worked for 22s • 22:18              <- turn done
    ◦ Working (2s • esc to interrupt)     <- status line while a turn runs (bullet blinks)
    › Ask Codex to do anything            <- composer
      gpt-5-codex default · /tmp/work     <- footer: model first

The composer, the draft typed in it and the footer are read in codex_composer.py.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from msgspec.structs import replace

from muxd.detectors._agent_cli import (
    OPTION_ROWS_MAX,
    exit_or_dialog,
    agent_confidence,
    error_kind,
    input_hidden,
    is_option,
    is_shell_prompt,
    last_non_empty,
    option_block,
    with_session_shown,
)
from muxd.detectors._lazy_re import lazy_compile
from muxd.detectors._text import LineMemo, parse_duration, screen_text, stripped_rows
from muxd.detectors.base import ScreenContext
from muxd.detectors.codex_composer import FOOTER_ROWS_MAX, POPUP_ROW, composer_row, draft, footer
from muxd.detectors.codex_tools import EXEC_TOOL, PATCH_TOOL, RUNNING_VERBS, TOOL_CELL, cell_tool, tool_sightings
from muxd.detectors.state import ActivityState, AgentError, AgentState, Confirmation, Detection
from muxd.detectors.usage_limits import limited, usage_limit

NAME = "codex"
_PROCESS_NAMES = frozenset({"codex", "codex-cli"})
_PACKAGES = ("@openai/codex",)
# Rows between the approval question and its first option (reason, command, blank rows).
APPROVAL_ROWS_MAX = 20
# Rows between the last option and the key hints of a dialog (blank, a scroll mark).
HINT_GAP_ROWS_MAX = 3
# Non-empty rows above a shell prompt searched for the exit summary.
EXIT_ROWS_MAX = 12

_CONFIRM_HINT = lazy_compile(r"(?i)\bpress enter to (?:confirm|continue|submit)\b|\benter to (?:confirm|submit)\b")
_SELECT_HINT = lazy_compile(r"^\s*enter (?:to )?select · esc (?:to )?(?:go )?back\s*$")
# Titles of Codex's selection dialogs that ask to decide about work under way.
CONFIRMATION_TITLES = frozenset({"Task is still running"})
_QUESTION = lazy_compile(r"^\s*[▌│]?\s*(?P<question>[^?]*\?)")
_QUESTION_MARGIN = lazy_compile(r"^\s*[▌│]?")
# `• Working (12s • esc to interrupt)`, perhaps with more after it (`· 1 background terminal
# running · /ps to view`), which a narrow pane cuts with `…`.
_STATUS_FULL = lazy_compile(
    r"^\s*(?:[•◦]\s+)?(?P<header>\S.*?)\s+\((?P<elapsed>(?:\d+[hms]\s*)+)•\s*(?:esc|ctrl\s*\+\s*c) to interrupt\)"
    r"(?:\s+·\s+(?P<more>\S.*?))?\s*$",
    re.IGNORECASE,
)
_MORE_COUNT = lazy_compile(r"^(?P<count>\d+)(?:\s+(?P<words>\S.*?))?…?$")
BACKGROUND_WORDS = "background terminals running"
_STATUS_CUT_ELAPSED = lazy_compile(r"^\s*(?:[•◦]\s+)?(?P<header>\S.*?)\s+\((?P<elapsed>(?:\d+[hms]\s*)+)(?:•[^)]*)?…$")
_STATUS_CUT_PAREN = lazy_compile(r"^\s*[•◦]\s+(?P<header>\S.*?)\s*\(\d*…$")
_STATUS_CUT_HEADER = lazy_compile(r"^\s*(?P<bullet>[•◦])\s+(?P<header>\S.*…)$")
_WORKED = lazy_compile(r"^\s*─*\s*Worked for (?:<1s\s*|(?:\d+[hms]\s*)+)")
_TURN_END = lazy_compile(r"^■ (?P<text>.+)$")
_INTERRUPTED = lazy_compile(r"(?i)^conversation interrupted")
_USER_MESSAGE = lazy_compile(r"^› \S")
_SLASH_ECHO = lazy_compile(r"^/[a-z][\w-]*\b")
_BULLET = lazy_compile(r"^[•◦] (?P<text>\S.*)$")
_STATUS_DETAIL = lazy_compile(r"^\s+└\s+(?P<text>\S.*)$")
_QUEUED = lazy_compile(r"^\s*↳")
_EXIT_MARKER = lazy_compile(r"Token usage(?: so far)?:|codex resume|To continue this session|Disconnected from this task"
                          r"|Error loading configuration|codex_home")
_EXIT_TOKENS = lazy_compile(r"Token usage(?: so far)?:\s*total=(?P<total>[\d,]+)")
_RESUME = lazy_compile(r"codex resume (?P<id>[0-9a-f]{8}-[0-9a-f-]{27,})")
_CONFIG_ERROR = lazy_compile(r"^Error loading configuration: .+")
_REASON = lazy_compile(r"^\s*Reason:")
_CODEX_QUESTION = lazy_compile(r"^(?:Would you like|Allow )")
_MCP_TOOL = lazy_compile(r'run tool "(?P<tool>[^"]+)"')

_HEADER_WORDS = ">_ OpenAI Codex (v"  # the banner's header: plain words, no pattern needed
# Codex's own wording under its approval dialog (other CLIs word their dialogs differently).
_APPROVAL_FOOTER = lazy_compile(r"(?i)^\s*press enter to confirm or esc to (?:cancel|go back)")
# Signs of Codex in the history above a `›` composer.
_HISTORY_SIGNS = lazy_compile(r"^■ Conversation interrupted|^  Worked for (?:<1s\s*|(?:\d+[hms]\s*)+)• \d|^• (?:Ran|Explored) ")
_HISTORY_WORDS = ("■ Conversation interrupted", "  Worked for ", "• Ran ", "• Explored ")  # one is in every sign
# Confidence from the screen: the banner; an approval dialog at the bottom; a `›` composer
# (alone it is weak: `›` is a common prompt glyph) backed by the placeholder, the footer or history.
HEADER_CONFIDENCE = 0.95
APPROVAL_CONFIDENCE = 0.9
PLACEHOLDER_CONFIDENCE = 0.95
COMPOSER_WITH_HISTORY_CONFIDENCE = 0.8
COMPOSER_WITH_FOOTER_CONFIDENCE = 0.7


class CodexDetector:
    name = NAME

    def identify(self, ctx: ScreenContext) -> float:
        return agent_confidence(ctx, _PROCESS_NAMES, _PACKAGES, _screen_score, lambda lines: _exited(lines) is not None)

    def detect(self, ctx: ScreenContext, prev: AgentState | None) -> Detection:
        lines: list[str] = stripped_rows(ctx.lines)
        return with_session_shown(self._read(ctx, lines), lines)

    def _read(self, ctx: ScreenContext, lines: list[str]) -> Detection:
        tools = tool_sightings(lines)
        found = exit_or_dialog(ctx, NAME, lines, tools, _exited, _approval)
        if found is not None:
            return found
        composer = composer_row(lines)
        if composer is None:
            # still starting, or an overlay (warnings, transcript) covers the bottom pane
            return replace(input_hidden(NAME, lines, "no-composer"), tools_seen=tools)
        model, context_left = footer(lines, composer)
        status = _status(lines, composer, ctx.columns)
        if status is not None:
            row, header, elapsed, error, background = status
            tool_row = _last_tool_cell(lines, row)
            if tool_row is not None:
                found = Detection(agent_type=NAME, state="ToolUse", rule="status-tool-running",
                                  line=lines[tool_row].strip(), description=header, elapsed_s=elapsed,
                                  tool=cell_tool(lines[tool_row]), error=error, background=background)
            elif background and not _turn_has_cells(lines, row):
                # "Working · 1 background terminal running" and no cell for it in the turn: the
                # turn waits on a command Codex moved to the background (its cell is not drawn).
                found = Detection(agent_type=NAME, state="ToolUse", rule="status-background-terminal",
                                  line=lines[row].strip(), description=header, elapsed_s=elapsed,
                                  tool=EXEC_TOOL, error=error, background=background)
            else:
                found = Detection(agent_type=NAME, state="Thinking", rule="status-line", line=lines[row].strip(),
                                  description=header, elapsed_s=elapsed, error=error, background=background)
        else:
            found = _turn_state(lines, composer, ctx.now)
        return replace(found, model=model, context_left_pct=context_left, tools_seen=tools,
                       input_text=draft(lines, composer, ctx.columns))


def _screen_score(lines: list[str]) -> float:
    text = screen_text(lines)
    score = HEADER_CONFIDENCE if _HEADER_WORDS in text else 0.0
    approval = _approval(lines)
    if approval is not None and approval.confirmation is not None:
        bottom = [line for line in lines if line.strip()][-3:]
        if approval.rule == "selection-dialog" or any(_APPROVAL_FOOTER.search(line) for line in bottom) or any(
                "Codex" in option for option in approval.confirmation.options):
            score = max(score, APPROVAL_CONFIDENCE)
    composer = composer_row(lines)
    if composer is None:
        return score
    if lines[composer].startswith("› Ask Codex to do anything"):
        return max(score, PLACEHOLDER_CONFIDENCE)
    below = lines[composer + 1:]
    if not (footer(lines, composer)[0] is not None or any("? for shortcuts" in line for line in below)
            or _status(lines, composer, max(len(line) for line in lines)) is not None):
        return score
    # the signs' words, on the screen at all, before the pattern is tried row by row
    if any(words in text for words in _HISTORY_WORDS) and any(
            _HISTORY_SIGNS.search(line) for line in lines[:composer]):
        return max(score, COMPOSER_WITH_HISTORY_CONFIDENCE)
    return max(score, COMPOSER_WITH_FOOTER_CONFIDENCE)


def _approval(lines: Sequence[str]) -> Detection | None:
    """The approval dialog at the bottom: a question, numbered options, `Press enter to confirm`."""
    last = last_non_empty(lines)
    if last is None:
        return None
    hint_row = None
    hints = _CONFIRM_HINTS
    for row in range(last[0], max(-1, last[0] - 3), -1):
        if hints[lines[row]]:
            hint_row = row
            break
    if hint_row is None:
        return _selection_dialog(lines, last[0])
    block = _options_above(lines, hint_row)
    if block is None:
        return None
    first_option, options = block
    questions = []
    for row in range(first_option - 1, max(-1, first_option - APPROVAL_ROWS_MAX), -1):
        if "?" not in lines[row]:
            continue
        # A narrow pane wraps the question: its paragraph starts at the first row after a blank.
        start = row
        while start > 0 and lines[start - 1].strip():
            start -= 1
        match = _QUESTION.match(" ".join(_QUESTION_MARGIN.sub("", line).strip() for line in lines[start:row + 1]))
        # The model's own `Reason:` may ask something too; the dialog's question is Codex's.
        if match and not lines[start].startswith(("› ", "• ")) and not _REASON.match(lines[start]):
            questions.append(match.group("question").strip())
    if not questions:
        return None
    prompt = next((q for q in questions if _CODEX_QUESTION.match(q)), questions[0])
    return Detection(agent_type=NAME, state="AwaitingConfirmation", rule="approval-dialog",
                     line=prompt, tool=_approval_tool(prompt),
                     confirmation=Confirmation(prompt=prompt, options=options))


def _options_above(lines: Sequence[str], hint_row: int) -> tuple[int, list[str]] | None:
    """The numbered options that end a few rows above the key hints on row `hint_row` (the
    last one perhaps wrapped onto rows under it): (row of option 1, their texts)."""
    for row in range(hint_row - 1, max(-1, hint_row - OPTION_ROWS_MAX), -1):
        if is_option(lines[row]):
            return option_block(lines, row)
        near = hint_row - row <= HINT_GAP_ROWS_MAX  # a `↓` where a list taller than the pane is cut
        if lines[row].strip() and not lines[row].startswith("    ") and not near:
            return None  # neither a blank row nor an option's wrapped text
    return None


def _selection_dialog(lines: Sequence[str], last_row: int) -> Detection | None:
    """A choice Codex asks for with `enter select · esc back` under its options, titled by
    the rows above them: `Task is still running` (Ctrl-C while a turn runs) is a
    confirmation; other lists of that kind (pickers a person opened) are not read here."""
    if not _SELECT_HINTS[lines[last_row]]:
        return None
    block = _options_above(lines, last_row)
    if block is None:
        return None
    first_option, options = block
    title_rows = [row for row in range(max(0, first_option - APPROVAL_ROWS_MAX), first_option) if lines[row].strip()]
    if not title_rows:
        return None
    # the title paragraph: the last block of rows above the options, first row first
    start = title_rows[-1]
    while start - 1 in title_rows:
        start -= 1
    title = lines[start].strip()
    if not (title.endswith("?") or title in CONFIRMATION_TITLES):
        return None
    return Detection(agent_type=NAME, state="AwaitingConfirmation", rule="selection-dialog", line=title,
                     confirmation=Confirmation(prompt=title, options=options))


def _approval_tool(prompt: str) -> str | None:
    lowered = prompt.lower()
    if "run the following command" in lowered or "run this command" in lowered:
        return EXEC_TOOL
    if "edits" in lowered or "apply changes" in lowered or "apply the" in lowered:
        return PATCH_TOOL
    match = _MCP_TOOL.search(prompt)
    return match.group("tool") if match else None


Status = tuple[int, str, int | None, AgentError | None, int]


def _status(lines: Sequence[str], composer: int, columns: int) -> Status | None:
    """(row, header, elapsed, error, background terminals) of the status line above the
    composer, if a turn runs."""
    error: AgentError | None = None
    for row in range(composer - 1, -1, -1):
        line = lines[row]
        if not line.strip() or _QUEUED.match(line):
            continue
        detail = _STATUS_DETAIL.match(line)
        if detail:
            # `└ We’re currently experiencing high demand…` under a `Reconnecting… 1/5` status
            error = AgentError(type=error_kind(detail.group("text")), message=detail.group("text"))
            continue
        parsed = _STATUS_ROWS[line, columns]
        if parsed is None:
            return None
        header, elapsed, background = parsed
        if error is not None and not header.lower().startswith(("reconnecting", "retrying")):
            error = None
        return row, header, elapsed, error, background
    return None


def _parse_status(line: str, columns: int) -> tuple[str, int | None, int] | None:
    match = _STATUS_FULL.match(line)
    if match:
        return match.group("header"), parse_duration(match.group("elapsed")), _background(match.group("more"))
    if not line.endswith("…"):
        return None
    full_width = len(line) >= columns - 1
    blinking = line.lstrip().startswith("◦")
    if not (full_width or blinking):
        return None
    match = _STATUS_CUT_ELAPSED.match(line)
    if match:
        return match.group("header"), parse_duration(match.group("elapsed")), 0
    match = _STATUS_CUT_PAREN.match(line)
    if match:
        return match.group("header"), None, 0
    match = _STATUS_CUT_HEADER.match(line)
    if match:
        return match.group("header"), None, 0
    return None


def _background(more: str | None) -> int:
    """How many background terminals the rest of a status line counts (`1 background
    terminal running`, perhaps cut short: `1 backgr…`); 0 for anything else."""
    match = _MORE_COUNT.match(more or "")
    if match is None:
        return 0
    words = (match.group("words") or "").removesuffix("…")
    counted = words.startswith("background terminal") or (bool(words) and BACKGROUND_WORDS.startswith(words))
    return int(match.group("count")) if counted else 0


def _last_user_row(lines: Sequence[str], end: int) -> int | None:
    is_user = _USER_ROWS
    for row in range(end - 1, -1, -1):
        if is_user[lines[row]]:
            return row
    return None


def _is_user_row(line: str) -> bool:
    return bool((_USER_MESSAGE.match(line) and not POPUP_ROW.match(line)) or _SLASH_ECHO.match(line))


def _blocks(lines: Sequence[str], start: int, end: int) -> list[int]:
    """Rows in start..end-1 that begin a history cell (text at column 0), but for the wrapped
    rest of a cell that Codex does not indent (an error `■ …` on a narrow pane)."""
    starts, plain = _CELL_STARTS, _PLAIN_ROWS
    return [row for row in range(start, end)
            if starts[lines[row]] and not (row > start and plain[lines[row]] and lines[row - 1])]


def _starts_cell(line: str) -> bool:
    return bool(line[:1].strip() or _WORKED.match(line))


def _cell_text(lines: Sequence[str], row: int, end: int) -> str:
    """The text of the cell at `row` (its first row's text after the marker), with the rows its
    wrapping put below it, up to the first blank row or `end`."""
    parts = [lines[row][2:].strip()]
    for line in lines[row + 1:end]:
        if not line or not _PLAIN_ROWS[line]:
            break
        parts.append(line.strip())
    return " ".join(parts)


# Codex starts a cell with a sign (• › ■ ◦ ✔ ⚠ …) or an indent; a row beginning with a letter,
# digit or quote directly under text is the wrapped rest of the row above.
_PLAIN_ROWS = LineMemo(lambda line: line[:1].isalnum() or line[:1] in "\"'‘“(")


# Per-line answers, remembered by line text: these scans run over most of the screen each look.
_USER_ROWS = LineMemo(_is_user_row)
_CELL_STARTS = LineMemo(_starts_cell)
# And for the few rows around the composer, read on every look in case-blind patterns that
# try every column (the status row, by its text and the pane's width).
_CONFIRM_HINTS = LineMemo(lambda line: bool(_CONFIRM_HINT.search(line)))
_SELECT_HINTS = LineMemo(lambda line: bool(_SELECT_HINT.match(line)))
_STATUS_ROWS = LineMemo(lambda line_and_columns: _parse_status(*line_and_columns))


def _last_tool_cell(lines: Sequence[str], status_row: int) -> int | None:
    """Row of an in-progress tool cell that is the last cell above the status line."""
    user = _last_user_row(lines, status_row)
    blocks = _blocks(lines, (user + 1) if user is not None else 0, status_row)
    if not blocks:
        return None
    match = TOOL_CELL.match(lines[blocks[-1]])
    return blocks[-1] if match and match.group("verb") in RUNNING_VERBS else None


def _turn_has_cells(lines: Sequence[str], status_row: int) -> bool:
    """Whether the current turn (below the last prompt echo) shows any cell above the status line."""
    user = _last_user_row(lines, status_row)
    return bool(_blocks(lines, (user + 1) if user is not None else 0, status_row))


def _turn_state(lines: Sequence[str], composer: int, now: float) -> Detection:
    """No status line: Generating while an answer streams in the current turn, UsageLimited
    when it ended on a usage limit (`■ You’ve hit your usage limit… try again at 8:35 PM.`),
    else Idle."""

    def found(state: ActivityState, rule: str, row: int, tool: str | None = None,
              error: AgentError | None = None) -> Detection:
        return Detection(agent_type=NAME, state=state, rule=rule, line=lines[row].strip(), tool=tool, error=error)

    if any(POPUP_ROW.match(line) for line in lines[max(0, composer - FOOTER_ROWS_MAX):composer]):
        # an open popup covers the rows above the composer: the user is typing
        return found("Idle", "composer-popup", composer)
    user = _last_user_row(lines, composer)
    if user is not None and _SLASH_ECHO.match(lines[user]):
        return found("Idle", "slash-command-output", user)
    blocks = _blocks(lines, (user + 1) if user is not None else 0, composer)
    if not blocks:
        if user is not None and not any(line.strip() for line in lines[user + 1:composer]):
            return found("Thinking", "turn-started", user)
        # Rows that start no cell under the last message: the rest of a command's output
        # whose own line scrolled away (/status in a short pane), not a turn.
        return found("Idle", "composer", composer)
    row = blocks[-1]
    line = lines[row]
    if _WORKED.match(line):
        return found("Idle", "turn-done", row)
    ended = _TURN_END.match(line)
    if ended:
        text = _cell_text(lines, row, composer)
        error = None if _INTERRUPTED.match(text) else AgentError(type=error_kind(text), message=text)
        limit = usage_limit(text, now) if error is not None else None
        ended_here = found("Idle", "turn-ended", row, error=error)
        return ended_here if limit is None else limited(ended_here, limit, "usage-limit")
    tool = TOOL_CELL.match(line)
    if tool and user is not None:
        if tool.group("verb") in RUNNING_VERBS:
            return found("ToolUse", "tool-running", row, tool=cell_tool(line))
        return found("Thinking", "tool-finished", row)
    if _BULLET.match(line) and not tool and (user is not None or _has_answer_context(lines, blocks)):
        return found("Generating", "answer-streaming", row)
    if line.startswith(("✔", "✗", "✘")) and user is not None:
        return found("Thinking", "approval-decided", row)
    return found("Idle", "composer", composer)


def _has_answer_context(lines: Sequence[str], blocks: Sequence[int]) -> bool:
    """With the user message scrolled away, an answer still streams if earlier cells of the
    turn are on screen (not the startup banner)."""
    return len(blocks) > 1 and not any(">_ OpenAI Codex" in lines[row] for row in blocks)


def _exited(lines: Sequence[str], *, pane_exited: bool = False) -> Detection | None:
    """A shell prompt as the last row with Codex's exit output just above it (or, once the
    pane's program has exited, the exit output as the last rows)."""
    last = last_non_empty(lines)
    if last is None or not (pane_exited or is_shell_prompt(last[1])):
        return None
    end = last[0] + 1 if pane_exited else last[0]
    start = max(0, end - 3 * EXIT_ROWS_MAX)
    above = [line for line in lines[start:end] if line.strip()][-EXIT_ROWS_MAX:]
    if not any(_EXIT_MARKER.search(line) for line in above):
        return None
    tokens = session = None
    error: AgentError | None = None
    for line in above:
        match = _EXIT_TOKENS.search(line)
        if match:
            tokens = int(match.group("total").replace(",", ""))
        match = _RESUME.search(line)
        if match:
            session = match.group("id")
        if _CONFIG_ERROR.match(line):
            error = AgentError(type="config_error", message=line.strip())
    return Detection(agent_type=NAME, state="Exited", rule="exit-summary", line=last[1].strip(),
                     tokens=tokens, session_id=session, error=error)


# The layout, for readers of a finished turn (muxd.executions.answers): the same rows the
# state is read from, so the two never disagree about where a cell or the composer is
# (`composer_row` comes from codex_composer.py).
def is_user_message(line: str) -> bool:
    """`› please run …` (or a `/command` echo): a message the user sent, as history shows it."""
    return bool(_USER_ROWS[line])


def starts_cell(line: str) -> bool:
    """The row begins a history cell (a sign at column 0, or the `Worked for …` line)."""
    return bool(_CELL_STARTS[line])


def is_turn_done(line: str) -> bool:
    """`  Worked for 16s • 22:18` (or its `─ Worked for … ─` separator form)."""
    return bool(_WORKED.match(line))
