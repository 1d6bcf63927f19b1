"""The history pages: /history (the executions, with `muxd history`'s filters), /execution/{id}
(one execution: what it was asked and answered, its tools, files, tokens, cost and where that
figure came from, its transcript) and /failures (failures grouped by error pattern, as
`muxd failures`). Each sends the daemon request the CLI sends, through the browser's session:
the daemon cuts every answer to what the session's token may see."""

from __future__ import annotations

import time
from collections.abc import Mapping
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from muxd.cli.history_commands import cost_detail, cost_text, since_time, took, when_text
from muxd.cli.render import one_line
from muxd.executions.record import STATUSES, TRIGGERS, Execution
from muxd.protocol.execution_messages import ExecutionFailures, GetExecution, ListExecutions
from muxd.store.execution_store import ErrorPattern
from muxd.units import duration
from muxd.web.html import esc, page
from muxd.web.links import execution_link, pane_path
from muxd.web.sessions import daemon_link, require_session

# These pages' stylesheet, beside the view's own (page() links only that one).
RECORDS_CSS = '<link rel="stylesheet" href="/static/records.css">'
HISTORY_PAGE_ROWS = 50
FAILURES_SHOWN = 20
MESSAGE_CELL_CHARS = 80
# /history's query parameters, named as `muxd history`'s options (--by is the trigger).
HISTORY_FILTERS = ("agent", "status", "by", "trace", "task", "since")


def ago(at: float | None, now: float | None = None) -> str:
    """"5m ago", or "" when unknown."""
    return "" if at is None else duration((time.time() if now is None else now) - at) + " ago"


def status_badge(status: str) -> str:
    return f'<span class="exec-status exec-{esc(status)}">{esc(status)}</span>'


def executions_table(executions: list[Execution], *, now: float | None = None) -> str:
    """The executions as a table, newest first as given; each id links to its page."""
    if not executions:
        return '<p class="empty">No executions.</p>'
    head = "".join(f"<th>{name}</th>" for name in
                   ("Execution", "Agent", "Status", "By", "Started", "Took", "Tokens", "Cost", "Error", "Message"))
    rows = []
    for e in executions:
        tokens = "" if e.tokens_used is None else f"{e.tokens_used:,}"
        cells = (execution_link(e.id), esc(e.agent_name), status_badge(e.status),
                 esc(e.triggered_by), esc(ago(e.started_at or e.queued_at, now)), esc(took(e)), esc(tokens),
                 esc(cost_text(e)), esc(e.error.type if e.error else ""),
                 esc(one_line(e.message, MESSAGE_CELL_CHARS)))
        rows.append("<tr>" + "".join(f"<td>{cell}</td>" for cell in cells) + "</tr>")
    return f'<table class="executions"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def _select(name: str, label: str, choices: tuple[str, ...], chosen: str) -> str:
    options = "".join(f'<option value="{esc(value)}"{" selected" if value == chosen else ""}>'
                      f'{esc(value or "any")}</option>' for value in ("", *choices))
    return f'<label>{esc(label)} <select name="{esc(name)}">{options}</select></label>'


def _text(name: str, label: str, value: str, hint: str) -> str:
    return (f'<label>{esc(label)} <input type="text" name="{esc(name)}" value="{esc(value)}" '
            f'placeholder="{esc(hint)}"></label>')


def history_filters(query: Mapping[str, str]) -> str:
    """The filter form of /history (a GET form: a filtered view is a link to share)."""
    get = lambda name: query.get(name, "")  # noqa: E731
    return ('<form method="get" action="/history" class="filters">'
            + _text("agent", "Agent", get("agent"), "name or %id")
            + _select("status", "Status", STATUSES, get("status"))
            + _select("by", "Triggered by", TRIGGERS, get("by"))
            + _text("trace", "Trace", get("trace"), "trace or execution id")
            + _text("task", "Task", get("task"), "task id")
            + _text("since", "Since", get("since"), "30m, 2h, 7d or ISO time")
            + '<button type="submit">Filter</button></form>')


