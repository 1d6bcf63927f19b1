"""The ghostty backend's history: rows leaving libghostty-vt move into muxd's compact store
(muxd/emulator/ghostty_history.py) without loss, with tmux's semantics, under muxd's cap."""

from __future__ import annotations

import random
import re

import pytest

from muxd.config import MAX_COLUMNS
from muxd.emulator.backend import new_emulator
from muxd.emulator.ghostty_history import _EVENTS

E = b"\x1b"


def make(columns: int = 40, lines: int = 5, scrollback_bytes: int = 10**9):
    return new_emulator(columns, lines, scrollback_bytes=scrollback_bytes, backend="ghostty")


def feed_in(em, data: bytes, piece: int) -> None:
    for offset in range(0, len(data), piece):
        em.feed(data[offset : offset + piece])


def history(em) -> list[str]:
    return em.capture(-em.history_size, -1).splitlines() if em.history_size else []


@pytest.mark.parametrize("columns", [80, MAX_COLUMNS])
def test_a_flood_far_beyond_the_native_cap_loses_no_row(columns: int) -> None:
    em = make(columns, 40)
    rows = 30_000
    data = b"".join(b"%07d " % n + b"x" * (columns - 9) + b"\r\n" for n in range(rows))
    feed_in(em, data, 65536)
    assert em.rows_scrolled == em.history_size == rows - 39
    kept = history(em)
    assert [line[:7] for line in kept] == [f"{n:07d}" for n in range(rows - 39)]


def test_deccolm_widening_a_narrow_pane_still_loses_no_row() -> None:
    # The room for a write is counted without asking the library, at the widest width DECCOLM
    # can switch to: rows 132 columns wide fill the native cap over six times sooner than 20.
    em = make(20, 5)
    em.feed(E + b"[?40h" + E + b"[?3h")
    rows = 8_000  # within the room at 20 columns, more rows than the native cap holds at 132
    em.feed(b"".join(b"%07d \b\r\n" % n for n in range(rows)))  # (the backspace: not skipped)
    assert em.rows_scrolled == em.history_size == rows - 4
    assert [line[:7] for line in history(em)] == [f"{n:07d}" for n in range(rows - 4)]


def test_rows_scrolled_counts_rows_not_drained_yet() -> None:
    em = make()
    em.feed(b"".join(b"r%d\r\n" % n for n in range(10)))
    assert em.rows_scrolled == 6  # 10 rows + the cursor's row on a 5-row screen
    assert history(em) == [f"r{n}" for n in range(6)]
    assert em.display_lines() == ["r6", "r7", "r8", "r9", ""]


def test_the_cap_is_muxds_not_the_native_one() -> None:
    em = make(scrollback_bytes=4096)
    em.feed(b"".join(b"line %05d\r\n" % n for n in range(5000)))
    assert 0 < em.history_bytes <= 4096
    assert em.rows_scrolled == 5000 - 4
    assert history(em)[-1] == "line 04995"


@pytest.mark.parametrize("piece", [1, 3, 4096])
def test_clearing_the_main_screen_moves_it_into_history_like_tmux(piece: int) -> None:
    em = make()
    feed_in(em, b"one\r\ntwo\r\n" + E + b"[1;31mred" + E + b"[0m" + E + b"[2J" + E + b"[Hafter", piece)
    assert history(em) == ["one", "two", "red"]
    assert "\x1b[31m" in em.capture(-3, -1, escapes=True) or "\x1b[1;31m" in em.capture(-3, -1, escapes=True)
    assert em.display_lines()[0] == "after"


@pytest.mark.parametrize("piece", [1, 5, 4096])
def test_ed3_erases_muxds_history_too(piece: int) -> None:
    em = make()
    feed_in(em, b"".join(b"old %d\r\n" % n for n in range(300)) + E + b"[3J" + b"new\r\n" * 6, piece)
    # the screen's rows were not erased: the new lines scroll them into the empty history
    assert history(em) == ["old 296", "old 297", "old 298", "old 299", "new", "new"]


