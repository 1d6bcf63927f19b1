"""Aider (prompt_toolkit line UI, 0.86): state from the last rows — a `(Y)es/(N)o` question,
the `Waiting for <model>` bar, or what follows the last `> ` prompt — and the token report.

Screen layout (plain scrolling output, newest at the bottom):

    ──────────────────────────────────────────      <- rule before each prompt
    hello.py notes.txt                              <- files in the chat
    > make a hello script                           <- prompt (`diff> `, `ask> ` in other modes)
    I will create a new file.                       <- answer streaming (no spinner)
    Tokens: 651 sent, 31 received.                  <- turn's token report
    Create new file? (Y)es/(N)o [Yes]:              <- question awaiting an answer
         ░█    Waiting for openai/fake-model        <- bouncing bar while the model is asked
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from msgspec.structs import replace

from muxd.detectors._agent_cli import agent_confidence, error_kind, is_shell_prompt, last_non_empty
from muxd.detectors._lazy_re import lazy_compile
from muxd.detectors._text import FrameMemo, LineMemo, join_input_rows, parse_count, screen_text, stripped_rows
from muxd.detectors.base import ScreenContext
from muxd.detectors.state import BUSY_STATES, AgentError, AgentState, Confirmation, Detection, ToolSighting

NAME = "aider"
_PROCESS_NAMES = frozenset({"aider"})
_PACKAGES = ("aider-chat", "/aider/__main__", "aider.main")
# Rows between the rule and the prompt: the (wrapped) list of files in the chat.
RULE_TO_PROMPT_ROWS_MAX = 6
# Rows a shell prompt may sit below Aider's last prompt for the screen to read as Aider exiting.
EXIT_ROWS_MAX = 8

_RULE = lazy_compile(r"^─{20,}\s*$")
_PROMPT = lazy_compile(r"^(?P<mode>[a-z][\w-]*(?: multi)?)?>(?: (?P<text>.*))?$")
_QUESTION = lazy_compile(
    r"(?P<choices>\((?:[A-Z])\)[^/\[\]]*(?:/\([A-Z]\)[^/\[\]]*)+)\s*\[(?P<default>[^\]]*)\]:"
    r"|\[(?P<yn>[Yy]/[Nn])\]|\((?P<slash>y/n(?:/[\w ]+)?)\)"
)
# What may already be typed after a question that still waits for Enter.
_TYPED_ANSWERS = frozenset({"", "y", "n", "yes", "no", "a", "s", "d"})
_CHOICE = lazy_compile(r"\((?P<key>[A-Z])\)(?P<tail>[^/]*)")
_SPINNER = lazy_compile(r"^(?P<bar>[\s░█]*[░█][\s░█]*(?:\^C)?)\s*(?P<text>[A-Za-z].*?)\s*$")
_WAITING = lazy_compile(r"Waiting for (?P<model>\S+)")
_MODEL = lazy_compile(r"^(?:Main )?[Mm]odel: (?P<model>\S+?)(?: with |$)")
_TOKENS = lazy_compile(r"^Tokens: (?P<sent>[\d.,]+[kKmM]?) sent,(?:.*?,)? (?P<received>[\d.,]+[kKmM]?) received\.")
_COST = lazy_compile(r"Cost: \$(?P<message>[\d.]+) (?:message|request), \$(?P<session>[\d.]+) session")
_LITELLM = lazy_compile(r"(?P<message>litellm\.\w+(?:Error|Exception)\b.*)$")
_WAITING_BAR = lazy_compile(r"^[\s░█]*[░█][\s░█]*(?:\^C)?\s*Waiting for \S+$")
_BAR_ONLY = lazy_compile(r"^[\s░█]*[░█][\s░█]*$")
_RETRYING = lazy_compile(r"^Retrying in [\d.]+ seconds")
_INTERRUPT = lazy_compile(r"^\^C again to exit$")
_RUN_PROMPT = lazy_compile(r"^(?:!|/run\b|/test\b|/lint\b)")
_EXIT_MARKER = lazy_compile(r"^(?:\^C )?KeyboardInterrupt|^\^C again to exit|^EOFError")
_KEYBOARD_INTERRUPT = lazy_compile(r"^(?:\^C )?KeyboardInterrupt$")
# Slash commands that ask the model: their reply streams as a prompt's does. Others print
# their own output (/add, /tokens, /help's list…), which is no reply.
_MODEL_COMMANDS = frozenset({"ask", "code", "architect", "context", "help"})

# Signs of Aider anywhere on screen; they count only when the bottom rows are Aider's too.
_SIGNATURES: tuple[tuple[re.Pattern[str], float], ...] = (
    (lazy_compile(r"^Aider v\d"), 0.95),
    (lazy_compile(r"^(?:Main )?[Mm]odel: \S+ with \S+ edit format"), 0.9),
    (lazy_compile(r"^Tokens: [\d.,]+[kKmM]? sent,.* received\."), 0.85),
    (lazy_compile(r"\(Y\)es/\(N\)o(?:/\([A-Z]\)[^\[]*)* \[(?:Yes|No)\]:"), 0.8),
    (lazy_compile(r"^Added \S+ to the chat\."), 0.8),
    (lazy_compile(r"^\^C again to exit$"), 0.6),
)
# The last row alone: Aider's yes/no question or its `Waiting for <model>` bar.
LAST_ROW_CONFIDENCE = 0.85
# Aider's prompt (a `> ` under a rule and the file list) with no other sign: `> ` is common.
PROMPT_ONLY_CONFIDENCE = 0.35
PROMPT_WITH_SIGN_CONFIDENCE = 0.75


class AiderDetector:
    name = NAME

    def identify(self, ctx: ScreenContext) -> float:
        return agent_confidence(ctx, _PROCESS_NAMES, _PACKAGES, _screen_score, _exit_screen)

    def detect(self, ctx: ScreenContext, prev: AgentState | None) -> Detection:
        lines: list[str] = stripped_rows(ctx.lines)
        return replace(self._detect(ctx, lines, prev), tools_seen=tool_sightings(lines))

    def _detect(self, ctx: ScreenContext, lines: list[str], prev: AgentState | None) -> Detection:
        model = _model(lines)
        if ctx.exited:
            return Detection(agent_type=NAME, state="Exited", rule="pane-exited", model=model)
        last = last_non_empty(lines)
        if last is None:
            return Detection(agent_type=NAME, state="Unknown", rule="blank-screen")
        if is_shell_prompt(last[1]):
            return Detection(agent_type=NAME, state="Exited", rule="shell-prompt", line=last[1].strip(), model=model)
        if _KEYBOARD_INTERRUPT.match(last[1]):
            # the second Ctrl-C: Aider says so and exits
            return Detection(agent_type=NAME, state="Exited", rule="keyboard-interrupt", line=last[1].strip(),
                             model=model)
        found = _current_state(lines, columns=ctx.columns, last=last, prompts=_prompt_rows(lines), cursor=ctx.cursor,
                               last_input=ctx.last_input)
        if found.rule == "prompt" and _redraw_while_busy(found, prev):
            # the streamed reply is redrawn below a prompt that already holds the sent text
            found = replace(found, state=prev.activity.state, rule="prompt-redraw-held",  # type: ignore[union-attr]
                            tokens=None, cost_usd=None, input_text=None)
        return replace(found, model=model)


_APPLIED_EDIT = lazy_compile(r"^Applied edit to (?P<file>\S.*)$")


def tool_sightings(lines: Sequence[str]) -> list[ToolSighting]:
    """Aider's file edits, one per `Applied edit to FILE` line (its only tool-like action shown)."""
    if "Applied edit to " not in screen_text(lines):
        return []  # no row can hold one
    return list(filter(None, map(_EDIT_LINES.__getitem__, lines)))


