"""Sans-IO framing: a 4-byte big-endian length, then the body.

`FrameDecoder` is fed whatever bytes arrive and hands back complete bodies. An oversized
frame is rejected from its header alone, before a single body byte is buffered.
"""

from __future__ import annotations

from muxd.config import MAX_FRAME_BYTES
from muxd.errors import FrameTooLarge

# The length as int.to_bytes writes it, not struct's: a tmux shim call imports no struct
# (cli/tmux_fast_path.py).
HEADER_BYTES = 4


def header(size: int) -> bytes:
    """The 4-byte big-endian length that starts a frame of `size` body bytes."""
    return size.to_bytes(HEADER_BYTES, "big")


def frame(body: bytes) -> bytes:
    """Prefix `body` with its length; refuses bodies a peer would reject."""
    if len(body) > MAX_FRAME_BYTES:
        raise FrameTooLarge(f"frame of {len(body)} bytes exceeds {MAX_FRAME_BYTES}", size=len(body))
    return header(len(body)) + body


class FrameDecoder:
    """Accumulates bytes; `feed` returns the bodies completed so far, in order.

    A header over the limit raises FrameTooLarge, but not before the frames ahead of it are
    handed back: they are intact, and their senders are owed answers. Feeding again (even
    b"") then raises.
    """

    def __init__(self, max_frame_bytes: int = MAX_FRAME_BYTES) -> None:
        self._buffer = bytearray()
        self._max = max_frame_bytes
        self._need: int | None = None  # body length of the frame being read, once its header is in

    def feed(self, data: bytes | memoryview) -> list[bytes]:
        self._buffer += data
        bodies: list[bytes] = []
        while True:
            if self._need is None:
                if len(self._buffer) < HEADER_BYTES:
                    return bodies
                size = int.from_bytes(self._buffer[:HEADER_BYTES], "big")
                if size > self._max:
                    if bodies:
                        return bodies
                    raise FrameTooLarge(
                        f"frame announces {size} bytes; the limit is {self._max}", size=size
                    )
                del self._buffer[:HEADER_BYTES]
                self._need = size
            if len(self._buffer) < self._need:
                return bodies
            bodies.append(bytes(self._buffer[: self._need]))
            del self._buffer[: self._need]
            self._need = None

    @property
    def buffered_bytes(self) -> int:
        return len(self._buffer)
