"""tmux control mode read sans-IO (muxd/daemon/tmux/control.py): replies, output, notifications,
layouts; fed in pieces as a pipe delivers them."""

from __future__ import annotations

from muxd.daemon.tmux.control import (
    ControlParser,
    Notification,
    Output,
    PaneGeometry,
    Reply,
    layout_panes,
    quote,
    unescape_output,
)
import pytest

from muxd.daemon.tmux.discovery import Scope, TmuxPaneFacts, read_framed, read_listing, server_args, target_kind

# What `tmux -C attach` wrote in a real session (tmux 3.3a), a capture-pane reply included.
STREAM = (b"%begin 1795548764 264 0\n%end 1795548764 264 0\n"
          b"%session-changed $0 w\n"
          b"%begin 1795548764 269 1\nbash-5.2#\n%output %0 not output\n%end 1795548764 269 0\n\n"
          b"%end 1795548764 269 1\n"
          b"%output %0 \\033[?2004l\\015hi\\015\\012caf\xc3\xa9 \\134 done\n"
          b"%begin 1795548765 272 1\nno such pane\n%error 1795548765 272 1\n"
          b"%layout-change @0 c195,80x24,0,0[80x12,0,0,0,80x11,0,13,1] c195,80x24,0,0 *\n"
          b"%window-renamed @1 my window\n%exit\n")


def test_a_stream_reads_the_same_in_any_pieces() -> None:
    whole = ControlParser().feed(STREAM)
    assert whole == [
        Reply([], ours=False),  # the attach command's own reply
        Notification("session-changed", ["$0", "w"]),
        # A reply's body holds anything, "%output" and another reply's end included, up to its own end.
        Reply([b"bash-5.2#", b"%output %0 not output", b"%end 1795548764 269 0", b""]),
        Output("%0", b"\x1b[?2004l\rhi\r\ncaf\xc3\xa9 \\ done"),
        Reply([b"no such pane"], error=True),
        Notification("layout-change", ["@0", "c195,80x24,0,0[80x12,0,0,0,80x11,0,13,1]", "c195,80x24,0,0", "*"]),
        Notification("window-renamed", ["@1", "my", "window"]),
        Notification("exit", []),
    ]
    for size in (1, 2, 7, 64):
        parser = ControlParser()
        pieces = [parser.feed(STREAM[i:i + size]) for i in range(0, len(STREAM), size)]
        assert [event for piece in pieces for event in piece] == whole
    assert whole[2].text() == "bash-5.2#\n%output %0 not output\n%end 1795548764 269 0\n"


def test_output_unescapes_octal_only() -> None:
    assert unescape_output(b"plain") == b"plain"
    assert unescape_output(b"\\000\\177\\134\\0x") == b"\x00\x7f\\\\0x"


def test_layouts_give_every_pane_its_size() -> None:
    assert layout_panes("b25d,80x24,0,0,0") == [PaneGeometry("%0", 80, 24)]
    nested = "a1b2,120x40,0,0{60x40,0,0,3,59x40,61,0[59x20,61,0,4,59x19,61,21{29x19,61,21,5,29x19,91,21,12}]}"
    assert layout_panes(nested) == [PaneGeometry("%3", 60, 40), PaneGeometry("%4", 59, 20),
                                    PaneGeometry("%5", 29, 19), PaneGeometry("%12", 29, 19)]


def test_quote_makes_one_word() -> None:
    assert quote("#{cursor_x} #{cursor_y}") == "'#{cursor_x} #{cursor_y}'"
    assert quote("it's") == "'it'\\''s'"


def test_targets_and_scopes() -> None:
    assert [target_kind(t) for t in ("%3", "@1", "$0", "main", "main:1", "main:1.2", "main:win")] == \
        ["pane", "window", "session", "session", "window", "pane", "window"]
    facts = TmuxPaneFacts("%3", "@1", 0, "w", "$0", "main", 80, 24, None, ["bash"], "/")
    server, session, window, pane = (Scope("server"), Scope("session", "$0", "@1", "%2"),
                                     Scope("window", "$0", "@1", "%2"), Scope("pane", "$0", "@1", "%3"))
    assert all(s.covers(facts) for s in (server, session, window, pane))
    assert not Scope("pane", "$0", "@1", "%2").covers(facts)
    assert not Scope("session", "$1", "@5", "%9").covers(facts)
    # A session scope is not inside a window of it, though its active pane is.
    assert pane.within(window) and window.within(session) and session.within(server)
    assert not session.within(window) and not server.within(session)
    assert server_args("work", None) == ["-L", "work"]
    assert server_args(None, None) == []


def test_framed_values_hold_anything() -> None:
    """A list-panes record: ten framed values (length in bytes, ':', the value), then the two
    computed ones, 0x1f between them; a name may hold newlines, colons and 0x1f."""
    record = b"2:%02:@01:05:a\nb:\x1f2:$04:main2:802:245:123453:cat" + b"sh\x1f/tmp\n"
    assert read_listing(record * 2) == [["%0", "@0", "0", "a\nb:\x1f", "$0", "main", "80", "24", "12345", "cat",
                                         "sh", "/tmp"]] * 2
    assert read_framed("5:café!".encode(), 1) == (["café"], 7)  # bytes, not characters
    for broken in (record[:-1], record[:20], b"9:short\n", b"x:y\n", record.replace(b"\x1f/tmp", b"/tmp")):
        with pytest.raises(ValueError):
            read_listing(broken)
