"""tmux's style strings for the status line (muxd/attach/tmux_style.py)."""

from __future__ import annotations

import pytest

from muxd.attach.status import MESSAGE_STYLE, STATUS_STYLE
from muxd.attach.tmux_style import parse_style
from muxd.emulator.cell import DEFAULT_STYLE, Cell


def style(**fields) -> tuple:
    return Cell(" ", **fields)[1:]


def test_colours_attributes_and_defaults():
    assert parse_style("bg=green,fg=black", DEFAULT_STYLE) == STATUS_STYLE  # tmux's defaults
    assert parse_style("bg=yellow,fg=black", DEFAULT_STYLE) == MESSAGE_STYLE
    assert parse_style("bg=colour235,fg=#FF8800 bold", DEFAULT_STYLE) == style(fg="ff8800", bg="235", bold=True)
    assert parse_style("fg=brightred,bg=color7,italics,reverse", DEFAULT_STYLE) == style(
        fg="brightred", bg="7", italics=True, reverse=True)
    assert parse_style("bold,nobold,underscore", DEFAULT_STYLE) == style(underscore=True)
    assert parse_style("fg=red,bold,none", DEFAULT_STYLE) == style(fg="red")  # none: attributes off
    assert parse_style("fg=red,default", STATUS_STYLE) == STATUS_STYLE  # default: back to the base
    assert parse_style("bg=terminal,align=centre,fill=blue", STATUS_STYLE) == style(fg="black")
    assert parse_style("", STATUS_STYLE) == STATUS_STYLE


@pytest.mark.parametrize("bad", ["bg=nosuch", "fg=colour256", "blinky", "fg=#12345"])
def test_a_bad_style_is_tmuxs_error(bad):
    with pytest.raises(ValueError, match=f"^invalid style: {bad}$"):
        parse_style(bad, DEFAULT_STYLE)
