"""tmux's daily-use commands on the wire: choosing and renaming windows, panes and sessions,
detaching clients, key bindings, options, paste buffers and pipe-pane. Part of the unions in messages.py."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from muxd.config import HOOK_COMMAND_MAX_CHARS, PASTE_BUFFER_MAX_CHARS
from muxd.protocol.fields import Label, Name, Target

# A buffer's text, a title, an option value, a pipe's shell command: at most what a copy may
# hold, far beyond any real one.
LongText = Annotated[str, msgspec.Meta(max_length=PASTE_BUFFER_MAX_CHARS)]
HookCommand = Annotated[str, msgspec.Meta(max_length=HOOK_COMMAND_MAX_CHARS)]


class _Message(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    pass


# ---------------------------------------------------------------- records

class OptionValue(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    value: str


class HookValue(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    index: int | None   # None: a hook with no command (show-hooks prints its bare name)
    command: str = ""   # its command line, as tmux prints it


class BufferInfo(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    size: int     # bytes of its UTF-8 text, as tmux counts
    sample: str   # its start, escaped as list-buffers shows it
    text: str | None = None  # the whole text, when asked for


KeyTable = Literal["prefix", "root", "copy-mode", "copy-mode-vi"]


class KeyBindingInfo(msgspec.Struct, frozen=True, kw_only=True):
    table: KeyTable
    key: str                  # as bind-key was given it (C-a, M-Left, |)
    command: str | None       # None: a default key unbound
    repeat: bool = False      # -r


class ClientInfo(msgspec.Struct, frozen=True, kw_only=True):
    name: str     # the terminal's device (/dev/pts/3), as tmux names clients
    session: str
    columns: int
    lines: int


# ---------------------------------------------------------------- requests

class SelectPane(_Message, tag="select-pane"):
    id: int
    target: Target | None = None
    direction: Literal["up", "down", "left", "right"] | None = None  # -U -D -L -R: from the target
    last: bool = False            # -l: the window's previously active pane
    title: LongText | None = None  # -T: the pane's title


class SelectWindow(_Message, tag="select-window"):
    id: int
    target: Target | None = None
    step: Literal["next", "previous", "last", "toggle"] | None = None  # -n -p -l -T, in the target's session


class RenameWindow(_Message, tag="rename-window"):
    id: int
    name: Name
    target: Target | None = None


class RenameSession(_Message, tag="rename-session"):
    id: int
    name: Name
    target: Target | None = None


class ListClients(_Message, tag="list-clients"):
    id: int
    target: Target | None = None  # a session: only its clients


class DetachClient(_Message, tag="detach-client"):
    id: int
    client: Label | None = None    # -t: that client
    session: Target | None = None  # -s: every client of that session
    all_others: bool = False       # -a: every client but the one chosen (-t, else the current)
    pane: Label | None = None      # the caller's pane ($MUXD_PANE): its session's client is current


class SwitchClient(_Message, tag="switch-client"):
    """Show another session (its window and pane, if `target` names them) on an attached client."""

    id: int
    target: Target                 # -t: a session, window or pane
    client: Label | None = None    # -c: that client; else the current one
    pane: Label | None = None      # the caller's pane ($MUXD_PANE): its session's client is current


class SetOption(_Message, tag="set-option"):
    id: int
    name: Label
    target: Target | None = None
    value: LongText | None = None  # None: a flag toggles
    scope: Literal["global", "object", "pane"] = "object"  # -g; the target's session/window; -p
    unset: bool = False           # -u
    only_if_unset: bool = False   # -o
    append: bool = False          # -a
    kind: Literal["server", "session", "window"] = "session"  # -s, (none), -w: a user option's scope


class ShowOptions(_Message, tag="show-options"):
    id: int
    target: Target | None = None
    name: Label | None = None
    scope: Literal["global", "object", "pane"] = "object"
    kind: Literal["server", "session", "window"] = "session"  # -s, (none), -w; -p implies window


class SetHook(_Message, tag="set-hook"):
    """set-hook; the flags are tmux's, whose meaning depends on the hook's scope (a session
    hook: -g global, else the target's session; a window hook: -p the target pane, -g global,
    else the target's window)."""
    id: int
    name: Label                       # hook-name or hook-name[N]
    target: Target | None = None
    command: HookCommand | None = None
    global_scope: bool = False        # -g
    pane: bool = False                # -p
    append: bool = False              # -a: at the first free index
    unset: bool = False               # -u
    run_now: bool = False             # -R: run the hook now instead
    tmux_names: bool = False          # the command is a tmux line (`muxd tmux set-hook`): its `run` is run-shell


class ShowHooks(_Message, tag="show-hooks"):
    id: int
    target: Target | None = None
    name: Label | None = None         # only this hook (hook-name[N]: that command)
    global_scope: bool = False        # -g
    pane: bool = False                # -p
    window: bool = False              # -w: without a name, the window hooks rather than the session ones


class BindKey(_Message, tag="bind-key"):
    """bind-key (a command), unbind-key (none); `all_keys`: unbind-key -a, every key of the table."""
    id: int
    table: KeyTable = "prefix"
    key: Label | None = None
    command: LongText | None = None
    all_keys: bool = False
    repeat: bool = False           # -r: again without the prefix within repeat-time


class ListKeys(_Message, tag="list-keys"):
    id: int


class ListBuffers(_Message, tag="list-buffers"):
    id: int
    name: Label | None = None     # show-buffer -b: that one, text included; else every one, newest first
    text: bool = False            # include the text (show-buffer: the newest)


class SetBuffer(_Message, tag="set-buffer"):
    id: int
    name: Label | None = None
    text: LongText = ""
    append: bool = False
    new_name: Label | None = None  # -n: rename the buffer instead


class DeleteBuffer(_Message, tag="delete-buffer"):
    id: int
    name: Label | None = None


class PasteBuffer(_Message, tag="paste-buffer"):
    id: int
    target: Target | None = None
    name: Label | None = None
    delete: bool = False           # -d
    bracketed: bool = False        # -p: in bracketed-paste markers if the program asked for them
    raw: bool = False              # -r: line feeds stay line feeds
    separator: Label | None = None  # -s: what replaces each line feed (default a carriage return)


class PipePane(_Message, tag="pipe-pane"):
    id: int
    target: Target | None = None
    command: LongText = ""         # empty: close the pane's pipe
    output: bool = True            # -O: the pane's output to the command's stdin
    input: bool = False            # -I: the command's stdout to the pane, as typed
    only_if_none: bool = False     # -o: open only if the pane has no pipe (a toggle)


# ---------------------------------------------------------------- replies

class OptionList(_Message, tag="option-list"):
    id: int
    options: list[OptionValue]


class HookList(_Message, tag="hook-list"):
    id: int
    hooks: list[HookValue]


class BufferList(_Message, tag="buffer-list"):
    id: int
    buffers: list[BufferInfo]


class ClientList(_Message, tag="client-list"):
    id: int
    clients: list[ClientInfo]


class KeyBindingList(_Message, tag="key-binding-list"):
    id: int
    bindings: list[KeyBindingInfo]  # the user's, in the order bound
    defaults_unbound: bool = False  # unbind-key -a: none of the default prefix table is left
    tables_cleared: list[str] = []  # every table unbind-key -a dropped the defaults of
