"""Claude Code's panels that cover the prompt box without asking anything, and the list of
agents under its footer.

A panel opens under a `▔` edge at the bottom of the screen. /help, /status, /cost (and the
other tabs of the settings panel) show a tab strip under the edge: Claude is at rest, the
panel closes with Esc. The /model picker shows numbered choices but no question: what a key
does there is choose a model, so it is neither a prompt to type at nor a yes/no to answer.
Panels that ask something (`Exit plan mode?`, /exit's `Background work is running` with
`Enter to confirm`) are dialogs: claude_screen.find_dialog reads those.

While background agents run, Claude lists them under the footer, below the main one:

      ⏸ manual mode on · ? for shortcuts · ↓ to manage
      ● main
      ◯ general-purpose  Survey the files  11s · ↑ 6.9k tokens
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from muxd.detectors._lazy_re import lazy_compile
from muxd.detectors._text import LineMemo, screen_text

MIN_EDGE_CHARS = 20             # the `▔` edge spans the pane
MAX_PANEL_ROWS = 60             # the tallest panel looked for, from the bottom
MAX_PANEL_TAIL_ROWS = 3         # rows at the bottom that hold a panel's key hints

_EDGE = lazy_compile(r"^▔{%d,}$" % MIN_EDGE_CHARS)
# `Help  General   Commands   Custom commands`, `Settings  Status   Config   Usage   Stats`:
# three or more short titles two spaces or more apart.
_TAB_STRIP = lazy_compile(r"^\s*[A-Z][\w/-]*(?: [\w/-]+)?(?:\s{2,}[A-Z][\w/-]*(?: [\w/-]+)?){2,}\s*$")
_CHOICE = lazy_compile(r"^\s*❯\s*\d+\.\s+\S")
_CONFIRM_KEYS = lazy_compile(r"\bEnter to confirm\b")
# An agent in the list under the footer: `● main`, `◯ general-purpose  Survey the files  11s`.
_AGENT_ROW = lazy_compile(r"^[●◯○◉]\s+(?P<name>[\w.@-]+)(?:\s{2,}\S.*)?$")


class Panel(msgspec.Struct, frozen=True):
    top: int        # row of the `▔` edge
    kind: str       # "overlay" (a tab strip: /help, /status, /cost) or "picker" (/model)
    title: str      # the tab strip or the picker's title, stripped


def find_panel(lines: Sequence[str]) -> Panel | None:
    """The panel that ends the screen, if it asks nothing: an overlay or a picker."""
    if "▔" * MIN_EDGE_CHARS not in screen_text(lines):
        return None  # no edge anywhere: no row need be looked at
    end = len(lines) - 1
    while end >= 0 and not lines[end].strip():
        end -= 1
    for top in range(end - 1, max(-1, end - MAX_PANEL_ROWS), -1):
        if not _EDGES[lines[top]]:
            continue
        body = [line for line in lines[top + 1:end + 1] if line.strip()]
        if not body:
            return None
        title = body[0].strip()
        if _TAB_STRIPS[body[0]]:
            return Panel(top, "overlay", title)
        asks = any("?" in line for line in body) or any(
            _CONFIRM_KEYS.search(line) for line in body[-MAX_PANEL_TAIL_ROWS:])
        if not asks and any(_CHOICE.match(line) for line in body):
            return Panel(top, "picker", title)
        return None
    return None


def background_agents(footer: Sequence[str]) -> int:
    """How many agents the list under the footer shows besides the main one (0 without a list)."""
    count = 0
    listed = False
    for line in footer:
        match = _AGENT_ROWS[line]
        if match is None:
            continue
        if match == "main":
            listed = True
        elif listed:
            count += 1
    return count


def _agent_row(line: str) -> str | None:
    match = _AGENT_ROW.match(line.strip())
    return match.group("name") if match else None


# By row text: the bottom rows are read on every look.
_EDGES = LineMemo(lambda line: bool(_EDGE.match(line.strip())))
_TAB_STRIPS = LineMemo(lambda line: bool(_TAB_STRIP.match(line)))
_AGENT_ROWS = LineMemo(_agent_row)