def _edit_line(line: str) -> ToolSighting | None:
    return ToolSighting("Edit", line.strip()) if _APPLIED_EDIT.match(line.strip()) else None


def _screen_score(lines: list[str]) -> float:
    last = last_non_empty(lines)
    if last is None:
        return 0.0
    question = _QUESTION.search(last[1]) if "(" in last[1] else None  # the choices form needs a `(`
    bottom = LAST_ROW_CONFIDENCE if (question and question.group("choices")) or _WAITING_BAR.match(last[1]) else 0.0
    if not bottom and not _prompt_rows(lines):
        return 0.0
    signs = max(map(_SIGN_WEIGHTS.__getitem__, lines), default=0.0)
    if signs:
        return max(bottom, signs, PROMPT_WITH_SIGN_CONFIDENCE)
    return bottom or PROMPT_ONLY_CONFIDENCE


def _find_prompt_rows(lines: list[str]) -> list[int]:
    """Rows of Aider prompts: `> …` (or `diff> …`) a few rows below a full-width rule."""
    rows: list[int] = []
    if _RULE_WORDS not in screen_text(lines):
        return rows  # no rule, so no prompt: no row need be looked at
    rule: int | None = None
    kinds = _PROMPT_KINDS
    for row, line in enumerate(lines):
        is_rule, is_prompt = kinds[line]
        if is_rule:
            rule = row
            continue
        if rule is not None and row - rule <= RULE_TO_PROMPT_ROWS_MAX and is_prompt:
            rows.append(row)
            rule = None
    return rows


