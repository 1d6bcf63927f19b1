"""The pane page: /pane/{pane_id} shows a pane's screen in colour, live, with a box to type a
prompt (submit: an execution) or keys (send-keys), and the pane's recent executions;
/pane/{pane_id}/scrollback the rows above it too, as they are now (not live).

The screen comes from the daemon as HTML already escaped (screen-html, emulator/screen_html.py),
read with the session's token exactly as capture-pane would be. Live: /pane/{id}/screen is an
event stream whose every event is one screen-html reply; each request waits in the daemon for
the pane's next output (`after` the version shown), so nothing polls on a timer.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from urllib.parse import unquote

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response, StreamingResponse
from starlette.routing import Route

from muxd.client.connection import Client
from muxd.emulator.screen_html import palette_css
from muxd.errors import BadRequest, MuxdError
from muxd.protocol.execution_messages import ListExecutions, SubmitPrompt
from muxd.protocol.pane_messages import PaneInfo, SendKeys, ShowPane
from muxd.protocol.screen_messages import ScreenHtml, ScreenHtmlReply
from muxd.web.actions import action, done
from muxd.web.html import csrf_field, esc, page
from muxd.web.links import pane_path
from muxd.web.pages_history import RECORDS_CSS, executions_table
from muxd.web.sessions import WebSession, daemon_link, require_session

PANE_EXECUTIONS_SHOWN = 10
SCROLLBACK_SHOWN = 2_000      # rows above the screen the scrollback page shows, unless ?lines= says
SCROLLBACK_SHOWN_MAX = 20_000
SCREEN_WAIT_S = 25.0        # each screen request waits this long for output, then the stream says it lives
SCREEN_FRAME_MIN_S = 0.1    # a pane redrawing without pause is shown at most this often
# Keys offered as buttons beside the box (send-keys names).
KEY_BUTTONS = (("Enter", "Enter"), ("C-c", "Ctrl-C"), ("Escape", "Esc"), ("Tab", "Tab"), ("Up", "↑"), ("Down", "↓"))
# The screen's own rules, after the palette's classes (served together as /screen.css).
SCREEN_CSS = """
.screen{--screen-fg:#d0d0d0;--screen-bg:#000;color:var(--screen-fg);background:var(--screen-bg);
 font-family:ui-monospace,Menlo,Consolas,monospace;line-height:1.2;padding:.5em;overflow-x:auto;
 white-space:pre;display:inline-block;min-width:80ch;margin:.4rem 0;border:1px solid #2b3138}
"""


def pane_id_of(request: Request) -> str:
    """The pane a /pane/… URL names: "/pane/3", "/pane/%253" and "/pane/%3" (a raw "%" as a
    link may leave it) all name "%3". Read from the raw path: decoding "%31" would give "1"."""
    raw = request.scope.get("raw_path", b"").decode("latin-1").split("/")
    if len(raw) < 3 or raw[1] != "pane" or not raw[2]:
        raise BadRequest("no pane named")
    segment = raw[2]
    name = unquote(segment) if segment.upper().startswith("%25") else segment
    return name if name.startswith("%") else "%" + name


def screen_block(reply: ScreenHtmlReply, stream: str) -> str:
    """The screen, and where its live updates come from (app code reads the data attributes)."""
    return (f'<pre id="screen" class="screen" data-stream="{esc(stream)}" data-version="{reply.version}" '
            f'data-work="{reply.work_version}" '
            f'data-cursor="{reply.cursor_x}.{reply.cursor_y}.{int(reply.cursor_visible)}" '
            f'aria-label="screen of pane {esc(reply.pane)}">{reply.html}</pre>'
            f'<p id="live" class="live">{"exited" if reply.exited else ""}</p>')


def input_box(session: WebSession, pane_id: str) -> str:
    """A box to type into the pane: as a prompt (an execution) or as keys, and key buttons."""
    keys_path = esc(pane_path(pane_id, "/keys"))
    keys = "".join(f'<button type="submit" name="key" value="{esc(key)}" formaction="{keys_path}">{esc(label)}</button>'
                   for key, label in KEY_BUTTONS)
    return (f'<form method="post" action="{esc(pane_path(pane_id, "/submit"))}" class="pane-input" id="pane-input">'
            f"{csrf_field(session)}"
            '<label for="pane-text">Prompt or keys</label>'
            '<textarea id="pane-text" name="text" rows="3"></textarea>'
            '<button type="submit" id="submit-prompt">Submit prompt</button> '
            f'<button type="submit" id="send-text" formaction="{keys_path}">Type text</button> '
            '<label><input type="checkbox" name="enter" value="1" checked> then Enter</label>'
            f'<span class="keys">{keys}</span><p id="input-result" class="note" role="status"></p></form>')


def pane_header(info: PaneInfo) -> str:
    agent = info.agent
    state = agent.activity.state if agent.is_agent else ("exited" if info.status == "exited" else "no agent")
    kind = agent.agent_type or (info.foreground or "")
    return (f"<h1>Pane <code>{esc(info.id)}</code> {esc(info.name or '')}</h1>"
            f'<p class="pane-facts">{esc(info.session)}:{esc(info.window)} · {esc(kind)} · '
            f'<span class="state">{esc(state)}</span> · {esc(info.width)}×{esc(info.height)}'
            f'{" · " + esc(info.attention) if info.attention else ""}</p>')


def scrollback_link(pane_id: str) -> str:
    return f'<p class="note"><a href="{esc(pane_path(pane_id, "/scrollback"))}#end" id="scrollback-link">scrollback</a></p>'


async def pane_page(request: Request) -> Response:
    session = require_session(request)
    pane_id = pane_id_of(request)
    link = await daemon_link(request)
    info = (await link.call(ShowPane, target=pane_id)).pane
    screen = await link.call(ScreenHtml, target=info.id)
    executions = await _recent_executions(link, info)
    body = (pane_header(info) + screen_block(screen, pane_path(info.id, "/screen")) + scrollback_link(info.id)
            + (input_box(session, info.id) if session.can_act else "")  # what the daemon would refuse is hidden
            + "<h2>Recent executions</h2>"
            + f'<div id="pane-executions" data-source="{esc(pane_path(info.id, "/executions"))}">{executions}</div>'
            + RECORDS_CSS + '<link rel="stylesheet" href="/screen.css">')
    return HTMLResponse(page(f"Pane {info.id}", body, session, scripts=("pane.js",)))


async def scrollback_page(request: Request) -> Response:
    """The pane's last `?lines=` rows of scrollback (SCROLLBACK_SHOWN by default) and its screen,
    as they are now: what scrolled off the live screen, to read back (`#end` is the newest row)."""
    session = require_session(request)
    asked = request.query_params.get("lines", str(SCROLLBACK_SHOWN))
    lines = _number(asked)
    if lines is None or not 1 <= lines <= SCROLLBACK_SHOWN_MAX:
        raise BadRequest(f"lines must be a number 1..{SCROLLBACK_SHOWN_MAX}, not {asked[:20]!r}", field="lines")
    link = await daemon_link(request)
    info = (await link.call(ShowPane, target=pane_id_of(request))).pane
    rows = await link.call(ScreenHtml, target=info.id, start=-lines)
    body = (pane_header(info)
            + f'<p class="note"><a href="{esc(pane_path(info.id))}">live screen</a> · the last {lines} rows '
              f'above the screen, and the screen</p>'
            + f'<pre id="scrollback" class="screen" aria-label="scrollback of pane {esc(info.id)}">{rows.html}</pre>'
            + '<p id="end" class="note">(the newest row is the last)</p><link rel="stylesheet" href="/screen.css">')
    return HTMLResponse(page(f"Pane {info.id}: scrollback", body, session))


async def _recent_executions(link: Client, info: PaneInfo) -> str:
    """The pane's latest executions as a table (the history names an agent by its pane's name, else its id)."""
    reply = await link.call(ListExecutions, agent_name=info.name or info.id, limit=PANE_EXECUTIONS_SHOWN)
    return executions_table(reply.executions)


async def pane_executions(request: Request) -> Response:
    """The recent executions table alone: the page fetches it again after a submit and when the
    pane's work changes (its agent's state; an execution's end)."""
    link = await daemon_link(request)
    info = (await link.call(ShowPane, target=pane_id_of(request))).pane
    return HTMLResponse(await _recent_executions(link, info), headers={"Cache-Control": "no-store"})


