"""Desktop notifications through an attached terminal: which events notify, their one line of
text, and the bytes that carry it. Pure.

A terminal that shows notifications takes them as an OSC sequence written to it: OSC 9
(`ESC ] 9 ; text BEL`: iTerm2, kitty, WezTerm, Ghostty, foot…) or OSC 777
(`ESC ] 777 ; notify ; title ; body BEL`: VTE terminals (GNOME Terminal, Tilix…), urxvt, foot,
WezTerm, Ghostty). A terminal that knows neither ignores them; the bell (BEL) reaches every
terminal. notify-method `auto` sends OSC 777 and a bell to terminals known to take 777 and not
9, OSC 9 and a bell to the others.

The text is what an event says (`muxd: claude %3 (work:2) waits: Bash: rm -rf build`), made
safe to write into a terminal: no control characters (an agent's question is its screen's
text, and could hold an escape to end the OSC early), one line, NOTIFY_TEXT_MAX_CHARS at most.
"""

from __future__ import annotations

import time

from muxd.protocol.event_messages import DaemonEvent

NOTIFY_TEXT_MAX_CHARS = 200
BEL = b"\x07"
# The option that turns each kind's notification on, and what the text says it did.
NOTIFY_OPTIONS = {"agent-waiting": "notify-waiting", "agent-failed": "notify-failed",
                  "agent-limited": "notify-limited", "agent-idle": "notify-finished"}
_VERBS = {"agent-waiting": "waits", "agent-failed": "failed", "agent-limited": "hit a usage limit",
          "agent-idle": "finished"}
# Terminals known to show OSC 777 and not OSC 9, by $TERM_PROGRAM ("vte": $VTE_VERSION set) or $TERM.
_OSC777_PROGRAMS = frozenset({"vte"})
_OSC777_TERMS = ("rxvt", "foot")


def safe_text(text: str, max_chars: int = NOTIFY_TEXT_MAX_CHARS) -> str:
    """`text` on one line without control characters (C0, DEL, C1), cut to `max_chars`."""
    cleaned = "".join(" " if ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F else ch for ch in text)
    cleaned = " ".join(cleaned.split())
    return cleaned if len(cleaned) <= max_chars else cleaned[:max_chars - 1] + "…"


def notice_text(event: DaemonEvent) -> str | None:
    """`muxd: claude %3 (work:2) waits: Bash: rm -rf build`; None for a kind that never notifies."""
    verb = _VERBS.get(event.kind)
    if verb is None:
        return None
    who = " ".join(part for part in (event.agent_type or "agent", event.pane_id) if part)
    if event.session is not None and event.window_index is not None:
        who += f" ({event.session}:{event.window_index})"
    detail = None
    if event.kind == "agent-waiting":
        detail = event.question
    elif event.kind == "agent-failed":
        detail = event.error
    elif event.kind == "agent-limited" and event.resets_at is not None:
        detail = "resets " + time.strftime("%H:%M", time.localtime(event.resets_at))
    return safe_text(f"muxd: {who} {verb}" + (f": {detail}" if detail else ""))


def takes_osc777(term: str, term_program: str) -> bool:
    return term_program.lower() in _OSC777_PROGRAMS or term.lower().startswith(_OSC777_TERMS)


def notice_bytes(text: str, method: str, term: str = "", term_program: str = "") -> bytes:
    """What to write to a terminal for the notice `text` (already safe_text), by notify-method."""
    if method == "auto":
        method = "osc777+bell" if takes_osc777(term, term_program) else "osc9+bell"
    out = b""
    if method in ("osc9", "osc9+bell", "all"):
        out += b"\x1b]9;" + text.encode() + BEL
    if method in ("osc777", "osc777+bell", "all"):
        title, _, body = text.partition(": ")
        # The body is the last field, but some terminals split it at every ';' all the same.
        out += b"\x1b]777;notify;" + title.encode() + b";" + body.replace(";", ",").encode() + BEL
    if method in ("bell", "osc9+bell", "osc777+bell", "all"):
        out += BEL
    return out
