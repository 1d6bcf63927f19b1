"""Agent manifests: a TOML file that says how to recognise an agent and read its states, so a
user adds an agent without writing Python (muxd/detectors/manifest_detector.py runs one). They
are read from muxd/detectors/manifests/ and then $XDG_CONFIG_HOME/muxd/agents/ (registry.py);
one that cannot be used is a BadManifest naming its file and line, and the others still load.

A manifest, format 1 (every pattern is an RE2 regex, searched in one screen row at a time:
linear time whatever it is, so no manifest can blow a pane's detection budget)::

    name = "mini"                      # the agent type muxd reports: [a-z0-9][a-z0-9_-]*
    format = 1                         # optional
    exit_on_shell_prompt = true        # a bare shell prompt as the last row: Exited (default)
    unknown_rule = "no-match"          # the rule named when no rule matches (the state: Unknown)
    submit_uptake_s = 3.0              # after Enter, an Idle reads Unknown until the screen changes
                                       # state, this long at most (default 0: off; submit_uptake.py)

    [identify]                         # how muxd tells the agent runs in a pane
    process_names = ["mini"]           # the foreground process, argv[0]'s name, or a launcher's script
    argv_contains = ["mini-agent/"]    # text inside an argument of the foreground command
    region = "bottom"                  # where the signatures are looked for (default "screen")
    signatures = [{ pattern = 'esc to stop', weight = 0.7 }]  # weight: confidence 0..1 (0.5 claims);
                                       # a signature may name its own `region`
    exit_signatures = ['^Bye from mini']  # what it leaves above the shell prompt when it quits
    foreign_signatures = ['^fork>']    # rows only another agent draws (a fork's words): not ours

    [regions]                          # "screen" (every row) is always there
    bottom = { last = 8 }              # the last 8 non-blank rows

    [[fields]]                         # read on every frame, whatever the state (first match wins)
    name = "model-row"
    region = "bottom"
    pattern = 'model (?P<model>\\S+)'

    [[rules]]                          # in order: the first rule whose pattern matches decides
    name = "approval"
    state = "AwaitingConfirmation"
    region = "bottom"
    pattern = '^Run (?P<tool>\\w+)\\?'
    search = "last"                    # the row nearest the bottom (default), or "first"
    unless_below = ['^mini>']          # a row below that matches one of these: old text, no match
    prompt = "Run the command?"        # the question (else the `prompt` group, else the row)
    options = ["Yes", "No"]            # kept where shown on the matched row or below it
    option_pattern = '^\\s*\\d\\. (?P<option>.+)'   # or collected from the rows below
    tools = [{ pattern = '^\\s*\\$ ', tool = "bash" }]  # the tool, from the rows under the match
    tool_rows = 2
    requires = [{ region = "bottom", pattern = 'esc to stop' }]  # rows that must be shown too
    block_above = '^mini>|^$'          # the nearest row above the matched row's block

`requires` lists rows the rule needs beside its own: each pattern must match a row of its region
(the rule's own if it names none). `block_above` is tried on the nearest non-blank row above the
block (the run of non-blank rows) that holds the matched row, or on "" where there is none: it
says what comes just before, as a conversation's last message above an input box; it is meant for
the "screen" region (a `last` region has no blank rows, so it is all one block).
A rule whose state is Exited is tried first, even once the agent's process has ended or a shell
prompt is back: it reads what the agent left (a `session_id` in a resume command).

`[[tool_lines]]` (`region`, `pattern` with a `tool` group) are the rows that each show one use
of a tool, as the conversation keeps them (`✓ bash: ls`): each is counted once in recent_tools
however many frames show it.

`[confirm]` gives the keys that answer its confirmations (`yes = ["1", "Enter"]`, `no =
["Escape"]`, as send-keys names them): what `muxd top`'s y and n press.

An `Idle` (or `AwaitingInput`) rule with `input = true` reads the text typed in the input box
described by `[input]` (`region`, `above`: the row the box sits on; `row`: the start of each
box row, taken off; `placeholder`; `margin_columns`). States a rule may give: Idle, Thinking,
Generating, ToolUse, AwaitingConfirmation, AwaitingInput, UsageLimited, Exited, Unknown. A
frame no rule matches is Unknown: muxd never guesses Idle.

Named groups a pattern may capture: description, elapsed ("12s", "1m 5s" or seconds), tokens
("4.8k"), model, session_id, cost_usd, context_left_pct, context_used_pct, tool, prompt, error
(an error message: its kind is worked out from its words unless the rule says `error_type`;
a UsageLimited rule's is the limit's words, else its row, with the reset they name),
option (in `option_pattern`); a group whose name starts with `_` is the pattern's own.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import re2

from muxd.detectors._agent_cli import is_launcher
from muxd.detectors._toml_lines import KeyPath, line_of
from muxd.detectors.shell_names import SHELLS
from muxd.detectors.submit_uptake import SUBMIT_UPTAKE_MAX_S
from muxd.errors import BadManifest

FORMAT = 1
RULE_STATES = frozenset({"Idle", "Thinking", "Generating", "ToolUse", "AwaitingConfirmation", "AwaitingInput",
                         "UsageLimited", "Exited", "Unknown"})
FIELD_GROUPS = frozenset({"description", "elapsed", "tokens", "model", "session_id", "cost_usd",
                          "context_left_pct", "context_used_pct", "tool", "prompt", "error"})
SCREEN_REGION = "screen"
# A compiled pattern's RE2 program may have at most this many steps: each is a cost per row.
PATTERN_PROGRAM_MAX = 5000
PATTERN_MEMORY_BYTES = 1 << 20
# All of a manifest's patterns matched together (manifest_detector.RowPatterns): RE2's own default,
# so its DFA never runs short on a row (it would then miss matches, not fail).
PATTERN_SET_MEMORY_BYTES = 8 << 20
PATTERN_MAX_CHARS = 1000
PATTERNS_MAX = 200  # different patterns in one manifest (all are tried on each new row, as one RE2 set)
REGION_ROWS_MAX = 500
TOOL_ROWS_MAX = 20
MANIFEST_MAX_BYTES = 256 * 1024
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")
_TOML_LINE = re.compile(r"\(at line (\d+), column \d+\)$")


@dataclass(frozen=True)
class Pattern:
    source: str
    regex: Any  # a compiled re2 pattern: search(line) -> match with groupdict()
    groups: frozenset[str]


@dataclass(frozen=True)
class Signature:
    pattern: Pattern
    weight: float
    region: str | None = None  # None: [identify]'s region


@dataclass(frozen=True)
class RowCheck:
    """A row that must be shown in `region` beside a rule's own (`requires`)."""

    region: str
    pattern: Pattern