# Asked by identify, detect and the exit check of the same frame: worked out once.
_prompt_rows = FrameMemo(_find_prompt_rows)
# Every rule holds these.
_RULE_WORDS = "─" * 20


def _model(lines: Sequence[str]) -> str | None:
    """The model the screen names last: the startup `Model:` line or the `Waiting for` bar."""
    text = screen_text(lines)
    if "odel: " not in text and "Waiting for " not in text:
        return None  # neither line is on the screen: no row need be looked at
    models = list(filter(None, map(_MODEL_LINES.__getitem__, lines)))  # a model name is never empty
    return models[-1] if models else None


def _model_line(line: str) -> str | None:
    match = _MODEL.match(line)
    if match is None and _SPINNER.match(line):
        match = _WAITING.search(line)
    return match.group("model") if match else None


def _sign_weight(line: str) -> float:
    return max((weight for pattern, weight in _SIGNATURES if pattern.search(line)), default=0.0)


def _token_report(line: str) -> tuple[tuple[int | None, bool], float | None]:
    """((tokens, whether the row is a token report), the session cost the row shows or None)."""
    tokens: int | None = None
    match = _TOKENS.match(line)
    if match:
        sent, received = parse_count(match.group("sent")), parse_count(match.group("received"))
        tokens = (sent or 0) + (received or 0) if sent is not None or received is not None else None
    match_cost = _COST.search(line)
    return (tokens, match is not None), float(match_cost.group("session")) if match_cost else None


def _litellm_error(line: str) -> AgentError | None:
    match = _LITELLM.search(line)
    if match:
        message = match.group("message").strip()
        return AgentError(type=error_kind(message), message=message)
    return None


# Per-line parses, by line text: every look reads the whole screen for these.
_EDIT_LINES = LineMemo(_edit_line)
_PROMPT_KINDS = LineMemo(lambda line: (bool(_RULE.match(line)), bool(_PROMPT.match(line))))
_MODEL_LINES = LineMemo(_model_line)
_SIGN_WEIGHTS = LineMemo(_sign_weight)  # the strongest sign of Aider on the row
_TOKEN_REPORTS = LineMemo(_token_report)
_LITELLM_ERRORS = LineMemo(_litellm_error)


def _question(lines: Sequence[str], row: int, columns: int) -> tuple[str, list[str]] | None:
    """(prompt, options) when row `row` asks a yes/no question; a question wrapped at the
    screen edge is joined with the rows above."""
    line = lines[row]
    above = row - 1
    # the rows above that the question filled to the edge (a narrow pane cuts even `[Yes]`)
    while above >= 0 and len(lines[above]) >= columns and lines[above].strip() and not is_rule(lines[above]):
        line = lines[above] + line
        above -= 1
    if "(" not in line and "[" not in line:
        return None  # every question form has a bracket: the pattern need not scan the row
    matches = list(_QUESTION.finditer(line))
    match = matches[-1] if matches else None
    if match is None or line[match.end():].strip().lower() not in _TYPED_ANSWERS:
        return None
    text = line[:match.end()]
    if match.group("choices"):
        options = [f"{m.group('key')}{m.group('tail')}".strip() for m in _CHOICE.finditer(match.group("choices"))]
    elif match.group("yn"):
        options = ["Yes", "No"]
    else:
        options = [word.strip() for word in match.group("slash").split("/")]
    return text.strip(), options


def _tokens(lines: Sequence[str], start: int, end: int) -> tuple[int | None, float | None]:
    """(sent + received, session cost) from the last token report in rows start..end-1."""
    tokens: int | None = None
    cost: float | None = None
    reports = _TOKEN_REPORTS
    for line in lines[start:end]:
        (row_tokens, is_report), row_cost = reports[line]
        if is_report:
            tokens, cost = row_tokens, None
        if row_cost is not None:
            cost = row_cost
    return tokens, cost


