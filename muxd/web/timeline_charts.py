"""The history over time as charts (GET /charts): a daemon's timeline buckets (execution-timeline)
made into one series per agent and the fleet's, for each measure, and each drawn as SVG by
leather, a charting library that writes plain SVG elements with presentation attributes and no
<style> or script, so a chart sits inline in a page under the CSP's `style-src 'self'`.

Pure: buckets in, text out. Every name leather writes goes through ElementTree, which escapes it.
"""

from __future__ import annotations

import datetime as dt
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import leather

from muxd.store.execution_store import TimeBucket

# The measures a chart is drawn of: (TimeBucket field, title).
MEASURES: tuple[tuple[str, str], ...] = (("executions", "Executions"), ("failures", "Failures"),
                                         ("tokens", "Tokens"), ("cost_usd", "Cost (USD)"))
AGENT_SERIES_MAX = 8                   # busiest agents drawn by name; the rest as one "other agents" line
FLEET = "fleet"                        # the line of every agent summed
OTHERS = "other agents"
CHART_WIDTH, CHART_HEIGHT = 900, 320   # SVG user units; the page scales them to its width
# Colour-blind-safe (Okabe–Ito, then grey for the rest), on the page's dark cards; the fleet is
# the page's text colour, dashed.
COLOURS = ("#56b4e9", "#e69f00", "#009e73", "#cc79a7", "#0072b2", "#d55e00", "#f0e442", "#8c564b", "#999999")
FLEET_COLOUR, FLEET_DASH = "#e6e6e6", "6 3"
# leather's documented theme (module variables): the web view's colours (static/style.css) and font.
_THEME = {"background_color": "#1b1f24", "title_color": "#e6e6e6", "legend_color": "#e6e6e6",
          "axis_title_color": "#9aa0a6", "label_color": "#9aa0a6", "tick_color": "#2b3138", "zero_color": "#444c56",
          **{f"{part}_font_family": "system-ui, sans-serif" for part in ("title", "legend", "axis_title", "tick")}}
for _name, _value in _THEME.items():
    setattr(leather.theme, _name, _value)


@dataclass
class Timeline:
    """Each measure's values per line (agents, "other agents", the fleet), one per bucket from `since`."""

    since: float
    bucket_s: int
    count: int
    lines: dict[str, dict[str, list[float]]] = field(default_factory=dict)  # measure -> line -> values
    totals: dict[str, dict[str, float]] = field(default_factory=dict)       # agent -> measure -> window's sum

    def starts(self) -> list[dt.datetime]:
        """Each bucket's start, in UTC (naive: leather compares naive datetimes)."""
        return [dt.datetime.fromtimestamp(self.since + i * self.bucket_s, dt.timezone.utc).replace(tzinfo=None)
                for i in range(self.count)]


def _value(bucket: TimeBucket, measure: str) -> float:
    value = getattr(bucket, measure)
    return 0.0 if value is None else float(value)


def timeline(buckets: Iterable[TimeBucket], since: float, bucket_s: int, count: int, *,
             kind: str | None = None) -> Timeline:
    """The lines of `count` buckets of `bucket_s` from `since`: each agent's (the busiest
    AGENT_SERIES_MAX by executions, the rest summed as OTHERS), and the fleet's; a bucket with no
    execution is 0. `kind`: only executions of that kind (record.KINDS); None: every kind."""
    def index(b: TimeBucket) -> int:
        return int((b.start - since) // bucket_s)

    # A bucket past the window (a host's clock ahead of this one's) is left out, as one before it.
    chosen = [b for b in buckets if (kind is None or b.kind == kind) and 0 <= index(b) < count]
    totals: dict[str, dict[str, float]] = {}
    for b in chosen:
        agent = totals.setdefault(b.agent_name, {measure: 0.0 for measure, _ in MEASURES})
        for measure, _ in MEASURES:
            agent[measure] += _value(b, measure)
    busiest = sorted(totals, key=lambda name: (-totals[name]["executions"], name))
    named = set(busiest[:AGENT_SERIES_MAX]) if len(busiest) > AGENT_SERIES_MAX + 1 else set(busiest)
    order = [name for name in busiest if name in named] + ([OTHERS] if len(named) < len(busiest) else [])
    result = Timeline(since=since, bucket_s=bucket_s, count=count, totals=totals)
    for measure, _ in MEASURES:
        lines = {name: [0.0] * count for name in [*order, FLEET]}
        for b in chosen:
            value = _value(b, measure)
            lines[b.agent_name if b.agent_name in named else OTHERS][index(b)] += value
            lines[FLEET][index(b)] += value
        result.lines[measure] = lines
    return result


def _tick(starts: list[dt.datetime], bucket_s: int) -> Callable[[dt.datetime, int, int], str]:
    """leather's tick formatter: times of day within a day or two, else dates."""
    span_s = (starts[-1] - starts[0]).total_seconds() if starts else 0
    pattern = "%H:%M" if span_s <= 2 * 86400 and bucket_s < 86400 else "%m-%d"

    def formatted(value: dt.datetime, index: int, count: int) -> str:
        return value.strftime(pattern)

    return formatted


def chart_svg(data: Timeline, measure: str, title: str) -> str:
    """One measure's chart as an inline <svg> (a viewBox, so the page may scale it), its lines
    named in the legend and in a <title> each; "" when every value is 0 (nothing to draw)."""
    lines = data.lines[measure]
    if not any(any(values) for values in lines.values()) or data.count < 2:
        return ""
    starts = data.starts()
    chart = leather.Chart(title)
    chart.add_x_axis(tick_formatter=_tick(starts, data.bucket_s), name="UTC")
    for n, (name, values) in enumerate(lines.items()):
        points = list(zip(starts, values))
        if name == FLEET:
            chart.add_line(points, name=name, stroke_color=FLEET_COLOUR, stroke_dasharray=FLEET_DASH)
        else:
            chart.add_line(points, name=name, stroke_color=COLOURS[min(n, len(COLOURS) - 1)])
    root = ET.Element("svg", {"xmlns": "http://www.w3.org/2000/svg", "viewBox": f"0 0 {CHART_WIDTH} {CHART_HEIGHT}",
                              "role": "img", "class": "chart", "data-measure": measure})
    ET.SubElement(root, "title").text = f"{title} per {_bucket_words(data.bucket_s)}, by agent and for the fleet"
    group = chart.to_svg_group(CHART_WIDTH, CHART_HEIGHT)
    # Each line says whose it is (a browser shows it on hover; a test or a reader finds it).
    paths = [el for el in group.iter("path")]
    for path, name in zip(paths, lines):
        path.set("data-series", name)
        ET.SubElement(path, "title").text = name
    root.append(group)
    return ET.tostring(root, encoding="unicode")


def _bucket_words(bucket_s: int) -> str:
    for size, word in ((86400, "day"), (3600, "hour"), (60, "minute")):
        if bucket_s % size == 0:
            count = bucket_s // size
            return word if count == 1 else f"{count} {word}s"
    return f"{bucket_s} s"
