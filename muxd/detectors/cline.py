"""`ClineDetector`: Cline's CLI (3.x, `cline -i`), read from the bottom of its screen up, as
the real CLI draws it against a scripted model (tests/detector_data/issue32/cline):

     ❯ run a command                                   <- the person's message
     ⠹ run_commands(sleep 4; echo hi)                  <- live row: spinner while a turn runs
    ──────────────────────────────────────────
    ❯ Ask anything...                                  <- input box between two rules
    ──────────────────────────────────────────
     fake-model (1,151) $0.00          ○ Plan ● Act (Tab)   <- model (tokens) cost, mode
     work
     Auto-approve all disabled (Shift+Tab)

The live row decides: `⠹ Thinking... (esc to cancel)` is Thinking, `⠹ run_commands(…)` a
tool at work, any other text after the spinner the answer streaming; a finished block is
`* …` (`* Error: …` an error). A permission request replaces the box ("Cline needs
permission", "Approve tool call?", the tool, `[y] Approve   [n] Deny`), as does a question
(ask_question: "Cline is asking a question", the question, its options); /exit prints a
"Session Summary" with the session id. Cline shows no elapsed time. Its box looks like
Claude's (`❯` between rules): Cline's own footer tells them apart.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from muxd.detectors._agent_cli import (
    agent_confidence, error_kind, last_non_empty, shell_prompt_below, with_session_shown,
)
from muxd.detectors._lazy_re import lazy_compile
from muxd.detectors._text import LineMemo, stripped_rows
from muxd.detectors.base import ScreenContext
from muxd.detectors.state import AgentError, AgentState, Confirmation, Detection

NAME = "cline"
_PROCESS_NAMES = frozenset({"cline"})
_PACKAGES = ("node_modules/cline/", "@cline/cli-")
MAX_SCREEN_ROWS = 400  # rows looked at, from the bottom: detection stays cheap
CONFIRM_OPTIONS = ["Approve", "Deny"]

_SCROLLBAR = lazy_compile(r"\s+[█▄▀▐▌░]$")
_RULE = lazy_compile(r"^\s*─{8,}\s*$")
_FOOTER_MODE = lazy_compile(r"[○●] Plan [○●] Act\b")
_AUTO_APPROVE = lazy_compile(r"Auto-approve all (?:enabled|disabled)|\(Shift\+Tab\)")
# ` fake-model (1,151) $0.00`: the model, its token count and the session's cost.
_USAGE = lazy_compile(r"^\s*(?P<model>\S+) \((?P<tokens>[\d,]+)\)(?: \$(?P<cost>\d+(?:\.\d+)?))?")
_SPINNER = lazy_compile(r"^\s*[\u2800-\u28ff]\s+(?P<text>\S.*?)\s*$")
_THINKING = lazy_compile(r"^(?P<what>\S.*?\.\.\.)\s*\(esc to cancel\)$")
_TOOL_CALL = lazy_compile(r"^(?P<tool>[a-z][a-z0-9_]*)\(")
_DONE_ERROR = lazy_compile(r"^\s*\*\s+Error:\s*(?P<message>\S.*?)\s*$")
_INPUT = lazy_compile(r"^\s*❯ ?(?P<text>.*?)\s*$")
_MESSAGE = lazy_compile(r"^ ❯ \S")  # a message of the person's in the conversation, one column in
_PLACEHOLDERS = ("Ask anything...", "What can I do for you?")
_PERMISSION = "Cline needs permission"
_ASKING = "Cline is asking a question"
_TYPE_RESPONSE = "Type a response..."  # the picker's last row: an answer of one's own
_APPROVE_ROW = lazy_compile(r"\[y\] Approve\s+\[n\] Deny")
_SUMMARY = "Session Summary"
_SUMMARY_ID = lazy_compile(r"^\s*ID\s+(?P<id>\S+)\s*$")
_SUMMARY_MODEL = lazy_compile(r"^\s*Model\s+(?P<model>\S+)\s*$")
_SUMMARY_COST = lazy_compile(r"^\s*Cost\s+\$(?P<cost>\d+(?:\.\d+)?)\s*$")
_CONTINUE = lazy_compile(r"^\s*Continue\s+cline --id\b")

FOOTER_CONFIDENCE = 0.85  # both of Cline's footer rows: no other CLI here draws them
ONE_MARK_CONFIDENCE = 0.6  # one of them (a narrow pane may cut the other)
EXIT_CONFIDENCE = 0.6


class ClineDetector:
    name = NAME

    def identify(self, ctx: ScreenContext) -> float:
        return agent_confidence(ctx, _PROCESS_NAMES, _PACKAGES, _screen_score, _exit_shown)

    def detect(self, ctx: ScreenContext, prev: AgentState | None) -> Detection:
        lines = stripped_rows(ctx.lines)
        bottom = _bottom(lines)
        summary = _summary(bottom)
        if ctx.exited or summary is not None:
            return summary or Detection(agent_type=NAME, state="Exited", rule="pane-exited")
        shell = shell_prompt_below(NAME, lines)
        if shell is not None:
            return shell
        usage = next((m for line in bottom if (m := _USAGE.match(line)) and _FOOTER_MODE.search(line)), None)
        facts = {"model": usage.group("model") if usage else None,
                 "tokens": int(usage.group("tokens").replace(",", "")) if usage else None,
                 "cost_usd": float(usage.group("cost")) if usage and usage.group("cost") else None}
        dialog = _permission(bottom, facts) or _question(bottom, facts)
        if dialog is not None:
            return dialog
        box = _box(bottom)
        if box is None:
            # still starting, an overlay or a redraw: no box, no claim
            last = last_non_empty(lines)
            return Detection(agent_type=NAME, state="Unknown", rule="no-input-box",
                             line=last[1].strip() if last else None, **facts)
        top, bottom_rule = box
        live = next((line for line in reversed(bottom[:top]) if line.strip()), None)
        spinner = _SPINNER.match(live) if live else None
        if spinner is not None:
            return _busy(spinner.group("text"), live or "", facts)
        draft = _draft(bottom[top + 1:bottom_rule])
        if live is not None and _MESSAGE.match(live):
            # the person's message is the last thing shown: taken, and no spinner drawn yet
            return Detection(agent_type=NAME, state="Unknown", rule="message-unanswered", line=live.strip(),
                             input_text=draft, **facts)
        error = _DONE_ERROR.match(live) if live else None
        found = Detection(agent_type=NAME, state="Idle", rule="input-box", line=(live or "").strip() or None,
                          input_text=draft, **facts)
        if error is not None:
            message = error.group("message")
            found = Detection(agent_type=NAME, state="Idle", rule="error-shown", line=live.strip() if live else None,
                              error=AgentError(type=error_kind(message), message=message), input_text=draft, **facts)
        return with_session_shown(found, lines)


def _busy(text: str, line: str, facts: dict[str, Any]) -> Detection:
    thinking = _THINKING.match(text)
    if thinking is not None:
        return Detection(agent_type=NAME, state="Thinking", rule="spinner-thinking", line=line.strip(),
                         description=thinking.group("what"), **facts)
    tool = _TOOL_CALL.match(text)
    if tool is not None:
        return Detection(agent_type=NAME, state="ToolUse", rule="spinner-tool", line=line.strip(),
                         description=text, tool=tool.group("tool"), **facts)
    return Detection(agent_type=NAME, state="Generating", rule="spinner-text", line=line.strip(), **facts)


def _bottom(lines: Sequence[str]) -> list[str]:
    """The rows down to the last non-blank one, at most MAX_SCREEN_ROWS (Cline keeps its box
    at the bottom and the conversation at the top, blank rows between: the live row may be
    far above the box)."""
    last = last_non_empty(lines)
    if last is None:
        return []
    return [_SCROLLED[line] for line in lines[max(0, last[0] + 1 - MAX_SCREEN_ROWS):last[0] + 1]]


# By row text: the row without the scrollbar Cline draws in the last column once the
# conversation is longer than the screen.
_SCROLLED = LineMemo(lambda line: _SCROLLBAR.sub("", line))


def _box(bottom: Sequence[str]) -> tuple[int, int] | None:
    """(top rule, bottom rule) of the input box: the last two rules, with the footer under
    them (Claude's box has no `(Tab)` mode row)."""
    rules = [index for index, line in enumerate(bottom) if _RULE.match(line)]
    if len(rules) < 2:
        return None
    top, below = rules[-2], rules[-1]
    if not any(_FOOTER_MODE.search(line) or _AUTO_APPROVE.search(line) for line in bottom[below + 1:]):
        return None
    if not bottom[top + 1:below] or _INPUT.match(bottom[top + 1]) is None:
        return None
    return top, below


def _draft(rows: Sequence[str]) -> str | None:
    texts = [rows[0].strip().removeprefix("❯").strip(), *(row.strip() for row in rows[1:])]
    text = "\n".join(t for t in texts if t)
    return None if not text or text in _PLACEHOLDERS else text


def _permission(bottom: Sequence[str], facts: dict[str, Any]) -> Detection | None:
    """The approval dialog, when it is the last thing above the footer (no box under it)."""
    for index in range(len(bottom) - 1, -1, -1):
        if _RULE.match(bottom[index]):
            return None  # a box below: the dialog, if any, is history
        if bottom[index].strip() == _PERMISSION:
            rows = [row.strip() for row in bottom[index + 1:] if row.strip()]
            if not any(_APPROVE_ROW.search(row) for row in rows):
                return None
            question = rows[0] if rows and rows[0] else _PERMISSION
            tool = rows[1] if len(rows) > 1 and re.fullmatch(r"[a-z][a-z0-9_]*", rows[1]) else None
            return Detection(agent_type=NAME, state="AwaitingConfirmation", rule="permission",
                             line=bottom[index].strip(), tool=tool,
                             confirmation=Confirmation(prompt=question, options=list(CONFIRM_OPTIONS)), **facts)
    return None


def _question(bottom: Sequence[str], facts: dict[str, Any]) -> Detection | None:
    """ask_question's picker, when it is the last thing above the footer: the question, then
    its options (`> ` on the chosen one), then a row to type another answer."""
    for index in range(len(bottom) - 1, -1, -1):
        if _RULE.match(bottom[index]):
            return None
        if bottom[index].strip() == _ASKING:
            rows = [row.strip() for row in bottom[index + 1:] if row.strip()]
            end = next((i for i, row in enumerate(rows) if row == _TYPE_RESPONSE), None)
            if end is None or end < 2:
                return None
            options = [row.removeprefix(">").strip() for row in rows[1:end]]
            return Detection(agent_type=NAME, state="AwaitingInput", rule="question", line=rows[0],
                             tool="ask_question", confirmation=Confirmation(prompt=rows[0], options=options), **facts)
    return None


def _summary(bottom: Sequence[str]) -> Detection | None:
    """Exited when /exit's "Session Summary" is on the last rows (with what it tells)."""
    start = next((i for i in range(len(bottom) - 1, -1, -1) if bottom[i].strip() == _SUMMARY), None)
    if start is None or not any(_CONTINUE.match(row) for row in bottom[start:]):
        return None
    rows = bottom[start + 1:]
    session = next((m.group("id") for row in rows if (m := _SUMMARY_ID.match(row))), None)
    model = next((m.group("model") for row in rows if (m := _SUMMARY_MODEL.match(row))), None)
    cost = next((float(m.group("cost")) for row in rows if (m := _SUMMARY_COST.match(row))), None)
    return Detection(agent_type=NAME, state="Exited", rule="session-summary", line=_SUMMARY,
                     session_id=session, model=model, cost_usd=cost)


def _exit_shown(lines: list[str]) -> bool:
    return _summary(_bottom(lines)[:-1]) is not None


def _screen_score(lines: list[str]) -> float:
    bottom = _bottom(lines)
    mode = any(_FOOTER_MODE.search(line) and _USAGE.match(line) for line in bottom)
    approve = any(_AUTO_APPROVE.search(line) for line in bottom)
    if mode and approve:
        return FOOTER_CONFIDENCE
    if any(line.strip() == _PERMISSION for line in bottom) and any(_APPROVE_ROW.search(line) for line in bottom):
        return FOOTER_CONFIDENCE
    if _summary(bottom) is not None:
        return EXIT_CONFIDENCE  # the pane's program has exited, its summary left on screen
    return ONE_MARK_CONFIDENCE if mode or approve else 0.0
