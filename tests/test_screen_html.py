"""A screen as HTML (emulator/screen_html.py): escaped, styled by class, alike on both backends;
and the daemon's screen-html request, read as capture-pane is."""

from __future__ import annotations

import asyncio
import re
import sys

import pytest

from muxd.emulator.backend import new_emulator, running_backend
from muxd.emulator.screen_html import palette_css, palette_index, style_classes
from muxd.errors import BadRequest, Forbidden
from muxd.protocol import messages as m
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import async_wait_until

BACKENDS = ["pyte", pytest.param("ghostty", marks=pytest.mark.skipif(
    running_backend("ghostty") != "ghostty", reason="libghostty-vt cannot load here"))]
HOSTILE = b"<script>alert(1)</script> & \"q\" 'a' <img src=x onerror=alert(2)>"


def html_of(backend: str, output: bytes, columns: int = 80, lines: int = 4) -> str:
    emulator = new_emulator(columns, lines, backend=backend)
    emulator.feed(output)
    return emulator.screen_html()


@pytest.mark.parametrize("backend", BACKENDS)
def test_program_output_is_escaped_text_never_markup(backend: str) -> None:
    html = html_of(backend, b"\x1b[31m" + HOSTILE + b"\x1b[0m\r\n" + HOSTILE)
    assert "<script" not in html and "<img" not in html and "'" not in html
    tags = re.findall(r"<[^>]*>", html)
    assert set(tags) == {'<span class="f1">', '<span class="cu">', "</span>"}, tags  # the only markup: our spans
    first, second, *_ = html.split("\n")
    assert first == ('<span class="f1">&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;q&quot; &#x27;a&#x27; '
                     '&lt;img src=x onerror=alert(2)&gt;</span>')
    assert second == first[len('<span class="f1">'):-len("</span>")] + '<span class="cu"> </span>'  # the cursor


@pytest.mark.parametrize("backend", BACKENDS)
def test_styles_become_classes(backend: str) -> None:
    html = html_of(backend, b"\x1b[1;32mok\x1b[0m \x1b[38;5;196;48;2;0;0;255mhot\x1b[0m "
                            b"\x1b[7mrev\x1b[0m \x1b[4;9;3mx\x1b[0m \x1b[103mbg\x1b[0m\r\n")
    assert html.split("\n")[0] == (
        '<span class="f2 bo">ok</span> <span class="f196 b21">hot</span> <span class="fr br">rev</span> '
        '<span class="it ul st">x</span> <span class="b11">bg</span>')


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_cursor_is_marked_where_the_program_shows_it(backend: str) -> None:
    # On a wide character's cells, inside a styled run, past a row's end; hidden: not at all.
    assert html_of(backend, "\x1b[32mab中cd\x1b[0m\x1b[4G".encode()).split("\n")[0] == \
        '<span class="f2">ab<span class="cu">中</span>cd</span>'
    assert html_of(backend, b"ab\x1b[6G").split("\n")[0] == 'ab   <span class="cu"> </span>'
    assert "cu" not in html_of(backend, b"ab\x1b[?25l")


def test_both_backends_give_the_same_html() -> None:
    if running_backend("ghostty") != "ghostty":
        pytest.skip("libghostty-vt cannot load here")
    output = (b"\x1b[31mred \x1b[44mon blue\x1b[0m \xe4\xb8\xad\xe6\x96\x87 <b>\r\n"
              b"\x1b[7;33mrev\x1b[0m \x1b[38;2;250;128;114msalmon\x1b[0m\r\nplain & done")
    assert html_of("pyte", output, 40, 5) == html_of("ghostty", output, 40, 5)


def test_colours_map_onto_the_palette() -> None:
    assert [palette_index(c) for c in ("default", "red", "brightwhite", "bfightmagenta", "brightmagenta", "42")] \
        == [None, 1, 15, 13, 13, 42]
    assert palette_index("ff0000") == 196 and palette_index("000000") == 16 and palette_index("808080") == 244
    assert style_classes(("default", "default") + (False,) * 9) == ""
    css = palette_css()
    assert ".f255{color:#eeeeee}" in css and ".b196{background:#ff0000}" in css
    assert css.count("{color:#") == 256 and "<" not in css


async def _screen_html(server: MuxdTestServer, pane: str, other: str) -> None:
    viewer = await server.client(token=server.cli("token", "create", "--tier", "view_only", "--name", "viewer",
                                                  check=True).stdout.strip())
    try:
        async def shown() -> bool:
            return "&lt;script&gt;" in (await viewer.call(m.ScreenHtml, target=pane)).html
        await async_wait_until(shown, timeout=10, message="the pane's output as HTML")
        reply = await viewer.call(m.ScreenHtml, target=pane)
        assert reply.pane == pane and (reply.columns, reply.lines) == (80, 24)
        assert '<span class="f1">&lt;script&gt;alert(1)&lt;/script&gt;</span>' in reply.html
        assert "<script" not in reply.html
        assert reply.html.count("\n") == 23
        with pytest.raises(Forbidden, match="send-keys"):  # what view_only may capture, not type
            await viewer.call(m.SendKeys, target=pane, keys=["x"])
    finally:
        await viewer.close()
    # A pane's own token reads its pane's screen, not another's.
    token = server.cli("token", "create", "--tier", "execute_advanced", "--name", "scoped", "--pane", pane,
                       check=True).stdout.strip()
    scoped = await server.client(token=token)
    try:
        assert "alert(1)" in (await scoped.call(m.ScreenHtml, target=pane)).html
        with pytest.raises(Forbidden):
            await scoped.call(m.ScreenHtml, target=other)
    finally:
        await scoped.close()


