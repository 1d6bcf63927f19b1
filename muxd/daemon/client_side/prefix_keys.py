"""The prefix key table: what a key does after the prefix (C-b by default), tmux's defaults.

One table serves the dispatcher (daemon/client_side/attached.py), the `C-b ?` view and the README.
"""

from __future__ import annotations

import functools
import shlex
from dataclasses import dataclass
from typing import Any

from muxd.errors import BadRequest
from muxd.keys import key_name_to_text


@dataclass(frozen=True)
class Binding:
    name: str                  # the key as tmux names it
    keys: tuple[bytes, ...]    # the bytes a terminal sends for it (arrows have two forms)
    action: str                # an AttachedClient action, see attached.py
    help: str
    argument: int | str | None = None
    tmux: str = ""             # the tmux command line of the same key in tmux's default table
    repeat: bool = False       # -r: again without the prefix within repeat-time


def _arrow(final: str) -> tuple[bytes, ...]:
    return (b"\x1b[" + final.encode(), b"\x1bO" + final.encode())


_ARROWS = (("Up", "A", "U", "above"), ("Down", "B", "D", "below"), ("Left", "D", "L", "to the left"),
           ("Right", "C", "R", "to the right"))
_RESIZE_KEYS = (("M-", 3, 5), ("C-", 5, 1))  # tmux's: M-arrows by 5 cells, C-arrows by 1


BINDINGS: tuple[Binding, ...] = (
    Binding("c", (b"c",), "new_window", "create a new window", tmux="new-window"),
    Binding("n", (b"n",), "next_window", "next window", tmux="next-window"),
    Binding("p", (b"p",), "previous_window", "previous window", tmux="previous-window"),
    *(Binding(str(n), (str(n).encode(),), "select_window", f"select window {n}", n, f"select-window -t :={n}")
      for n in range(10)),
    Binding("%", (b"%",), "split", "split the pane left/right", "horizontal", "split-window -h"),
    Binding('"', (b'"',), "split", "split the pane top/bottom", "vertical", "split-window"),
    *(Binding(name, _arrow(final), "select_pane", f"select the pane {where}", name.lower(), f"select-pane -{flag}",
              repeat=True) for name, final, flag, where in _ARROWS),
    *(Binding(f"{mod}{name}", (f"\x1b[1;{code}{final}".encode(),), "resize_pane",
              f"resize the pane {name.lower()}" + (f" by {cells}" if cells > 1 else ""), f"{flag}{cells}",
              f"resize-pane -{flag}" + (f" {cells}" if cells > 1 else ""), repeat=True)
      for mod, code, cells in _RESIZE_KEYS for name, final, flag, _ in _ARROWS),
    Binding("o", (b"o",), "next_pane", "select the next pane", tmux="select-pane -t :.+"),
    Binding(";", (b";",), "last_pane", "select the previously active pane", tmux="last-pane"),
    Binding("l", (b"l",), "last_window", "select the previously active window", tmux="last-window"),
    Binding("q", (b"q",), "display_panes", "show pane numbers (press one to select that pane)",
            tmux="display-panes"),
    Binding("z", (b"z",), "zoom", "zoom the active pane (toggle)", tmux="resize-pane -Z"),
    Binding("Space", (b" ",), "layout", "arrange the panes in the next layout", "next_layout", "next-layout"),
    Binding("{", (b"{",), "layout", "swap the active pane with the one before it", "swap_up", "swap-pane -U"),
    Binding("}", (b"}",), "layout", "swap the active pane with the one after it", "swap_down", "swap-pane -D"),
    Binding("!", (b"!",), "layout", "break the active pane out to a new window", "break_pane", "break-pane"),
    Binding("x", (b"x",), "kill_pane", "kill the active pane (asks y/n)",
            tmux='confirm-before -p "kill-pane #P? (y/n)" kill-pane'),
    Binding("&", (b"&",), "kill_window", "kill the window (asks y/n)",
            tmux='confirm-before -p "kill-window #W? (y/n)" kill-window'),
    Binding("w", (b"w",), "choose_tree", "choose a window, with its agents' states", "windows", "choose-tree -Zw"),
    Binding("s", (b"s",), "choose_tree", "choose a session (Right opens its windows)", "sessions",
            "choose-tree -Zs"),
    Binding(":", (b":",), "command_prompt", "run a muxd command (the active pane is the default -t)",
            tmux="command-prompt"),
    Binding(",", (b",",), "rename_window", "rename the window",
            tmux='command-prompt -I "#W" { rename-window "%%" }'),
    Binding("$", (b"$",), "rename_session", "rename the session",
            tmux='command-prompt -I "#S" { rename-session "%%" }'),
    Binding("d", (b"d",), "detach", "detach this client", tmux="detach-client"),
    Binding("?", (b"?",), "list_keys", "list key bindings (q leaves)", tmux="list-keys -N"),
    Binding("[", (b"[",), "copy_mode", "enter copy mode (scroll back, select, copy; q leaves)", tmux="copy-mode"),
    Binding("]", (b"]",), "paste_buffer", "paste the newest copied text (drag the mouse to copy)",
            tmux="paste-buffer -p"),
)
_BY_BYTES = {key: binding for binding in BINDINGS for key in binding.keys}

