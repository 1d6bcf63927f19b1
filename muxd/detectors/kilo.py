"""`KiloDetector`: Kilo's CLI (`kilo`, 7.x), an opencode fork that draws opencode's TUI with
its own mode names, so opencode's reading serves (opencode.py) with Kilo's marks
(tests/detector_data/issue32/kilo):

    ┃  say hello
       ▣  Code · Fake Model · 11.6s                        <- a finished answer: mode, model, time
    ┃  Ask anything... "Fix a TODO in the codebase"        <- input box
    ┃  Code  · Fake Model Fake                             <- mode, model, provider
    ╹▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀
       ⬝⬝⬝■■⬝⬝⬝  esc interrupt                      3.5K  ctrl+p commands   <- busy; tokens

A screen is Kilo's when its process is, or when Kilo's own words are on it (a mode only Kilo
has, its name); opencode's detector gives way to those same words, so neither takes the other.
Busy is the bar; text above the footer of the answer under way (`▣  Code · Fake Model`, no
time yet) is Generating, a spinner in a bar (`┃  ⠼ sleep 4; echo hi`) a tool at work. Kilo
shows no elapsed time while a turn runs (only each finished answer's).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from msgspec.structs import replace

from muxd.detectors._lazy_re import lazy_compile
from muxd.detectors._text import parse_count, screen_text, stripped_rows
from muxd.detectors.base import ScreenContext
from muxd.detectors.opencode_fork import (
    KILO_MODE_ROW, OpencodeDetector, footer_shown, fork_marked, row_weight_of,
)
from muxd.detectors.state import AgentState, Detection

NAME = "kilo"
_PROCESS_NAMES = frozenset({"kilo", ".kilo"})
_PACKAGES = ("@kilocode/cli",)
# `▣  Code · Fake Model · 11.6s` under each answer: the model without its provider.
_ANSWER_FOOTER = lazy_compile(r"^\s*▣\s+(?:Code|Ask|Architect|Debug|Orchestrator|Review|Plan|Build)\s+·\s+"
                            r"(?P<model>\S.*?)(?:\s+·\s+\d[\d.]*m?s)?\s*$", re.MULTILINE)
# `3.5K  ctrl+p commands`: the session's tokens as the status row rounds them.
_TOKENS = lazy_compile(r"(?:^|\s)(?P<count>\d[\d.,]*[KkMm]?)\s+ctrl\+p\b")
KILO_MARK_BONUS = 0.1  # over opencode's own weight for the same rows: Kilo's words are there
EXIT_CONFIDENCE = 0.6  # the resume command Kilo prints as it quits
SCREEN_CONFIDENCE = 0.7  # Kilo's words and one of opencode's status rows under them


# A tool at work in the conversation: `┃  ⠼ sleep 4; echo hi` (its spinner, its title).
_RUNNING_TOOL = lazy_compile(r"^\s*┃\s+[\u2800-\u28ff]\s+(?P<title>\S.*?)\s*$")
# What Kilo prints as it quits, beside its logo: the session's title, then how to resume it.
_RESUME = lazy_compile(r"\bkilo -s (?P<id>ses_[0-9A-Za-z]+)\s*$")
# Rows from the bottom that may follow the resume command (the rest of the logo, a prompt).
RESUME_ROWS_MAX = 6
# The footer of the answer being written: mode and model, no time yet.
_ANSWER_UNDER_WAY = lazy_compile(r"^\s*▣\s+\S.*·\s+\S.*$")
_FINISHED_ANSWER = lazy_compile(r"^\s*▣\s+\S.*·\s+\d[\d.]*m?s\s*$")


class KiloDetector(OpencodeDetector):
    name = NAME
    process_names = _PROCESS_NAMES
    packages = _PACKAGES
    model_row = KILO_MODE_ROW

    def exit_shown(self, lines: list[str]) -> bool:
        return _resume_id(lines) is not None

    def screen_score(self, lines: list[str]) -> float:
        if self.exit_shown(lines):
            return EXIT_CONFIDENCE
        if not fork_marked(lines) and _ANSWER_FOOTER.search(screen_text(lines)) is None:
            return 0.0
        return max(row_weight_of(lines) + KILO_MARK_BONUS, SCREEN_CONFIDENCE) if footer_shown(lines) else 0.0

    def detect(self, ctx: ScreenContext, prev: AgentState | None) -> Detection:
        session = _resume_id(stripped_rows(ctx.lines))
        if session is not None:
            return Detection(agent_type=NAME, state="Exited", rule="resume-command", session_id=session,
                             line=f"kilo -s {session}")
        found = super().detect(ctx, prev)
        if found.state == "Idle" and _message_unanswered(stripped_rows(ctx.lines)):
            # sent, and no answer begun nor busy bar drawn yet: not at rest, not known busy
            return replace(found, state="Unknown", rule="message-unanswered")
        if found.rule != "esc-interrupt":
            return found
        lines = stripped_rows(ctx.lines)
        title = _running_tool(lines)
        if title is not None:
            return replace(found, state="ToolUse", rule="tool-running", description=title)
        if _answer_streaming(lines):
            return replace(found, state="Generating", rule="answer-streaming")
        return found

    def facts(self, lines: Sequence[str], bottom: list[str]) -> dict[str, Any]:
        facts = super().facts(lines, bottom)
        # The answers' footers name the model alone. The mode row has the provider's name after
        # the model's, with nothing between them to cut at: until an answer, no model.
        answered = [m.group("model") for line in lines if (m := _ANSWER_FOOTER.match(line))]
        facts["model"] = answered[-1] if answered else None
        tokens = next((parse_count(m.group("count")) for line in reversed(bottom) if (m := _TOKENS.search(line))),
                      None)
        return {**facts, "tokens": tokens}


def _running_tool(lines: Sequence[str]) -> str | None:
    """The title of the tool at work in the turn now running (below the last finished
    answer's footer), or None."""
    for line in reversed(lines):
        if _FINISHED_ANSWER.match(line):
            return None
        running = _RUNNING_TOOL.match(line)
        if running is not None:
            return running.group("title")
    return None


def _resume_id(lines: Sequence[str]) -> str | None:
    """The session id of the `kilo -s ses_…` Kilo printed as it quit, when it is among the last
    rows and no input box is drawn below it."""
    rows = [line for line in lines if line.strip()][-RESUME_ROWS_MAX:]
    for index in range(len(rows) - 1, -1, -1):
        found = _RESUME.search(rows[index])
        if found is not None:
            below = rows[index + 1:]
            return None if any(KILO_MODE_ROW.match(row) or "┃" in row for row in below) else found.group("id")
    return None


def _message_unanswered(lines: Sequence[str]) -> bool:
    """True when the last block above the input box is the person's message (`┃  say hello`
    with no `▣` answer footer under it), or nothing (the session view drawn before the
    message): Kilo has taken a message and not yet begun its answer."""
    mode_row = next((i for i in range(len(lines) - 1, -1, -1) if KILO_MODE_ROW.match(lines[i])), None)
    if mode_row is None:
        return False
    row = mode_row
    while row > 0 and lines[row - 1].lstrip().startswith("┃"):
        row -= 1  # up through the input box's own rows
    above = next((line for line in reversed(lines[:row]) if line.strip()), None)
    return above is None or above.lstrip().startswith("┃")


def _answer_streaming(lines: Sequence[str]) -> bool:
    """True when the answer under way shows text of its own: a plain row between the last
    block in a bar (the message, a tool) and the answer's footer, which has no time yet."""
    footer = next((i for i in range(len(lines) - 1, -1, -1) if _ANSWER_UNDER_WAY.match(lines[i])), None)
    if footer is None or _FINISHED_ANSWER.match(lines[footer]):
        return False
    for line in reversed(lines[:footer]):
        text = line.strip()
        if text.startswith("┃"):
            return False  # up to the message or tool block: no text of the answer's own
        if text and not text.startswith(("$ ", "▣")):
            return True
    return False
