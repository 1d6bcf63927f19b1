"""Claude Code's line grammar: the spinner line, the turn-done line, tool lines and the
blocks of a turn, as plain text. Pure functions of strings; claude.py decides with them."""

from __future__ import annotations

import re
from collections.abc import Sequence

import msgspec

from muxd.detectors._lazy_re import lazy_compile
from muxd.detectors._text import LineMemo, parse_count, parse_duration
from muxd.detectors.state import AgentError, ToolSighting

BULLETS = "●⏺"
# `· ✢ ✳ ✶ ✻ ✽` and `*` cycle on the spinner; ✻ is also the turn-done glyph.
SPINNER_GLYPHS = "·✢✳✶✻✽*"
MAX_VERB_CHARS = 80             # spinner verbs are one word; todo-driven ones a short phrase
MAX_TOOLS_PER_LINE = 10         # "Read 40 files" is not 40 sightings

_SPINNER = lazy_compile(
    rf"^(?P<glyph>[{SPINNER_GLYPHS}])\s+(?P<verb>[^\s…(][^…]{{0,{MAX_VERB_CHARS}}}?)…"
    r"(?:\s*\((?P<details>[^)]*)\)?|\s+(?P<bare>\S.*))?\s*$"
)
_RETRY = lazy_compile(rf"^[{SPINNER_GLYPHS}]\s+(?P<text>.*\bretrying in \d+\s*[hms].*)$")
_DONE = lazy_compile(rf"^[{SPINNER_GLYPHS}]\s+\S+ for \d+[hms](?:\s*\d+[ms])*\b")
_THINKING = lazy_compile(r"\b(?:still\s+)?thinking\b", re.IGNORECASE)
# `✻ Waiting for 1 background agent to finish`: the turn has ended but work it started in the
# background (a subagent) still runs, and its result will start the next turn by itself.
_BACKGROUND_WAIT = lazy_compile(
    rf"^[{SPINNER_GLYPHS}]\s+(?P<text>Waiting for (?P<count>\d+) (?:background )?[a-z ]+? to finish)\b")
_TOKENS = lazy_compile(r"([↑↓])\s*([0-9][0-9.,]*\s*[kKmM]?)\s*tokens?\b")
_PURE_DURATION = lazy_compile(r"^\d+\s*[hms](?:\s*\d+\s*[ms])*$")

# `● Bash(git status)`, `● Update(hello.txt)`, `● Web Search("x")`, `● srv - tool (MCP)(…)`.
_TOOL_CALL = lazy_compile(
    r"^(?P<name>[A-Z][A-Za-z0-9_]*(?: [A-Z][A-Za-z0-9_]*)?|[\w.-]+ - [\w.-]+ \(MCP\)|mcp__[\w-]+)"
    r"\((?P<args>.*)$"
)
# Parts of a collapsed tool group: "Read 2 files, ran 1 shell command (ctrl+o to expand)".
_GROUP_PART = lazy_compile(
    r"^(?P<verb>read|reading|ran|running|searched for|searching for|listed|listing|"
    r"fetched|fetching|wrote|writing|edited|editing)\s+(?P<count>\d+)\s+"
    r"(?P<noun>files?|shell commands?|patterns?|director(?:y|ies)|urls?|pages?)$",
    re.IGNORECASE,
)
# Any other "<verb> N <things>" part ("used 2 tools"): taken beside a known part only, as
# "Found 3 issues" alone is answer text.
_OTHER_PART = lazy_compile(r"^(?P<verb>[a-z]+(?: for)?) \d+ [a-z][a-z ]{0,30}$", re.IGNORECASE)
_THOUGHT_PART = lazy_compile(
    r"^(?:∴\s*)?(?:(?:thought|thinking) for \d+\s*[hms](?:\s*\d+\s*[ms])*|thinking)$", re.IGNORECASE
)
# An in-progress single operation: "Reading hello.txt", "Searching for foo" (one target, or
# its detail row `⎿ …` below: a sentence that starts with "Reading" is answer text).
_ACTIVE_DETAIL = lazy_compile(r"^(?P<verb>Reading|Searching for|Listing|Fetching|Writing)\s+(?P<target>\S.*)$")
_EXPAND_HINT = lazy_compile(r"\s*\((?:ctrl|cmd)\+\w to expand\)\s*$")
_DIGIT = lazy_compile(r"\d")  # as _GROUP_PART's \d reads one
_BASH_PREVIEW = lazy_compile(r"^⎿\s+\$\s")
_RUNNING_CHILD = lazy_compile(r"^⎿\s+(?:Running|Waiting)\b")

NOUN_TOOLS = {"file": "Read", "shell command": "Bash", "pattern": "Grep", "director": "Glob",
              "url": "WebFetch", "page": "WebFetch"}
VERB_TOOLS = {"reading": "Read", "searching for": "Grep", "listing": "Glob", "fetching": "WebFetch",
              "writing": "Write", "wrote": "Write", "editing": "Edit", "edited": "Edit"}
