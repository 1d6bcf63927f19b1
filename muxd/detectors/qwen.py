"""Qwen Code (0.15, a Gemini CLI fork): its turn, tool boxes, confirmation box and goodbye box
are Gemini's and are read by gemini.py's readers; what differs is read here: the input box
closed by a second rule, the spinner's `(3s · ↓ 7 tokens · esc to cancel)` (wrapped to its own
row in a narrow pane), the confirmation box with a `Waiting for user confirmation...` spinner
under it and no input box, and the model named in the banner box.

     │ API Key | fake-model (/model to change)    │   <- banner box: auth | model
     ✦ I will run it.
     ╭──────────────────────────────────────────╮
     │ ?  Shell for i in 1 2 3; do …              │   <- ✓ done, ⊶/⊷ running, ? asking
     │ Allow execution of: 'for, do, sleep'?     │
     │ › 1. Yes, allow once                      │
     │   4. No, suggest changes (esc)            │
     ╰──────────────────────────────────────────╯
     ⠏ Waiting for user confirmation...
"""

from __future__ import annotations

from collections.abc import Sequence

from msgspec.structs import replace

from muxd.detectors._agent_cli import (
    agent_confidence,
    exit_or_dialog,
    input_hidden,
    last_non_empty,
    unbox,
    with_session_shown,
)
from muxd.detectors._lazy_re import lazy_compile
from muxd.detectors._text import FrameMemo, LineMemo, screen_text, stripped_rows
from muxd.detectors.base import ScreenContext
from muxd.detectors.gemini import busy_state, confirmation_box, exited_screen, idle_state, tool_sightings
from muxd.detectors.qwen_screen import PACKAGES, PROCESS_NAMES, qwen_input_box, shows_qwen, spinner, starting
from muxd.detectors.state import AgentState, Detection

NAME = "qwen"
# Confidence from the screen: its banner or its closed input box (Gemini CLI has neither).
SCREEN_CONFIDENCE = 0.95
# Qwen's prompt stays at rest for ~1.5 s after Enter before its spinner (measured live, a loaded
# machine): that Idle reads Unknown this long at most (submit_uptake.py).
QWEN_SUBMIT_UPTAKE_S = 3.0
RESUME_ROWS = 2  # rows ending the screen that hold `qwen --resume <id>`, wrapped or not
TRANSCRIPT_INDENT = 2  # Qwen's margin left of its transcript (Gemini CLI draws none)
_INDENT = " " * TRANSCRIPT_INDENT
_MODEL = lazy_compile(r"\|\s*(?P<model>\S+)\s+\(/model to change\)")
_AWAITING = "Waiting for user confirmation"
_QWEN_YES = lazy_compile(r"^1\. Yes, allow (?:once|always)")
# `fake-model   4   19,595   92` under `Model Usage  Reqs  Input Tokens  Output Tokens`.
_USAGE_TOTALS = lazy_compile(r"^(?P<model>[A-Za-z][\w.\-]*)\s{2,}\d+\s+(?P<input>[\d,]+)\s+(?P<output>[\d,]+)$")
_RESUME = lazy_compile(r"qwen --resume\s+(?P<id>[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12})")


