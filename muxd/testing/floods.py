"""Escape-heavy output that floods a pane, for tests and benchmarks of how muxd copes.

Both kinds emulate at well under 1 MB/s (every row goes through the full parser), which is
what makes them hard on a multiplexer: `bold rows` as `grep --color` writes them, and a
`progress` line redrawn with CR + erase-line, a finished item logged every tenth update.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

_PIECES_PER_WRITE = 1000


def bold_rows() -> Iterator[str]:
    """Short bold rows, each cleared to the end of the line (as `grep --color` writes them)."""
    number = 0
    while True:
        yield f"\x1b[01;31m\x1b[Ksrc/module_{number % 977}.py\x1b[m\x1b[K:{number % 5000}: match\n"
        number += 1


def progress() -> Iterator[str]:
    """A coloured progress line redrawn with CR + erase-line, a finished item every tenth update."""
    step = 0
    while True:
        percent = step % 101
        bar = "#" * (percent // 5) + "." * (20 - percent // 5)
        yield f"\r\x1b[K\x1b[32m{percent:3d}%\x1b[0m [\x1b[36m{bar}\x1b[0m] {step}/1000000 items"
        if step % 10 == 9:
            yield f"\r\x1b[K\x1b[1;32m✔\x1b[0m item {step} done\n"
        step += 1


FLOODS: dict[str, Callable[[], Iterator[str]]] = {"bold rows": bold_rows, "progress": progress}


def write_flood(name: str, directory: Path, target_bytes: int) -> Path:
    """A file of about `target_bytes` of flood `name` (a key of FLOODS) in `directory`."""
    path = directory / f"flood-{name.replace(' ', '-')}.bin"
    pieces = FLOODS[name]()
    with path.open("wb") as fh:
        written = 0
        while written < target_bytes:
            chunk = "".join(next(pieces) for _ in range(_PIECES_PER_WRITE)).encode()
            fh.write(chunk)
            written += len(chunk)
    return path


def looping_cat(path: Path) -> list[str]:
    """The argv of a pane that floods `path` until it is killed."""
    return ["sh", "-c", f'while :; do cat "{path}"; done']
