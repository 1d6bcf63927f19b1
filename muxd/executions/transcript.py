"""An execution's transcript: the pane's output bytes while it ran, capped, stored compressed,
rendered to plain text (through a fresh emulator of the pane's width) when asked for."""

from __future__ import annotations

import zlib

import msgspec

from muxd.config import TRANSCRIPT_MAX_BYTES, TRANSCRIPT_RENDER_MAX_ROWS

# zlib's fastest level: 2-2.5x less CPU than its default (6) on the real agents' output, which it
# stores 1.3-1.8x larger (issue 29: recording's CPU); transcripts are capped and pruned with the history.
_COMPRESSION_LEVEL = 1
# Scrollback budget of the rendering emulator: enough for TRANSCRIPT_RENDER_MAX_ROWS rows.
_RENDER_ROW_BYTES = 256


class Transcript(msgspec.Struct):
    """An execution's output bytes, zlib-compressed as stored; `raw_bytes` before compression."""

    data: bytes
    raw_bytes: int
    truncated: bool = False
    extra: dict[str, object] = msgspec.field(default_factory=dict)

    def finish(self) -> Transcript:
        """Itself (what a TranscriptBuffer gives once finished: the store takes either)."""
        return self


class TranscriptBuffer:
    """Collects output up to `cap_bytes`; what comes after is counted, not kept. `add` is a
    pane's output tap for a whole turn (called for every chunk): one comparison below the cap."""

    def __init__(self, columns: int, lines: int, cap_bytes: int = TRANSCRIPT_MAX_BYTES) -> None:
        self.columns, self.lines = columns, lines
        self.cap_bytes = cap_bytes
        self._chunks: list[bytes] = []
        self.seen = 0
        self._finished: Transcript | None = None

    def add(self, data: bytes) -> None:
        self.seen += len(data)
        if self.seen <= self.cap_bytes:
            self._chunks.append(data)
        else:
            self._past_cap(data)

    def _past_cap(self, data: bytes) -> None:
        room = self.cap_bytes - (self.seen - len(data))  # what the chunks before it left
        if room > 0:
            self._chunks.append(data[:room])

    @property
    def kept(self) -> int:
        return min(self.seen, self.cap_bytes)

    @property
    def truncated(self) -> bool:
        return self.seen > self.cap_bytes

    def finish(self) -> Transcript:
        """The output compressed (once: a save written again asks again). The store calls it on
        its writer thread, with the row: a turn's output is often hundreds of KB."""
        if self._finished is None:
            raw = b"".join(self._chunks)
            self._chunks = []
            self._finished = Transcript(data=zlib.compress(raw, _COMPRESSION_LEVEL), raw_bytes=len(raw),
                                        truncated=self.truncated, extra={"columns": self.columns, "lines": self.lines})
        return self._finished


def render(transcript: Transcript, columns: int = 80, lines: int = 24) -> str:
    """The transcript as the person saw it scroll by: plain text, wrapped rows joined."""
    from muxd.emulator.backend import new_emulator  # the emulator is heavy to import for the CLI

    raw = zlib.decompress(transcript.data)
    width = int(transcript.extra.get("columns", columns))  # type: ignore[call-overload]
    height = int(transcript.extra.get("lines", lines))  # type: ignore[call-overload]
    emulator = new_emulator(width, height, scrollback_bytes=TRANSCRIPT_RENDER_MAX_ROWS * _RENDER_ROW_BYTES)
    emulator.feed(raw)
    text = emulator.capture(-TRANSCRIPT_RENDER_MAX_ROWS, join_wrapped=True)
    return text.rstrip("\n") + "\n" if text.strip() else ""
