"""A transcript's bytes as stored: Zstandard frames since issue 29 (`extra["codec"]`), zlib's
before; both read back as the pane wrote them, and a damaged one is a one-line ValueError."""

from __future__ import annotations

import zlib

import pytest

from muxd.executions.transcript import CODEC, Transcript, TranscriptBuffer, render

# A TUI's turn as it is mostly written: the same frame redrawn with a counter moving.
FRAMES = b"".join(b"\x1b[2K\r\x1b[38;5;174m* Thinking\xe2\x80\xa6 (%ds \xc2\xb7 esc to interrupt)\x1b[0m" % n
                  for n in range(400))


def finished(data: bytes) -> Transcript:
    buffer = TranscriptBuffer(80, 24, cap_bytes=1 << 20)
    buffer.add(data)
    return buffer.finish()


def test_a_turn_is_stored_as_a_zstandard_frame_that_reads_back_whole():
    stored = finished(FRAMES)
    assert stored.extra == {"columns": 80, "lines": 24, "codec": CODEC}
    assert stored.data.startswith(b"\x28\xb5\x2f\xfd")  # Zstandard's magic number
    assert stored.raw() == FRAMES and stored.raw_bytes == len(FRAMES)
    assert len(stored.data) < len(zlib.compress(FRAMES, 1))  # and smaller than zlib's fastest
    assert render(stored).rstrip("\n").endswith("esc to interrupt)")


def test_a_transcript_from_before_reads_as_zlib():
    before = Transcript(data=zlib.compress(b"hello\r\nworld\r\n", 1), raw_bytes=14, extra={"columns": 80, "lines": 24})
    assert before.raw() == b"hello\r\nworld\r\n"
    assert render(before) == "hello\nworld\n"


@pytest.mark.parametrize("damaged", [
    Transcript(data=b"\x28\xb5\x2f\xfd garbage", raw_bytes=10, extra={"codec": CODEC}),
    Transcript(data=finished(FRAMES).data, raw_bytes=10, extra={"codec": CODEC}),  # a frame of another size
    Transcript(data=b"not zlib", raw_bytes=8),
])
def test_a_damaged_transcript_is_one_line_value_error(damaged: Transcript):
    with pytest.raises(ValueError, match="transcript") as raised:
        damaged.raw()
    assert "\n" not in str(raised.value)


def test_an_agent_turns_rows_are_stored_as_text_and_render_as_they_are():
    rows = ["❯ name a colour", "", "● Blue \x1b[31m is not a code here", "", "─" * 80, "❯", "", ""]
    buffer = TranscriptBuffer.of_rows(rows, 80, 24, cap_bytes=1 << 20)
    text = "\n".join(rows[:6]) + "\n"  # the trailing blank rows left out
    assert (buffer.kept, buffer.truncated) == (len(text.encode()), False)
    stored = buffer.finish()
    assert stored.extra == {"columns": 80, "lines": 24, "codec": CODEC, "format": "text"}
    assert stored.raw() == text.encode() and render(stored) == text  # no emulator: an escape stays text
    assert render(TranscriptBuffer.of_rows(["", " "], 80, 24).finish()) == ""


def test_rows_past_the_cap_keep_their_start():
    stored = TranscriptBuffer.of_rows([f"row {n}" for n in range(1000)], 80, 24, cap_bytes=100).finish()
    assert stored.truncated and stored.raw_bytes == 100 and render(stored).startswith("row 0\nrow 1\n")
