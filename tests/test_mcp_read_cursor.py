"""read_pane's cursor: pure anchor logic on captures, then incremental reads through the stdio client."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from mcp import ClientSession

from muxd.emulator import Emulator
from muxd.errors import BadRequest
from muxd.mcp_server.read_cursor import content_lines, lines_since, make_cursor
from muxd.protocol.messages import CapturePane
from muxd.testing.mcp_stdio import call_ok, mcp_session
from muxd.testing.patience import patient_wait_for
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import async_wait_until

# Polls stay under the guard's default rate limit (10 calls/s per tool).
POLL_S = 0.2


def test_new_lines_after_the_cursor() -> None:
    before = ["$ ls", "a b", "$ "]
    cursor = make_cursor("%1", before)
    since = lines_since(cursor, "%1", ["$ ls", "a b", "$ ", "more"])
    assert since.lines == ["more"] and not since.redrawn
    assert lines_since(cursor, "%1", before).lines == []


def test_a_rewritten_last_line_is_returned_again() -> None:
    cursor = make_cursor("%1", ["$ ls", "a b", "$ "])
    since = lines_since(cursor, "%1", ["$ ls", "a b", "$ echo hi", "hi", "$ "])
    assert since.lines == ["$ echo hi", "hi", "$ "] and since.repeated_last_line


def test_dropped_scrollback_is_followed_and_a_redraw_is_said() -> None:
    lines = [f"line {i}" for i in range(10)]
    cursor = make_cursor("%1", lines)
    trimmed = lines[3:] + ["line 10", "line 11"]  # the 3 oldest lines left the scrollback
    assert lines_since(cursor, "%1", trimmed).lines == ["line 10", "line 11"]
    redrawn = lines_since(cursor, "%1", ["a fresh screen"])
    assert redrawn.redrawn and redrawn.lines == []


def test_cursors_count_running_row_numbers_so_a_read_starts_at_the_anchor() -> None:
    # A read of rows 100..104, then a capture from row 103 (the anchor) after more output.
    cursor = make_cursor("%1", ["a", "b", "c", "d", "e"], first_row=100)
    since = lines_since(cursor, "%1", ["d", "e", "f", "g"], first_row=103)
    assert since.lines == ["f", "g"] and not since.redrawn
    typed_on = lines_since(cursor, "%1", ["d", "e2", "f"], first_row=103)
    assert typed_on.lines == ["e2", "f"] and typed_on.repeated_last_line
    # The anchor's rows were dropped from the scrollback: the capture starts later, lost track.
    assert lines_since(cursor, "%1", ["x", "y"], first_row=400).redrawn
    one = make_cursor("%1", ["$ "], first_row=7)
    assert lines_since(one, "%1", ["$ ", "out"], first_row=7).lines == ["out"]
    assert lines_since(one, "%1", ["$ ls", "out"], first_row=7).lines == ["$ ls", "out"]


def test_row_numbers_stay_with_rows_when_old_scrollback_is_dropped() -> None:
    emulator = Emulator(columns=20, lines=5, scrollback_bytes=2000)
    emulator.feed(b"".join(b"%d\r\n" % n for n in range(1000)))
    # Row N shows "N": 996 rows went up; the oldest were dropped to keep 2000 bytes.
    assert emulator.rows_scrolled == 996 and emulator.history_size <= 500
    first, _ = emulator.span(-emulator.history_size - 10, None)
    assert emulator.capture(first, first).strip() == str(emulator.rows_scrolled + first)


def test_capture_from_a_row_number() -> None:
    async def run() -> None:
        server = MuxdTestServer().start()
        try:
            client = await server.client()
            try:
                server.cli("new-session", "-d", "-s", "w", "-x", "40", "-y", "5", "--",
                           "bash", "--norc", "-c", "seq 1 10; read _; seq 11 30; sleep 60", check=True)
                server.wait_for_text("w", "10")
                first = await client.call(CapturePane, target="w", start=-3)
                assert first.text.split("\n")[0] == "4" and first.first_row == 3  # "1" is row 0
                server.cli("send-keys", "-t", "w", "Enter", check=True)
                server.wait_for_text("w", "30")
                # The rows scrolled on, their numbers did not: row 5 is still "6".
                again = await client.call(CapturePane, target="w", from_row=first.first_row + 2)
                assert again.first_row == 5 and again.text.split("\n")[:3] == ["6", "7", "8"]
                with pytest.raises(BadRequest, match="from_row"):
                    await client.call(CapturePane, target="w", from_row=-1)
            finally:
                await client.close()
        finally:
            server.stop()

    asyncio.run(run())


def test_empty_capture_and_bad_cursors() -> None:
    assert lines_since(make_cursor("%1", []), "%1", ["x"]).lines == ["x"]
    assert content_lines("a\n\nb\n  \n\n") == ["a", "", "b"]
    with pytest.raises(BadRequest, match="not one read_pane returned"):
        lines_since("garbage!!", "%1", [])
    with pytest.raises(BadRequest, match="belongs to pane %1"):
        lines_since(make_cursor("%1", ["x"]), "%2", ["x"])


async def _drive(server: MuxdTestServer) -> None:
    async with mcp_session(server) as session:
        pane = await call_ok(session, "create_pane", command=["bash", "--norc"], env={"PS1": "$ "},
                           columns=80, lines=10)
        pane_id = pane["id"]
        await async_wait_until(lambda: _shows(session, pane_id, "$"), timeout=10, interval=POLL_S, message="prompt")
        first = await call_ok(session, "read_pane", pane_id=pane_id)
        cursor = first["cursor"]

        # Enough output to scroll past the 10-line screen into the scrollback.
        await call_ok(session, "send_input", pane_id=pane_id, text="seq 101 125", submit=True)
        await async_wait_until(lambda: _shows(session, pane_id, "125"), timeout=10, interval=POLL_S,
                               message="seq output")
        await async_wait_until(lambda: _ends_with_prompt(session, pane_id), timeout=10, interval=POLL_S,
                               message="prompt back")
        new = await call_ok(session, "read_pane", pane_id=pane_id, cursor=cursor)
        assert new["redrawn"] is False
        rows = new["text"].split("\n")
        assert rows[0] == "$ seq 101 125" and new["repeated_last_line"] is True  # the prompt was typed on
        assert rows[1:-1] == [str(n) for n in range(101, 126)] and rows[-1] == "$"

        again = await call_ok(session, "read_pane", pane_id=pane_id, cursor=new["cursor"])
        assert again["lines"] == 0 and again["text"] == "" and again["redrawn"] is False

        # At most `lines` new lines: the rest is counted as skipped.
        await call_ok(session, "send_input", pane_id=pane_id, text="seq 1 30", submit=True)
        await async_wait_until(lambda: _ends_with_prompt(session, pane_id, after="30"), timeout=10, interval=POLL_S,
                               message="second prompt")
        tail = await call_ok(session, "read_pane", pane_id=pane_id, cursor=again["cursor"], lines=5)
        assert tail["text"].split("\n") == ["27", "28", "29", "30", "$"] and tail["skipped"] == 27

        # A full-screen program (the alternate screen) loses the anchor: the call says so and
        # returns the screen. (A cleared shell screen does not: muxd keeps it in the scrollback.)
        await call_ok(session, "send_input", pane_id=pane_id, text=r"printf '\e[?1049h\e[Hfull-%s\n' screen",
                    submit=True)
        redrawn = await async_wait_until(lambda: _redrawn(session, pane_id, tail["cursor"]), timeout=10,
                                         interval=POLL_S, message="redrawn on the alternate screen")
        assert "full-screen" in redrawn["text"].split("\n")


async def _shows(session: ClientSession, pane_id: str, needle: str) -> bool:
    return needle in (await call_ok(session, "read_pane", pane_id=pane_id))["text"]


async def _ends_with_prompt(session: ClientSession, pane_id: str, after: str = "125") -> bool:
    rows = (await call_ok(session, "read_pane", pane_id=pane_id))["text"].split("\n")
    return len(rows) >= 2 and rows[-2] == after and rows[-1] == "$"


async def _redrawn(session: ClientSession, pane_id: str, cursor: str) -> dict[str, Any] | None:
    read = await call_ok(session, "read_pane", pane_id=pane_id, cursor=cursor)
    return read if read["redrawn"] else None


def test_read_cursor_through_stdio(muxd_server: MuxdTestServer) -> None:
    asyncio.run(patient_wait_for(_drive(muxd_server), timeout=25))
