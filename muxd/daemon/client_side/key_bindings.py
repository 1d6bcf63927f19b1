"""bind-key and unbind-key: the user's keys, over tmux's default tables (prefix_keys.py, copy_keys.py).

Four tables, as tmux's: `prefix` (a key after the prefix), `root` (`bind -n`: a key on its
own, before any program sees it), and copy mode's `copy-mode-vi` and `copy-mode` (emacs). A
user binding holds a command line — muxd commands, `;` between them, as the `C-b :` prompt
takes them, or copy-mode commands (`send -X begin-selection`) — or, in a table with defaults,
None: a default key unbound. `unbind-key -a` drops a table's defaults too. Key names are tmux's (`C-a`, `M-Left`,
`F5`, `|`); a binding answers to every form a terminal sends for its key (arrows in both
cursor modes, Home and End in their three).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from muxd.errors import BadRequest
from muxd.keys import CURSOR_KEYS_MODE, key_name_to_text

TABLES = ("prefix", "root", "copy-mode", "copy-mode-vi")
_WITH_DEFAULTS = ("prefix", "copy-mode", "copy-mode-vi")
# Home and End arrive as CSI H/F, SS3 H/F (cursor keys mode) or CSI 1~/4~ (the vt220 forms).
_VT220_FORMS = {"\x1b[H": ("\x1b[1~",), "\x1b[F": ("\x1b[4~",)}
# tmux's mouse keys (MouseDragEnd1Pane, WheelUpPane…): muxd's mouse does what it does, unbound.
_MOUSE_KEY = re.compile(r"(Mouse(Down|Up|Drag|DragEnd)[1-5]|Wheel(Up|Down)|(Second|Double|Triple)Click[1-5])"
                        r"(Pane|Border|Status|StatusLeft|StatusRight|StatusDefault|ScrollbarUp|ScrollbarDown)?")


@dataclass(frozen=True)
class UserBinding:
    table: str
    key: str                # the name it was bound by
    command: str | None     # None: a default prefix key unbound
    repeat: bool = False    # -r


def key_forms(name: str) -> tuple[bytes, ...]:
    """The bytes a terminal may send for the key `name`; BadRequest if it names no key."""
    text = key_name_to_text(name)
    if text is None and len(name) == 1:
        text = name
    if not text and _MOUSE_KEY.fullmatch(name):
        raise BadRequest(f"mouse key {name}: not supported by muxd (its mouse does tmux's defaults)", key=name)
    if not text:
        raise BadRequest(f"unknown key: {name}", key=name)
    forms = {text, key_name_to_text(name, frozenset({CURSOR_KEYS_MODE})) or text, *_VT220_FORMS.get(text, ())}
    return tuple(sorted(form.encode() for form in forms))


class KeyBindings:
    """The server's user bindings (one set for every client, as tmux's)."""

    def __init__(self) -> None:
        self._bound: dict[str, dict[bytes, UserBinding]] = {table: {} for table in TABLES}
        self.cleared: set[str] = set()  # tables whose defaults unbind-key -a dropped

    @property
    def defaults_unbound(self) -> bool:
        """unbind-key -a on the prefix table."""
        return "prefix" in self.cleared

    def bind(self, table: str, key: str, command: str, repeat: bool = False) -> None:
        for form in key_forms(key):
            self._bound[table][form] = UserBinding(table, key, command, repeat)

    def unbind(self, table: str, key: str) -> None:
        forms = key_forms(key)
        for form in forms:
            self._bound[table].pop(form, None)
        if table in _WITH_DEFAULTS and table not in self.cleared:
            for form in forms:  # a default key stays unbound until bound again
                self._bound[table][form] = UserBinding(table, key, None)

    def unbind_all(self, table: str) -> None:
        self._bound[table].clear()
        if table in _WITH_DEFAULTS:
            self.cleared.add(table)

    def lookup(self, table: str, key: bytes) -> UserBinding | None:
        """The user's binding of `key` (its command None: unbound), or None: the default's."""
        return self._bound[table].get(key)

    def any_in(self, table: str) -> bool:
        return bool(self._bound[table])

    def listed(self) -> list[UserBinding]:
        """Each binding once (not once a form), in the order bound."""
        seen: dict[tuple[str, str], UserBinding] = {}
        for table in TABLES:
            for binding in self._bound[table].values():
                seen[(table, binding.key)] = binding
        return list(seen.values())
