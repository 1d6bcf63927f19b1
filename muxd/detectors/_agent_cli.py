"""Pieces shared by the Codex, Gemini, Aider and opencode detectors (and Claude's, for a shell
in front): telling their process from its argv, the shell prompt an exited CLI leaves behind,
box borders, numbered options and API-error kinds."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence

from muxd.detectors._lazy_re import lazy_compile
from muxd.detectors._text import FrameMemo, LineMemo, shown_session_id, stripped_rows
from muxd.detectors.base import ScreenContext
from muxd.detectors.shell import SHELLS, is_shell_prompt
from msgspec.structs import replace

from muxd.detectors.state import AgentType, Detection, ToolSighting

# Programs that run an agent given as a later argument (`node …/codex.js`, `python …/bin/aider`,
# `npx @google/gemini-cli`): for these the agent is looked for in the arguments, not argv[0].
_LAUNCHERS = frozenset({"node", "nodejs", "bun", "bunx", "deno", "npx", "npm", "pnpm", "pnpx", "yarn",
                        "pipx", "uv", "uvx", "env", "exec"})
_PYTHON = lazy_compile(r"^python(?:\d+(?:\.\d+)*)?$")
# Confidence for a shell prompt right after the agent's exit output (the agent was here).
EXITED_CONFIDENCE = 0.6
# At most this when another known program (an editor, a pager, another agent) is in front.
FOREIGN_PROCESS_CONFIDENCE_MAX = 0.3
# How many arguments after a launcher may hold the agent (`npm exec --yes -- @openai/codex`).
LAUNCHER_ARGS_MAX = 6
_SCRIPT_SUFFIXES = (".js", ".mjs", ".cjs", ".exe", ".py")

# The last row of a pager or an editor showing text (`(END)`, `--More--`, vim's `~` filler and
# its `"file" 4L, 48B` or `1,1  All` status): agent-like text above it is a file, not a live UI.
_PAGER_OR_EDITOR = lazy_compile(
    r"\(END\)$|^:$|--More--|^lines \d+-\d+|^~$|^\".*\" \d+L, \d+B|\d+,\d+(?:-\d+)?\s+(?:All|Top|Bot|\d+%)$")

_BOX_LEFT = lazy_compile(r"^\s*[│┃║]\s?")
_BOX_RIGHT = lazy_compile(r"\s*[│┃║][\s│┃║█▄▀▌▐░]*$")
# `1. Allow once`, `● 1. Allow once`, `› 1. Yes, proceed (y)`, `❯ 2. No`.
_OPTION = lazy_compile(r"^\s*(?:[●○◯›>❯▶▸➤*]\s*)?(?P<number>\d{1,2})\.\s+(?P<text>\S.*?)\s*$")
# Rows an option list (with wrapped options) may span.
OPTION_ROWS_MAX = 16
_STATUS_CODE = lazy_compile(r"\b([45]\d\d)\b")
# A usage limit as the agents word it: "usage limit", "You've hit your 5-hour limit",
# "exhausted your daily quota", "exceeded your current quota", "limit reached".
_USAGE_LIMIT = lazy_compile(r"usage limit|\bhit your\b.*\blimit\b|\bquota\b|\blimit reached\b|resource_exhausted")


def _base(arg: str) -> str:
    name = os.path.basename(arg.rstrip("/")).lower()
    for suffix in _SCRIPT_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def is_launcher(name: str) -> bool:
    """True for a program that runs an agent given as an argument (node, npx, python3.12, …)."""
    return name in _LAUNCHERS or bool(_PYTHON.match(name))


def _candidates(argv: Sequence[str]) -> Iterable[str]:
    """argv[0] and, after a launcher, its next few non-option arguments (and `-m module`)."""
    if not argv:
        return
    first = str(argv[0])
    yield first
    # a process title such as "npm exec @openai/codex" arrives as one argv element
    yield from first.split()[1:]
    if not is_launcher(_base(first.split()[0] if first.split() else first)):
        return
    taken = 0
    for arg in argv[1:]:
        arg = str(arg)
        if taken >= LAUNCHER_ARGS_MAX:
            return
        if arg.startswith("-") and arg != "-m":
            continue
        yield arg
        taken += 1


def process_is(ctx: ScreenContext, names: frozenset[str], packages: Sequence[str]) -> bool:
    """True when the foreground process is this agent: its name, its binary or script, or its
    package path in the argv of a launcher (`node …/@openai/codex/bin/codex.js`)."""
    verdict: bool = _PROCESS_VERDICTS[(ctx.process_name, tuple(ctx.process_argv or ()), names, packages)]
    return verdict


# Process verdicts remembered (a few per pane's foreground program and detector): every
# identify asks, and the foreground process rarely changes between looks.
PROCESS_VERDICTS_MAX = 512
_PROCESS_VERDICTS = LineMemo(lambda key: _process_is(*key), limit=PROCESS_VERDICTS_MAX)


def _process_is(process_name: str | None, argv: tuple[str, ...], names: frozenset[str],
                packages: Sequence[str]) -> bool:
    comm = (process_name or "").strip().lower()
    if comm in names:
        return True
    for arg in _candidates(argv):
        lowered = arg.lower()
        if _base(lowered) in names:
            return True
        if any(package in lowered for package in packages):
            return True
    return False


def agent_confidence(ctx: ScreenContext, names: frozenset[str], packages: Sequence[str],
                     live_score: Callable[[list[str]], float], exit_screen: Callable[[list[str]], bool]) -> float:
    """`identify` for a CLI agent: 1.0 for its process; else `live_score` of the screen, unless
    a shell is in front (the agent, if it ran here, has gone: nothing counts), a shell prompt
    ends the screen (then only the agent's exit output counts) or a pager or an editor does
    (then nothing counts); at most FOREIGN_PROCESS_CONFIDENCE_MAX when another program is in
    front, or a launcher runs another script."""
    if process_is(ctx, names, packages):
        return 1.0
    if shell_in_front(ctx):
        return 0.0
    lines: list[str] = stripped_rows(ctx.lines)
    kind = bottom_kind(lines)
    if kind == "shell":
        score = EXITED_CONFIDENCE if exit_screen(lines) else 0.0
    elif kind == "pager":
        score = 0.0
    else:
        score = live_score(lines)
    return min(score, FOREIGN_PROCESS_CONFIDENCE_MAX) if process_is_foreign(ctx) or runs_another_script(ctx) else score


def shell_in_front(ctx: ScreenContext) -> bool:
    """True when the foreground process is a shell: whatever agent drew the screen has quit."""
    return (ctx.process_name or "").strip().lower() in SHELLS


def process_is_foreign(ctx: ScreenContext) -> bool:
    """True when a known foreground process is neither a shell nor a launcher: an editor, a
    pager or another agent owns the screen, so agent-like text on it proves nothing."""
    comm = (ctx.process_name or "").strip().lower()
    if not comm:
        return False
    return comm not in SHELLS and not is_launcher(comm.split()[0])


def runs_another_script(ctx: ScreenContext) -> bool:
    """True when the foreground process is a launcher running a script of its own (`node
    …/.bin/qwen`, `python tool.py`) that the asking detector did not claim: another program,
    perhaps an agent muxd does not know drawing a known one's screen (a fork), owns it."""
    verdict: bool = _OTHER_SCRIPTS[(ctx.process_name, tuple(ctx.process_argv or ()))]
    return verdict


def _runs_a_script(process_name: str | None, argv: tuple[str, ...]) -> bool:
    comm = (process_name or "").strip().lower()
    if not comm or not is_launcher(comm.split()[0]):
        return False
    return any("/" in arg or arg.lower().endswith(_SCRIPT_SUFFIXES) for arg in list(_candidates(argv))[1:])


_OTHER_SCRIPTS = LineMemo(lambda key: _runs_a_script(*key), limit=PROCESS_VERDICTS_MAX)


def bottom_kind(lines: Sequence[str]) -> str:
    """What holds the last row: 'shell' (a bare prompt), 'pager' (a pager or an editor) or
    'screen' (anything else, such as an agent's live UI)."""
    last = last_non_empty(lines)
    return "screen" if last is None else _LAST_ROW_KINDS[last[1]]


def _last_row_kind(line: str) -> str:
    if is_shell_prompt(line):
        return "shell"
    return "pager" if _PAGER_OR_EDITOR.search(line.strip()) else "screen"


# By the last row's text: every identify of a CLI detector asks about the same last row.
_LAST_ROW_KINDS = LineMemo(_last_row_kind)


def unbox(line: str) -> str:
    """The text inside one level of `│ … │` box borders (and a scrollbar column), stripped."""
    return _UNBOXED[line]


def _unbox(line: str) -> str:
    return _BOX_RIGHT.sub("", _BOX_LEFT.sub("", line)).strip()


def _option_row(line: str) -> tuple[tuple[int, str] | None, bool]:
    """(the option `(number, "1. text")` a row shows, or None; whether the row is indented
    text, 4+ columns in: an option's wrapped continuation)."""
    inner = _BOX_RIGHT.sub("", _BOX_LEFT.sub("", line))
    match = _OPTION.match(inner)
    if match:
        number = int(match.group("number"))
        return (number, f"{number}. {match.group('text')}"), False
    return None, bool(inner.strip()) and len(inner) - len(inner.lstrip()) >= 4


# By row text: taking a row out of its box is a scan of the whole row (_BOX_RIGHT tries
# every column), and dialogs and option lists are looked for on every look.
_UNBOXED = LineMemo(_unbox)
_OPTION_ROWS = LineMemo(_option_row)


def option_block(lines: Sequence[str], last: int) -> tuple[int, list[str]] | None:
    """The numbered options `1. …`, `2. …` whose last one starts on row `last`, as (row of
    option 1, ["1. Allow once", …]); None unless they count up from 1. An option's text
    wrapped onto rows under it (indented 4+ columns) is joined to it; in a list with a
    description column (`1. Cancel task   Stop the current task…`) an option is its name."""
    options: list[tuple[int, str]] = []
    row = last
    while row >= 0 and last - row <= OPTION_ROWS_MAX:
        option, wrapped = _OPTION_ROWS[lines[row]]
        if option is not None:
            options.append(option)
            if option[0] == 1:
                break
        elif not (options and wrapped):
            return None
        row -= 1
    options.reverse()
    if len(options) < 2 or [number for number, _ in options] != list(range(1, len(options) + 1)):
        return None
    return row, _joined_options(lines, row, len(options))


def _joined_options(lines: Sequence[str], first: int, count: int) -> list[str]:
    """The texts of `count` options from row `first` down, each with its wrapped rows."""
    texts: list[str] = []
    described = False  # the option has a description column: its rows below wrap that
    for line in lines[first:first + OPTION_ROWS_MAX + 1]:
        option, wrapped = _OPTION_ROWS[line]
        if option is not None:
            if len(texts) == count:
                break
            name, gap, _ = option[1].partition("  ")
            described = bool(gap)
            texts.append(name.rstrip())
        elif wrapped and texts and not described:
            texts[-1] += " " + unbox(line)
        elif not wrapped and len(texts) == count:
            break
    return texts


def is_option(line: str) -> bool:
    return _OPTION_ROWS[line][0] is not None


def error_kind(message: str) -> str:
    """'usage_limit', 'rate_limited', 'overloaded', 'auth_error', 'server_error', 'timeout',
    'connection_error' or 'api_error', from an agent's error text."""
    text = message.lower()
    if _USAGE_LIMIT.search(text):  # a plan's or quota's limit: before its 429
        return "usage_limit"
    code_match = _STATUS_CODE.search(text)
    code = int(code_match.group(1)) if code_match else 0
    if code == 429 or "ratelimit" in text or "rate limit" in text or "too many requests" in text:
        return "rate_limited"
    if code == 529 or "overload" in text or "high demand" in text or "capacity" in text:
        return "overloaded"
    if code in (401, 403) or "unauthorized" in text or "authentication" in text or "api key" in text:
        return "auth_error"
    if 500 <= code < 600 or "internalservererror" in text or "server error" in text or "unavailable" in text:
        return "server_error"
    if "timeout" in text or "timed out" in text:
        return "timeout"
    if "connection" in text or "connect" in text or "network" in text:
        return "connection_error"
    return "api_error"


def _last_non_empty(lines: Sequence[str]) -> tuple[int, str] | None:
    for row in range(len(lines) - 1, -1, -1):
        if lines[row].strip():
            return row, lines[row]
    return None


# (row, text) of the last non-blank row, or None. Asked by every identify and again by the
# detect of the same frame, after blank rows that may fill half a screen: worked out once.
last_non_empty = FrameMemo(_last_non_empty)


def rows_above(lines: Sequence[str], row: int, count: int) -> list[tuple[int, str]]:
    """Up to `count` non-empty rows above `row`, nearest first."""
    found: list[tuple[int, str]] = []
    for index in range(row - 1, -1, -1):
        if lines[index].strip():
            found.append((index, lines[index]))
            if len(found) >= count:
                break
    return found


def input_hidden(agent: AgentType, lines: Sequence[str], rule: str) -> Detection:
    """For a frame without the agent's input area (the CLI still starting, an overlay, a redraw
    caught half-way): Unknown. Idle is claimed only where the prompt is seen, and a state held
    from an earlier frame could outlive the agent (a redraw lasts one look; the runner
    publishes a state only once a second look confirms it)."""
    last = last_non_empty(lines)
    return Detection(agent_type=agent, state="Unknown", rule=rule, line=last[1].strip() if last else None)


ExitReader = Callable[..., "Detection | None"]


def exit_or_dialog(ctx: ScreenContext, agent: AgentType, lines: Sequence[str], tools: list[ToolSighting],
                   exited: ExitReader, dialog: Callable[[Sequence[str]], Detection | None]) -> Detection | None:
    """What a CLI detector decides before anything else, the same for every CLI: the pane's
    program is gone (its exit output may still give totals), the CLI exited back to a shell,
    or a dialog waits for a yes. None when none of these holds."""
    if ctx.exited:
        found = exited(lines, pane_exited=True)
        return replace(found or Detection(agent_type=agent, state="Exited", rule="pane-exited"),
                       tools_seen=tools)
    found = exited(lines) or dialog(lines) or shell_prompt_below(agent, lines)
    return None if found is None else replace(found, tools_seen=tools)


def shell_prompt_below(agent: AgentType, lines: Sequence[str]) -> Detection | None:
    """Exited when a bare shell prompt is the last row: the CLI has given the terminal back
    (with no exit output of its own, or after a `clear`)."""
    last = last_non_empty(lines)
    if last is None or not is_shell_prompt(last[1]):
        return None
    return Detection(agent_type=agent, state="Exited", rule="shell-prompt", line=last[1].strip())


def with_session_shown(found: Detection, lines: list[str]) -> Detection:
    """`found` with the session id a status panel on screen shows, unless it has one already
    (the runner keeps an id once seen, for as long as the same agent stays)."""
    if found.session_id is not None:
        return found
    session_id = shown_session_id(lines)
    return found if session_id is None else replace(found, session_id=session_id)
