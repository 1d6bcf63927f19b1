"""Copy mode's default key tables, as tmux names them: `copy-mode-vi` (mode-keys vi) and
`copy-mode` (mode-keys emacs), each key bound to a copy-mode command — tmux's `send-keys -X NAME`.

Only the keys of tmux 3.3a's defaults whose command muxd's copy mode has (copy_mode.py), plus
muxd's own: in vi, `v` begins a selection and `y` copies it (tmux's `v` toggles a rectangle,
which muxd has not), and Home and End move along the line. A user's bind-key in either table
goes over these (key_bindings.py); `send-keys -X NAME` in a binding names one of COPY_COMMANDS.
"""

from __future__ import annotations

import shlex
from functools import cache

from muxd.errors import BadRequest

VI_TABLE, EMACS_TABLE = "copy-mode-vi", "copy-mode"
COPY_TABLES = (EMACS_TABLE, VI_TABLE)

# The copy-mode commands muxd's copy mode does (tmux's names; copy_mode.CopyMode.command).
COPY_COMMANDS = frozenset({
    "cursor-up", "cursor-down", "cursor-left", "cursor-right", "start-of-line", "end-of-line",
    "scroll-up", "scroll-down", "page-up", "page-down", "halfpage-up", "halfpage-down",
    "history-top", "history-bottom", "top-line", "middle-line", "bottom-line",
    "next-word", "next-word-end", "previous-word", "begin-selection", "clear-selection",
    "select-line", "other-end", "copy-selection", "copy-selection-and-cancel",
    "copy-selection-no-clear", "copy-pipe", "copy-pipe-and-cancel", "copy-pipe-no-clear", "cancel",
    "search-forward", "search-backward", "search-again", "search-reverse",
})
# What the `/` and `?` keys run, as tmux lists them: a prompt, then the search.
_SEARCH_PROMPT = 'command-prompt -T search -p "({})" {{ send-keys -X {} "%%" }}'
_PROMPTED = {"search-forward": _SEARCH_PROMPT.format("search down", "search-forward"),
             "search-backward": _SEARCH_PROMPT.format("search up", "search-backward")}

_VI_KEYS: tuple[tuple[str, str], ...] = (
    ("C-b", "page-up"), ("C-c", "cancel"), ("C-d", "halfpage-down"), ("C-e", "scroll-down"),
    ("C-f", "page-down"), ("C-h", "cursor-left"), ("C-j", "copy-pipe-and-cancel"),
    ("Enter", "copy-pipe-and-cancel"), ("C-u", "halfpage-up"), ("C-y", "scroll-up"),
    ("Escape", "clear-selection"), ("Space", "begin-selection"), ("$", "end-of-line"),
    ("/", "search-forward"), ("0", "start-of-line"), ("?", "search-backward"), ("G", "history-bottom"),
    ("H", "top-line"), ("J", "scroll-down"), ("K", "scroll-up"), ("L", "bottom-line"), ("M", "middle-line"),
    ("N", "search-reverse"), ("V", "select-line"), ("b", "previous-word"), ("e", "next-word-end"),
    ("g", "history-top"), ("h", "cursor-left"), ("j", "cursor-down"), ("k", "cursor-up"), ("l", "cursor-right"),
    ("n", "search-again"), ("o", "other-end"), ("q", "cancel"), ("v", "begin-selection"), ("w", "next-word"),
    ("y", "copy-selection-and-cancel"), ("BSpace", "cursor-left"), ("NPage", "page-down"), ("PPage", "page-up"),
    ("Up", "cursor-up"), ("Down", "cursor-down"), ("Left", "cursor-left"), ("Right", "cursor-right"),
    ("Home", "start-of-line"), ("End", "end-of-line"), ("C-Up", "scroll-up"), ("C-Down", "scroll-down"),
)
_EMACS_KEYS: tuple[tuple[str, str], ...] = (
    ("C-Space", "begin-selection"), ("C-a", "start-of-line"), ("C-b", "cursor-left"), ("C-c", "cancel"),
    ("C-e", "end-of-line"), ("C-f", "cursor-right"), ("C-g", "clear-selection"), ("C-n", "cursor-down"),
    ("C-p", "cursor-up"), ("C-r", "search-backward"), ("C-s", "search-forward"), ("C-v", "page-down"),
    ("C-w", "copy-pipe-and-cancel"), ("Escape", "cancel"), ("Space", "page-down"), ("N", "search-reverse"),
    ("n", "search-again"), ("q", "cancel"), ("Home", "start-of-line"), ("End", "end-of-line"),
    ("NPage", "page-down"), ("PPage", "page-up"), ("Up", "cursor-up"), ("Down", "cursor-down"),
    ("Left", "cursor-left"), ("Right", "cursor-right"), ("M-<", "history-top"), ("M->", "history-bottom"),
    ("M-R", "top-line"), ("M-b", "previous-word"), ("M-f", "next-word-end"), ("M-r", "middle-line"),
    ("M-v", "page-up"), ("M-w", "copy-pipe-and-cancel"), ("M-Up", "halfpage-up"), ("M-Down", "halfpage-down"),
    ("C-Up", "scroll-up"), ("C-Down", "scroll-down"),
)
_DEFAULTS = {VI_TABLE: _VI_KEYS, EMACS_TABLE: _EMACS_KEYS}