@dataclass(frozen=True)
class ToolPattern:
    pattern: Pattern
    tool: str | None  # the tool named outright, else the pattern's `tool` group
    lower: bool


@dataclass(frozen=True)
class FieldRule:
    name: str
    region: str
    pattern: Pattern
    search: str


@dataclass(frozen=True)
class ToolLine:
    """A row that shows one use of a tool (its `tool` group): each counted once in recent_tools."""

    region: str
    pattern: Pattern


@dataclass(frozen=True)
class Rule:
    name: str
    state: str
    region: str
    pattern: Pattern
    search: str = "last"
    unless_below: tuple[Pattern, ...] = ()
    prompt: str | None = None
    options: tuple[str, ...] = ()
    option_pattern: Pattern | None = None
    tools: tuple[ToolPattern, ...] = ()
    tool_rows: int = 2
    error_type: str | None = None
    input: bool = False
    requires: tuple[RowCheck, ...] = ()
    block_above: Pattern | None = None


@dataclass(frozen=True)
class InputBox:
    region: str
    above: Pattern
    row: Pattern
    placeholder: Pattern | None
    margin_columns: int


@dataclass(frozen=True)
class Manifest:
    name: str
    path: str
    process_names: frozenset[str]
    argv_contains: tuple[str, ...]
    identify_region: str
    signatures: tuple[Signature, ...]
    exit_signatures: tuple[Pattern, ...]
    regions: Mapping[str, int | None]  # name -> the last N non-blank rows (None: every row)
    fields: tuple[FieldRule, ...]
    rules: tuple[Rule, ...]
    input: InputBox | None
    exit_on_shell_prompt: bool
    unknown_rule: str
    confirm_keys: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # "yes"/"no" -> send-keys keys
    tool_lines: tuple[ToolLine, ...] = ()
    foreign_signatures: tuple[Pattern, ...] = ()  # in the identify region: the screen is another's
    submit_uptake_s: float = 0.0

    def patterns(self) -> list[Pattern]:
        """Every pattern the manifest holds."""
        found = [s.pattern for s in self.signatures] + list(self.exit_signatures) + [f.pattern for f in self.fields]
        found += list(self.foreign_signatures)
        found += [line.pattern for line in self.tool_lines]
        for rule in self.rules:
            found += [rule.pattern, *rule.unless_below, *(t.pattern for t in rule.tools)]
            found += [rule.option_pattern] if rule.option_pattern is not None else []
            found += [check.pattern for check in rule.requires]
            found += [rule.block_above] if rule.block_above is not None else []
        box = self.input
        if box is not None:
            found += [box.above, box.row] + ([box.placeholder] if box.placeholder is not None else [])
        return found


