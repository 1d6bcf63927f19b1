"""`ManifestDetector`: a Detector run from an agent manifest (muxd/detectors/manifest.py).

It claims the agent by its process first (1.0), else by the strongest screen signature in its
region (never with a shell, a pager or an editor in front, as the Python CLI detectors); it
reads a frame by trying the manifest's rules in order, and says Unknown where none matches:
Idle only ever comes from a rule that saw the agent's own prompt. Every match of a row is
remembered by the row's text, so a frame that repeats rows costs dictionary lookups.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from msgspec.structs import replace
from re2 import _re2

from muxd.detectors._agent_cli import agent_confidence, error_kind, is_shell_prompt, last_non_empty
from muxd.detectors._text import LineMemo, join_input_rows, parse_count, parse_duration, stripped_rows
from muxd.detectors.base import ScreenContext
from muxd.detectors.manifest import PATTERN_SET_MEMORY_BYTES, Manifest, Pattern, Rule, pattern_options
from muxd.detectors.reset_time import reset_at
from muxd.detectors.state import (
    LIMIT_KINDS, AgentError, AgentState, Confirmation, Detection, ToolSighting, UsageLimit,
)
from muxd.errors import BadManifest

Groups = dict[str, Any]
_UNANCHORED = _re2.RE2.Anchor.UNANCHORED
_ANCHOR_START = _re2.RE2.Anchor.ANCHOR_START
# Where each group's value goes in a Detection, and the provenance field it is (provenance.FIELDS).
_PROVENANCE_FIELD = {"model": "model", "session_id": "session_id", "tokens": "tokens_used",
                     "cost_usd": "cost_usd", "context_left_pct": "context_left_pct",
                     "context_used_pct": "context_left_pct", "tool": "tool", "error": "error"}


class RowPatterns:
    """Every pattern of a manifest tried on a row in one pass (an RE2 set): which of them
    match a row is worked out once per distinct row text; a pattern's groups are read only on
    the rows it matches."""

    def __init__(self, manifest: Manifest) -> None:
        self._ids: dict[str, int] = {}
        self._set = _re2.Set(_UNANCHORED, pattern_options(PATTERN_SET_MEMORY_BYTES))
        for pattern in manifest.patterns():
            if pattern.source not in self._ids:
                self._ids[pattern.source] = self._set.Add(pattern.source.encode())
        if not self._set.Compile():
            raise BadManifest(f"{manifest.path}:1: its patterns are too many or too large to match together",
                              path=manifest.path, line=1)
        match = self._set.Match
        self._matched = LineMemo(lambda line: frozenset(match(line.encode())))

    def matches(self, pattern: Pattern) -> Callable[[str], bool]:
        """Row text -> whether `pattern` matches the row."""
        wanted, matched = self._ids[pattern.source], self._matched
        return lambda line: wanted in matched[line]

    def groups(self, pattern: Pattern) -> Callable[[str], Groups | None]:
        """Row text -> the named groups `pattern` captures in the row (unmatched ones left out),
        or None where it does not match."""
        wanted, matched = self._ids[pattern.source], self._matched
        regex = pattern.regex._regexp  # the engine itself: the wrapper would map every offset to str
        names = tuple(pattern.regex.groupindex.items())

        def read(line: str) -> Groups:
            text = line.encode()
            spans = regex.Match(_UNANCHORED, text, 0, len(text))
            return {name: text[spans[index][0]:spans[index][1]].decode() for name, index in names
                    if spans[index][0] >= 0}
        read_once = LineMemo(read)
        return lambda line: read_once[line] if wanted in matched[line] else None

    def starts(self, pattern: Pattern) -> Callable[[str], int | None]:
        """Row text -> where `pattern`'s match at the row's start ends (in characters), or None."""
        wanted, matched = self._ids[pattern.source], self._matched
        regex = pattern.regex._regexp

        def end(line: str) -> int | None:
            text = line.encode()
            span = regex.Match(_ANCHOR_START, text, 0, len(text))[0]
            return None if span[0] < 0 else len(text[:span[1]].decode())
        end_once = LineMemo(end)
        return lambda line: end_once[line] if wanted in matched[line] else None


def region_rows(lines: list[str], last: int | None) -> list[str]:
    """The rows of a region: every row (`last` None), or the last `last` non-blank rows."""
    if last is None:
        return lines
    rows: list[str] = []
    for index in range(len(lines) - 1, -1, -1):  # from the bottom: the rows above are not read
        line = lines[index]
        if line.strip():
            rows.append(line)
            if len(rows) == last:
                break
    rows.reverse()
    return rows


class ManifestDetector:
    """The Detector a manifest describes; `manifest` says where it came from (`manifest.path`).
    BadManifest if RE2 cannot hold all its patterns at once."""

    def __init__(self, manifest: Manifest) -> None:
        self.name = manifest.name
        self.manifest = manifest
        self.submit_uptake_s = manifest.submit_uptake_s  # read by the runner (submit_uptake.py)
        rows = RowPatterns(manifest)
        by_region: dict[str, list[tuple[Callable[[str], bool], float]]] = {}
        for signature in manifest.signatures:
            by_region.setdefault(signature.region or manifest.identify_region, []).append(
                (rows.matches(signature.pattern), signature.weight))
        # each region's signatures, and the strongest of them on a row, by the row's text
        self._signatures = [(region, LineMemo(functools.partial(_row_weight, found)))
                            for region, found in by_region.items()]
        self._exit_rows = [rows.matches(p) for p in manifest.exit_signatures]
        self._foreign_rows = [rows.matches(p) for p in manifest.foreign_signatures]
        self._fields = [(field, rows.groups(field.pattern)) for field in manifest.fields]
        # Exited rules first: they are also read once the process has ended (manifest.py says so)
        ordered = sorted(manifest.rules, key=lambda rule: rule.state != "Exited")
        self._rules = [_RuleReading(rule, rows.groups(rule.pattern), [rows.matches(p) for p in rule.unless_below],
                                    [(check.region, rows.matches(check.pattern)) for check in rule.requires],
                                    None if rule.block_above is None else rows.matches(rule.block_above))
                       for rule in ordered]
        self._exit_rules = [reading for reading in self._rules if reading.rule.state == "Exited"]
        self._options = {rule.name: rows.groups(rule.option_pattern) for rule in manifest.rules
                         if rule.option_pattern is not None}
        self._tools = {rule.name: [(tool, rows.groups(tool.pattern)) for tool in rule.tools]
                       for rule in manifest.rules if rule.tools}
        self._tool_lines = [(line.region, rows.groups(line.pattern)) for line in manifest.tool_lines]
        box = manifest.input
        self._box = None if box is None else (rows.matches(box.above), rows.starts(box.row),
                                              None if box.placeholder is None else rows.matches(box.placeholder))

    def identify(self, ctx: ScreenContext) -> float:
        m = self.manifest
        return agent_confidence(ctx, m.process_names, m.argv_contains, self._screen_score, self._exit_screen)

    def _screen_score(self, lines: list[str]) -> float:
        regions = self.manifest.regions
        if self._foreign_rows and any(foreign(line) for line in region_rows(lines, regions[self.manifest.identify_region])
                                      for foreign in self._foreign_rows):
            return 0.0  # another agent's own words (a fork's): its screen, whatever else looks like ours
        return max([weights[line] for region, weights in self._signatures
                    for line in region_rows(lines, regions[region])], default=0.0)

    def _exit_screen(self, lines: list[str]) -> bool:
        return any(matches(line) for matches in self._exit_rows for line in lines if line)

    def detect(self, ctx: ScreenContext, prev: AgentState | None) -> Detection:
        m = self.manifest
        if ctx.exited and not self._exit_rules:
            return Detection(agent_type=self.name, state="Exited", rule="pane-exited")
        lines: list[str] = stripped_rows(ctx.lines)
        last = last_non_empty(lines)
        cache: dict[str, list[str]] = {}

        def rows_of(region: str) -> list[str]:
            rows = cache.get(region)
            if rows is None:
                rows = cache[region] = region_rows(lines, m.regions[region])
            return rows
        shell_back = m.exit_on_shell_prompt and last is not None and is_shell_prompt(last[1])
        if ctx.exited or shell_back:
            for reading in self._exit_rules:
                found = self._match(reading, rows_of)
                if found is not None:
                    return self._detection(reading.rule, rows_of(reading.rule.region), found[0], found[1], {}, ctx,
                                           rows_of)
            if ctx.exited:
                return Detection(agent_type=self.name, state="Exited", rule="pane-exited")
            return Detection(agent_type=self.name, state="Exited", rule="shell-prompt",
                             line=last[1].strip() if last else None)
        values: Groups = {}
        field_rules: dict[str, str] = {}
        for field, groups_of in self._fields:
            found = _find(rows_of(field.region), groups_of, field.search, ())
            if found is not None:
                for key, value in found[1].items():
                    if key not in values and not key.startswith("_"):
                        values[key] = value
                        field_rules[_PROVENANCE_FIELD.get(key, key)] = field.name
        for reading in self._rules:
            found = self._match(reading, rows_of)
            if found is None:
                continue
            rule, rows = reading.rule, rows_of(reading.rule.region)
            index, groups = found
            for key in groups:
                field_rules.pop(_PROVENANCE_FIELD.get(key, key), None)  # the rule's own reading wins
            found = self._detection(rule, rows, index, {**values, **groups}, field_rules, ctx, rows_of)
            return replace(found, tools_seen=self._tools_seen(rows_of)) if self._tool_lines else found
        return Detection(agent_type=self.name, state="Unknown", rule=m.unknown_rule,
                         line=last[1].strip() if last else None, field_rules=field_rules,
                         tools_seen=self._tools_seen(rows_of), **_session(values))

    @staticmethod
    def _match(reading: _RuleReading, rows_of: Callable[[str], list[str]]) -> tuple[int, Groups] | None:
        """(row index, groups) where the rule matches in its region, or None."""
        if not all(any(matches(row) for row in rows_of(region)) for region, matches in reading.requires):
            return None
        rows = rows_of(reading.rule.region)
        before = reading.block_above
        return _find(rows, reading.groups_of, reading.rule.search, reading.unless_below,
                     None if before is None else lambda index: before(_row_above_block(rows, index)))

    def _tools_seen(self, rows_of: Callable[[str], list[str]]) -> list[ToolSighting]:
        """The tool uses the screen shows, top to bottom (a row each)."""
        seen: list[ToolSighting] = []
        for region, groups_of in self._tool_lines:
            for row in rows_of(region):
                found = groups_of(row)
                if found and found.get("tool"):
                    seen.append(ToolSighting(found["tool"], row.strip()))
        return seen

    def _detection(self, rule: Rule, rows: list[str], index: int, values: Groups, field_rules: dict[str, str],
                   ctx: ScreenContext, rows_of: Callable[[str], list[str]]) -> Detection:
        tool = values.get("tool") or self._tool(rule, rows, index)
        confirmation = None
        if rule.state == "AwaitingConfirmation":
            prompt = rule.prompt or values.get("prompt") or rows[index].strip()
            confirmation = Confirmation(prompt=prompt.strip(), options=self._shown_options(rule, rows, index))
        message = (values.get("error") or "").strip()
        limit = None
        if rule.state == "UsageLimited":  # the limit in the agent's words, and the reset they name
            message = message or rows[index].strip()
            limit = UsageLimit(message=message, resets_at=reset_at(message, ctx.now))
        kind = error_kind(message)
        if rule.state == "UsageLimited" and kind not in LIMIT_KINDS:
            kind = "usage_limit"
        error = None if not message else AgentError(type=rule.error_type or kind, message=message)
        draft = self._draft(rows_of(self.manifest.input.region), ctx.columns) if (
            rule.input and self.manifest.input is not None) else None
        description = values.get("description")
        return Detection(agent_type=self.name, state=rule.state, rule=rule.name,  # type: ignore[arg-type]
                         line=rows[index].strip(), description=description.strip() if description else None,
                         elapsed_s=_seconds(values.get("elapsed")), tool=tool, confirmation=confirmation,
                         error=error, limit=limit, input_text=draft, field_rules=field_rules, **_session(values))

    def _shown_options(self, rule: Rule, rows: list[str], index: int) -> list[str]:
        below = rows[index:]
        options = [option for option in rule.options if any(option in row for row in below)]
        collect = self._options.get(rule.name)
        if collect is not None:
            for row in below:
                found = collect(row)
                if found and found.get("option"):
                    options.append(found["option"].strip())
        return options

    def _tool(self, rule: Rule, rows: list[str], index: int) -> str | None:
        for row in rows[index + 1:index + 1 + rule.tool_rows]:
            for tool, groups_of in self._tools.get(rule.name, ()):
                found = groups_of(row)
                if found is None:
                    continue
                name = tool.tool or found.get("tool")
                if name:
                    return name.lower() if tool.lower else name
        return None

    def _draft(self, rows: list[str], columns: int) -> str | None:
        """The text typed in the input box: the box rows right above its `above` row, their
        start taken off; None when it is empty or shows its placeholder."""
        assert self._box is not None and self.manifest.input is not None
        above, row_start, placeholder = self._box
        anchor = next((index for index, row in enumerate(rows) if above(row)), None)
        if anchor is None:
            return None
        texts: list[str] = []
        for row in reversed(rows[:anchor]):
            end = row_start(row)
            if end is None:
                break
            texts.insert(0, row[end:])
        text = join_input_rows(texts, columns - self.manifest.input.margin_columns)
        return None if text is None or (placeholder is not None and placeholder(text)) else text


@dataclass(frozen=True)
class _RuleReading:
    """A rule with its patterns' matchers."""

    rule: Rule
    groups_of: Callable[[str], Groups | None]
    unless_below: list[Callable[[str], bool]]
    requires: list[tuple[str, Callable[[str], bool]]]  # (region, matcher)
    block_above: Callable[[str], bool] | None