@pytest.mark.parametrize("piece", [1, 2, 4096])
def test_alignment_fills_with_default_cells_and_keeps_the_pen(piece: int) -> None:
    """DECALN as tmux: default-style E's (ghostty alone would paint them with the pen), even when
    the sequence is split across reads; what is written next still has the pen."""
    em = make(8, 3)
    feed_in(em, E + b"[31mred" + E + b"#8" + b"X" + E + b"[0m", piece)
    assert em.capture(0, 2, escapes=True).splitlines() == ["\x1b[31mX\x1b[39mEEEEEEE", "EEEEEEEE", "EEEEEEEE"]


def test_the_alternate_screen_adds_no_history_and_keeps_the_main_one() -> None:
    em = make()
    em.feed(b"".join(b"main %d\r\n" % n for n in range(8)))
    em.feed(E + b"[?1049h" + b"".join(b"alt %d\r\n" % n for n in range(50)))
    assert em.alternate_screen
    em.feed(E + b"[?1049l")
    assert history(em) == [f"main {n}" for n in range(4)]


def test_a_wrapped_row_whose_continuation_was_erased_keeps_its_place() -> None:
    em = make(columns=10)
    em.feed(b"a" * 10 + b"b" + E + b"[2K\r\nnext\r\n" + b"z\r\n" * 5)
    assert history(em)[:3] == ["a" * 10, "", "next"]


def test_a_line_continuing_on_the_screen_is_joined_across_the_boundary() -> None:
    em = make(columns=10, lines=3)
    em.feed(b"0123456789" * 4)
    assert em.capture(-em.history_size, join_wrapped=True).split("\n")[0] == "0123456789" * 4


def test_scroll_up_pushes_rows_into_history() -> None:
    em = make()
    em.feed(b"a\r\nb\r\nc\r\nd\r\ne" + E + b"[3S")
    assert history(em) == ["a", "b", "c"]


def test_resize_narrower_reflows_the_screen_and_keeps_history() -> None:
    em = make(columns=20, lines=4)
    em.feed(b"".join(b"h%d\r\n" % n for n in range(5)) + b"0123456789abcdefghij")
    em.resize(10, 4)
    assert history(em)[:2] == ["h0", "h1"]
    assert em.capture(-em.history_size, join_wrapped=True).splitlines()[-1] == "0123456789abcdefghij"


def _flood(seed: int) -> bytes:
    import random

    rng = random.Random(seed)
    words = ["alpha", "beta", "\x1b[1mbold\x1b[0m", "\x1b[38;5;200mpink", "\x1b[0m", "wide中文", "é", "x" * 90]
    out = [E + b"[31m"]  # a pen set before the flood
    for n in range(4000):
        out.append((" ".join(rng.choice(words) for _ in range(rng.randint(0, 12))) + f" {n}\r\n").encode())
        if n % 997 == 0:
            out.append(b"\ttabbed line\r\n")
    return b"".join(out)


@pytest.mark.parametrize("piece", [16384, 65536, 10**6])
def test_flood_skipping_gives_what_emulating_everything_gives(piece: int) -> None:
    from muxd.emulator.ghostty_backend import GhosttyEmulator

    data = _flood(piece)
    fast = GhosttyEmulator(80, 24, scrollback_bytes=10**9)
    plain = GhosttyEmulator(80, 24, scrollback_bytes=10**9, fast_paths=False)
    feed_in(fast, data, piece)
    feed_in(plain, data, piece)
    assert fast.skipped_chars > len(data) // 2
    assert fast.rows_scrolled == plain.rows_scrolled
    assert fast.capture(-(10**9), escapes=True) == plain.capture(-(10**9), escapes=True)
    assert fast.cursor == plain.cursor
    fast.feed(b"after" + E + b"[0m\r\n")
    plain.feed(b"after" + E + b"[0m\r\n")
    assert fast.capture(escapes=True) == plain.capture(escapes=True)


def _tabbed_flood(lines: int, start: int) -> bytes:
    return b"".join(b"\t%d\tcol\t" % n + b"x" * (n % 97) + b"\tend\r\n" for n in range(start, start + lines))