def _offset(query: Mapping[str, str]) -> int:
    text = query.get("offset", "0")
    return max(int(text), 0) if text.isdigit() else 0


def history_request(query: Mapping[str, str]) -> dict[str, object]:
    """ListExecutions' fields for /history's query, as `muxd history` maps its options."""
    value = lambda name: query.get(name, "").strip() or None  # noqa: E731
    return {"agent_name": value("agent"), "status": value("status"), "triggered_by": value("by"),
            "trace_id": value("trace"), "task_id": value("task"), "since": since_time(value("since")),
            "limit": HISTORY_PAGE_ROWS, "offset": _offset(query)}


def _pages(query: Mapping[str, str], shown: int, total: int) -> str:
    """"1–50 of 120" and a link to the next (older) page, keeping the filters."""
    offset = _offset(query)
    kept = {name: query[name] for name in HISTORY_FILTERS if query.get(name)}
    def at(start: int) -> str:
        return esc("/history?" + urlencode(kept | {"offset": start}))

    links = []
    if offset > 0:
        links.append(f'<a href="{at(max(offset - HISTORY_PAGE_ROWS, 0))}">newer</a>')
    if offset + shown < total:
        links.append(f'<a href="{at(offset + shown)}" rel="next">older</a>')
    span = f"{offset + 1}–{offset + shown} of {total}" if shown else f"0 of {total}"
    return f'<p class="pages">{esc(span)} {" ".join(links)}</p>'


async def history(request: Request) -> Response:
    session = require_session(request)
    query = request.query_params
    reply = await (await daemon_link(request)).call(ListExecutions, **history_request(query))
    body = (RECORDS_CSS + "<h1>History</h1>" + history_filters(query) + executions_table(reply.executions)
            + _pages(query, len(reply.executions), reply.total))
    return HTMLResponse(page("History", body, session, current="/history"))


def _fields_table(rows: list[tuple[str, str]]) -> str:
    """Label/value rows; the values are HTML already (escaped by the caller)."""
    return ('<table class="fields">'
            + "".join(f"<tr><th>{esc(label)}</th><td>{value}</td></tr>" for label, value in rows if value)
            + "</table>")


def _items(values: list[str], css_class: str) -> str:
    if not values:
        return '<p class="empty">None.</p>'
    return f'<ul class="{css_class}">' + "".join(f"<li><code>{esc(v)}</code></li>" for v in values) + "</ul>"


def execution_body(e: Execution, transcript: str | None) -> str:
    """An execution's page: its record, answer, tools, files and transcript, every value escaped."""
    # Another host's pane (%3@host) has no page here.
    pane = esc(e.pane_id) if "@" in e.pane_id else f'<a href="{esc(pane_path(e.pane_id))}">{esc(e.pane_id)}</a>'
    context = "" if e.context_used is None else f"{e.context_used:,}" + (
        f" of {e.context_max:,}" if e.context_max else "")
    trace = f'<a href="/history?{esc(urlencode({"trace": e.trace_id}))}">{esc(e.trace_id)}</a>' if e.trace_id else ""
    rows = [
        ("Agent", f"{esc(e.agent_name)} (pane {pane}, {esc(e.agent_type or 'no agent')})"),
        ("Kind", esc(e.kind)), ("Status", status_badge(e.status)),
        ("Triggered by", esc(f"{e.triggered_by} ({e.principal or '-'})")),
        ("Queued", esc(when_text(e.queued_at))), ("Started", esc(when_text(e.started_at))),
        ("Completed", esc(when_text(e.completed_at))), ("Took", esc(took(e))),
        ("Exit code", esc("" if e.exit_code is None else e.exit_code)),
        ("Tokens", esc("" if e.tokens_used is None else f"{e.tokens_used:,}")), ("Context", esc(context)),
        ("Cost", esc(cost_detail(e) or "unknown")),
        ("Error", esc(f"{e.error.type}: {e.error.message} [{e.error.stack_hash}]" if e.error else "")),
        ("Session", esc(e.session_id or "")), ("Task", esc(e.task_id or "")),
        ("Trace", trace),
        ("Attempt", esc("" if e.attempt is None else e.attempt)), ("Host", esc(e.host or "")),
        ("Sources", esc(", ".join(f"{k}: {v}" for k, v in sorted(e.sources.items())))),
    ]
    parts = [f"<h1>Execution <code>{esc(e.id)}</code></h1>", _fields_table(rows),
             "<h2>Message</h2>", f'<pre class="message">{esc(e.message or "")}</pre>',
             "<h2>Response</h2>",
             f'<pre class="response">{esc(e.response)}</pre>' if e.response else '<p class="empty">None.</p>',
             f"<h2>Tools ({len(e.tool_calls)})</h2>", _items(e.tool_calls, "tools"),
             f"<h2>Files written ({len(e.files_written)})</h2>", _items(e.files_written, "files"),
             "<h2>Transcript</h2>"]
    if transcript:
        cut = " (the start only: the rest passed the cap)" if e.transcript_truncated else ""
        parts.append(f'<p class="note">{e.transcript_bytes:,} bytes of output{esc(cut)}</p>'
                     f'<pre class="transcript">{esc(transcript)}</pre>')
    else:
        parts.append('<p class="empty">No output kept.</p>')
    return "".join(parts)


