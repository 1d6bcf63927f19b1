"""Gemini CLI (Ink TUI, 0.6x): state from the rows around the input box — the confirmation
box that replaces it, the spinner just above its rule, the last block of the current turn —
and the exit summary box.

Screen layout (newest at the bottom):

     > please run a shell command                   <- last user prompt
    ╭────────────────────────────────╮
    │ ✓  Shell mkdir demo            │             <- tool box: ✓ done, ⊶/⠋ running, ? asking
    ╰────────────────────────────────╯
    ✦ The tool finished.                            <- answer text
     ⠏ Thinking... (esc to cancel, 8s)   ? for shortcuts
    ────────────────────────────────────────────    <- input box rule
     >   Type your message or @path/to/file         <- composer
     workspace (/directory)   sandbox      /model   <- footer: labels, then values
     /tmp/work                no sandbox     Auto

The input box (its rule, the draft typed in it, the footer's model) is read in gemini_input.py.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from msgspec.structs import replace

from muxd.detectors._agent_cli import (
    exit_or_dialog,
    agent_confidence,
    error_kind,
    input_hidden,
    is_option,
    is_shell_prompt,
    last_non_empty,
    option_block,
    unbox,
    with_session_shown,
)
from muxd.detectors._lazy_re import lazy_compile
from muxd.detectors._text import LineMemo, parse_duration, screen_text, stripped_rows
from muxd.detectors.base import ScreenContext
from muxd.detectors.gemini_input import COMPOSERS, bottom_rule, draft, footer_model, input_rule
from muxd.detectors.qwen_screen import qwen_process, shows_qwen
from muxd.detectors.state import ActivityState, AgentError, AgentState, Confirmation, Detection, ToolSighting
from muxd.detectors.usage_limits import limited, usage_limit

NAME = "gemini"
_PROCESS_NAMES = frozenset({"gemini", "gemini-cli"})
_PACKAGES = ("@google/gemini-cli", "gemini-cli/dist", "gemini-cli/bundle")
# Rows that may sit between the spinner and the input box rule.
_HINT_ROW = lazy_compile(r"(?i)^\s*(?:press ctrl\+[cd] again to exit\.?|using:? .+)\s*$")
# Rows from the last option up to the confirmation question.
QUESTION_ROWS_MAX = 30
# Non-empty rows above a shell prompt searched for the exit summary box.
EXIT_ROWS_MAX = 40

_SPINNER = lazy_compile(
    r"^\s*(?P<glyph>[\u2800-\u28ff])\s+(?P<desc>\S.*?)\s+\(esc to cancel(?:,\s*(?P<elapsed>[^)]*))?\)")
_SPINNER_BARE = lazy_compile(r"^\s*[\u2800-\u28ff]\s+(?P<desc>\S.*?)\s*(?:\(.*|\s{2,}\?.*)?$")
_USER_PROMPT = lazy_compile(r"^ ?> \S")
_BLOCK_START = lazy_compile(r"^(?:✦|╭|ℹ|✕|⚠|⚡| ?> \S|\s{0,2}[✓✔x\-⊶⊷?o\u2800-\u28ff] {2}\S)")
_TOOL_HEADER = lazy_compile(r"^(?P<glyph>[✓✔x\-⊶⊷?o\u2800-\u28ff])\s{1,2}(?P<name>[A-Za-z_][\w\-]*)\s*(?P<rest>.*)$")
_DENSE_ROW = lazy_compile(r"^ {2}(?P<glyph>[✓✔x\-⊶⊷?o\u2800-\u28ff]) {2}(?P<name>[A-Za-z_][\w\-]*)\s*(?P<rest>.*)$")
# A running tool's glyph blinks between ⊶ and ⊷ (a braille spinner in some layouts).
_RUNNING_GLYPHS = frozenset("⊶⊷") | frozenset(chr(code) for code in range(0x2800, 0x2900))
# `! Shell awaiting input (Tab to focus)`: what replaces the spinner once a shell command has
# printed nothing for a while. The command still runs (it may want input): busy, not Idle.
_SHELL_WAITING = lazy_compile(r"^\s*!\s+(?P<desc>\S.*?)\s+\(Tab to focus\)")
_ALLOW_EXECUTION = lazy_compile(r"Allow execution of (?:\[(?P<tool>[^\]]+)\]|MCP tool \"(?P<mcp>[^\"]+)\")")
_ERROR_LINE = lazy_compile(r"^✕\s+(?P<text>\S.*)$")
_LIMIT_HEAD = lazy_compile(r"^Usage limit reached\b")  # the quota box's first words
_FIRST_SENTENCE = lazy_compile(r"^✕\s+(?P<text>\S.*?\.(?:\]|(?=\s)|$))")
_EXIT_MARKER = lazy_compile(r"Agent powering down|Interaction Summary|(?:gemini|qwen) --resume")
_SESSION_ID = lazy_compile(r"(?:Session ID:\s+|(?:gemini|qwen) --resume )(?P<id>[0-9a-f]{8}-[0-9a-f-]{27,})")
_USAGE_HEADER = lazy_compile(r"\bModel\s{2,}Reqs\b")
_USAGE_ROW = lazy_compile(r"^\s*(?P<model>[A-Za-z][\w.\-]*)\s{2,}\d")

_BANNER = lazy_compile(r"^\s*(?:[▝▜▄▗▟▀▐▌█░▒▓]+\s+)?Gemini CLI v\d")
_PLACEHOLDER = "Type your message or @path/to/file"
_FOOTER_LABELS = lazy_compile(r"^\s*workspace \(/directory\)\s{2,}.*(?:sandbox|/model)")
_GEMINI_OPTION = lazy_compile(r"Allow once|Allow for this session|suggest changes|Trust folder")
# Confidence from the screen: the banner; the input box (a `>` after a rule, weak alone) with
# the placeholder, the footer labels or the spinner above it; a confirmation box in Gemini's words.
BANNER_CONFIDENCE = 0.9
INPUT_BOX_CONFIDENCE = 0.4
INPUT_BOX_WITH_SIGN_CONFIDENCE = 0.9
CONFIRMATION_CONFIDENCE = 0.9


class GeminiDetector:
    name = NAME

    def identify(self, ctx: ScreenContext) -> float:
        if qwen_process(ctx):  # its fork draws the same boxes: the Qwen detector's
            return 0.0
        return agent_confidence(ctx, _PROCESS_NAMES, _PACKAGES, _screen_score, _gemini_exit)

    def detect(self, ctx: ScreenContext, prev: AgentState | None) -> Detection:
        lines: list[str] = stripped_rows(ctx.lines)
        return with_session_shown(self._read(ctx, lines), lines)

    def _read(self, ctx: ScreenContext, lines: list[str]) -> Detection:
        tools = _tool_sightings(lines)
        found = exit_or_dialog(ctx, NAME, lines, tools, _exited,
                               lambda rows: limit_dialog(rows, ctx.now) or _confirmation(rows))
        if found is not None:
            return found
        rule_row = input_rule(lines)
        spinner = _spinner(lines, rule_row if rule_row is not None else bottom_rule(lines))
        if spinner is not None:
            row, description, elapsed = spinner
            found = _busy_state(lines, row, description, elapsed)
        elif rule_row is not None:
            found = _idle_state(lines, rule_row, ctx.columns, ctx.now)
        else:
            found = input_hidden(NAME, lines, "no-input-box")
        return replace(found, model=footer_model(lines, rule_row), tools_seen=tools)


def _gemini_exit(lines: list[str]) -> bool:
    """Gemini's goodbye box above a shell prompt (Qwen's says `qwen --resume` under its own)."""
    return _exited(lines) is not None and "qwen --resume" not in screen_text(lines)


def _screen_score(lines: list[str]) -> float:
    if shows_qwen(lines):
        return 0.0
    # the banner's words, on the screen at all, before its pattern is tried row by row
    banner = "Gemini CLI v" in screen_text(lines) and any(_BANNER.search(line) for line in lines)
    score = BANNER_CONFIDENCE if banner else 0.0
    confirmation = _confirmation(lines)
    if confirmation is not None and confirmation.confirmation is not None and any(
            _GEMINI_OPTION.search(option) for option in confirmation.confirmation.options):
        score = max(score, CONFIRMATION_CONFIDENCE)
    elif limit_dialog(lines, 0.0) is not None:  # its quota box, in its words
        score = max(score, CONFIRMATION_CONFIDENCE)
    rule_row = input_rule(lines)
    if rule_row is None:
        # the input box may be mid-redraw; a live spinner still ends the screen
        spinner = _spinner(lines, bottom_rule(lines))
        if spinner is not None and "(esc to cancel" in lines[spinner[0]]:
            score = max(score, INPUT_BOX_WITH_SIGN_CONFIDENCE)
        return score
    below = lines[rule_row + 1:]
    if (any(_PLACEHOLDER in line or _FOOTER_LABELS.match(line) for line in below)
            or _spinner(lines, rule_row) is not None):
        return max(score, INPUT_BOX_WITH_SIGN_CONFIDENCE)
    return max(score, INPUT_BOX_CONFIDENCE)


def _spinner(lines: Sequence[str], end: int) -> tuple[int, str, int | None] | None:
    """(row, description, elapsed) of the loading indicator: the first row above the input box
    rule (row `end`) that is not a hint row."""
    spinners = _SPINNER_ROWS
    for row in range(end - 1, -1, -1):
        skipped, found = spinners[lines[row]]
        if skipped:
            continue
        return (row, *found) if found is not None else None
    return None


def _spinner_row(line: str) -> tuple[bool, tuple[str, int | None] | None]:
    """(whether _spinner looks past this row, else the (description, elapsed) it shows or None)."""
    if not line.strip() or _HINT_ROW.match(line):
        return True, None
    match = _SPINNER.match(line)
    if match:
        elapsed = match.group("elapsed")
        return False, (match.group("desc"), parse_duration(elapsed) if elapsed else None)
    waiting = _SHELL_WAITING.match(line)
    if waiting:
        return False, (waiting.group("desc"), None)
    bare = _SPINNER_BARE.match(line)
    return False, (bare.group("desc"), None) if bare else None


def _last_user_row(lines: Sequence[str], end: int) -> int | None:
    is_user = _USER_PROMPTS
    for row in range(end - 1, -1, -1):
        if is_user[lines[row]]:
            return row
    return None


def _last_block(lines: Sequence[str], start: int, end: int) -> int | None:
    starts = _BLOCK_STARTS
    for row in range(end - 1, start - 1, -1):
        if starts[lines[row]]:
            return row
    return None


def _box_header(lines: Sequence[str], top: int, end: int) -> re.Match[str] | None:
    """The `✓  Shell …` header row of the box opened by `╭` at row `top`."""
    for row in range(top + 1, min(end, top + 3)):
        match = _TOOL_HEADER.match(unbox(lines[row]))
        if match:
            return match
    return None


def _busy_state(lines: Sequence[str], row: int, description: str, elapsed: int | None) -> Detection:
    """Thinking, Generating or ToolUse from the last block between the user prompt and the spinner."""

    def found(state: ActivityState, rule: str, line_row: int, tool: str | None = None) -> Detection:
        return Detection(agent_type=NAME, state=state, rule=rule, line=lines[line_row].strip(),
                         description=description, elapsed_s=elapsed, tool=tool, error=error)

    user = _last_user_row(lines, row)
    start = user + 1 if user is not None else 0
    error = _turn_error(lines, start, row)
    block = _last_block(lines, start, row)
    if block is None:
        return found("Thinking", "spinner", row)
    text = lines[block]
    header = _box_header(lines, block, row) if text.startswith("╭") else _TOOL_HEADER.match(text.strip())
    if header is not None and header.group("glyph") in _RUNNING_GLYPHS:
        return found("ToolUse", "tool-running", block + (1 if text.startswith("╭") else 0), header.group("name"))
    if text.startswith("✦"):
        return found("Generating", "answer-streaming", block)
    return found("Thinking", "spinner", row)


def _idle_state(lines: Sequence[str], rule_row: int, columns: int, now: float) -> Detection:
    composer = next((row for row in range(rule_row + 1, len(lines)) if COMPOSERS[lines[row]]), rule_row)
    user = _last_user_row(lines, rule_row)
    # With the prompt scrolled away (a quota's error fills a short pane) every row is the turn's.
    error_row = _turn_error_row(lines, user + 1 if user is not None else 0, rule_row)
    error = _ERRORS[lines[error_row]] if error_row is not None else None
    found = Detection(agent_type=NAME, state="Idle", rule="input-box", line=lines[composer].strip(),
                      error=error if user is not None else None,
                      input_text=draft(lines, composer, columns) if composer != rule_row else None)
    if error is None or error_row is None:
        return found
    # The error's first sentence (it may wrap), and the rows under it say when to retry
    # (`Please retry in 400s.`).
    block = " ".join(_block_rows(lines, error_row, rule_row))
    sentence = _FIRST_SENTENCE.match(block)
    limit = usage_limit(sentence.group("text") if sentence else error.message, now, block)
    return found if limit is None else limited(found, limit, "usage-limit")


def _turn_error(lines: Sequence[str], start: int, end: int) -> AgentError | None:
    """The API error shown in the current turn (`✕ [API Error: …]`), if any."""
    row = _turn_error_row(lines, start, end)
    return _ERRORS[lines[row]] if row is not None else None


def _turn_error_row(lines: Sequence[str], start: int, end: int) -> int | None:
    errors = _ERRORS
    for row in range(end - 1, start - 1, -1):
        if errors[lines[row]] is not None:
            return row
    return None


def _block_rows(lines: Sequence[str], row: int, end: int) -> list[str]:
    """The text of the block starting at `row`: its rows up to a blank row or the next block."""
    rows = [lines[row].strip()]
    for line in lines[row + 1:end]:
        if not line.strip() or _BLOCK_STARTS[line]:
            break
        rows.append(line.strip())
    return rows


def limit_dialog(lines: Sequence[str], now: float) -> Detection | None:
    """The box Gemini CLI asks in when a quota ran out, ending the screen: `Usage limit reached
    for all Pro models.`, perhaps `Access resets at 6:32 PM UTC.`, then `1. Keep trying`,
    `2. Stop`. UsageLimited with the box's options to choose from."""
    last = last_non_empty(lines)
    if last is None or not last[1].strip().startswith("╰"):
        return None
    option_row = next((row for row in range(last[0] - 1, max(-1, last[0] - 4), -1) if is_option(lines[row])), None)
    block = option_block(lines, option_row) if option_row is not None else None
    if block is None:
        return None
    first_option, options = block
    texts: list[str] = []
    for row in range(first_option - 1, max(-1, first_option - QUESTION_ROWS_MAX), -1):
        if lines[row].strip().startswith("╭"):
            break
        text = unbox(lines[row])
        if text:
            texts.insert(0, text)
    head = next((i for i, text in enumerate(texts) if _LIMIT_HEAD.match(text)), None)
    if head is None:
        return None
    limit = usage_limit(texts[head], now, " ".join(texts[head + 1:]))
    if limit is None:
        return None
    found = Detection(agent_type=NAME, state="Unknown", rule="")
    return limited(found, limit, "usage-limit-dialog", confirmation=Confirmation(prompt=texts[head], options=options))