def _number(text: str) -> int | None:
    return int(text) if text.isdigit() else None


def _cursor(text: str) -> tuple[int, int, bool] | None:
    """A screen block's data-cursor ("x.y.shown", as `screen_block` writes it), or None."""
    parts = text.split(".")
    if len(parts) != 3 or not all(part.isdigit() for part in parts):
        return None
    return int(parts[0]), int(parts[1]), parts[2] == "1"


def _sse(event: str, data: dict[str, object]) -> str:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n"


async def screen_stream(request: Request) -> Response:
    """The pane's screen as server-sent events: `screen` (html, version) at each change, `work`
    (its agent's state) when its agent changes state or an execution of it ends, a comment line
    while nothing changes, `ended` (why) when the pane exits or the daemon refuses."""
    session = require_session(request)
    pane_id = pane_id_of(request)
    link = await daemon_link(request)  # a revoked token is told now, as a redirect, not as a stream
    after, after_work = (_number(request.query_params.get(name, "")) for name in ("after", "work"))

    async def next_reply(version: int | None, work: int | None, cursor: tuple[int, int, bool] | None,
                         ended: asyncio.Future[object]) -> ScreenHtmlReply | None:
        """The next screen-html reply, or None if the session ends first."""
        call = asyncio.ensure_future(link.call(ScreenHtml, target=pane_id, after=version, after_work=work,
                                               after_cursor=cursor,
                                               wait_s=0.0 if version is None else SCREEN_WAIT_S))
        await asyncio.wait({call, ended}, return_when=asyncio.FIRST_COMPLETED)
        if not call.done():
            call.cancel()
            return None
        return call.result()

    async def events() -> AsyncIterator[str]:
        version, work = after, after_work
        cursor = _cursor(request.query_params.get("cursor", ""))
        ended = asyncio.ensure_future(session.ended.wait())
        try:
            yield "retry: 2000\n\n"
            while True:
                try:
                    reply = await next_reply(version, work, cursor, ended)
                except MuxdError as error:
                    yield _sse("ended", {"reason": f"{error.code}: {error.message}"})
                    return
                if reply is None:
                    yield _sse("ended", {"reason": "logged out"})
                    return
                if work is not None and reply.work_version != work:
                    yield _sse("work", {"state": reply.agent_state})  # its list of executions may have changed
                work = reply.work_version
                shown = (reply.cursor_x, reply.cursor_y, reply.cursor_visible)
                if reply.version != version or shown != cursor:  # (an unknown cursor: one frame more)
                    version, cursor = reply.version, shown
                    yield _sse("screen", {"html": reply.html, "version": reply.version,
                                          "cursor": [reply.cursor_x, reply.cursor_y]})
                    await asyncio.sleep(SCREEN_FRAME_MIN_S)  # coalesce a redraw storm into ≤10 frames a second
                else:
                    yield ": waiting\n\n"  # the connection lives (and a closed one is noticed)
                if reply.exited:
                    yield _sse("ended", {"reason": "the pane's program exited"})
                    return
        finally:
            ended.cancel()

    return StreamingResponse(events(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})