def pattern_options(max_mem_bytes: int = PATTERN_MEMORY_BYTES) -> Any:
    """RE2's options for a manifest's patterns: memory capped, refusals not printed to stderr."""
    options = re2.Options()
    options.max_mem = max_mem_bytes
    options.log_errors = False
    return options


class _Reader:
    """Reads one manifest's parsed tables, raising BadManifest at the line of what is wrong."""

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.text = text

    def fail(self, where: KeyPath, message: str) -> BadManifest:
        line = line_of(self.text, where)
        return BadManifest(f"{self.path}:{line}: {message}", path=self.path, line=line)

    def table(self, data: Any, where: KeyPath, keys: frozenset[str]) -> dict[str, Any]:
        if not isinstance(data, dict):
            raise self.fail(where, f"{_dotted(where)} must be a table")
        for key in data:
            if key not in keys:
                raise self.fail((*where, key), f"unknown key {_dotted((*where, key))!r} "
                                               f"(known: {', '.join(sorted(keys))})")
        return data

    def value(self, data: dict[str, Any], where: KeyPath, key: str, kind: type | tuple[type, ...],
              default: Any = None, required: bool = False) -> Any:
        if key not in data:
            if required:
                raise self.fail(where, f"{_dotted((*where, key))} is required")
            return default
        value = data[key]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
            raise self.fail((*where, key), f"{_dotted((*where, key))} must be a {_TYPE_WORDS.get(names, names)}")
        return value

    def strings(self, data: dict[str, Any], where: KeyPath, key: str) -> tuple[str, ...]:
        items = self.value(data, where, key, list, default=[])
        if not all(isinstance(item, str) for item in items):
            raise self.fail((*where, key), f"{_dotted((*where, key))} must be a list of strings")
        return tuple(items)

    def pattern(self, source: Any, where: KeyPath, allowed: frozenset[str] = FIELD_GROUPS) -> Pattern:
        if not isinstance(source, str) or not source or len(source) > PATTERN_MAX_CHARS:
            raise self.fail(where, f"{_dotted(where)} must be a regex of 1-{PATTERN_MAX_CHARS} characters")
        try:
            regex = re2.compile(source, pattern_options())
        except re2.error as exc:
            reason = exc.args[0] if exc.args else exc
            reason = reason.decode(errors="replace") if isinstance(reason, bytes) else str(reason)
            raise self.fail(where, f"{_dotted(where)} is not an RE2 regex (no backreferences or "
                                   f"lookaround): {reason}") from None
        if regex.programsize > PATTERN_PROGRAM_MAX:
            raise self.fail(where, f"{_dotted(where)} is too complex ({regex.programsize} steps, at most "
                                   f"{PATTERN_PROGRAM_MAX})")
        groups = frozenset(regex.groupindex)
        unknown = sorted(g for g in groups if g not in allowed and not g.startswith("_"))
        if unknown:
            raise self.fail(where, f"{_dotted(where)} captures unknown group {unknown[0]!r} (known: "
                                   f"{', '.join(sorted(allowed))}; start a name with _ for your own)")
        return Pattern(source, regex, groups)

    def region(self, data: dict[str, Any], where: KeyPath, regions: Mapping[str, int | None]) -> str:
        name = self.value(data, where, "region", str, default=SCREEN_REGION)
        if name not in regions:
            raise self.fail((*where, "region"), f"region {name!r} is not defined in [regions] "
                                                f"(defined: {', '.join(sorted(regions))})")
        return str(name)

    def search(self, data: dict[str, Any], where: KeyPath, default: str) -> str:
        search = self.value(data, where, "search", str, default=default)
        if search not in ("first", "last"):
            raise self.fail((*where, "search"), f"{_dotted((*where, 'search'))} must be \"first\" or \"last\"")
        return str(search)

    def name(self, data: dict[str, Any], where: KeyPath) -> str:
        name = self.value(data, where, "name", str, required=True)
        if not _NAME.match(name):
            raise self.fail((*where, "name"), f"{_dotted((*where, 'name'))} {name!r} must be lower-case letters, "
                                              "digits, - and _ (at most 40)")
        return str(name)