class QwenDetector:
    name = NAME
    submit_uptake_s = QWEN_SUBMIT_UPTAKE_S

    def identify(self, ctx: ScreenContext) -> float:
        return agent_confidence(ctx, PROCESS_NAMES, PACKAGES, _screen_score, _qwen_exit)

    def detect(self, ctx: ScreenContext, prev: AgentState | None) -> Detection:
        lines: list[str] = dedented(stripped_rows(ctx.lines))
        found = self._read(ctx, lines)
        if found.state == "Exited":
            found = _goodbye_facts(found, lines)
        model = found.model or _banner_model(lines)
        return with_session_shown(replace(found, agent_type=NAME, model=model), lines)

    def _read(self, ctx: ScreenContext, lines: list[str]) -> Detection:
        tools = tool_sightings(lines)
        found = exit_or_dialog(ctx, NAME, lines, tools, exited_screen, _confirmation)
        if found is not None:
            return found
        if _ends_with_resume(lines):  # the last thing Qwen prints: it has quit
            gone = exited_screen(lines, pane_exited=True)
            if gone is not None:
                return replace(gone, tools_seen=tools)
        box = qwen_input_box(lines)
        if box is None:
            return replace(input_hidden(NAME, lines, "no-input-box"), tools_seen=tools)
        rule_row, lower_rule = box
        if starting(lines, lower_rule):
            return replace(input_hidden(NAME, lines, "starting"), tools_seen=tools)
        shown = spinner(lines, rule_row)
        if shown is None:
            found = idle_state(lines, rule_row, ctx.columns, ctx.now)
        else:
            row, description, elapsed, _tokens = shown
            found = busy_state(lines, row, description, elapsed)
        return replace(found, tools_seen=tools)


def _dedented(lines: list[str]) -> list[str]:
    return [line[TRANSCRIPT_INDENT:] if line.startswith(_INDENT) else line for line in lines]


# The rows with Qwen's two-column transcript margin taken off: Gemini's readers find its
# blocks (`✦`, `╭`, `✕`, ` > prompt`) at the first column.
dedented = FrameMemo(_dedented)


def _screen_score(lines: list[str]) -> float:
    if shows_qwen(lines) or _ends_with_resume(lines):
        return SCREEN_CONFIDENCE
    # its confirmation box in its words (Gemini's first option is `Allow once`, Claude's `Yes`)
    found = _confirmation(lines)
    options = found.confirmation.options if found is not None and found.confirmation is not None else []
    return SCREEN_CONFIDENCE if options and _QWEN_YES.match(options[0]) else 0.0


def _ends_with_resume(lines: list[str]) -> bool:
    """`To continue this session, run qwen --resume <id>` (wrapped or not) ends the screen."""
    last = last_non_empty(lines)
    if last is None:
        return False
    tail = "\n".join(lines[max(0, last[0] - RESUME_ROWS + 1):last[0] + 1])
    return "qwen --resume" in tail and _RESUME.search(tail) is not None


def _qwen_exit(lines: list[str]) -> bool:
    return "qwen --resume" in screen_text(lines) and exited_screen(lines) is not None


def _confirmation(lines: Sequence[str]) -> Detection | None:
    """Gemini's confirmation box, ending the screen or with Qwen's `Waiting for user
    confirmation...` spinner (and nothing else) under it."""
    end = len(lines)
    while end > 0 and not lines[end - 1].strip():
        end -= 1
    if end and _AWAITING in lines[end - 1] and _SPINNER_GLYPH.match(lines[end - 1]):
        found = confirmation_box(lines[:end - 1])
    else:
        found = confirmation_box(lines)
    return None if found is None else replace(found, agent_type=NAME)


def _goodbye_facts(found: Detection, lines: list[str]) -> Detection:
    """The goodbye box's `Model Usage` rows (model; tokens: input + output, over its models) and
    the session id of `qwen --resume <id>` under it, wrapped or not."""
    rows = [m for line in lines if (m := _USAGE_TOTALS.match(unbox(line)))]
    tokens = sum(int(m.group("input").replace(",", "")) + int(m.group("output").replace(",", "")) for m in rows)
    resume = _RESUME.search(screen_text(lines))
    return replace(found, tokens=tokens if rows else found.tokens,
                   model=found.model or (rows[0].group("model") if rows else None),
                   session_id=found.session_id or (resume.group("id") if resume else None))


def _banner_model(lines: Sequence[str]) -> str | None:
    if "(/model to change)" not in screen_text(lines):
        return None
    return next((model for line in lines if (model := _MODELS[line]) is not None), None)


_SPINNER_GLYPH = lazy_compile(r"^\s*[\u2800-\u28ff]\s")
_MODELS = LineMemo(lambda line: (m.group("model") if (m := _MODEL.search(line)) else None))