def _row_weight(signatures: list[tuple[Callable[[str], bool], float]], line: str) -> float:
    return max((weight for matches, weight in signatures if matches(line)), default=0.0)


def _row_above_block(rows: Sequence[str], index: int) -> str:
    """The nearest non-blank row above the run of non-blank rows holding row `index`, or ""."""
    while index > 0 and rows[index - 1].strip():
        index -= 1
    return next((rows[i] for i in range(index - 1, -1, -1) if rows[i].strip()), "")


def _find(rows: Sequence[str], groups_of: Callable[[str], Groups | None], search: str,
          unless_below: Sequence[Callable[[str], bool]],
          accept: Callable[[int], bool] | None = None) -> tuple[int, Groups] | None:
    """(row index, groups) of the row that matches, the first or the last one; a match with
    a row below it that one of `unless_below` matches, or that `accept` refuses, does not count."""
    indexes = range(len(rows)) if search == "first" else range(len(rows) - 1, -1, -1)
    for index in indexes:
        groups = groups_of(rows[index])
        if groups is None:
            continue
        if unless_below and any(stale(row) for row in rows[index + 1:] for stale in unless_below):
            continue
        if accept is not None and not accept(index):
            continue
        return index, groups
    return None


def _number(text: str | None) -> float | None:
    if not text:
        return None
    try:
        return float(text.strip().lstrip("$").replace(",", ""))
    except ValueError:
        return None


def _seconds(text: str | None) -> int | None:
    if not text:
        return None
    text = text.strip()
    return int(text) if text.isdigit() else parse_duration(text)


def _session(values: Groups) -> dict[str, Any]:
    """The Detection's session fields from a match's groups (a number that does not read is left out)."""
    used = _number(values.get("context_used_pct"))
    left = _number(values.get("context_left_pct"))
    tokens = values.get("tokens")
    return {"model": (values.get("model") or "").strip() or None,
            "session_id": (values.get("session_id") or "").strip() or None,
            "tokens": parse_count(tokens) if tokens else None, "cost_usd": _number(values.get("cost_usd")),
            "context_left_pct": left if left is not None else (None if used is None else 100.0 - used)}