_TYPE_WORDS = {"str": "string", "int": "whole number", "bool": "boolean (true or false)",
               "list": "list", "dict": "table", "int or float": "number"}


def _dotted(where: KeyPath) -> str:
    text = ""
    for part in where:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text or "the manifest"


def parse(text: str, path: str) -> Manifest:
    """The manifest in `text` (read from `path`, which errors name); BadManifest if it is not one."""
    reader = _Reader(path, text)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = _TOML_LINE.search(str(exc))
        line = int(found.group(1)) if found else 1
        message = _TOML_LINE.sub("", str(exc)).strip()
        raise BadManifest(f"{path}:{line}: not TOML: {message}", path=path, line=line) from None
    reader.table(data, (), frozenset({"name", "format", "exit_on_shell_prompt", "unknown_rule", "submit_uptake_s",
                                      "identify",
                                      "regions", "fields", "rules", "input", "confirm", "tool_lines"}))
    name = reader.name(data, ())
    if name == "shell":
        raise reader.fail(("name",), "the name 'shell' is muxd's own (a pane with no agent)")
    form = reader.value(data, (), "format", int, default=FORMAT)
    if form != FORMAT:
        raise reader.fail(("format",), f"format {form} is not one this muxd reads (it reads {FORMAT})")
    regions = _regions(reader, data.get("regions", {}))
    identify = reader.table(data.get("identify", {}), ("identify",), frozenset(
        {"process_names", "argv_contains", "region", "signatures", "exit_signatures", "foreign_signatures"}))
    names = reader.strings(identify, ("identify",), "process_names")
    for process in names:
        if process.lower() in SHELLS or is_launcher(process.lower()):
            raise reader.fail(("identify", "process_names"),
                              f"process name {process!r} runs other programs too: name the agent's own program "
                              "or script, or use argv_contains")
    packages = reader.strings(identify, ("identify",), "argv_contains")
    signatures = tuple(_signature(reader, item, ("identify", "signatures", index), regions)
                       for index, item in enumerate(reader.value(identify, ("identify",), "signatures", list,
                                                                 default=[])))
    if not (names or packages or signatures):
        raise reader.fail(("identify",), "[identify] needs process_names, argv_contains or signatures: "
                                         "else the agent is never recognised")
    rules = tuple(_rule(reader, item, ("rules", index), regions)
                  for index, item in enumerate(reader.value(data, (), "rules", list, required=True)))
    if not rules:
        raise reader.fail(("rules",), "rules is empty: at least one [[rules]] is needed")
    seen: set[str] = set()
    for index, rule in enumerate(rules):
        if rule.name in seen:
            raise reader.fail(("rules", index, "name"), f"two rules are named {rule.name!r}")
        seen.add(rule.name)
    box = data.get("input")
    wanting = next((index for index, rule in enumerate(rules) if rule.input), None)
    if box is None and wanting is not None:
        raise reader.fail(("rules", wanting, "input"), "input = true needs an [input] table saying where the box is")
    manifest = Manifest(
        name=name, path=path, process_names=frozenset(n.lower() for n in names), argv_contains=packages,
        identify_region=reader.region(identify, ("identify",), regions), signatures=signatures,
        exit_signatures=tuple(reader.pattern(p, ("identify", "exit_signatures", i), frozenset())
                              for i, p in enumerate(reader.strings(identify, ("identify",), "exit_signatures"))),
        foreign_signatures=tuple(reader.pattern(p, ("identify", "foreign_signatures", i), frozenset()) for i, p
                                 in enumerate(reader.strings(identify, ("identify",), "foreign_signatures"))),
        regions=regions,
        fields=tuple(_field(reader, item, ("fields", index), regions)
                     for index, item in enumerate(reader.value(data, (), "fields", list, default=[]))),
        rules=rules, input=None if box is None else _input(reader, box, regions),
        exit_on_shell_prompt=reader.value(data, (), "exit_on_shell_prompt", bool, default=True),
        unknown_rule=reader.value(data, (), "unknown_rule", str, default="no-match"),
        submit_uptake_s=_submit_uptake_s(reader, data),
        confirm_keys=_confirm(reader, data.get("confirm", {})),
        tool_lines=tuple(_tool_line(reader, item, ("tool_lines", index), regions)
                         for index, item in enumerate(reader.value(data, (), "tool_lines", list, default=[]))))
    if len({pattern.source for pattern in manifest.patterns()}) > PATTERNS_MAX:
        raise reader.fail((), f"more than {PATTERNS_MAX} different patterns: each one is a cost on every new row")
    return manifest


