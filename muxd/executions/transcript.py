"""An execution's transcript, capped and stored compressed. A command's is the pane's output
bytes while it ran, rendered to plain text (through a fresh emulator of the pane's width) when
asked for. An agent's turn's is its rows as the pane's own screen laid them out at its end
(`extra["format"]`: "text"; issue 29: the bytes of a turn, mostly the CLI's redraws, cost the
daemon's loop a call on every read for rows it has already)."""

from __future__ import annotations

import threading
import zlib

import msgspec

from muxd.config import TRANSCRIPT_MAX_BYTES, TRANSCRIPT_RENDER_MAX_ROWS

# Zstandard at level 1 (issue 29: recording's CPU): on an agent's turn, mostly its redraws, 3-5x
# less CPU than zlib's fastest level and a half to a fifth of its bytes (a fake Claude turn of
# 68 KB: 15-24 us and 0.7 KB against zlib's 69 us and 1.3 KB). A transcript says its codec in
# `extra`; one that says none is zlib's, as every transcript was before.
CODEC = "zstd"
TEXT_FORMAT = "text"  # extra["format"]: the data is the rows' plain text (UTF-8), not the pane's bytes
_ZSTD_LEVEL = 1
_compressors = threading.local()  # one per thread (the writer's, mostly): each keeps its tables
# Scrollback budget of the rendering emulator: enough for TRANSCRIPT_RENDER_MAX_ROWS rows.
_RENDER_ROW_BYTES = 256


class Transcript(msgspec.Struct):
    """An execution's output bytes (or, with `extra["format"]` "text", its rows' text), compressed
    as stored (`extra["codec"]`: "zstd"; none: zlib); `raw_bytes` before compression."""

    data: bytes
    raw_bytes: int
    truncated: bool = False
    extra: dict[str, object] = msgspec.field(default_factory=dict)

    def finish(self) -> Transcript:
        """Itself (what a TranscriptBuffer gives once finished: the store takes either)."""
        return self

    def raw(self) -> bytes:
        """The output as the pane wrote it. ValueError if the stored bytes are not a transcript
        of `raw_bytes` (a damaged row)."""
        if self.extra.get("codec") != CODEC:
            try:
                return zlib.decompress(self.data)
            except zlib.error as exc:
                raise ValueError(f"the transcript cannot be read: {exc}") from exc
        import zstandard

        try:  # (the frame's own size is checked first: a damaged one could claim any)
            if zstandard.frame_content_size(self.data) != self.raw_bytes:
                raise ValueError(f"the transcript's frame does not hold its {self.raw_bytes} bytes")
            return zstandard.ZstdDecompressor().decompress(self.data)
        except zstandard.ZstdError as exc:
            raise ValueError(f"the transcript cannot be read: {exc}") from exc


class TranscriptBuffer:
    """Collects output up to `cap_bytes`; what comes after is counted, not kept. The pane whose
    `transcript` it is appends each read to it itself (Pane._take_output calls `add`, rather than
    an output tap per read)."""

    def __init__(self, columns: int, lines: int, cap_bytes: int = TRANSCRIPT_MAX_BYTES, *, text: bool = False) -> None:
        self.columns, self.lines = columns, lines
        self.text = text  # what is added is rows' text (of_rows), not the pane's bytes
        self.cap_bytes = cap_bytes
        self.chunks: list[bytes] = []  # what was read while there was room (the last may overrun it)
        self.room = cap_bytes  # below 1: the cap is reached, further reads are only counted
        self.past = 0  # bytes read once the cap was reached
        self._finished: Transcript | None = None

    @classmethod
    def of_rows(cls, rows: list[str], columns: int, lines: int,
                cap_bytes: int = TRANSCRIPT_MAX_BYTES) -> TranscriptBuffer:
        """An agent's turn's transcript: its rows' text (a row a line, trailing blank rows left out)."""
        end = len(rows)
        while end and not rows[end - 1].strip():
            end -= 1
        buffer = cls(columns, lines, cap_bytes, text=True)
        buffer.add(("\n".join(rows[:end]) + "\n").encode("utf-8", "replace") if end else b"")
        return buffer

    def add(self, data: bytes) -> None:
        if self.room > 0:
            self.chunks.append(data)
            self.room -= len(data)
        else:
            self.past += len(data)

    @property
    def seen(self) -> int:
        return self.cap_bytes - self.room + self.past

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
            raw = b"".join(self.chunks)
            if len(raw) > self.cap_bytes:
                raw = raw[:self.cap_bytes]  # the read that reached the cap, cut to it
            self.chunks = []
            extra: dict[str, object] = {"columns": self.columns, "lines": self.lines, "codec": CODEC}
            if self.text:
                extra["format"] = TEXT_FORMAT
            self._finished = Transcript(data=_compressed(raw), raw_bytes=len(raw), truncated=self.truncated,
                                        extra=extra)
        return self._finished


def _compressed(raw: bytes) -> bytes:
    """`raw` as a Zstandard frame (with its size), by this thread's compressor."""
    compressor = getattr(_compressors, "zstd", None)
    if compressor is None:
        import zstandard  # at the first ended turn, on the writer's thread: not at the daemon's start

        compressor = _compressors.zstd = zstandard.ZstdCompressor(level=_ZSTD_LEVEL)
    return compressor.compress(raw)


def render(transcript: Transcript, columns: int = 80, lines: int = 24) -> str:
    """The transcript as the person saw it scroll by: plain text, wrapped rows joined."""
    raw = transcript.raw()
    if transcript.extra.get("format") == TEXT_FORMAT:  # laid out by the pane's own screen already
        text = raw.decode("utf-8", "replace")
        return text.rstrip("\n") + "\n" if text.strip() else ""
    from muxd.emulator.backend import new_emulator  # the emulator is heavy to import for the CLI

    width = int(transcript.extra.get("columns", columns))  # type: ignore[call-overload]
    height = int(transcript.extra.get("lines", lines))  # type: ignore[call-overload]
    emulator = new_emulator(width, height, scrollback_bytes=TRANSCRIPT_RENDER_MAX_ROWS * _RENDER_ROW_BYTES)
    emulator.feed(raw)
    text = emulator.capture(-TRANSCRIPT_RENDER_MAX_ROWS, join_wrapped=True)
    return text.rstrip("\n") + "\n" if text.strip() else ""