async def execution(request: Request) -> Response:
    session = require_session(request)
    link = await daemon_link(request)
    reply = await link.call(GetExecution, execution_id=request.path_params["execution_id"], include_transcript=True)
    return HTMLResponse(page(f"Execution {reply.execution.id}",
                             RECORDS_CSS + execution_body(reply.execution, reply.transcript),
                             session, current="/history"))


def patterns_table(patterns: list[ErrorPattern], *, now: float | None = None) -> str:
    """Failures grouped by error pattern, the most frequent first as the daemon orders them."""
    if not patterns:
        return '<p class="empty">No failures.</p>'
    head = "".join(f"<th>{name}</th>" for name in ("Pattern", "Count", "First", "Last", "Type", "Message", "Example"))
    rows = "".join(
        "<tr>" + "".join(f"<td>{cell}</td>" for cell in (
            f"<code>{esc(p.stack_hash)}</code>", esc(p.count), esc(ago(p.first_seen, now)), esc(ago(p.last_seen, now)),
            esc(p.error_type), esc(one_line(p.message, MESSAGE_CELL_CHARS)), execution_link(p.example_id))) + "</tr>"
        for p in patterns)
    return f'<table class="patterns"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>'


def failures_filters(query: Mapping[str, str]) -> str:
    get = lambda name: query.get(name, "")  # noqa: E731
    unique = " checked" if get("unique") else ""
    return ('<form method="get" action="/failures" class="filters">'
            + _text("agent", "Agent", get("agent"), "name or %id") + _text("task", "Task", get("task"), "task id")
            + _text("since", "Since", get("since"), "30m, 2h, 7d or ISO time")
            + f'<label><input type="checkbox" name="unique" value="1"{unique}> one per pattern</label>'
            + '<button type="submit">Filter</button></form>')


async def failures(request: Request) -> Response:
    session = require_session(request)
    query = request.query_params
    value = lambda name: query.get(name, "").strip() or None  # noqa: E731
    reply = await (await daemon_link(request)).call(
        ExecutionFailures, agent_name=value("agent"), task_id=value("task"), since=since_time(value("since")),
        limit=FAILURES_SHOWN, unique_errors=bool(value("unique")))
    body = (RECORDS_CSS + "<h1>Failures</h1>" + failures_filters(query)
            + "<h2>Error patterns</h2>" + patterns_table(reply.patterns)
            + "<h2>Recent failures</h2>" + executions_table(reply.failures))
    return HTMLResponse(page("Failures", body, session, current="/failures"))


ROUTES = [
    Route("/history", history),
    Route("/execution/{execution_id}", execution),
    Route("/failures", failures),
]