def _turn_error(lines: Sequence[str], start: int, end: int) -> AgentError | None:
    if "litellm." not in screen_text(lines):
        return None  # no row can name an error
    errors = [error for error in map(_LITELLM_ERRORS.__getitem__, lines[start:end]) if error is not None]
    return errors[-1] if errors else None


def _current_state(lines: Sequence[str], *, columns: int, last: tuple[int, str], prompts: list[int],
                   cursor: tuple[int, int] = (0, 0), last_input: bytes = b"") -> Detection:
    last_row, last_line = last
    prompt = prompts[-1] if prompts else None
    typed = _input_rows(lines, prompt, last_row) if prompt is not None else None
    if typed is not None and any(typed) and _sent(lines, last_row, cursor, last_input):
        return _sent_state(lines[prompt])  # type: ignore[index]
    if typed is not None:
        # the turn that finished last starts after the prompt before the current input line
        turn_start = prompts[-2] + 1 if len(prompts) > 1 else 0
        tokens, cost = _tokens(lines, turn_start, prompt)
        width = columns - len(_PROMPT.match(lines[prompt]).group("mode") or "") - len("> ")  # type: ignore[union-attr]
        return Detection(agent_type=NAME, state="Idle", rule="prompt", line=lines[prompt].strip(), tokens=tokens,
                         cost_usd=cost, error=_turn_error(lines, turn_start, prompt),
                         input_text=join_input_rows(typed, width, word_wrap=False))
    start = prompt + 1 if prompt is not None else 0
    error = _turn_error(lines, start, last_row + 1)
    question = _question(lines, last_row, columns)
    if question is not None:
        tokens, cost = _tokens(lines, start, last_row)
        text, options = question
        return Detection(agent_type=NAME, state="AwaitingConfirmation", rule="yes-no-question", line=text,
                         tokens=tokens, cost_usd=cost, confirmation=Confirmation(prompt=text, options=options))
    spinner = _SPINNER.match(last_line)
    if spinner or _BAR_ONLY.match(last_line) or _RETRYING.match(last_line):
        # an error printed over the bar (`░litellm.InternalServerError: …`) is not spinner text
        description = spinner.group("text") if spinner and not _LITELLM.search(last_line) else None
        return Detection(agent_type=NAME, state="Thinking", rule="waiting-spinner", line=last_line.strip(),
                         description=description, error=error)

    def unknown(rule: str) -> Detection:
        return Detection(agent_type=NAME, state="Unknown", rule=rule, line=last_line.strip(), error=error)

    if _INTERRUPT.match(last_line) or _prompt_being_drawn(lines, last_row):
        return unknown("prompt-coming")  # Idle only once the prompt is there to type at
    if prompt is None:
        return unknown("no-prompt")  # starting: its banner and settings, no prompt yet
    command = _prompt_text(lines[prompt])
    running = _command_running(command)
    if running is not None:
        return running
    if "Tokens: " in screen_text(lines) and any(
            _TOKEN_REPORTS[line][0][1] for line in lines[start:last_row + 1]):
        # the reply is complete; edits are applied and checks run before the next prompt
        return Detection(agent_type=NAME, state="Thinking", rule="after-reply", line=last_line.strip(), error=error)
    if not command:
        return unknown("output-after-empty-prompt")
    if command.startswith("/") and command[1:].split()[0].lower() not in _MODEL_COMMANDS:
        return unknown("command-output")
    # Text under the request the user sent, and none of the rows above: the reply streams.
    return Detection(agent_type=NAME, state="Generating", rule="reply-streaming", line=last_line.strip(), error=error)


def _sent(lines: Sequence[str], last_row: int, cursor: tuple[int, int], last_input: bytes) -> bool:
    """The cursor has left the input for the start of a blank row under it: Enter was pressed
    and nothing is drawn yet (a `/run` command at work, the first seconds of a slow reply).
    Ctrl-C leaves the same frame for a moment before its `^C again to exit`; where the last key
    typed is known, only Enter counts."""
    x, y = cursor
    if last_input and not last_input.endswith((b"\r", b"\n")):
        return False
    return x == 0 and y > last_row and (y >= len(lines) or not lines[y].strip())