COPY_MODE_KEYS = (
    ("arrows hjkl 0 $", "move the cursor (the view follows)"),
    ("w / b / e", "next word / back to a word's start / to a word's end"),
    ("/ ? n N", "search down / up (lower case: any case), again / the other way"),
    ("C-y C-e / C-u C-d", "scroll a line / half a page"),
    ("PgUp PgDn C-b C-f", "scroll a page (C-b when it is the prefix: press it twice)"),
    ("g / G", "top of the history / bottom"),
    ("Space v / Enter y", "begin a selection / copy it and leave"),
    ("Escape / q", "clear the selection (none: leave) / leave copy mode"),
    ("wheel / drag", "scroll (down past the bottom leaves) / select, release copies"),
)
EMACS_COPY_MODE_KEYS = (  # mode-keys emacs (copy_keys.py: the copy-mode table)
    ("arrows C-p C-n C-b C-f", "move the cursor (the view follows)"),
    ("C-a C-e / M-f M-b", "start / end of the line; to a word's end / back to a word's start"),
    ("C-s C-r n N", "search down / up (lower case: any case), again / the other way"),
    ("M-v C-v PgUp PgDn", "scroll a page"),
    ("M-< / M->", "top of the history / bottom"),
    ("C-Space / M-w C-w", "begin a selection / copy it and leave"),
    ("C-g / q Escape C-c", "clear the selection (none: leave) / leave copy mode"),
    COPY_MODE_KEYS[-1],
)


# The prefix key's own binding: the prefix to the pane. Its key is the prefix option, so it is
# not in BINDINGS (whose keys are fixed): the prefix pressed twice is looked for by the caller.
SEND_PREFIX = Binding("", (), "send_prefix", "send the prefix key", tmux="send-prefix")


def _canonical(words: list[str]) -> tuple[str, ...]:
    """A command's words with tmux's name for the command (`splitw -v` -> `split-window`)."""
    from muxd.errors import MuxdError
    from muxd.tmux_line import find_command

    try:
        name = find_command(words[0])
    except MuxdError:
        name = words[0]
    rest = tuple(words[1:])
    return (name, *rest) if (name, rest) != ("split-window", ("-v",)) else (name,)


@functools.cache
def _by_command() -> dict[tuple[str, ...], Binding]:
    return {_canonical(shlex.split(b.tmux)): b for b in reversed((SEND_PREFIX, *BINDINGS))}


def binding_for_command(words: list[str]) -> Binding | None:
    """The default binding whose tmux command `words` are, so that a key bound to it does what
    the default key does (those need an attached client: copy-mode, choose-tree, prompts)."""
    return _by_command().get(_canonical(words)) if words else None


def binding_for(key: bytes) -> Binding | None:
    """The binding of a key pressed after the prefix; None: unbound (ignored, as in tmux)."""
    return _BY_BYTES.get(key)


@functools.lru_cache(maxsize=64)  # asked at every key an attached client types
def prefix_bytes(name: str) -> bytes:
    """The bytes of a prefix key name (`C-b`, `C-a`, `^A`, `M-x`); BadRequest if not a key."""
    text = key_name_to_text(name.strip())
    if text is None and len(name) == 1:
        text = name
    if not text:
        raise BadRequest(f"invalid prefix key {name!r} (try C-a or C-b)", prefix=name)
    return text.encode()


def list_keys_text(prefix: str, user: Any = None, mode_keys: str = "vi") -> list[str]:
    """The lines of the `?` view: the prefix table as list-keys has it (the user's bind-key
    and unbind-key over tmux's defaults; `user` is daemon/key_bindings.KeyBindings), keys
    bound alone (-n), then copy mode's keys for `mode_keys`."""
    bound = {b.key: b for b in (user.listed() if user is not None else ()) if b.table == "prefix"}
    defaults = () if user is not None and user.defaults_unbound else BINDINGS
    digits_kept = not any(str(digit) in bound for digit in range(10))  # one line for 0..9
    lines = [f"Key bindings (prefix {prefix}, then the key)", ""]
    for b in defaults:
        if b.name in bound or (b.action == "select_window" and digits_kept and b.argument != 0):
            continue
        if b.action == "select_window" and digits_kept:
            lines.append(f"  {prefix} 0..9   select window 0..9")
        else:
            lines.append(f"  {prefix} {b.name:<6} {b.help}")
    if defaults and prefix not in bound:
        lines.append(f"  {prefix} {prefix:<6} send {prefix} to the pane")
    lines += [f"  {prefix} {key:<6} {b.command}" for key, b in bound.items() if b.command is not None]
    alone = [b for b in (user.listed() if user is not None else ()) if b.table == "root" and b.command]
    if alone:
        lines += ["", "Keys bound alone (bind-key -n)"] + [f"  {b.key:<13} {b.command}" for b in alone]
    lines += ["", f"Copy mode ({mode_keys} keys: the mode-keys option)"]
    keys = EMACS_COPY_MODE_KEYS if mode_keys == "emacs" else COPY_MODE_KEYS
    lines += [f"  {keys_text:<24} {what}" for keys_text, what in keys]
    table = "copy-mode" if mode_keys == "emacs" else "copy-mode-vi"
    rebound = [b for b in (user.listed() if user is not None else ()) if b.table == table]
    lines += [f"  {b.key:<24} {b.command or '(unbound)'}" for b in rebound]  # bind-key -T copy-mode-vi
    lines += ["", "Press q to leave this view."]
    return lines
