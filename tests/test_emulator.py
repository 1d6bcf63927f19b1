"""Emulator behaviour: replies, alternate screen, title/bell, robustness, wide text, capture."""

from __future__ import annotations

import pytest

from muxd.emulator import Emulator
from muxd.emulator.backend import new_emulator
from muxd.emulator.capture import render_rows
from muxd.emulator.cell import DEFAULT_STYLE
from muxd.emulator.rows import Row
from muxd.emulator.sgr import sgr_transition

E = b"\x1b"

# "ghostty": the libghostty-vt backend (MUXD_EMULATOR=ghostty). Tests it cannot pass yet
# parametrize `fast` themselves with PYTE_ONLY.
BACKENDS = [True, False, "ghostty"]
BACKEND_IDS = ["fast", "plain", "ghostty"]
PYTE_ONLY = pytest.mark.parametrize("fast", [True, False], ids=["fast", "plain"])


@pytest.fixture(params=BACKENDS, ids=BACKEND_IDS)
def fast(request: pytest.FixtureRequest) -> bool | str:
    return request.param  # type: ignore[no-any-return]


def new(columns: int, lines: int, fast: bool | str, **kwargs: object) -> Emulator:
    """An emulator of the backend `fast` names (True/False: pyte with/without fast paths)."""
    if fast == "ghostty":
        return new_emulator(columns, lines, backend="ghostty", **kwargs)  # type: ignore[arg-type, return-value]
    return Emulator(columns, lines, fast_paths=bool(fast), **kwargs)  # type: ignore[arg-type]


def make(fast: bool | str, columns: int = 20, lines: int = 5, **kwargs: object) -> tuple[Emulator, list[bytes]]:
    replies: list[bytes] = []
    return new(columns, lines, fast, reply=replies.append, **kwargs), replies


# -- answers to queries ------------------------------------------------------------


def test_cursor_position_report(fast: bool) -> None:
    em, replies = make(fast)
    em.feed(b"abc\r\nde" + E + b"[6n")
    assert replies == [b"\x1b[2;3R"]


def test_cursor_position_report_after_last_column_is_clamped(fast: bool) -> None:
    em, replies = make(fast)
    em.feed(b"x" * 20 + E + b"[6n")
    assert replies == [b"\x1b[1;20R"]
    assert em.cursor == (19, 0)


def test_device_status_and_attributes(fast: bool) -> None:
    em, replies = make(fast)
    em.feed(E + b"[5n" + E + b"[c" + E + b"[0c")
    assert replies == [b"\x1b[0n", b"\x1b[?1;2c", b"\x1b[?1;2c"]


def test_no_reply_callback_is_fine(fast: bool) -> None:
    em = new(20, 5, fast)
    em.feed(E + b"[6n" + E + b"[c")
    assert em.cursor == (0, 0)


def test_reply_callback_errors_do_not_escape(fast: bool) -> None:
    def broken(_: bytes) -> None:
        raise OSError("pty gone")

    em = new(20, 5, fast, reply=broken)
    em.feed(E + b"[6nstill parsing")
    assert em.display_lines()[0] == "still parsing"


# -- alternate screen ----------------------------------------------------------------


@pytest.mark.parametrize("mode", [1049, 1047, 47])
def test_alternate_screen_saves_and_restores_main(fast: bool, mode: int) -> None:
    em, _ = make(fast)
    em.feed(b"main one\r\nmain two" + E + b"[3;5H")
    main = em.display_lines()
    em.feed(E + b"[?%dh" % mode)
    assert em.alternate_screen
    assert em.display_lines() == [""] * 5  # entering clears
    em.feed(b"alt text" + E + b"[5;1Hbottom")
    em.feed(E + b"[?%dl" % mode)
    assert not em.alternate_screen
    assert em.display_lines() == main
    if mode == 1049:
        assert em.cursor == (4, 2)  # only 1049 restores the cursor
    else:
        assert em.cursor == (6, 4)


