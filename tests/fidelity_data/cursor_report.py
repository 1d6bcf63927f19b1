"""Ask the terminal where the cursor is (ESC[6n) and print the answers it got.

A terminal that never answers leaves the program waiting; it gives up after
ANSWER_TIMEOUT_S and prints "no answer", so the test shows a difference instead of hanging.
"""

from __future__ import annotations

import os
import select
import sys
import termios
import tty

ANSWER_TIMEOUT_S = 3.0


def ask(query: bytes) -> str:
    os.write(1, query)
    answer = b""
    while not answer.endswith((b"R", b"n")):
        ready, _, _ = select.select([0], [], [], ANSWER_TIMEOUT_S)
        if not ready:
            return "no answer"
        answer += os.read(0, 1)
    return answer.decode("ascii", "replace").replace("\x1b", "ESC")


def main() -> None:
    saved = termios.tcgetattr(0)
    tty.setraw(0)
    try:
        os.write(1, b"\x1b[2J\x1b[5;10Hfirst")
        first = ask(b"\x1b[5;10H\x1b[6n")
        os.write(1, b"\x1b[12;40Hsecond")
        second = ask(b"\x1b[6n")
        status = ask(b"\x1b[5n")
    finally:
        termios.tcsetattr(0, termios.TCSADRAIN, saved)
    sys.stdout.write(f"\x1b[15;1Hcursor at 5;10 -> {first}\n"
                     f"cursor after 'second' -> {second}\n"
                     f"device status -> {status}\nreport done\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
