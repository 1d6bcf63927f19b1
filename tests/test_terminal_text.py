"""Names, tags, commands and directories never reach the reader's terminal as escape sequences."""

from __future__ import annotations

import json
from pathlib import Path

from muxd.terminal_text import has_unsafe, visible
from muxd.testing.patience import patient_wait_for
from muxd.testing.server import MuxdTestServer

CLIPBOARD_WRITE = "\x1b]52;c;aGVsbG8=\x07"  # OSC 52: set the reader's clipboard to "hello"
RAW = ("\x1b", "\x07", "\x9b", "\u202e")


def test_visible_shows_what_would_act_on_a_terminal() -> None:
    assert visible("plain · ünïcode ✻") == "plain · ünïcode ✻"
    assert visible(f"a{CLIPBOARD_WRITE}b") == "a\\x1b]52;c;aGVsbG8=\\x07b"
    assert visible("\x9b31m\u202eevil\u2066") == "\\x9b31m\\u202eevil\\u2066"
    assert has_unsafe("tab\there") and not has_unsafe("[bold]x[/bold]")


def test_names_and_tags_with_control_characters_are_refused(muxd_server: MuxdTestServer) -> None:
    for args in (["-s", f"s{CLIPBOARD_WRITE}"], ["--name", f"p{CLIPBOARD_WRITE}"], ["-n", f"w{CLIPBOARD_WRITE}"],
                 ["--tag", f"t{CLIPBOARD_WRITE}"], ["--tag", "two words"], ["-s", "a:b"], ["--name", "%3"]):
        result = muxd_server.cli("new-session", "-d", *args, "--", "sleep", "600")
        assert result.returncode == 1, (args, result.stderr)
        assert not any(raw in result.stderr for raw in RAW), repr(result.stderr)
        assert len(result.stderr.splitlines()) == 1 and "invalid" in result.stderr, result.stderr
    assert muxd_server.cli("ls").stdout.strip() == "no panes"


def test_what_cannot_be_refused_is_shown_escaped(muxd_server: MuxdTestServer, tmp_path: Path) -> None:
    hostile_dir = tmp_path / f"dir{CLIPBOARD_WRITE}"
    hostile_dir.mkdir()
    program = tmp_path / f"prog{CLIPBOARD_WRITE}"
    program.write_text("#!/bin/sh\nexec sleep 600\n")
    program.chmod(0o755)
    muxd_server.cli("new-session", "-d", "-s", "[bold]boss[/bold]", "--name", "[link=mailto]y",
                    "-c", str(hostile_dir), "--", str(program), f"arg{CLIPBOARD_WRITE}", check=True)
    for command in (["ls"], ["list-panes", "-a"], ["list-windows", "-a"], ["ls", "--sessions"]):
        out = muxd_server.cli(*command, check=True).stdout
        assert not any(raw in out for raw in RAW), (command, repr(out))
    listing = muxd_server.cli("ls", check=True).stdout
    assert "arg\\x1b]52;c;aGVsbG8=\\x07" in listing  # the command, shown for what it is
    assert "[bold]boss[/bold]" in listing and "[link=mailto]y" in listing  # not rich markup
    windows = muxd_server.cli("list-windows", "-a", check=True).stdout
    assert "prog\\x1b]52" in windows  # the window is named after the program, safely
    pane = json.loads(muxd_server.cli("list-panes", "-a", "--json", check=True).stdout)[0]
    assert pane["command"][1] == f"arg{CLIPBOARD_WRITE}"  # --json keeps the exact value, JSON-escaped
    missing = muxd_server.cli("capture-pane", "-p", "-t", f"no{CLIPBOARD_WRITE}")
    assert missing.returncode == 1 and not any(raw in missing.stderr for raw in RAW), repr(missing.stderr)


def test_metrics_hold_no_control_characters(muxd_server: MuxdTestServer) -> None:
    import asyncio

    import pytest

    from muxd.errors import BadRequest
    from muxd.protocol.messages import RecordCall

    async def record() -> None:
        client = await muxd_server.client()
        try:
            await client.call(RecordCall, tool="toolé", args_sha256="0" * 64, status="ok")
            for fields in ({"tool": f"tool{CLIPBOARD_WRITE}"}, {"tool": "t", "error_code": f"c{CLIPBOARD_WRITE}"}):
                with pytest.raises(BadRequest, match="no control characters"):
                    await client.call(RecordCall, **{"args_sha256": "0" * 64, "status": "error", **fields})
        finally:
            await client.close()

    asyncio.run(patient_wait_for(record(), timeout=10))
    out = muxd_server.cli("metrics", check=True).stdout
    assert 'tool="toolé"' in out and not any(raw in out for raw in RAW), repr(out)