def test_screen_html_request_reads_as_capture_pane(muxd_server: MuxdTestServer) -> None:
    script = "import sys; sys.stdout.write('\\x1b[31m<script>alert(1)</script>\\x1b[0m\\n'); sys.stdin.read()"
    pane = muxd_server.cli("new-session", "-d", "-P", "--", sys.executable, "-c", script, check=True).stdout.strip()
    other = muxd_server.cli("new-session", "-d", "-P", "--", "cat", check=True).stdout.strip()
    asyncio.run(_screen_html(muxd_server, pane, other))


async def _live(server: MuxdTestServer, pane: str) -> None:
    client = await server.client()
    try:
        first = await client.call(m.ScreenHtml, target=pane)
        # Nothing new: the request waits its time out and gives the same version back.
        started = asyncio.get_running_loop().time()
        same = await client.call(m.ScreenHtml, target=pane, after=first.version, wait_s=0.3)
        assert same.version == first.version and asyncio.get_running_loop().time() - started >= 0.25
        # Output wakes a waiting request at once (well before its 30 s).
        waiting = asyncio.ensure_future(client.call(m.ScreenHtml, target=pane, after=first.version, wait_s=30))
        await client.call(m.SendKeys, target=pane, keys=["echo", "Space", "live&well", "Enter"])
        changed = await asyncio.wait_for(waiting, 10)
        assert changed.version != first.version
        async def echoed() -> bool:
            return "live&amp;well" in (await client.call(m.ScreenHtml, target=pane)).html
        await async_wait_until(echoed, timeout=10, message="the echo on the screen")
        with pytest.raises(BadRequest):
            await client.call(m.ScreenHtml, target=pane, after=0, wait_s=3600)
    finally:
        await client.close()


def test_screen_html_waits_for_the_panes_output(muxd_server: MuxdTestServer) -> None:
    pane = muxd_server.cli("new-session", "-d", "-P", "--", "cat", check=True).stdout.strip()
    asyncio.run(_live(muxd_server, pane))


async def _work(server: MuxdTestServer) -> None:
    client = await server.client()
    try:
        started = await client.call(m.RunCommand, command=["sh", "-c", "read line; echo done"], keep=True)
        pane = started.execution.pane_id
        first = await client.call(m.ScreenHtml, target=pane)
        # The command's end changes the pane's work even where its screen changed before it: a
        # request naming the work version it knew answers (now or once the end comes) with a later one.
        await client.call(m.SendKeys, target=pane, keys=["go", "Enter"])
        changed = await client.call(m.ScreenHtml, target=pane, after=first.version, after_work=first.work_version,
                                    wait_s=30)
        deadline = asyncio.get_running_loop().time() + 30
        while changed.work_version == first.work_version:
            assert asyncio.get_running_loop().time() < deadline, "the command's end never counted"
            changed = await client.call(m.ScreenHtml, target=pane, after=changed.version,
                                        after_work=first.work_version, wait_s=30)
        assert changed.work_version > first.work_version
        ended = await client.call(m.GetExecution, execution_id=started.execution.id)
        assert ended.execution.status == "success"
    finally:
        await client.close()


def test_screen_html_answers_when_the_panes_work_changes(muxd_server: MuxdTestServer) -> None:
    asyncio.run(_work(muxd_server))


async def _cursor_move(server: MuxdTestServer, pane: str) -> None:
    client = await server.client()
    try:
        async def at_b() -> bool:
            reply = await client.call(m.ScreenHtml, target=pane)
            return (reply.cursor_x, reply.cursor_y) == (2, 0) and reply.html.startswith("ab")
        await async_wait_until(at_b, timeout=10, message="ab written")
        first = await client.call(m.ScreenHtml, target=pane)
        waiting = asyncio.ensure_future(client.call(m.ScreenHtml, target=pane, after=first.version,
                                                    after_cursor=(2, 0, True), wait_s=30))
        await client.call(m.SendKeys, target=pane, keys=["Enter"])  # unechoed: the program only moves the cursor
        moved = await asyncio.wait_for(waiting, 10)
        assert (moved.cursor_x, moved.cursor_y) == (0, 0)
        assert moved.html.startswith('<span class="cu">a</span>b')
    finally:
        await client.close()


def test_screen_html_answers_when_only_the_cursor_moves(muxd_server: MuxdTestServer) -> None:
    pane = muxd_server.cli("new-session", "-d", "-P", "--", "sh", "-c",
                           "stty -echo; printf ab; read x; printf '\\033[1G'; read y", check=True).stdout.strip()
    asyncio.run(_cursor_move(muxd_server, pane))
