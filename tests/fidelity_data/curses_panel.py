"""A small curses screen for the fidelity tests: boxes, colours, attributes, cursor moves.

Each key press advances one stage; the test compares muxd with tmux after each stage.
Stage 1 draws, stage 2 redraws parts (curses then uses insert/delete-line and erase
optimisations), stage 3 scrolls a band of the screen (scroll region), stage 4 leaves curses
(the alternate screen must give back the shell screen).
"""

from __future__ import annotations

import curses
import sys


def draw(stdscr: curses.window) -> None:
    curses.start_color()
    curses.use_default_colors()
    curses.init_pair(1, curses.COLOR_RED, -1)
    curses.init_pair(2, curses.COLOR_WHITE, curses.COLOR_BLUE)
    curses.init_pair(3, curses.COLOR_BLACK, curses.COLOR_YELLOW)
    curses.init_pair(4, 208, -1)  # a 256-colour index
    curses.curs_set(1)
    stdscr.box()
    stdscr.addstr(0, 3, " fidelity panel ", curses.A_BOLD)
    stdscr.addstr(2, 2, "red text", curses.color_pair(1))
    stdscr.addstr(2, 12, "reverse", curses.A_REVERSE)
    stdscr.addstr(2, 21, "underline", curses.A_UNDERLINE)
    stdscr.addstr(2, 32, "orange", curses.color_pair(4) | curses.A_BOLD)
    inner = curses.newwin(8, 34, 4, 4)
    inner.bkgd(" ", curses.color_pair(2))
    inner.box()
    for row in range(1, 7):
        inner.addstr(row, 2, f"row {row} of the inner window")
    stdscr.refresh()
    inner.refresh()
    side = curses.newwin(6, 30, 13, 44)
    side.bkgd(" ", curses.color_pair(3))
    side.addstr(1, 1, "a yellow panel")
    side.addstr(3, 1, "=" * 20)
    side.refresh()
    stdscr.addstr(21, 2, "stage 1 ready")
    stdscr.move(10, 60)
    stdscr.refresh()


def redraw(stdscr: curses.window) -> None:
    for row in range(14, 20):
        stdscr.addstr(row, 2, f"list item {row - 13:02d}")
    stdscr.refresh()
    stdscr.move(14, 2)
    stdscr.deleteln()
    stdscr.move(16, 2)
    stdscr.insertln()
    stdscr.addstr(16, 2, "inserted line")
    stdscr.addstr(2, 12, "plain  ")
    stdscr.move(21, 2)
    stdscr.clrtoeol()
    stdscr.addstr(21, 2, "stage 2 ready")
    stdscr.box()
    stdscr.refresh()


def scroll_band(stdscr: curses.window) -> None:
    stdscr.idlok(True)
    stdscr.scrollok(True)
    stdscr.setscrreg(13, 19)
    stdscr.scroll(2)
    stdscr.setscrreg(0, curses.LINES - 1)
    stdscr.scrollok(False)
    stdscr.addstr(21, 2, "stage 3 ready")
    stdscr.refresh()


def main(stdscr: curses.window) -> None:
    for stage in (draw, redraw, scroll_band):
        stage(stdscr)
        stdscr.getch()


if __name__ == "__main__":
    print("shell line before curses")
    curses.wrapper(main)
    print("stage 4: back from curses")
    sys.stdout.flush()