@pytest.mark.parametrize("piece", [8192, 16384, 65536])  # reads long enough to skip in
def test_tabbed_floods_are_skipped_only_while_the_tab_stops_are_the_default(piece: int) -> None:
    """ghostty's stops cannot be read back: a program that sets or clears one (HTS, TBC) turns
    skipping of tabbed lines off until RIS, and what is skipped lays out as ghostty does."""
    from muxd.emulator.ghostty_backend import GhosttyEmulator

    custom = E + b"[3g" + E + b"[5G" + E + b"H" + E + b"[G"  # one stop, at column 5
    data = (_tabbed_flood(3000, 0) + custom + _tabbed_flood(3000, 3000) + E + b"c"
            + _tabbed_flood(3000, 6000))
    fast = GhosttyEmulator(80, 24, scrollback_bytes=10**9)
    plain = GhosttyEmulator(80, 24, scrollback_bytes=10**9, fast_paths=False)
    skipped = []
    for offset in range(0, len(data), piece):
        fast.feed(data[offset : offset + piece])
        plain.feed(data[offset : offset + piece])
        skipped.append(fast.skipped_chars)
        # A read between reads sees the text a flood keeps back for the next one.
        assert (fast.display_lines(), fast.cursor) == (plain.display_lines(), plain.cursor)
    third = len(data) // 3
    assert skipped[-1] > third  # the default stops: before the custom one, and after RIS
    assert fast.capture(-(10**9), escapes=True) == plain.capture(-(10**9), escapes=True)
    assert fast.rows_scrolled == plain.rows_scrolled and fast.cursor == plain.cursor
    # While the custom stop is set nothing is skipped: the count stands still over that part.
    middle = [count for n, count in enumerate(skipped) if third + piece < n * piece < 2 * third - piece]
    assert len(set(middle)) <= 1


def test_no_skipping_below_a_scroll_region_or_above_text() -> None:
    from muxd.emulator.ghostty_backend import GhosttyEmulator

    for setup in (E + b"[2;10r" + E + b"[10;1H", b"\r\n\r\nkeep" + E + b"[1;1H"):
        em = GhosttyEmulator(80, 24, scrollback_bytes=10**9)
        em.feed(setup)
        em.feed(b"".join(b"line %d\r\n" % n for n in range(2000)))
        assert em.skipped_chars == 0


def test_a_pen_set_line_after_line_without_reset_stays_short_and_right() -> None:
    """Skip after skip the pen is carried as the SGR that set it; colours set on every line with
    no reset would grow that without end, so past a bound it is read back from the core."""
    from muxd.emulator.ghostty_backend import GhosttyEmulator
    from muxd.emulator.ghostty_flood import _PEN_MAX_CHARS

    data = b"".join(b"\x1b[3%dmline %d\r\n" % (n % 8, n) for n in range(20000))
    fast = GhosttyEmulator(80, 24, scrollback_bytes=10**9)
    plain = GhosttyEmulator(80, 24, scrollback_bytes=10**9, fast_paths=False)
    feed_in(fast, data, 8192)
    feed_in(plain, data, 8192)
    assert fast.skipped_chars > len(data) // 2
    carried = fast._flood._after_skip
    assert carried is not None and len(carried[1]) <= _PEN_MAX_CHARS
    assert fast.capture(-(10**9), escapes=True) == plain.capture(-(10**9), escapes=True)
    fast.feed(b"after")
    plain.feed(b"after")
    assert fast.capture(-1, escapes=True) == plain.capture(-1, escapes=True)


def test_palette_colours_0_to_15_in_history_read_back_as_the_named_sgr_programs_write() -> None:
    em = make(40, 3)
    rows = [E + b"[31mred" + E + b"[0m", E + b"[38;5;9mbright" + E + b"[0m", E + b"[44;38;5;15mwhite on blue",
            E + b"[38;5;196mp196" + E + b"[0m"]
    em.feed(b"\r\n".join(rows * 30) + b"\r\n" + b"\r\n" * 3)
    kept = em.capture(-em.history_size, -1, escapes=True).splitlines()[:4]
    assert "\x1b[31mred" in kept[0] and "\x1b[91mbright" in kept[1], kept
    assert kept[2].startswith("\x1b[97;44mwhite") and "38;5;" not in "".join(kept[:3]), kept
    assert "38;5;196" in kept[3], kept


def test_rows_laid_out_wider_in_muxd_than_in_ghostty_are_copied_row_by_row() -> None:
    # Non-ASCII lines are not taken as one row each on faith: each is laid out again.
    em = make(10, 3)
    em.feed("".join(f"é{n:03d}€€€€€\r\n" for n in range(200)).encode())
    kept = history(em)
    assert kept == [f"é{n:03d}€€€€€" for n in range(len(kept))] and len(kept) >= 190