def _error(line: str) -> AgentError | None:
    match = _ERROR_LINE.match(line)
    if match:
        message = match.group("text").strip()
        return AgentError(type=error_kind(message), message=message)
    return None


def _confirmation(lines: Sequence[str]) -> Detection | None:
    """A confirmation box ending the screen: a question, then `● 1. Allow once` options."""
    last = last_non_empty(lines)
    if last is None:
        return None
    option_row = None
    for row in range(last[0], max(-1, last[0] - 4), -1):
        if is_option(lines[row]):
            option_row = row
            break
        if unbox(lines[row]) and not lines[row].strip().startswith("╰"):
            return None
    if option_row is None:
        return None
    block = option_block(lines, option_row)
    if block is None:
        return None
    first_option, options = block
    for row in range(first_option - 1, max(-1, first_option - QUESTION_ROWS_MAX), -1):
        text = unbox(lines[row])
        if text.endswith("?") and not text.startswith("?"):
            return Detection(agent_type=NAME, state="AwaitingConfirmation", rule="confirmation-box", line=text,
                             tool=_confirmation_tool(lines, row, text),
                             confirmation=Confirmation(prompt=text, options=options))
    return None


def _confirmation_tool(lines: Sequence[str], question_row: int, question: str) -> str | None:
    match = _ALLOW_EXECUTION.search(question)
    if match:
        return match.group("tool") or match.group("mcp")
    for row in range(question_row - 1, max(-1, question_row - QUESTION_ROWS_MAX), -1):
        header = _TOOL_HEADER.match(unbox(lines[row]))
        if header and header.group("glyph") == "?":
            return header.group("name")
    return None


