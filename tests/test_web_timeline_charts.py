"""timeline_charts.py: the timeline's buckets as lines (zero-filled, the busiest agents by name,
the rest as one line, the fleet's sum) and as SVG safe inline under the web view's CSP."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from muxd.store.execution_store import TimeBucket
from muxd.web.timeline_charts import AGENT_SERIES_MAX, FLEET, OTHERS, chart_svg, timeline

HOUR = 3600
SVG = "{http://www.w3.org/2000/svg}"


def _bucket(agent: str, index: int, n: int, **kw: object) -> TimeBucket:
    return TimeBucket(agent_name=agent, start=index * HOUR, executions=n, **kw)  # type: ignore[arg-type]


def test_lines_are_zero_filled_and_the_fleet_sums_them() -> None:
    data = timeline([_bucket("a", 0, 2, failures=1, tokens=50, cost_usd=0.5), _bucket("b", 2, 3, tokens=7),
                     _bucket("a", 2, 1, kind="command"), _bucket("late", 9, 4)], 0, HOUR, 4)
    assert data.lines["executions"] == {"b": [0, 0, 3, 0], "a": [2, 0, 1, 0], FLEET: [2, 0, 4, 0]}
    assert data.lines["failures"][FLEET] == [1, 0, 0, 0] and data.lines["tokens"]["b"] == [0, 0, 7, 0]
    assert data.lines["cost_usd"]["a"] == [0.5, 0, 0, 0]  # an unknown cost adds nothing
    assert data.totals["a"]["executions"] == 3 and "late" not in data.totals  # outside the window
    prompts = timeline([_bucket("a", 0, 2), _bucket("a", 1, 5, kind="command")], 0, HOUR, 2, kind="prompt")
    assert prompts.lines["executions"]["a"] == [2, 0]


def test_agents_past_the_busiest_share_one_line() -> None:
    many = [_bucket(f"agent-{n:02d}", 0, n + 1) for n in range(AGENT_SERIES_MAX + 3)]
    lines = timeline(many, 0, HOUR, 2).lines["executions"]
    assert len(lines) == AGENT_SERIES_MAX + 2 and OTHERS in lines and "agent-00" not in lines
    assert lines[OTHERS][0] == 1 + 2 + 3 and lines[FLEET][0] == sum(n + 1 for n in range(len(many)))
    one_more = timeline(many[:AGENT_SERIES_MAX + 1], 0, HOUR, 2).lines["executions"]
    assert OTHERS not in one_more  # a line of one agent is drawn under its own name


def test_the_svg_names_every_line_escapes_names_and_has_no_style_or_script() -> None:
    hostile = '<script>alert("x")</script>&'
    data = timeline([_bucket(hostile, 0, 2), _bucket("b", 1, 1)], 0, HOUR, 3)
    svg = chart_svg(data, "executions", "Executions")
    root = ET.fromstring(svg)  # well-formed XML
    series = [p.get("data-series") for p in root.iter(f"{SVG}path")]
    assert series == [hostile, "b", FLEET]
    assert "<script" not in svg and "&lt;script&gt;" in svg
    # The CSP (style-src 'self', script-src 'self') would block these inline: the chart has none.
    assert not re.search(r"<style|\sstyle=|\son\w+=|javascript:", svg)
    assert root.get("viewBox") and root.find(f"{SVG}title") is not None
    assert chart_svg(data, "cost_usd", "Cost") == ""  # nothing to draw


def test_a_window_ends_with_the_current_bucket_and_each_is_one_of_the_tallied_spans() -> None:
    from muxd.store import execution_timeline
    from muxd.store.execution_store import ExecutionQuery
    from muxd.web.pages_charts import WINDOWS, window_of

    now = 1_800_000_123.4
    for name, (length_s, bucket_s) in WINDOWS.items():
        since, bucket, count = window_of(name, now)
        assert (bucket, count * bucket) == (bucket_s, length_s)
        assert since <= now < since + count * bucket and since % bucket == 0
        # each window is the timeline's tallies of its bucket's span: the daemon reads no row
        assert execution_timeline.tallied_span(ExecutionQuery(since=since), bucket, by_host=False) == bucket


def test_an_empty_window_says_so_and_the_choices_keep_the_other_choice() -> None:
    from muxd.web.pages_charts import charts_body

    body = charts_body(timeline([], 0, HOUR, 24), set(), "7d", "prompt")
    assert "No executions in this window." in body and "<svg" not in body
    assert 'href="/charts?kind=prompt&amp;window=24h"' in body and 'href="/charts?window=7d&amp;kind=command"' in body