def test_alternate_screen_rows_never_reach_scrollback(fast: bool) -> None:
    em, _ = make(fast)
    em.feed(b"kept\r\n" * 7)
    history = em.capture(-100)
    em.feed(E + b"[?1049h" + b"alt line\r\n" * 50 + E + b"[?1049l")
    assert "alt line" not in em.capture(-100)
    assert em.capture(-100) == history


@PYTE_ONLY
def test_alternate_screen_enter_twice_and_leave_without_enter(fast: bool) -> None:
    em, _ = make(fast)
    em.feed(b"main" + E + b"[?1049l")
    assert em.display_lines()[0] == "main"
    em.feed(E + b"[?1049h" + b"alt" + E + b"[?1049h")
    assert em.display_lines()[0] == "    alt"  # the cursor stays where it was
    em.feed(E + b"[?1049l")
    assert em.display_lines()[0] == "main"


def test_resize_while_in_alternate_screen(fast: bool) -> None:
    em, _ = make(fast, columns=20, lines=5)
    em.feed(b"l1\r\nl2\r\nl3\r\nl4\r\nl5" + E + b"[?1049h" + b"alt")
    em.resize(10, 3)
    em.feed(E + b"[?1049l")
    assert em.display_lines() == ["l3", "l4", "l5"]
    assert em.capture(-10).splitlines()[:2] == ["l1", "l2"]


# -- title, bell ---------------------------------------------------------------------


def test_title_and_bell(fast: bool) -> None:
    em, _ = make(fast)
    assert em.title == "" and em.bell_count == 0
    em.feed(E + b"]0;first\x07" + b"\x07\x07")
    assert em.title == "first"
    em.feed(E + b"]2;second" + E + b"\\")
    assert em.title == "second"
    em.feed(E + b"]1;icon only\x07")
    assert em.title == "second"
    assert em.bell_count == 2


def test_title_split_across_feeds(fast: bool) -> None:
    em, _ = make(fast)
    for piece in (E + b"]2;spl", b"it ti", b"tle\x1b", b"\\after"):
        em.feed(piece)
    assert em.title == "split title"
    assert em.display_lines()[0] == "after"


@pytest.mark.parametrize("piece", [1, 4096])
def test_an_osc_cut_short_by_an_escape_ends_there(fast: bool, piece: int) -> None:
    """As tmux: the output up to the escape was the title (its controls dropped), the escape
    starts the next sequence, and nothing after it is swallowed."""
    em, _ = make(fast)
    data = E + b"]0;title\r\nhidden\r\n" + E + b"[1mshown" + E + b"[0m\r\nnext"
    for offset in range(0, len(data), piece):
        em.feed(data[offset : offset + piece])
    assert em.title == "titlehidden"
    assert em.display_lines()[:2] == ["shown", "next"]


def test_a_long_open_osc_ends_at_an_escape_and_holds_a_bounded_title(fast: bool) -> None:
    em, _ = make(fast)
    em.feed(E + b"]2;")
    for _ in range(200):
        em.feed(b"y" * 1000 + b"\r\n")  # no terminator: all of it is the OSC's body
    em.feed(E + b"[Hafter")
    assert em.display_lines()[0] == "after"
    assert em.title in ("y" * 1024, "")  # pyte: controls dropped, cut to TITLE_MAX_CHARS; ghostty: dropped


# -- robustness ----------------------------------------------------------------------

BAD_SEQUENCES = [
    E + b"[?5H",  # private flag on a handler without one
    E + b"[1;2;3;4;5;6H",  # too many parameters
    E + b"[\xc2\xb2m",  # a Unicode digit inside CSI
    E + b"[99999999999999999999A",
    E + b"[38;5m" + E + b"[38;2;1;2m" + E + b"[48;5;999m",
    E + b"[?1049;1047;47h" + E + b"[?1049;47l",
    E + b"]0;" + b"x" * 10000 + b"\x07",
    E + b"P1;2|data" + E + b"\\",  # DCS
    E + b"[" + b";" * 500 + b"m",
    b"\xff\xfe\xc0\x80\xed\xa0\x80",  # invalid UTF-8
    b"\x9b31m\xc2\x9b31m\xc2\x9d0;c1 title\x07",  # C1 controls
    E + b"[3J" + E + b"[9J" + E + b"[9K" + E + b"[0;0r" + E + b"[99;1r" + E + b"[5;2r",
    E + b"#8" + E + b"c" + E + b"[?3h" + E + b"[?5h" + E + b"[?6h" + E + b"[4h",
    E + b"[99999b" + E + b"[99999S" + E + b"[99999T" + E + b"[99999@" + E + b"[99999P",
]