async def submit_prompt(request: Request, session: WebSession, form: FormData) -> Response:
    """The box's text as a prompt for the pane's agent: an execution, as `muxd submit`."""
    pane_id = pane_id_of(request)
    text = _text(form, "text").strip()
    if not text:
        raise BadRequest("type a prompt first", field="text")
    execution = (await (await daemon_link(request)).call(SubmitPrompt, target=pane_id, message=text, triggered_by="web")).execution
    return done(request, f"submitted {execution.id} ({execution.status})", back=pane_path(pane_id))


async def send_keys(request: Request, session: WebSession, form: FormData) -> Response:
    """A key button's key, else the box's text typed as it is (then Enter when asked)."""
    pane_id = pane_id_of(request)
    key, text = _text(form, "key"), _text(form, "text")
    link = await daemon_link(request)
    if key:
        await link.call(SendKeys, target=pane_id, keys=[key])
    elif text:
        await link.call(SendKeys, target=pane_id, keys=[text], literal=True)
        if _text(form, "enter"):
            await link.call(SendKeys, target=pane_id, keys=["Enter"])
    else:
        raise BadRequest("type some text or press a key button", field="text")
    return done(request, f"sent {key or 'the text'} to {pane_id}", back=pane_path(pane_id))


def _text(form: FormData, name: str) -> str:
    value = form.get(name)
    return value if isinstance(value, str) else ""


async def screen_css(request: Request) -> Response:
    return Response(palette_css() + SCREEN_CSS, media_type="text/css",
                    headers={"Cache-Control": "public, max-age=3600"})


ROUTES = [
    Route("/pane/{pane_id}", pane_page),
    Route("/pane/{pane_id}/screen", screen_stream),
    Route("/pane/{pane_id}/executions", pane_executions),
    Route("/pane/{pane_id}/scrollback", scrollback_page),
    action("/pane/{pane_id}/submit", "submit", submit_prompt),
    action("/pane/{pane_id}/keys", "send_keys", send_keys),
    Route("/screen.css", screen_css),
]