ACTIVE_VERBS = frozenset({"reading", "running", "searching for", "listing", "fetching", "writing", "editing"})
# Names on tool lines that differ from the tool's own name.
DISPLAY_TOOLS = {"Update": "Edit", "Create": "Write", "Search": "Grep", "Fetch": "WebFetch",
                 "Web Search": "WebSearch", "Web Fetch": "WebFetch", "List": "Glob"}
DONE_HEADS = {"Answered Claude's questions:": "AskUserQuestion",
              "User answered Claude's questions:": "AskUserQuestion",
              "User declined to answer questions": "AskUserQuestion"}


class Spinner(msgspec.Struct, frozen=True):  # a Struct: made on every look, 10x faster than a dataclass
    description: str
    elapsed_s: int | None = None
    tokens: int | None = None
    thinking: bool = False
    error: AgentError | None = None


class Block(msgspec.Struct, frozen=True):
    """One block of the conversation: its first line decides what it is."""

    kind: str            # "text", "tool-running", "tool-done", "thinking", "user", "other"
    tool: str | None
    line: str


def parse_spinner(line: str) -> Spinner | None:
    """The working line above the prompt box (`✻ Gusting… (3s · ↓ 1.2k tokens)`), or None."""
    return _SPINNERS[line]


def _parse_spinner(line: str) -> Spinner | None:
    text = line.strip()
    # the words _RETRY needs, before its backtracking `.*` is tried
    retry = _RETRY.match(text) if "retrying in " in text else None
    if retry:
        message = retry.group("text").strip()
        return Spinner(description=message, error=AgentError(type=error_type(message), message=message))
    match = _SPINNER.match(text)
    if not match:
        return None
    details = match.group("details") or match.group("bare") or ""
    elapsed = tokens = None
    for item in details.split("·"):
        item = item.strip()
        if _PURE_DURATION.match(item):
            elapsed = parse_duration(item)
            break
    # a token count needs its arrow
    found = _TOKENS.findall(details) if "↑" in details or "↓" in details else []
    counts = [parse_count(number.replace(" ", "")) for _, number in found]
    if counts and None not in counts:
        tokens = sum(c for c in counts if c is not None)
    return Spinner(description=match.group("verb").strip(), elapsed_s=elapsed, tokens=tokens,
                   thinking=bool(_THINKING.search(details)))


def error_type(message: str) -> str:
    lowered = message.lower()
    if "529" in lowered or "overloaded" in lowered:
        return "overloaded"
    if "429" in lowered or "rate limit" in lowered:
        return "rate_limited"
    if re.search(r"\b5\d\d\b", lowered):
        return "server_error"
    if "timed out" in lowered or "timeout" in lowered:
        return "timeout"
    if "connection" in lowered:
        return "connection_error"
    return "api_error"


def background_wait(line: str) -> tuple[str, int] | None:
    """(the words, how many) of a `✻ Waiting for 2 background agents to finish` line, or None."""
    return _BACKGROUND_WAITS[line]


def _background_wait(line: str) -> tuple[str, int] | None:
    match = _BACKGROUND_WAIT.match(line.strip()) if "Waiting for " in line else None
    return (match.group("text"), int(match.group("count"))) if match else None


def is_done_line(line: str) -> bool:
    """`✻ Brewed for 16s · done 10:14 PM`: the turn finished."""
    return _DONE_LINES[line]


# By line text: the live row above the box is read on every look, and between two seconds
# of its timer it is the same text.
_SPINNERS = LineMemo(_parse_spinner)
_DONE_LINES = LineMemo(lambda line: bool(_DONE.match(line.strip())))
_BACKGROUND_WAITS = LineMemo(_background_wait)


def tool_name(display: str) -> str:
    return DISPLAY_TOOLS.get(display, display)


class Group(msgspec.Struct, frozen=True):
    """A collapsed tool group: "Read 2 files, ran 1 shell command", "Running 1 shell command…"."""

    running: bool
    active: str | None          # the tool still running, when the grammar names it
    tools: list[str]            # one per use, in order (tools it does not name left out)


def _group(body: str) -> Group | None:
    if not _DIGIT.search(body):
        return None  # no part can be a known one (each counts its tools): most answer text
    text = _EXPAND_HINT.sub("", body).rstrip()
    running = text.endswith("…")
    active: str | None = None
    tools: list[str] = []
    matched = False
    for part in (part.strip() for part in text.rstrip("…").split(",")):
        if _THOUGHT_PART.match(part):
            continue
        known = _GROUP_PART.match(part)
        verb_match = known or _OTHER_PART.match(part)
        if verb_match is None:
            return None
        matched = matched or known is not None
        verb = verb_match.group("verb").lower()
        in_progress = verb in ACTIVE_VERBS or verb.endswith(("ing", "ing for"))
        running = running or in_progress
        if known:
            noun = known.group("noun").lower()
            tool = next(name for key, name in NOUN_TOOLS.items() if noun.startswith(key))
            tools.extend([tool] * min(int(known.group("count")), MAX_TOOLS_PER_LINE))
            if in_progress:
                active = tool
    if not matched:
        return None
    if running and active is None and text.endswith("…") and tools:
        active = tools[-1]
    return Group(running, active, tools)