def _sent_state(prompt_line: str) -> Detection:
    command = _prompt_text(prompt_line)
    running = _command_running(command)
    if running is not None:
        return running
    if command.startswith("/") and command[1:].split()[0].lower() not in _MODEL_COMMANDS:
        return Detection(agent_type=NAME, state="Unknown", rule="command-sent", line=command)
    return Detection(agent_type=NAME, state="Thinking", rule="request-sent", line=command)


def _command_running(command: str) -> Detection | None:
    """ToolUse for a sent `/run`, `!`, `/test` or `/lint` (Aider draws nothing while it runs)."""
    if not _RUN_PROMPT.match(command):
        return None
    tool = "run" if command.startswith(("!", "/run")) else command[1:].split()[0]
    return Detection(agent_type=NAME, state="ToolUse", rule="command-running", line=command, tool=tool)


def _input_rows(lines: Sequence[str], prompt: int, last_row: int) -> list[str] | None:
    """The text on each row of the input at prompt row `prompt` when it ends the screen: the
    prompt row and the rows prompt_toolkit continues it on (with the same `> ` before them),
    else None (output follows the prompt: it was sent)."""
    rows: list[str] = []
    mode: str | None = None
    for row in range(prompt, last_row + 1):
        match = _PROMPT.match(lines[row])
        if match is None or (row > prompt and match.group("mode") != mode):
            return None
        mode = match.group("mode")
        rows.append(match.group("text") or "")
    return rows


def _exit_screen(lines: Sequence[str]) -> bool:
    """A shell prompt as the last row, shortly after Aider's prompt or its exit output."""
    last = last_non_empty(lines)
    if last is None or not is_shell_prompt(last[1]):
        return False
    prompts = _prompt_rows(lines)
    if prompts and last[0] - prompts[-1] <= EXIT_ROWS_MAX:
        return True
    above = [line for line in lines[:last[0]] if line.strip()][-EXIT_ROWS_MAX:]
    return any(_EXIT_MARKER.match(line) for line in above)


def _prompt_being_drawn(lines: Sequence[str], last_row: int) -> bool:
    """The last rows are a rule and the file list: the next prompt is being printed."""
    kinds = _PROMPT_KINDS
    for row in range(last_row, max(-1, last_row - RULE_TO_PROMPT_ROWS_MAX), -1):
        is_rule, is_prompt = kinds[lines[row]]
        if is_rule:
            return True
        if is_prompt:
            return False
    return False


def _redraw_while_busy(found: Detection, prev: AgentState | None) -> bool:
    """A prompt with text as the last row right after a busy frame: Aider is redrawing the
    reply it streams (a typed-but-unsent draft only follows an idle prompt)."""
    busy_before = prev is not None and prev.agent_type == NAME and prev.activity.state in BUSY_STATES
    return busy_before and bool(_prompt_text(found.line or ""))


def _prompt_text(line: str) -> str:
    match = _PROMPT.match(line)
    return (match.group("text") or "").strip() if match else ""


# The layout, for readers of a finished turn (muxd.executions.answers): the same rows the
# state is read from, so the two never disagree about where a prompt or a report is.
def prompt_rows(lines: list[str]) -> list[int]:
    """Rows of Aider's prompts (`> …` a few rows under a rule), top to bottom."""
    rows: list[int] = _prompt_rows(lines)
    return rows


def prompt_text(line: str) -> str:
    """What was typed at a prompt row (`> make a script` → "make a script")."""
    return _prompt_text(line)


def is_rule(line: str) -> bool:
    return bool(_PROMPT_KINDS[line][0])


def is_token_report(line: str) -> bool:
    """`Tokens: 651 sent, 31 received.`: the report that ends a reply."""
    return bool(_TOKEN_REPORTS[line][0][1])


def is_status_line(line: str) -> bool:
    """Aider's own words between a reply and the next prompt, not the model's: an applied
    edit, a yes/no question, a litellm error, a retry note, the waiting bar, `^C again to exit`."""
    text = line.strip()
    return bool(_APPLIED_EDIT.match(text) or is_error_line(text) or _RETRYING.match(text) or _INTERRUPT.match(text)
                or _SPINNER.match(line) and _WAITING.search(line) or _BAR_ONLY.match(line)
                or ("(" in text or "[" in text) and _QUESTION.search(text))


def is_error_line(line: str) -> bool:
    """`litellm.InternalServerError: …`: Aider explains it on the row below, in its own words."""
    return _LITELLM.search(line) is not None