def _tool_line(reader: _Reader, data: Any, where: KeyPath, regions: Mapping[str, int | None]) -> ToolLine:
    data = reader.table(data, where, frozenset({"region", "pattern"}))
    pattern = reader.pattern(data.get("pattern"), (*where, "pattern"), frozenset({"tool"}))
    if "tool" not in pattern.groups:
        raise reader.fail((*where, "pattern"), f"{_dotted((*where, 'pattern'))} needs a (?P<tool>...) group")
    return ToolLine(reader.region(data, where, regions), pattern)


def _confirm(reader: _Reader, data: Any) -> dict[str, tuple[str, ...]]:
    data = reader.table(data, ("confirm",), frozenset({"yes", "no"}))
    keys = {answer: reader.strings(data, ("confirm",), answer) for answer in ("yes", "no") if answer in data}
    empty = next((answer for answer, pressed in keys.items() if not pressed), None)
    if empty is not None:
        raise reader.fail(("confirm", empty), f"confirm.{empty} must name at least one key")
    return keys


def _regions(reader: _Reader, data: Any) -> dict[str, int | None]:
    if not isinstance(data, dict):
        raise reader.fail(("regions",), "regions must be a table")
    regions: dict[str, int | None] = {SCREEN_REGION: None}
    for name, spec in data.items():
        where = ("regions", name)
        if name == SCREEN_REGION:
            raise reader.fail(where, f"region {SCREEN_REGION!r} is built in (every row)")
        spec = reader.table(spec, where, frozenset({"last"}))
        last = reader.value(spec, where, "last", int, required=True)
        if not 1 <= last <= REGION_ROWS_MAX:
            raise reader.fail((*where, "last"), f"regions.{name}.last must be 1..{REGION_ROWS_MAX}")
        regions[name] = last
    return regions


def _submit_uptake_s(reader: _Reader, data: dict[str, Any]) -> float:
    seconds = float(reader.value(data, (), "submit_uptake_s", (int, float), default=0.0))
    if not 0 <= seconds <= SUBMIT_UPTAKE_MAX_S:
        raise reader.fail(("submit_uptake_s",), f"submit_uptake_s must be 0 to {SUBMIT_UPTAKE_MAX_S:g} seconds")
    return seconds


def _signature(reader: _Reader, data: Any, where: KeyPath, regions: Mapping[str, int | None]) -> Signature:
    data = reader.table(data, where, frozenset({"pattern", "weight", "region"}))
    weight = float(reader.value(data, where, "weight", (int, float), required=True))
    if not 0.0 < weight <= 0.9:
        raise reader.fail((*where, "weight"), "a screen signature's weight must be above 0 and at most 0.9 "
                                              "(1.0 is for the agent's own process)")
    region = reader.region(data, where, regions) if "region" in data else None
    return Signature(reader.pattern(data.get("pattern"), (*where, "pattern"), frozenset()), weight, region)


def _field(reader: _Reader, data: Any, where: KeyPath, regions: Mapping[str, int | None]) -> FieldRule:
    data = reader.table(data, where, frozenset({"name", "region", "pattern", "search"}))
    pattern = reader.pattern(data.get("pattern"), (*where, "pattern"))
    if not any(not group.startswith("_") for group in pattern.groups):
        raise reader.fail((*where, "pattern"), f"{_dotted((*where, 'pattern'))} captures no field: name a "
                                               "group, as (?P<model>...)")
    return FieldRule(reader.name(data, where), reader.region(data, where, regions), pattern,
                     reader.search(data, where, "first"))


_RULE_KEYS = frozenset({"name", "state", "region", "pattern", "search", "unless_below", "prompt", "options",
                        "option_pattern", "tools", "tool_rows", "error_type", "input", "requires",
                        "block_above"})


