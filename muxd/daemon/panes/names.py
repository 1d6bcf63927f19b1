"""What session, window and pane names and tags may hold.

Names and tags are shown by `muxd ls`, the status line and every client, and session and pane
names are targets: no control characters or bidirectional overrides (muxd/terminal_text.py),
and nothing a target would read as syntax (`session:window.pane`, `$N`, `@N`, `%N`).
"""

from __future__ import annotations

from muxd.config import NAME_MAX_CHARS, PANE_TAGS_MAX, TAG_MAX_CHARS
from muxd.errors import BadRequest
from muxd.terminal_text import has_unsafe, visible

_ID_PREFIXES = ("$", "@", "%")


def check_target_name(kind: str, name: str) -> str:
    """`name` if it can name a session or a pane (`kind`); bad_request saying why otherwise."""
    if not 1 <= len(name) <= NAME_MAX_CHARS:
        raise BadRequest(f"a {kind} name has 1-{NAME_MAX_CHARS} characters", field="name")
    if has_unsafe(name):
        raise BadRequest(f"invalid {kind} name {name!r}: no control characters", field="name")
    if ":" in name or "." in name or name.startswith(_ID_PREFIXES):
        raise BadRequest(f"invalid {kind} name {name!r}: no ':' or '.', and no leading $ @ %", field="name")
    return name


def check_window_name(name: str) -> str:
    """`name` if it can name a window ("" lets muxd name it after its program)."""
    if len(name) > NAME_MAX_CHARS:
        raise BadRequest(f"a window name has at most {NAME_MAX_CHARS} characters", field="name")
    if has_unsafe(name):
        raise BadRequest(f"invalid window name {name!r}: no control characters", field="name")
    return name


def check_tags(tags: list[str]) -> list[str]:
    """`tags` if each is one word of at most TAG_MAX_CHARS printable characters."""
    if len(tags) > PANE_TAGS_MAX:
        raise BadRequest(f"a pane has at most {PANE_TAGS_MAX} tags", field="tags")
    for tag in tags:
        if not 1 <= len(tag) <= TAG_MAX_CHARS or has_unsafe(tag) or any(ch.isspace() for ch in tag):
            raise BadRequest(f"invalid tag {tag!r}: 1-{TAG_MAX_CHARS} characters, no spaces or control "
                             f"characters", field="tags")
    return tags


def program_name(text: str) -> str:
    """A window name made from text a program chose (its own name, a tmux window's), which may
    hold anything: control characters shown as their escapes (terminal_text.visible), cut to size."""
    return visible(text)[:NAME_MAX_CHARS]
