"""What tells Qwen Code (a Gemini CLI fork, 0.15) from Gemini CLI on its process and its screen,
and its spinner row: apart from gemini.py, which asks these to leave Qwen's panes alone.

Qwen's input box has a rule under the composer too, with its hints below:

     ⠦ Herding digital cats... (3s · ↓ 1 tokens · esc to cancel)   <- spinner (wraps in a narrow pane)
    ──────────────────────────────────────────
    >   Type your message or @path/to/file                        <- composer
    ──────────────────────────────────────────
      ? for shortcuts
"""

from __future__ import annotations

from collections.abc import Sequence

from muxd.detectors._agent_cli import process_is
from muxd.detectors._lazy_re import lazy_compile
from muxd.detectors._text import LineMemo, parse_count, parse_duration, screen_text
from muxd.detectors.base import ScreenContext

PROCESS_NAMES = frozenset({"qwen", "qwen-code"})
# `node …/.bin/qwen` is told by its name; the package path for `node …/qwen-code/cli.js`.
PACKAGES = ("@qwen-code/qwen-code", "qwen-code/cli")
# Rows a wrapped spinner takes: its phrase, a `…` row, its `(3s · esc to cancel)`.
SPINNER_ROWS_MAX = 3
# Non-blank rows between the composer and the rule under it (a draft of several rows).
COMPOSER_TO_RULE_ROWS_MAX = 12

BANNER = lazy_compile(r">_ Qwen Code \(v\d")
_RULE = lazy_compile(r"^\s*[─━]{20,}\s*$")
_COMPOSER = lazy_compile(r"^(?:[>!*]|\(r:\)) ")
# `⠦ desc (3s · ↓ 1 tokens · esc to cancel)`, its rows joined; the phrase may touch the glyph.
_SPINNER = lazy_compile(r"^[\u2800-\u28ff]\s*(?P<desc>\S.*?)\s*(?:\((?P<tail>\d[^()]*esc to cancel)\))?$")
_GLYPH_ROW = lazy_compile(r"^\s*[\u2800-\u28ff]")
_TOKENS = lazy_compile(r"[↓↑]\s*(?P<count>[\d.,]+[kKmM]?)\s+tokens")


def qwen_process(ctx: ScreenContext) -> bool:
    """True when Qwen Code's process is in front."""
    return process_is(ctx, PROCESS_NAMES, PACKAGES)


def qwen_input_box(lines: Sequence[str]) -> tuple[int, int] | None:
    """Rows of the rules above and below Qwen's composer (Gemini CLI draws none below); None
    when there is no such box."""
    rules = [row for row in range(len(lines) - 1, -1, -1) if _RULES[lines[row]]][:2]
    if len(rules) < 2:
        return None
    lower, upper = rules
    if lower - upper - 1 > COMPOSER_TO_RULE_ROWS_MAX or not _COMPOSERS[lines[upper + 1]]:
        return None
    return upper, lower


def starting(lines: Sequence[str], lower_rule: int) -> bool:
    """A spinner under the input box (`⠼ Initializing...`): Qwen is still starting and drops
    what is submitted meanwhile."""
    return any(_GLYPH_ROWS[line] for line in lines[lower_rule + 1:])


def shows_qwen(lines: Sequence[str]) -> bool:
    """Qwen Code's own marks on screen: its banner or its closed input box."""
    return ("Qwen Code (v" in screen_text(lines) and any(BANNER.search(line) for line in lines)) or \
        qwen_input_box(lines) is not None


def spinner(lines: Sequence[str], rule_row: int) -> tuple[int, str, int | None, int | None] | None:
    """(row, description, elapsed seconds, tokens) of the spinner just above the input box's
    rule (row `rule_row`); None when no spinner is there. In a narrow pane it wraps: its
    parenthesis (or only its last word) onto the next row, a long phrase onto a `…` row."""
    end = rule_row - 1
    while end >= 0 and not lines[end].strip():
        end -= 1
    for head_row in range(end, max(-1, end - SPINNER_ROWS_MAX), -1):
        if _GLYPH_ROWS[lines[head_row]]:
            break
    else:
        return None
    found = _SPINNER.match(" ".join(line.strip() for line in lines[head_row:end + 1]))
    if found is None:
        return None
    text = found.group("tail") or ""
    elapsed = parse_duration(text.split("·")[0]) if "·" in text else None
    tokens = _TOKENS.search(text)
    return head_row, found.group("desc"), elapsed, parse_count(tokens.group("count")) if tokens else None


_RULES = LineMemo(lambda line: bool(_RULE.match(line)))
_GLYPH_ROWS = LineMemo(lambda line: bool(_GLYPH_ROW.match(line)))
_COMPOSERS = LineMemo(lambda line: bool(_COMPOSER.match(line)))