def _rule(reader: _Reader, data: Any, where: KeyPath, regions: Mapping[str, int | None]) -> Rule:
    data = reader.table(data, where, _RULE_KEYS)
    state = reader.value(data, where, "state", str, required=True)
    if state not in RULE_STATES:
        raise reader.fail((*where, "state"), f"state {state!r} is not one of {', '.join(sorted(RULE_STATES))}")
    tool_rows = reader.value(data, where, "tool_rows", int, default=2)
    if not 1 <= tool_rows <= TOOL_ROWS_MAX:
        raise reader.fail((*where, "tool_rows"), f"tool_rows must be 1..{TOOL_ROWS_MAX}")
    wants_input = reader.value(data, where, "input", bool, default=False)
    if wants_input and state not in ("Idle", "AwaitingInput"):
        raise reader.fail((*where, "input"), "input = true is for an Idle or AwaitingInput rule")
    option = data.get("option_pattern")
    above = data.get("block_above")
    region = reader.region(data, where, regions)
    requires = tuple(_row_check(reader, item, (*where, "requires", index), regions, region)
                     for index, item in enumerate(reader.value(data, where, "requires", list, default=[])))
    return Rule(
        name=reader.name(data, where), state=state, region=region,
        pattern=reader.pattern(data.get("pattern"), (*where, "pattern")),
        search=reader.search(data, where, "last"),
        unless_below=tuple(reader.pattern(p, (*where, "unless_below", i), frozenset())
                           for i, p in enumerate(reader.strings(data, where, "unless_below"))),
        prompt=reader.value(data, where, "prompt", str), options=reader.strings(data, where, "options"),
        option_pattern=None if option is None else reader.pattern(option, (*where, "option_pattern"),
                                                                   frozenset({"option"})),
        tools=tuple(_tool(reader, item, (*where, "tools", index))
                    for index, item in enumerate(reader.value(data, where, "tools", list, default=[]))),
        tool_rows=tool_rows, error_type=reader.value(data, where, "error_type", str), input=wants_input,
        requires=requires,
        block_above=None if above is None else reader.pattern(above, (*where, "block_above"), frozenset()))


def _row_check(reader: _Reader, data: Any, where: KeyPath, regions: Mapping[str, int | None],
               default_region: str) -> RowCheck:
    data = reader.table(data, where, frozenset({"region", "pattern"}))
    region = reader.region(data, where, regions) if "region" in data else default_region
    return RowCheck(region, reader.pattern(data.get("pattern"), (*where, "pattern"), frozenset()))


def _tool(reader: _Reader, data: Any, where: KeyPath) -> ToolPattern:
    data = reader.table(data, where, frozenset({"pattern", "tool", "lower"}))
    pattern = reader.pattern(data.get("pattern"), (*where, "pattern"), frozenset({"tool"}))
    tool = reader.value(data, where, "tool", str)
    if tool is None and "tool" not in pattern.groups:
        raise reader.fail(where, f"{_dotted(where)} needs `tool = \"name\"` or a (?P<tool>...) group")
    return ToolPattern(pattern, tool, reader.value(data, where, "lower", bool, default=False))


def _input(reader: _Reader, data: Any, regions: Mapping[str, int | None]) -> InputBox:
    where = ("input",)
    data = reader.table(data, where, frozenset({"region", "above", "row", "placeholder", "margin_columns"}))
    placeholder = data.get("placeholder")
    return InputBox(
        region=reader.region(data, where, regions),
        above=reader.pattern(data.get("above"), (*where, "above"), frozenset()),
        row=reader.pattern(data.get("row"), (*where, "row"), frozenset()),
        placeholder=None if placeholder is None else reader.pattern(placeholder, (*where, "placeholder"),
                                                                    frozenset()),
        margin_columns=reader.value(data, where, "margin_columns", int, default=0))


def load(path: Path) -> Manifest:
    """The manifest in the file at `path`; BadManifest (naming the file and line) if it is not one."""
    try:
        with path.open("rb") as fh:
            raw = fh.read(MANIFEST_MAX_BYTES + 1)
    except OSError as exc:
        raise BadManifest(f"{path}:1: cannot read it: {exc.strerror or exc}", path=str(path), line=1) from None
    if len(raw) > MANIFEST_MAX_BYTES:
        raise BadManifest(f"{path}:1: larger than {MANIFEST_MAX_BYTES} bytes", path=str(path), line=1)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise BadManifest(f"{path}:{line}: not UTF-8", path=str(path), line=line) from None
    return parse(text, str(path))