@pytest.mark.parametrize("sequence", BAD_SEQUENCES, ids=range(len(BAD_SEQUENCES)))
def test_bad_sequences_never_break_parsing(fast: bool, sequence: bytes) -> None:
    em, _ = make(fast)
    em.feed(sequence)
    em.feed(E + b"c" + E + b"[?6l" + E + b"[4l" + b"fine")  # reset, then ordinary text
    assert em.display_lines()[0] == "fine"
    for split in range(1, len(sequence), max(1, len(sequence) // 7)):
        em2, _ = make(fast)
        em2.feed(sequence[:split])
        em2.feed(sequence[split:])
        em2.feed(E + b"c" + b"fine")
        assert em2.display_lines()[0] == "fine"


def test_feed_survives_an_internal_error(fast: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    em, _ = make(fast)

    def explode(*_: object) -> None:
        raise RuntimeError("bug")

    monkeypatch.setattr(em, "_feed_text", explode)
    em.feed(b"anything")  # logged, not raised


# -- text, wide characters, UTF-8 ----------------------------------------------------


def test_utf8_split_at_every_byte(fast: bool) -> None:
    data = "héllo 中文 😀 e\u0301".encode()
    for cut in range(len(data)):
        em, _ = make(fast)
        em.feed(data[:cut])
        em.feed(data[cut:])
        assert em.display_lines()[0] == "héllo 中文 😀 e\u0301"


def test_invalid_utf8_is_dropped_like_tmux(fast: bool) -> None:
    em, _ = make(fast)
    em.feed(b"a\xffb \xe4\xb8 c \xc0\xaf d\xe4")
    em.feed(b"\xb8\xad")
    assert em.display_lines()[0] == "ab  c  d\u4e2d"


def test_a_character_cut_short_by_ascii_stays_dropped(fast: bool) -> None:
    # The start of a character, then ASCII in a read of its own: the start is invalid now,
    # and a lone continuation byte read after must not complete it.
    em, _ = make(fast)
    for piece in (b"a\xe4\xb8", b"b", b"\xad", b"c"):
        em.feed(piece)
    assert em.display_lines()[0] == "abc"


@PYTE_ONLY
def test_control_strings_are_swallowed(fast: bool) -> None:
    em, _ = make(fast)
    for piece in (b"a\x1bPq\r\ndcs\x1b[2J\x1b\\b", b"\x1b_apc\x1b\\c\x1b^pm", b"\x1b\\d\x1bXsos\x1b", b"\\e"):
        em.feed(piece)
    assert em.display_lines()[0] == "abcde"


def test_wide_characters_take_two_cells(fast: bool) -> None:
    em, _ = make(fast, columns=10)
    em.feed("中文ab😀".encode())
    assert em.display_lines()[0] == "中文ab😀"
    assert em.cursor == (8, 0)


def test_wide_character_at_last_column_wraps_first(fast: bool) -> None:
    """tmux (and xterm) move a wide character that does not fit; pyte would split it."""
    em, _ = make(fast, columns=10)
    em.feed(("x" * 9 + "中y").encode())
    assert em.display_lines()[:2] == ["x" * 9, "中y"]
    assert em.capture(0, 1, join_wrapped=True) == "x" * 9 + "中y\n"


def test_wide_character_without_autowrap_is_dropped(fast: bool) -> None:
    em, _ = make(fast, columns=10)
    em.feed(E + b"[?7l" + ("x" * 9 + "中").encode())
    assert em.display_lines()[:2] == ["x" * 9, ""]


def test_overwriting_half_a_wide_character_blanks_the_other_half(fast: bool) -> None:
    em, _ = make(fast, columns=10)
    em.feed("a中文".encode() + E + b"[1;3Hb")  # right half of 中
    em.feed("\r\n中文".encode() + E + b"[2;3Hc")  # left half of 文
    assert em.display_lines()[:2] == ["a b文", "中c"]


@PYTE_ONLY
def test_overwriting_the_right_half_in_column_one_keeps_the_character(fast: bool) -> None:
    """tmux 3.3a's quirk (tests/test_fidelity.py checks the same against tmux)."""
    em, _ = make(fast, columns=10)
    em.feed("中文".encode() + E + b"[1;2Hc")
    assert em.display_lines()[0] == "中c文"


def test_zero_width_characters_join_the_previous_character(fast: bool) -> None:
    em, _ = make(fast)
    em.feed("e\u0301 中\u0301 ❤\ufe0f a\u200db".encode())
    assert em.display_lines()[0] == "e\u0301 中\u0301 ❤\ufe0f a\u200db"


def test_control_characters_inside_text_are_skipped(fast: bool) -> None:
    em, _ = make(fast)
    em.feed(b"ab\x01\x02cd\x1c\x1fef")
    assert em.display_lines()[0] == "abcdef"


def test_repeat_scroll_up_and_down(fast: bool) -> None:
    em, _ = make(fast, columns=10, lines=4)
    em.feed(b"Z" + E + b"[3b\r\n1\r\n2\r\n3" + E + b"[1S")
    assert em.display_lines() == ["1", "2", "3", ""]
    assert em.capture(-1, -1) == "ZZZZ\n"
    em.feed(E + b"[2T")
    assert em.display_lines() == ["", "", "1", "2"]


# -- scroll regions (DECSTBM) ------------------------------------------------------------


@pytest.mark.parametrize("region", [b"[r", b"[;r", b"[0;0r", b"[3;8r", b"[3r", b"[;8r", b"[0;8r", b"[3;99r"])
def test_setting_a_scroll_region_homes_the_cursor(fast: bool | str, region: bytes) -> None:
    em, _ = make(fast, lines=10)
    em.feed(E + b"[2;4r" + E + b"[5;5H" + E + region + b"X")
    assert em.cursor == (1, 0)
    em.feed(b"\r" + b"a" * 20 + E + region + b"Y")  # from a pending wrap too
    assert em.display_lines()[:2] == ["Yaaaaaaaaaaaaaaaaaaa", ""]


def test_a_scroll_region_under_two_rows_is_ignored(fast: bool | str) -> None:
    em, _ = make(fast, lines=10)
    em.feed(b"\r\n".join(b"r%d" % n for n in range(1, 11)) + E + b"[3;8r" + E + b"[5;5H")
    for invalid in (b"[8;3r", b"[4;4r", b"[99;99r"):
        em.feed(E + invalid)
        assert em.cursor == (4, 4)
    em.feed(E + b"[8;1H\n")  # still rows 3-8 scroll
    assert em.display_lines()[1:9] == ["r2", "r4", "r5", "r6", "r7", "r8", "", "r9"]


def test_a_scroll_region_in_origin_mode_homes_to_its_top(fast: bool | str) -> None:
    # As in xterm and ghostty; tmux 3.3a goes to the screen's top-left even under DECOM.
    em, _ = make(fast, lines=10)
    em.feed(E + b"[?6h" + E + b"[5;5H" + E + b"[3;8rX")
    assert em.cursor == (1, 2)
    em.feed(E + b"[rY" + E + b"[?6l")
    assert em.display_lines()[:3] == ["Y", "", "X"]


# -- capture -------------------------------------------------------------------------


def lines_of(em: Emulator, count: int) -> None:
    for n in range(count):
        em.feed(b"line %d\r\n" % n)


def test_capture_ranges(fast: bool) -> None:
    em, _ = make(fast, lines=3)
    lines_of(em, 10)
    assert em.history_size == 8
    assert em.capture() == "line 8\nline 9\n\n"
    assert em.capture(-1, -1) == "line 7\n"
    assert em.capture(-2) == "line 6\nline 7\nline 8\nline 9\n\n"
    assert em.capture(-(10**9), -7) == "line 0\nline 1\n"
    assert em.capture(1, 0) == "line 8\nline 9\n"  # start > end is swapped, as in tmux
    assert em.capture(100, 200) == "\n"
    assert em.capture(-(10**9)).count("\n") == 11


def test_capture_strips_trailing_blanks_per_line(fast: bool) -> None:
    em, _ = make(fast)
    em.feed(b"abc   \r\n" + E + b"[41m" + E + b"[Kred bg" + E + b"[0m   ")
    assert em.capture(0, 1) == "abc\nred bg\n"
    assert em.display_lines()[:2] == ["abc", "red bg"]


def test_capture_with_escapes(fast: bool) -> None:
    em, _ = make(fast, columns=40)
    em.feed(E + b"[1;31mbold red" + E + b"[22m red" + E + b"[0m plain\r\n")
    em.feed(E + b"[38;5;208m256" + E + b"[48;2;1;2;3mtrue" + E + b"[2;3;4;5;7;8;9;53mall\r\n")
    em.feed(E + b"[0m" + E + b"[44mstill blue at the end\r\n" + E + b"[0mplain")
    assert em.capture(0, 3, escapes=True) == (
        "\x1b[1;31mbold red\x1b[22m red\x1b[39m plain\n"
        "\x1b[38;5;208m256\x1b[48;2;1;2;3mtrue\x1b[2;3;4;9;7;5;8;53mall\x1b[0m\n"
        "\x1b[44mstill blue at the end\x1b[0m\n"
        "plain\n"
    )


def test_capture_escapes_strip_to_plain_capture(fast: bool) -> None:
    import re

    em, _ = make(fast, columns=30)
    em.feed(E + b"[1mA" + E + b"[42m   " + E + b"[0m\r\n" + E + b"[7m  x  " + E + b"[m  \r\n")
    plain = em.capture(0, 2)
    assert re.sub(r"\x1b\[[0-9;]*m", "", em.capture(0, 2, escapes=True)) == plain


def test_capture_join_wrapped(fast: bool) -> None:
    em, _ = make(fast, columns=10, lines=6)
    em.feed(b"0123456789abcde  xy\r\nshort   \r\n" + b"0123456789" + b"\r\nnext")
    assert em.capture() == "0123456789\nabcde  xy\nshort\n0123456789\nnext\n\n"
    assert em.capture(join_wrapped=True) == "0123456789abcde  xy\nshort\n0123456789\nnext\n\n"


def test_join_wrapped_keeps_spaces_at_the_wrap_point(fast: bool) -> None:
    em, _ = make(fast, columns=6, lines=3)
    em.feed(b"hello world")
    assert em.capture(0, 0) == "hello\n"
    assert em.capture(0, 1, join_wrapped=True) == "hello world\n"


# -- resize ----------------------------------------------------------------------------


def test_resize_smaller_moves_top_rows_to_scrollback(fast: bool) -> None:
    em, _ = make(fast, columns=20, lines=5)
    em.feed(b"r1\r\nr2\r\nr3\r\nr4\r\nr5")
    em.resize(20, 3)
    assert (em.columns, em.lines) == (20, 3)
    assert em.display_lines() == ["r3", "r4", "r5"]
    assert em.capture(-2, -1) == "r1\nr2\n"
    assert em.cursor == (2, 2)


def test_resize_drops_blank_rows_below_the_cursor_first(fast: bool) -> None:
    em, _ = make(fast, columns=20, lines=5)
    em.feed(b"r1\r\nr2")
    em.resize(10, 3)
    assert em.display_lines() == ["r1", "r2", ""]
    assert em.history_size == 0


@PYTE_ONLY
def test_resize_narrower_truncates_and_wider_keeps(fast: bool) -> None:
    em, _ = make(fast, columns=20, lines=3)
    em.feed(b"0123456789abcdefghij")
    em.resize(8, 3)
    assert em.display_lines()[0] == "01234567"
    em.resize(30, 4)
    em.feed(b"\r\n" + b"y" * 30)
    assert em.display_lines()[:2] == ["01234567", "y" * 30]


# -- tabs (tmux's rules) -------------------------------------------------------------


def test_tab_at_a_pending_wrap_keeps_it_pending(fast: bool) -> None:
    em, _ = make(fast)
    em.feed(b"x" * 20 + b"\tY\r\n" + b"z" * 19 + b"\tW")
    assert em.capture(0, 2) == "x" * 20 + "\nY\n" + "z" * 19 + "W\n"


def test_tab_stops_reset_when_the_width_changes(fast: bool) -> None:
    em, _ = make(fast)
    em.feed(E + b"[3g" + E + b"[4G" + E + b"H\r\ta")
    assert em.display_lines()[0] == "   a"
    em.resize(30, 5)  # tmux 3.3a puts the stops back every 8 columns on any width change
    em.feed(b"\r\n\tb\tc")
    assert em.display_lines()[1] == "        b       c"


def test_display_lines_cache_follows_every_change():
    """display_lines re-reads only dirty rows: after any stream it must equal a full re-read."""
    import random

    rng = random.Random(7)
    pieces = ["hello", "\r\n", "\x1b[2J", "\x1b[H", "\x1b[5;3H", "\x1b[K", "\x1b[1J", "\x1b[?1049h",
              "\x1b[?1049l", "\x1b[2;10r", "\x1bM", "\x1b[3L", "\x1b[2M", "\x1b[4P", "\x1b[3@", "\x1b[2X",
              "中文", "\t", "\x1b[S", "\x1b[T", "\x1b#8", "\x1bc", "x" * 90, "\x1b[31mred\x1b[0m", "\b\b",
              "\x1b[?7l", "\x1b[?7h", "e\u0301", "\x1b[3b"]
    em = Emulator(columns=20, lines=6)
    for step in range(3000):
        em.feed("".join(rng.choice(pieces) for _ in range(rng.randint(1, 4))).encode())
        if step % 500 == 250:
            em.resize(rng.randint(10, 30), rng.randint(3, 8))
        cached = em.display_lines()  # flushes deferred flood text first
        screen = em._screen
        assert cached == [screen.visible_row(y).text.rstrip(" ") for y in range(screen.lines)], step


def test_csi_forms_pyte_cannot_parse_leave_no_junk():
    """Kitty keyboard pushes/pops (CSI > 1 u, CSI < u, CSI = 1;1 u) are ignored as in tmux;
    colon SGR applies; a secondary device-attributes query is answered."""
    replies = []
    em = Emulator(columns=30, lines=3, reply=replies.append)
    em.feed(b"abc\x1b[<1u|def\r\n\x1b[>1uX\x1b[=1;1uY\x1b[?uZ\r\n"
            b"\x1b[38:2::255:0:0mred\x1b[38:5:2mgreen\x1b[4:3mcurl\x1b[0m\x1b[>c")
    assert em.capture() == "abc|def\nXYZ\nredgreencurl\n"
    coloured = em.capture(escapes=True)
    assert "38;2;255;0;0mred" in coloured and "\x1b[4m" in coloured
    assert replies == [b"\x1b[?1;2c"]


def test_display_lines_follow_every_change_on_each_backend(fast: bool | str) -> None:
    """display_lines re-reads only rows marked changed: after any stream it must equal a
    full capture of the screen (the dirty-row tracking of each backend)."""
    import random

    rng = random.Random(11)
    pieces = ["hello", "\r\n", "\x1b[2J", "\x1b[H", "\x1b[5;3H", "\x1b[K", "\x1b[1J", "\x1b[?1049h",
              "\x1b[?1049l", "\x1b[2;10r", "\x1bM", "\x1b[3L", "\x1b[2M", "\x1b[4P", "\x1b[3@", "\x1b[2X",
              "中文", "\t", "\x1b[S", "\x1b[T", "\x1b#8", "\x1bc", "x" * 90, "\x1b[31mred\x1b[0m", "\b\b",
              "\x1b[?7l", "\x1b[?7h", "e\u0301", "\x1b[3b", "\u0301", "\ufe0f"]
    em = new(20, 6, fast)
    for step in range(1500):
        em.feed("".join(rng.choice(pieces) for _ in range(rng.randint(1, 4))).encode())
        if step % 500 == 250:
            em.resize(rng.randint(10, 30), rng.randint(3, 8))
        assert em.display_lines() == em.capture().split("\n")[:-1], step


def test_a_mark_joined_to_a_cell_already_read_marks_its_row_changed(fast: bool | str) -> None:
    """A combining mark or variation selector fed on its own joins the cell before the cursor
    (tmux keeps it as typed): its row must read as changed, or attach and display_lines keep
    showing the bare letter. Also after the cursor left the row in the same output."""
    em = new(20, 4, fast)
    em.feed(b"$ xe")
    version, _ = em.changed_rows(-1)
    assert em.display_lines()[0] == "$ xe"
    em.feed("\u0301".encode())
    version, changed = em.changed_rows(version)
    assert 0 in changed
    assert em.display_lines()[0] == "$ xe\u0301"
    em.feed("\r\n\u2764".encode())
    version, _ = em.changed_rows(version)
    em.feed("\ufe0f\x1b[4;1H".encode())
    version, changed = em.changed_rows(version)
    assert 1 in changed
    assert em.display_lines()[1] == "\u2764\ufe0f"


def test_a_capture_ending_in_an_empty_wrapped_row_prints_that_line_with_or_without_escapes() -> None:
    rows = [Row("ab", (), True), Row("", (), True)]
    for join in (False, True):
        plain = render_rows(rows, join_wrapped=join)
        assert plain == ("ab\n\n" if not join else "ab\n")
        assert render_rows(rows, escapes=True, join_wrapped=join) == plain
    assert render_rows([Row("", (), True)], escapes=True, join_wrapped=True) == "\n"


def test_bright_magenta_background_read_back_by_any_name_emits_105() -> None:
    # pyte calls it "bfightmagenta"; the ghostty backend names palette 13 "brightmagenta".
    for name in ("bfightmagenta", "brightmagenta"):
        assert sgr_transition(DEFAULT_STYLE, ("default", name) + DEFAULT_STYLE[2:]) == "\x1b[105m"


@PYTE_ONLY
def test_a_feed_or_resize_that_raises_sets_failed_and_later_output_is_dropped(fast: bool) -> None:
    em, _ = make(fast)
    em.feed(b"before")
    assert em.display_lines()[0] == "before"
    emulate = em._feed_text

    def faulty(text: str) -> None:
        if "BOOM" in text:
            raise RuntimeError("injected")
        emulate(text)

    em._feed_text = faulty  # type: ignore[method-assign]
    assert em.failed is False
    em.feed(b"\r\nBOOM")  # swallowed, as every feed error is
    assert em.failed is True
    em.feed(b"\r\nafter")
    assert em.display_lines()[:2] == ["before", ""]

    em, _ = make(fast)
    em._screen.resize = lambda **_: (_ for _ in ()).throw(RuntimeError("injected"))  # type: ignore[method-assign]
    em.resize(30, 8)
    assert em.failed is True


def test_deferred_output_that_raises_when_a_read_emulates_it_sets_failed_instead_of_raising() -> None:
    em, _ = make(True)
    em.feed(b"shown\r\n")
    shown = em.display_lines()

    def flush() -> None:
        raise RuntimeError("injected")

    em._flood.flush = flush  # type: ignore[method-assign, union-attr]
    assert em.display_lines() == shown and em.capture(0, 0) == "shown\n"  # reads go on, on the last screen
    assert em.failed is True
