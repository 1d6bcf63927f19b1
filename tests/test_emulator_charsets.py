"""DEC special graphics (charsets.py): G0/G1, SO/SI, saved with the cursor, on every backend."""

from __future__ import annotations

import pytest

from muxd.attach import FramePainter, PaneView, compose
from muxd.emulator import Emulator

from test_emulator import BACKEND_IDS, BACKENDS, PYTE_ONLY, make, new

E = b"\x1b"
G0_GRAPHICS, G0_ASCII, G1_GRAPHICS = E + b"(0", E + b"(B", E + b")0"
SO, SI = b"\x0e", b"\x0f"
DECSC, DECRC, RIS = E + b"7", E + b"8", E + b"c"

BOX = G0_GRAPHICS + b"lqqwqqk\r\nx  x  x\r\ntqqnqqu\r\nmqqvqqj" + G0_ASCII + b" lqk"
BOX_SHOWN = ["┌──┬──┐", "│  │  │", "├──┼──┤", "└──┴──┘ lqk"]

every_backend = pytest.mark.parametrize("fast", BACKENDS, ids=BACKEND_IDS)


@every_backend
def test_g0_line_drawing_until_ascii_again(fast: bool | str) -> None:
    em, _ = make(fast)
    em.feed(BOX)
    assert em.display_lines()[:4] == BOX_SHOWN
    assert em.capture(0, 3) == "\n".join(BOX_SHOWN) + "\n"
    assert [cell.data for cell in em.row_cells(0)[:3]] == ["┌", "─", "─"]


@every_backend
def test_the_whole_line_drawing_table(fast: bool | str) -> None:
    em, _ = make(fast, columns=40)
    em.feed(G0_GRAPHICS + bytes(range(0x5F, 0x7F)) + G0_ASCII + b"`q~")
    assert em.display_lines()[0] == "_◆▒␉␌␍␊°±␤␋┘┐┌└┼⎺⎻─⎼⎽├┤┴┬│≤≥π≠£·`q~"


@every_backend
def test_shift_out_draws_in_g1_and_shift_in_in_g0(fast: bool | str) -> None:
    em, _ = make(fast)
    em.feed(G1_GRAPHICS + b"lqk" + SO + b"af`~" + SI + b" lqk\r\n" + SO + b"lqk" + SI)
    assert em.display_lines()[:2] == ["lqk▒°◆· lqk", "┌─┐"]


@every_backend
def test_shift_out_with_ascii_in_g1_stays_ascii(fast: bool | str) -> None:
    em, _ = make(fast)
    em.feed(G0_GRAPHICS + SO + b"lqk" + SI + b"lqk" + G0_ASCII)
    assert em.display_lines()[0] == "lqk┌─┐"


@every_backend
def test_cursor_save_keeps_the_character_sets(fast: bool | str) -> None:
    em, _ = make(fast)
    # Saved in line drawing, ASCII drawn, restored: line drawing again (over the "q").
    em.feed(G0_GRAPHICS + DECSC + G0_ASCII + b"q" + DECRC + b"q" + G0_ASCII + b"|\r\n")
    # The shift is saved too: G1 in use when saved, back in G0 (ASCII) when restored.
    em.feed(G1_GRAPHICS + SO + DECSC + SI + b"xyz" + DECRC + b"q" + SI)
    assert em.display_lines()[:2] == ["─|", "─yz"]


@every_backend
def test_restore_without_save_and_reset_bring_back_ascii(fast: bool | str) -> None:
    em, _ = make(fast)
    em.feed(G0_GRAPHICS + b"q" + DECRC + b"q")  # nothing saved: home, ASCII
    assert em.display_lines()[0] == "q"
    em.feed(G0_GRAPHICS + G1_GRAPHICS + SO + RIS + b"lqk" + SO + b"lqk")
    assert em.display_lines()[0] == "lqklqk"
    # What was saved before a reset is forgotten with it.
    em.feed(E + b"[3;5H" + G0_GRAPHICS + DECSC + RIS + DECRC + b"Xq")
    assert em.display_lines()[:3] == ["Xq", "", ""]


@every_backend
def test_line_drawing_wraps_repeats_and_goes_to_scrollback(fast: bool | str) -> None:
    em, _ = make(fast, columns=10, lines=3)
    em.feed(G0_GRAPHICS + b"q" * 12 + E + b"[3b\r\nx\r\nx\r\nx" + G0_ASCII)
    assert em.capture(-2, -1) == "─" * 10 + "\n" + "─" * 5 + "\n"
    assert em.display_lines() == ["│", "│", "│"]


@every_backend
def test_designations_and_shifts_split_across_feeds(fast: bool | str) -> None:
    em, _ = make(fast)
    for byte in G0_GRAPHICS + b"lqk" + G1_GRAPHICS + G0_ASCII + b"q" + SO + b"q" + SI + b"q":
        em.feed(bytes([byte]))
    assert em.display_lines()[0] == "┌─┐q─q"


@every_backend
def test_flood_of_line_drawing_reaches_scrollback_as_drawn(fast: bool | str) -> None:
    """Long enough for flood skipping (pyte): lines under line drawing are emulated, not skipped."""
    em = new(20, 5, fast, scrollback_bytes=10**7)
    rows = 2000
    em.feed(G0_GRAPHICS + b"lqqk x\r\n" * rows + G0_ASCII + b"done")
    history = em.capture(-(10**9), -1).split("\n")[:-1]
    assert history[-1] == "┌──┐ │"
    assert set(history[-(rows - 10):]) == {"┌──┐ │"}
    if fast is True:
        assert isinstance(em, Emulator) and em.skipped_chars == 0


@PYTE_ONLY
def test_sets_other_than_ascii_and_line_drawing_change_nothing(fast: bool) -> None:
    # As in tmux (ghostty takes "A" as the UK set and shows "#" as "£").
    em, _ = make(fast)
    em.feed(G0_GRAPHICS + E + b"(Aq#" + G0_ASCII + E + b")Aq" + SO + b"#q" + SI)
    assert em.display_lines()[0] == "─#q#q"


@every_backend
def test_attach_paints_line_drawing_as_its_glyphs(fast: bool | str) -> None:
    em, _ = make(fast, columns=12, lines=3)
    em.feed(BOX[: BOX.index(b"\r\n")] + G0_ASCII)
    frame = compose(12, 3, [PaneView(em, 0, 0, 12, 3, active=True)], None)  # type: ignore[arg-type]
    painted = FramePainter().paint(frame)
    assert "┌──┬──┐".encode() in painted
    client = Emulator(12, 3)
    client.feed(painted)
    assert client.display_lines()[0] == "┌──┬──┐"
