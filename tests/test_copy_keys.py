"""Copy mode's key tables and commands (daemon/client_side/copy_keys.py, copy_mode.py): tmux's
names for what each key does, `send -X NAME` read and checked, the commands a binding may name."""

from __future__ import annotations

import pytest

from muxd.daemon.client_side.copy_keys import (
    EMACS_TABLE, VI_TABLE, copy_command, default_command, default_keys, table_for,
)
from muxd.daemon.client_side.copy_mode import COPY, COPY_KEEP, COPY_STAY, LEAVE, SEARCH_DOWN, STAY, CopyMode
from muxd.daemon.client_side.key_bindings import KeyBindings, key_forms
from muxd.copy_geometry import PaneGeometry
from muxd.errors import BadRequest

# 100 rows of history, a 10-row screen whose first row is row number 500.
PANE = PaneGeometry(top=500, history=100, lines=10, columns=20)


def test_default_tables_name_tmuxs_commands_for_each_form_of_a_key():
    assert default_command(VI_TABLE, b"k") == default_command(VI_TABLE, b"\x1bOA") == "cursor-up"
    assert default_command(VI_TABLE, b"\x1b[1;5A") == "scroll-up"  # C-Up
    assert default_command(VI_TABLE, b"x") is None
    assert default_command(EMACS_TABLE, b"\x10") == "cursor-up"  # C-p
    assert default_command(EMACS_TABLE, b"k") is None  # no motion in emacs's table
    assert default_command(EMACS_TABLE, b" ") == "page-down"  # as tmux's
    assert (table_for("vi"), table_for("emacs")) == (VI_TABLE, EMACS_TABLE)
    listed = dict(default_keys(VI_TABLE))
    assert listed["j"] == "send-keys -X cursor-down"
    assert listed["/"] == 'command-prompt -T search -p "(search down)" { send-keys -X search-forward "%%" }'


def test_send_x_is_read_and_checked():
    assert copy_command(["send", "-X", "begin-selection"]) == ("begin-selection", [])
    assert copy_command(["send-keys", "-X", "copy-pipe-and-cancel", "xclip -i"]) == ("copy-pipe-and-cancel",
                                                                                    ["xclip -i"])
    assert copy_command(["send-keys", "-X", "-N", "5", "scroll-up"]) == ("scroll-up", [])
    assert copy_command(["send-keys", "-FX", "search-backward", "x"]) == ("search-backward", ["x"])
    assert copy_command(["send-keys", "q"]) is None
    assert copy_command(["select-pane", "-L"]) is None
    with pytest.raises(BadRequest, match="^copy-mode command rectangle-toggle: not supported by muxd$"):
        copy_command(["send", "-X", "rectangle-toggle"])
    with pytest.raises(BadRequest, match="^unknown copy-mode command: nosuch$"):
        copy_command(["send", "-X", "nosuch"])
    with pytest.raises(BadRequest, match="needs a copy-mode command"):
        copy_command(["send", "-X"])


def test_copy_commands_move_select_and_copy():
    copy = CopyMode(cursor=(505, 3))
    assert copy.command("top-line", PANE) == STAY and copy.cursor == (500, 3)
    assert copy.command("bottom-line", PANE) == STAY and copy.cursor == (509, 3)
    assert copy.command("middle-line", PANE) == STAY and copy.cursor == (504, 3)
    assert copy.command("copy-selection-and-cancel", PANE) == LEAVE  # nothing selected: leaves
    assert copy.command("copy-selection", PANE) == STAY  # … or stays, as its name says
    copy.command("begin-selection", PANE)
    copy.command("cursor-right", PANE)
    copy.command("cursor-down", PANE)
    assert copy.selection() == ((504, 3), (505, 4))
    assert copy.command("other-end", PANE) == STAY
    assert copy.cursor == (504, 3) and copy.selection() == ((504, 3), (505, 4))
    assert [copy.command(name, PANE) for name in ("copy-selection", "copy-selection-no-clear",
                                                  "copy-pipe-and-cancel")] == [COPY_STAY, COPY_KEEP, COPY]
    line = CopyMode(cursor=(502, 7))
    line.command("select-line", PANE)
    assert line.selection() == ((502, 0), (502, 19))
    assert line.command("clear-selection", PANE) == STAY and line.selection() is None
    assert line.command("clear-selection", PANE) == LEAVE  # muxd's Escape: nothing to clear leaves
    assert line.command("search-forward", PANE) == SEARCH_DOWN  # no text: ask for it
    assert line.command("cancel", PANE) == LEAVE


def test_copy_tables_take_binds_and_unbinds_over_their_defaults():
    bindings = KeyBindings()
    bindings.bind(VI_TABLE, "v", "send -X begin-selection")
    assert bindings.lookup(VI_TABLE, b"v").command == "send -X begin-selection"
    assert bindings.lookup("prefix", b"v") is None
    bindings.unbind(VI_TABLE, "Space")
    assert bindings.lookup(VI_TABLE, b" ").command is None  # a default unbound: does nothing
    bindings.unbind_all(EMACS_TABLE)
    assert bindings.cleared == {EMACS_TABLE} and not bindings.defaults_unbound
    with pytest.raises(BadRequest, match="^mouse key MouseDragEnd1Pane: not supported by muxd"):
        key_forms("MouseDragEnd1Pane")