def classify_block(block: Sequence[str]) -> Block:
    """What the last block above the spinner shows (see LABELS.md, Thinking vs Generating)."""
    head = block[0]
    stripped = head.strip()
    children = [line.strip() for line in block[1:]]
    if stripped.startswith("❯"):
        return Block("user", None, stripped)
    if stripped[:1] in BULLETS:
        body = stripped[1:].strip()
    elif head[:1].isspace():
        body = stripped  # a tool line whose blinking bullet is off, or a text paragraph
    else:
        return Block("other", None, stripped)
    if not body:
        return Block("text", None, stripped)  # empty answer bullet: text is on its way
    if body in DONE_HEADS:
        return Block("tool-done", DONE_HEADS[body], stripped)
    if children and _BASH_PREVIEW.match(children[0]):
        return Block("tool-running", "Bash", stripped)
    call = _TOOL_CALL.match(body)
    if call:
        results = [child for child in children if child.startswith("⎿")]
        running = not results or all(_RUNNING_CHILD.match(child) for child in results)
        return Block("tool-running" if running else "tool-done", tool_name(call.group("name")), stripped)
    group = _group(body)
    if group is not None:
        if group.running:
            return Block("tool-running", group.active, stripped)
        return Block("tool-done", group.tools[-1] if group.tools else None, stripped)
    # "Thought for 1s (ctrl+o to expand)" (the hint's scan of a row made only where it can be)
    if _THOUGHT_PART.match((_EXPAND_HINT.sub("", body) if "(" in body else body).rstrip("…")):
        return Block("thinking", None, stripped)
    active = _ACTIVE_DETAIL.match(body)
    if active and (" " not in active.group("target") or children[:1] and children[0].startswith("⎿")):
        return Block("tool-running", VERB_TOOLS[active.group("verb").lower()], stripped)
    return Block("text", None, stripped)


def split_blocks(lines: Sequence[str]) -> list[list[str]]:
    """Runs of non-blank lines, top to bottom."""
    blocks: list[list[str]] = []
    current: list[str] = []
    for line in lines:
        if line.strip():
            current.append(line)
        elif current:
            blocks.append(current)
            current = []
    if current:
        blocks.append(current)
    return blocks


def sightings(lines: Sequence[str], *, live_tail: bool) -> list[ToolSighting]:
    """Every finished or started tool use in the conversation, in screen order.

    Lines that change while a tool runs ("Running 1 shell command…" becomes "Ran 1 shell
    command", a group grows to "Read 2 files") are left out until they settle, so the runner
    counts each use once: in-progress forms always, and the last group when `live_tail`.
    """
    kinds = list(map(_SIGHTING_ROWS.__getitem__, lines))
    if kinds.count(_PLAIN_ROW) + kinds.count(_BLANK_ROW) == len(kinds):
        return []  # the common case, told without a loop: no row shows a tool
    found: list[tuple[int, tuple[ToolSighting, ...], bool]] = []  # (block, sightings, from a group)
    block = -1
    first_in_block = True
    for kind in kinds:
        if kind is _BLANK_ROW:
            first_in_block = True
            continue
        if first_in_block:
            block += 1
            first_in_block = False
            parsed = None if kind is _PLAIN_ROW else kind[0]
        else:
            parsed = None if kind is _PLAIN_ROW else kind[1]
        if parsed is not None:
            found.append((block, *parsed))
    return [sighting for index, seen, grouped in found
            if not (grouped and live_tail and index == block) for sighting in seen]


def _line_sightings(line: str, first_in_block: bool) -> tuple[tuple[ToolSighting, ...], bool] | None:
    """(the tool uses one line shows, whether they come from a settled group), or None."""
    stripped = line.strip()
    if stripped[:1] in BULLETS:
        body = stripped[1:].strip()
    elif first_in_block and line[:1].isspace():
        body = stripped
    else:
        return None
    signature = _EXPAND_HINT.sub("", body)
    call = _TOOL_CALL.match(body)
    if call:
        return (ToolSighting(tool_name(call.group("name")), signature),), False
    if body in DONE_HEADS:
        return (ToolSighting(DONE_HEADS[body], signature),), False
    group = _group(body)
    if group is None or group.running:
        return None
    return tuple(ToolSighting(tool, signature) for tool in group.tools), True


_BLANK_ROW, _PLAIN_ROW = 0, 1  # what most rows are to sightings: a block break, or no tool


def _sighting_row(line: str) -> object:
    """_BLANK_ROW, _PLAIN_ROW, or (the sightings as the first row of a block, as a later row)."""
    if not line.strip():
        return _BLANK_ROW
    head, body = _line_sightings(line, True), _line_sightings(line, False)
    return _PLAIN_ROW if head is None and body is None else (head, body)


# Per-line parses, remembered by line text (the first line of a block reads more).
_SIGHTING_ROWS = LineMemo(_sighting_row)
