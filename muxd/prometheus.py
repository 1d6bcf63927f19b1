"""Prometheus text exposition (format 0.0.4): families of counters, gauges and histograms, each
with its HELP and TYPE lines once, label values escaped, histograms cumulative in base units.

One writer for every metric muxd serves (tool calls, executions, tasks), so `/metrics`,
`muxd metrics` and `get_tool_metrics(format="prometheus")` follow the same conventions and
`promtool check metrics` has nothing to say about any of them.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

Labels = tuple[tuple[str, str], ...]


@dataclass
class Histogram:
    """Observations against fixed upper `bounds`; `counts[i]` holds those <= bounds[i] and above
    bounds[i-1] (the last slot: above every bound). Cumulative only when rendered."""

    bounds: Sequence[float]
    counts: list[int] = field(default_factory=list)
    total: float = 0.0

    def __post_init__(self) -> None:
        if not self.counts:
            self.counts = [0] * (len(self.bounds) + 1)

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.bounds, value)] += 1
        self.total += value

    @property
    def count(self) -> int:
        return sum(self.counts)

    def cumulative(self) -> list[int]:
        running, out = 0, []
        for count in self.counts:
            running += count
            out.append(running)
        return out


def escape(value: str) -> str:
    """A label value as the text format wants it: backslash, quote and newline escaped."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def number(value: float) -> str:
    """A sample value: integers without a fraction, +Inf/-Inf/NaN spelled as Prometheus does."""
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(round(value, 9))


def _selector(labels: Labels) -> str:
    return "{" + ",".join(f'{k}="{escape(v)}"' for k, v in labels) + "}" if labels else ""


class Exposition:
    """Collects metric families and renders them in order."""

    def __init__(self) -> None:
        self._lines: list[str] = []

    def _family(self, name: str, kind: str, help_text: str) -> None:
        self._lines += [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}"]

    def counter(self, name: str, help_text: str, samples: Mapping[Labels, float] | Iterable[tuple[Labels, float]]) -> None:
        """A counter family; `name` ends in _total, as the convention wants."""
        if not name.endswith("_total"):
            raise ValueError(f"counter {name} must end in _total")
        self._samples(name, "counter", help_text, samples)

    def gauge(self, name: str, help_text: str, samples: Mapping[Labels, float] | Iterable[tuple[Labels, float]]) -> None:
        self._samples(name, "gauge", help_text, samples)

    def _samples(self, name: str, kind: str, help_text: str,
                 samples: Mapping[Labels, float] | Iterable[tuple[Labels, float]]) -> None:
        self._family(name, kind, help_text)
        pairs = samples.items() if isinstance(samples, Mapping) else samples
        self._lines += [f"{name}{_selector(labels)} {number(value)}" for labels, value in pairs]

    def histogram(self, name: str, help_text: str, series: Mapping[Labels, Histogram], *, scale: float = 1.0) -> None:
        """A histogram family; each series' bounds and sum are multiplied by `scale` (0.001 turns
        milliseconds kept in memory into the seconds Prometheus wants)."""
        self._family(name, "histogram", help_text)
        for labels, hist in series.items():
            bounds = [number(round(b * scale, 9)) for b in hist.bounds] + ["+Inf"]
            for bound, count in zip(bounds, hist.cumulative()):
                self._lines.append(f"{name}_bucket{_selector(labels + (('le', bound),))} {count}")
            self._lines.append(f"{name}_sum{_selector(labels)} {number(hist.total * scale)}")
            self._lines.append(f"{name}_count{_selector(labels)} {hist.count}")

    def text(self) -> str:
        return "\n".join(self._lines) + "\n" if self._lines else ""