def _exited(lines: Sequence[str], *, pane_exited: bool = False) -> Detection | None:
    """A shell prompt as the last row with Gemini's goodbye box just above it (or, once the
    pane's program has exited, the goodbye box as the last rows)."""
    last = last_non_empty(lines)
    if last is None or not (pane_exited or is_shell_prompt(last[1])):
        return None
    end = last[0] + 1 if pane_exited else last[0]
    above = lines[max(0, end - EXIT_ROWS_MAX):end]
    if not any(_EXIT_MARKER.search(line) for line in above):
        return None
    session = model = None
    in_usage = False
    for line in above:
        text = unbox(line)
        match = _SESSION_ID.search(text)
        if match:
            session = match.group("id")
        if _USAGE_HEADER.search(text):
            in_usage = True
            continue
        row = _USAGE_ROW.match(text)
        if in_usage and model is None and row:
            model = row.group("model")
    return Detection(agent_type=NAME, state="Exited", rule="goodbye-box", line=last[1].strip(),
                     session_id=session, model=model)


def _tool_sightings(lines: Sequence[str]) -> list[ToolSighting]:
    """Every tool on screen: box headers (`╭…` then `│ ✓  Shell cmd`) and dense rows
    (`  ✓  WriteFile  a.txt → Accepted`)."""
    sightings: list[ToolSighting] = []
    parsed = list(map(_ROW_SIGHTINGS.__getitem__, lines))
    if parsed.count(_PLAIN_ROW) == len(parsed):
        return sightings  # the common case, told without a loop: no box, no dense row
    last = len(lines) - 1
    for row, (opens_box, found) in enumerate(parsed):
        if opens_box and row < last:
            found = _BOX_HEADER_SIGHTINGS[lines[row + 1]]
        if found is not None:
            sightings.append(found)
    return sightings