def test_the_event_pattern_finds_what_its_plain_backtracking_form_finds() -> None:
    plain = re.compile(rb"\x1b(?:\[([023]?)J|\[(\d*)S|\[\?(?:1049|1047|47)h|c|(#8))")
    rng = random.Random(29)
    alphabet = [b"\x1b", b"[", b"?", b"0", b"2", b"3", b"1", b"9", b"4", b"7", b"J", b"S", b"h", b"c", b"#",
                b"8", b";", b"m", b"x", b"1049h", b"47h", b"38;5;200m"]
    for _ in range(3000):
        data = b"".join(rng.choice(alphabet) for _ in range(rng.randint(1, 24)))
        assert ([(m.span(), m.groups()) for m in _EVENTS.finditer(data)]
                == [(m.span(), m.groups()) for m in plain.finditer(data)]), data


def _grep_lines(count: int, start: int = 0) -> bytes:
    """`grep --color` output: bold red file names, each match cleared to the end of the line."""
    from itertools import islice

    from muxd.testing.floods import bold_rows

    return "".join(islice(bold_rows(), start, start + count)).replace("\n", "\r\n").encode()


def _skipped_and_plain(data: bytes, piece: int, columns: int = 80):
    from muxd.emulator.ghostty_backend import GhosttyEmulator

    fast = GhosttyEmulator(columns, 24, scrollback_bytes=10**9)
    plain = GhosttyEmulator(columns, 24, scrollback_bytes=10**9, fast_paths=False)
    for offset in range(0, len(data), piece):
        fast.feed(data[offset : offset + piece])
        plain.feed(data[offset : offset + piece])
    assert fast.rows_scrolled == plain.rows_scrolled
    assert fast.capture(-(10**9), escapes=True) == plain.capture(-(10**9), escapes=True)
    assert fast.rows(-(10**9)) == plain.rows(-(10**9))  # capture drops trailing blanks, coloured or not
    assert fast.history_bytes == plain.history_bytes and fast.cursor == plain.cursor
    return fast, plain


@pytest.mark.parametrize("piece", [8192, 16384, 65536])  # reads long enough to skip in
@pytest.mark.parametrize("reverse", [False, True])
def test_grep_colour_floods_are_skipped_with_their_erases(piece: int, reverse: bool) -> None:
    """grep --color's erase to the end of the line, with the default background on a line
    shorter than the pane, changes nothing: its floods are skipped like any other (in reverse
    video too: ghostty's erased cells take the background colour alone)."""
    data = _grep_lines(4000)
    if reverse:
        data = data.replace(E + b"[01;31m", E + b"[7m")
    fast, _ = _skipped_and_plain(data, piece)
    assert fast.skipped_chars > len(data) // 2


# Erases that do change the screen, each amid grep output: a coloured background (set on the
# line, or before the flood), at a pending wrap (the last cell goes), at one on the second row
# of a wrapped line, after wide characters that fill the row.
ERASES_THAT_COUNT = {
    "background": E + b"[44m" + E + b"[Kon blue" + E + b"[m tail\r\n",  # blue to the end of the row
    "pending_wrap": b"x" * 80 + E + b"[Ky\r\n",
    "wrapped": b"w" * 160 + E + b"[Kz\r\n",
    "wide": "中".encode() * 40 + E + b"[Kafter\r\n",
}


@pytest.mark.parametrize("case", ERASES_THAT_COUNT)
@pytest.mark.parametrize("piece", [8192, 16384])
def test_erases_that_change_the_screen_are_emulated(case: str, piece: int) -> None:
    odd = ERASES_THAT_COUNT[case]
    data = b"".join(_grep_lines(600, n * 600) + odd * (1 + n % 3) for n in range(8))
    fast, _ = _skipped_and_plain(data, piece)
    assert fast.skipped_chars > len(data) // 3  # the grep lines between them are still skipped


def test_a_background_set_before_the_flood_colours_every_erase() -> None:
    _skipped_and_plain(E + b"[45m" + _grep_lines(3000).replace(E + b"[m", E + b"[22;39m"), 16384)