def default_keys(table: str) -> list[tuple[str, str]]:
    """(key, command as list-keys shows it) of each default key of `table`."""
    return [(key, _PROMPTED.get(name, f"send-keys -X {name}")) for key, name in _DEFAULTS[table]]


@cache
def _by_form(table: str) -> dict[bytes, str]:
    from muxd.daemon.client_side.key_bindings import key_forms

    return {form: name for key, name in _DEFAULTS[table] for form in key_forms(key)}


def default_command(table: str, key: bytes) -> str | None:
    """The copy-mode command `key` runs in `table` by default; None: it does nothing there."""
    return _by_form(table).get(key)


def table_for(mode_keys: str) -> str:
    """The copy-mode table the window option mode-keys picks."""
    return EMACS_TABLE if mode_keys == "emacs" else VI_TABLE


def copy_command(words: list[str]) -> tuple[str, list[str]] | None:
    """(NAME, its arguments) when `words` is `send-keys -X NAME …` (send, -FX, -X -N 5 …); None
    when it is another command. BadRequest for a NAME muxd's copy mode does not do."""
    if not words or words[0] not in ("send-keys", "send"):
        return None
    flags, rest = set(), words[1:]
    while rest and rest[0].startswith("-") and len(rest[0]) > 1:
        option, rest = rest[0], rest[1:]
        flags |= set(option[1:])
        if option[-1:] in ("N", "t") and rest:  # -N COUNT, -t PANE: their value follows
            rest = rest[1:]
    if "X" not in flags:
        return None
    if not rest:
        raise BadRequest("send-keys -X needs a copy-mode command")
    name = rest[0]
    if name in _TMUX_ONLY:
        raise BadRequest(f"copy-mode command {name}: not supported by muxd")
    if name not in COPY_COMMANDS:
        raise BadRequest(f"unknown copy-mode command: {name}")
    return name, rest[1:]


# tmux 3.3a's copy-mode commands muxd's copy mode lacks (window-copy.c's table).
_TMUX_ONLY = frozenset(shlex.split(
    "append-selection append-selection-and-cancel back-to-indentation copy-end-of-line "
    "copy-end-of-line-and-cancel copy-pipe-end-of-line copy-pipe-end-of-line-and-cancel copy-line "
    "copy-line-and-cancel goto-line jump-again jump-backward jump-forward jump-reverse jump-to-backward "
    "jump-to-forward jump-to-mark next-matching-bracket next-paragraph next-prompt next-space "
    "next-space-end pipe pipe-and-cancel pipe-no-clear previous-matching-bracket previous-paragraph "
    "previous-prompt previous-space rectangle-on rectangle-off rectangle-toggle refresh-from-pane "
    "search-backward-incremental search-backward-text search-forward-incremental search-forward-text "
    "select-word set-mark stop-selection toggle-position"))