def _ran_tool(match: re.Match[str] | None) -> ToolSighting | None:
    # A tool is a use once it runs (running ⊶ or a spinner, done ✓, failed x): one awaiting
    # approval (?), queued (o) or cancelled before it ran (-) is not. Counting it from its first
    # running frame matters in a short pane, where the finished box can scroll away before a
    # look sees it; the glyph is not in the signature, so running and done are one use.
    if match is None:
        return None
    glyph = match.group("glyph")
    if glyph not in _USE_GLYPHS and not "\u2800" <= glyph <= "\u28ff":  # braille: a spinner
        return None
    # a running shell's header says `(Tab to focus)` after its command: the same use
    rest = _FOCUS_HINT.sub("", re.sub(r"\s+", " ", match.group("rest")).strip())
    return ToolSighting(match.group("name"), f"{match.group('name')} {rest}".strip())


_USE_GLYPHS = frozenset("✓✔x⊶⊷")
_FOCUS_HINT = lazy_compile(r"\s*\(Tab to focus\)$")
_PLAIN_ROW = (False, None)  # what most rows are to _tool_sightings: no box opens, no tool ran
# Per-line answers by line text: the scans for the input box, the spinner and the turn's
# last block read most rows of the screen on every look.
_SPINNER_ROWS = LineMemo(_spinner_row)
_USER_PROMPTS = LineMemo(lambda line: bool(_USER_PROMPT.match(line)))
_BLOCK_STARTS = LineMemo(lambda line: bool(_BLOCK_START.match(line)))
_ERRORS = LineMemo(_error)
# Per-line parses for _tool_sightings, by line text: (the row opens a box, the dense row's
# tool use); and the tool use on a box's header row.
_ROW_SIGHTINGS = LineMemo(lambda line: (line.lstrip().startswith("╭"), _ran_tool(_DENSE_ROW.match(line))))
_BOX_HEADER_SIGHTINGS = LineMemo(lambda line: _ran_tool(_TOOL_HEADER.match(unbox(line))))


# The layout, for readers of a finished turn (muxd.executions.answers): the same rows the
# state is read from, so the two never disagree about where a block or the input box is.
def input_rule_row(lines: Sequence[str]) -> int | None:
    """Row of the rule above the ` > ` composer, or None."""
    return input_rule(lines)


def is_user_prompt(line: str) -> bool:
    """` > please run …`: a prompt the user sent, as history shows it."""
    return bool(_USER_PROMPTS[line])


def is_status_row(line: str) -> bool:
    """A row that may sit between the conversation and the input box: blank, a hint, a spinner."""
    skipped, spinner = _SPINNER_ROWS[line]
    return bool(skipped) or spinner is not None


def is_tool_row(line: str) -> bool:
    """A tool's one-row summary (`  ✓  ReadFolder  . → Directory is empty.`)."""
    return _DENSE_ROW.match(line) is not None


# Qwen Code (a fork) draws its turn, tool boxes, dialogs and goodbye box as Gemini CLI does:
# qwen.py reads them with these, under its own name.
tool_sightings = _tool_sightings
exited_screen = _exited
confirmation_box = _confirmation
busy_state = _busy_state
idle_state = _idle_state
