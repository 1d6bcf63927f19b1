"""The key tables as tmux's list-keys prints them: `bind-key -T prefix c new-window`, one line
a key: tmux's default prefix and copy-mode tables as muxd has them (muxd/daemon/client_side/
prefix_keys.py, copy_keys.py), with the user's bind-key and unbind-key over them
(muxd/daemon/client_side/key_bindings.py)."""

from __future__ import annotations

from typing import Any

from muxd.daemon.client_side.copy_keys import COPY_TABLES, default_keys
from muxd.daemon.client_side.prefix_keys import BINDINGS, SEND_PREFIX

# `user`: the daemon's key-binding-list reply (bindings: table, key, command; defaults_unbound,
# tables_cleared).

_ESCAPED = set("\"#$%';{}\\~")  # key names tmux writes with a backslash


def _shown(line: str) -> str:
    """A bound line as tmux lists it: `\\;` between commands, each by its full name (send:
    send-keys), a word quoted only if it must be, as tmux quotes it."""
    import re
    import shlex

    from muxd.cli.table import command_named
    from muxd.daemon.core.cli_lines import tmux_word
    from muxd.tmux_line import exact_command, split_commands

    def name(text: str) -> str:
        full = exact_command(text)
        return full if full is not None and command_named(text) is command_named(full) else text

    def word(text: str) -> str:
        return text if re.fullmatch(r"[\w@%+=:,./~^-]+", text) else tmux_word(text)

    return " \\; ".join(" ".join(map(word, [name(words[0]), *words[1:]]))
                         for words in split_commands(shlex.split(line)))


def _key(name: str) -> str:
    return "".join("\\" + ch if ch in _ESCAPED else ch for ch in name)


def _rows(table: str, prefix: str, user: Any) -> list[tuple[str, str, str, bool]]:
    """(key, command, note, repeats) of every key bound in `table`, the defaults first."""
    rows: list[tuple[str, str, str, bool]] = []
    if table == "prefix" and not user.defaults_unbound:
        rows = [(b.name or prefix, b.tmux, b.help[:1].upper() + b.help[1:], b.repeat) for b in (SEND_PREFIX, *BINDINGS)]
    elif table in COPY_TABLES and table not in getattr(user, "tables_cleared", ()):
        rows = [(key, command, command, False) for key, command in default_keys(table)]
    users = {b.key: b for b in user.bindings if b.table == table}
    rows = [row for row in rows if row[0] not in users]  # rebound or unbound
    rows += [(key, _shown(b.command), _shown(b.command), b.repeat) for key, b in users.items() if b.command is not None]
    return rows


def bind_key_lines(table: str, prefix: str, user: Any, only: str | None = None) -> list[str]:
    """`list-keys -T TABLE [KEY]`."""
    rows = _rows(table, prefix, user)
    width = max((len(_key(key)) for key, *_ in rows), default=0)  # the table's, one key or all
    flags = any(repeat for *_, repeat in rows)  # tmux keeps a column for -r if a key has it
    rows = [row for row in rows if only is None or row[0] == only]
    return [f"bind-key {'-r ' if repeat else '   ' if flags else ''}-T {table} {_key(key):<{width}} {command}"
            for key, command, _, repeat in rows]


def note_lines(prefix: str, user: Any, only: str | None = None) -> list[str]:
    """`list-keys -N [KEY]`: each key after the prefix, with what it does (a user's key: its command)."""
    rows = _rows("prefix", prefix, user)
    width = max((len(prefix) + 1 + len(key) for key, *_ in rows), default=0)
    rows = [row for row in rows if only is None or row[0] == only]
    return [f"{prefix + ' ' + key:<{width}} {note}" for key, _, note, _ in rows]
