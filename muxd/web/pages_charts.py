"""GET /charts: executions, failures, tokens and cost over time, per agent and for the fleet, as
the session's token sees them: one execution-timeline request (the daemon cuts it to the token's
scope), drawn by timeline_charts.py as inline SVG, with each agent's totals as a table."""

from __future__ import annotations

import time
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from muxd.executions.record import KINDS
from muxd.protocol.execution_messages import ExecutionTimeline
from muxd.units import tokens
from muxd.web.html import esc, page
from muxd.web.sessions import daemon_link, require_session
from muxd.web.timeline_charts import MEASURES, Timeline, chart_svg, timeline

PATH = "/charts"
# The windows a page offers: name -> (its length, its bucket), both in seconds. Each starts on a
# bucket of its length, so the daemon reads it from its timeline's tallies (15 minutes, an hour,
# 6 hours, a day), never from its rows.
WINDOWS: dict[str, tuple[int, int]] = {"6h": (6 * 3600, 900), "24h": (86400, 3600), "7d": (7 * 86400, 6 * 3600),
                                       "30d": (30 * 86400, 86400)}
WINDOW_DEFAULT = "24h"
KIND_CHOICES = ("all", *KINDS)


def window_of(name: str, now: float) -> tuple[float, int, int]:
    """(since, bucket_s, buckets) of window `name` ending with the bucket `now` falls in, buckets
    starting on multiples of their length (of whole hours on whole hours: the tallies answer)."""
    length_s, bucket_s = WINDOWS[name]
    count = length_s // bucket_s
    current = now // bucket_s * bucket_s
    return current - (count - 1) * bucket_s, bucket_s, count


def _choices(param: str, options: tuple[str, ...], chosen: str, other: dict[str, str]) -> str:
    links = []
    for option in options:
        current = ' aria-current="true"' if option == chosen else ""
        links.append(f'<a href="{esc(PATH + "?" + urlencode({**other, param: option}))}"{current}>{esc(option)}</a>')
    return f'<span class="choices" data-param="{esc(param)}">{" ".join(links)}</span>'


def _money(value: float, known: bool) -> str:
    return f"${value:.4f}" if known else "—"  # as `muxd stats` prints a sum


def totals_table(data: Timeline, cost_known: set[str]) -> str:
    """Each agent's sums over the window, busiest first."""
    rows = []
    for name, sums in sorted(data.totals.items(), key=lambda item: (-item[1]["executions"], item[0])):
        rows.append(f'<tr><td>{esc(name)}</td><td>{int(sums["executions"])}</td><td>{int(sums["failures"])}</td>'
                    f'<td>{esc(tokens(int(sums["tokens"])))}</td><td>{esc(_money(sums["cost_usd"], name in cost_known))}</td></tr>')
    return ('<table class="totals"><thead><tr><th>Agent</th><th>Executions</th><th>Failures</th><th>Tokens</th>'
            f'<th>Cost</th></tr></thead><tbody>{"".join(rows)}</tbody></table>')


def charts_body(data: Timeline, cost_known: set[str], window: str, kind: str) -> str:
    """The page's body: the window and kind choices, a chart per measure, the totals."""
    choices = (f'<p class="filters">Window: {_choices("window", tuple(WINDOWS), window, {"kind": kind})} · '
               f'Kind: {_choices("kind", KIND_CHOICES, kind, {"window": window})}</p>')
    if not data.totals:
        return f'<h1>Charts</h1>{choices}<p class="empty">No executions in this window.</p>'
    charts = []
    for measure, title in MEASURES:
        svg = chart_svg(data, measure, title)
        charts.append(f'<figure class="chart" id="chart-{measure}">{svg}</figure>' if svg else
                      f'<p class="empty" id="chart-{measure}">{esc(title)}: none in this window.</p>')
    note = ('<p class="note">Tokens are the history\'s one count per execution (input and output together); '
            'cost sums the executions whose cost is known.</p>')
    return f'<h1>Charts</h1>{choices}{"".join(charts)}{note}{totals_table(data, cost_known)}'


async def charts(request: Request) -> Response:
    client = await daemon_link(request)
    session = require_session(request)
    window = request.query_params.get("window", WINDOW_DEFAULT)
    window = window if window in WINDOWS else WINDOW_DEFAULT
    kind = request.query_params.get("kind", "all")
    kind = kind if kind in KIND_CHOICES else "all"
    since, bucket_s, count = window_of(window, time.time())
    reply = await client.call(ExecutionTimeline, since=since, bucket_s=bucket_s)
    chosen = [b for b in reply.buckets if kind == "all" or b.kind == kind]
    data = timeline(chosen, since, bucket_s, count)
    cost_known = {b.agent_name for b in chosen if b.cost_usd is not None}
    return HTMLResponse(page("Charts", charts_body(data, cost_known, window, kind), session, current=PATH))


ROUTES: list[Route] = [Route(PATH, charts, methods=["GET"])]
