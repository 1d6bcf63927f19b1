"""The prefix key table: what a key does after the prefix (C-b by default), tmux's defaults.

One table serves the dispatcher (daemon/attached.py), the `C-b ?` view and the README.
"""

from __future__ import annotations

from dataclasses import dataclass

from muxd.errors import BadRequest
from muxd.keys import key_name_to_text


@dataclass(frozen=True)
class Binding:
    name: str                  # the key as tmux names it
    keys: tuple[bytes, ...]    # the bytes a terminal sends for it (arrows have two forms)
    action: str                # an AttachedClient action, see attached.py
    help: str
    argument: int | str | None = None


def _arrow(final: str) -> tuple[bytes, ...]:
    return (b"\x1b[" + final.encode(), b"\x1bO" + final.encode())


BINDINGS: tuple[Binding, ...] = (
    Binding("c", (b"c",), "new_window", "create a new window"),
    Binding("n", (b"n",), "next_window", "next window"),
    Binding("p", (b"p",), "previous_window", "previous window"),
    *(Binding(str(n), (str(n).encode(),), "select_window", f"select window {n}", n) for n in range(10)),
    Binding("%", (b"%",), "split", "split the pane left/right", "horizontal"),
    Binding('"', (b'"',), "split", "split the pane top/bottom", "vertical"),
    Binding("Up", _arrow("A"), "select_pane", "select the pane above", "up"),
    Binding("Down", _arrow("B"), "select_pane", "select the pane below", "down"),
    Binding("Left", _arrow("D"), "select_pane", "select the pane to the left", "left"),
    Binding("Right", _arrow("C"), "select_pane", "select the pane to the right", "right"),
    Binding("z", (b"z",), "zoom", "zoom the active pane (toggle)"),
    Binding("Space", (b" ",), "layout", "arrange the panes in the next layout", "next_layout"),
    Binding("{", (b"{",), "layout", "swap the active pane with the one before it", "swap_up"),
    Binding("}", (b"}",), "layout", "swap the active pane with the one after it", "swap_down"),
    Binding("!", (b"!",), "layout", "break the active pane out to a new window", "break_pane"),
    Binding("x", (b"x",), "kill_pane", "kill the active pane (asks y/n)"),
    Binding(",", (b",",), "rename_window", "rename the window"),
    Binding("d", (b"d",), "detach", "detach this client"),
    Binding("?", (b"?",), "list_keys", "list key bindings (q leaves)"),
    Binding("[", (b"[",), "copy_mode", "enter copy mode (scroll back, select, copy; q leaves)"),
    Binding("]", (b"]",), "paste_buffer", "paste the newest copied text (drag the mouse to copy)"),
)
_BY_BYTES = {key: binding for binding in BINDINGS for key in binding.keys}

COPY_MODE_KEYS = (
    ("arrows hjkl 0 $", "move the cursor (the view follows)"),
    ("w / b / e", "next word / back to a word's start / to a word's end"),
    ("/ ? n N", "search down / up (lower case: any case), again / the other way"),
    ("C-y C-e PgUp PgDn", "scroll a line / a page"),
    ("g / G", "top of the history / bottom"),
    ("Space v / Enter y", "begin a selection / copy it and leave"),
    ("Escape / q", "clear the selection (none: leave) / leave copy mode"),
    ("wheel / drag", "scroll (down past the bottom leaves) / select, release copies"),
)


def binding_for(key: bytes) -> Binding | None:
    """The binding of a key pressed after the prefix; None: unbound (ignored, as in tmux)."""
    return _BY_BYTES.get(key)


def prefix_bytes(name: str) -> bytes:
    """The bytes of a prefix key name (`C-b`, `C-a`, `^A`, `M-x`); BadRequest if not a key."""
    text = key_name_to_text(name.strip())
    if text is None and len(name) == 1:
        text = name
    if not text:
        raise BadRequest(f"invalid prefix key {name!r} (try C-a or C-b)", prefix=name)
    return text.encode()


def list_keys_text(prefix: str) -> list[str]:
    """The lines of the `?` view."""
    lines = [f"Key bindings (prefix {prefix}, then the key)", ""]
    lines += [f"  {prefix} {b.name:<6} {b.help}" for b in BINDINGS if b.action != "select_window"]
    lines.insert(6, f"  {prefix} 0..9   select window 0..9")
    lines += [f"  {prefix} {prefix:<6} send {prefix} to the pane", "", "Copy mode"]
    lines += [f"  {keys:<18} {what}" for keys, what in COPY_MODE_KEYS]
    lines += ["", "Press q to leave this view."]
    return lines
