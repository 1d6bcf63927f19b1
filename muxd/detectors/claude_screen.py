"""Where things are on a Claude Code screen: the prompt box (`❯` between two `─` rules) and
its footer, the live line just above the box, a dialog that replaced the box, the banner,
and the exit output. Everything is found from the bottom up, so conversation text never
counts as one of these regions."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import msgspec

from muxd.detectors._lazy_re import lazy_compile
from muxd.detectors._text import FrameMemo, LineMemo, join_input_rows, screen_text

MIN_RULE_CHARS = 20             # a box rule spans the pane; shorter runs of ─ are content
MAX_BOX_ROWS = 20               # a multi-line draft grows the box up to this
MAX_FOOTER_ROWS = 14            # footer, hints, an open slash-command menu below the box
MAX_LIVE_SCAN_ROWS = 30         # spinner + tip + todo list above the box
MAX_QUEUED_PROMPTS = 3          # messages typed while Claude works, shown above the box
MAX_DIALOG_ROWS = 60            # a permission dialog with a diff preview
MAX_OPTION_GAP_ROWS = 14        # from the first option of a dialog up to its question
MAX_OPTION_ROWS = 30            # an option list, with descriptions under its options
MAX_WRAPPED_OPTION_ROWS = 3     # rows one option's text may wrap onto
MAX_FOOTER_TAIL_ROWS = 3        # rows at the bottom that tell a dialog's kind
MAX_EXIT_GAP_ROWS = 2           # exit output just above the shell prompt
MAX_EXIT_SCAN_ROWS = 12         # the exit output's own height

# A teammate of an agent team (`claude --agent-name helper`) names itself in its box's top
# rule: `──── @helper ─`.
_RULE = lazy_compile(r"^[╭╰]?─{%d,}(?: @[\w-]+ ─+)?[╮╯]?$" % MIN_RULE_CHARS)
# The top edge of a panel: the dialog `/exit` opens while teammates or background tasks run
# ("Background work is running"), whose title asks no question.
_PANEL_TOP = lazy_compile(r"^▔{%d,}$" % MIN_RULE_CHARS)
_OPTION = lazy_compile(r"^(?:❯\s*)?(?P<number>\d+)\.\s+(?P<text>\S.*)$")
_DIALOG_KEYS = lazy_compile(
    r"\b(?:Esc to (?:cancel|exit)|Enter to (?:confirm|select)|Tab to amend|↑/↓ to navigate)\b"
)
_QUESTION_KEYS = lazy_compile(r"\b(?:Enter to select|↑/↓ to navigate)\b")
_QUESTION_TAB = lazy_compile(r"^[☐☒✔✓□■]\s")
_MORE_ROWS = lazy_compile(r"^[↑↓] \d+ more\b")  # `↑ 2 more lines` under a list cut short
_LOGO = lazy_compile(r"[\u2580-\u259f]")  # the whole Block Elements range: the logo animates
_BANNER = lazy_compile(r"\bClaude Code v\d+\.\d+")
_MODEL = lazy_compile(r"^(?P<model>[^·]+?)(?:\s+with\s+\S+\s+effort)?\s*(?:·.*)?$")
_SHELL_PROMPT_END = lazy_compile(r"[$#%>❯➜»]$")
_SHELL_PROMPT_USER = lazy_compile(r"^[\w.-]+@[\w.-]+[:\s][^$#%]*[$#%]\s")
_RESUME = lazy_compile(r"\bclaude\s+(?:--resume|-r)\s+(?P<id>[0-9a-f]{8}-[0-9a-f-]{27,})\b")
_EXIT_TEXT = lazy_compile(r"^(?:Resume this session with:|Total cost:|Total duration|Goodbye!?)")
_COST = lazy_compile(r"^Total cost:\s*\$(?P<usd>\d+(?:\.\d+)?)")
_CONTEXT = lazy_compile(r"(?:Context left until auto-compact:\s*(?P<a>\d+)%|\((?P<b>\d+)% remaining\)|"
                      r"(?P<c>\d+)% until auto-compact)")
_BOX_CHARS = "│┃"


def is_rule(line: str) -> bool:
    return _RULES[line]


def unbox(line: str) -> str:
    """The text of a row inside a `│ … │` box (older dialogs), or of any row, stripped."""
    text = line.strip()
    if text[:1] in _BOX_CHARS:
        text = text[1:]
        if text.rstrip()[-1:] in _BOX_CHARS:
            text = text.rstrip()[:-1]
    return text.strip()


def _last_row(lines: Sequence[str]) -> int:
    for index in range(len(lines) - 1, -1, -1):
        if lines[index].strip():
            return index
    return -1


# Index of the last non-blank row, -1 if none. The box, the dialog and the exit output are
# each looked for from there, on the same frame: worked out once.
last_row = FrameMemo(_last_row)


def rows_between(lines: Sequence[str], start: int, end: int) -> int:
    """Non-blank rows in lines[start:end]."""
    return sum(1 for line in lines[max(0, start):end] if line.strip())


class PromptBox(msgspec.Struct, frozen=True):  # a Struct: made on every look, 10x faster than a dataclass
    top: int                    # row of the upper rule
    bottom: int                 # row of the lower rule
    input_line: str             # the `❯ …` row, stripped
    footer: list[str] = msgspec.field(default_factory=list)
    rounded: bool = False       # the older `╭─╮ │ > │ ╰─╯` box


def find_prompt_box(lines: Sequence[str]) -> PromptBox | None:
    """The input box at the bottom of the screen: `❯` (or an old `│ >`) between two rules."""
    end = last_row(lines)
    below = 0  # non-blank rows under the candidate lower rule
    for bottom in range(end, -1, -1):
        line = lines[bottom]
        if not line.strip():
            continue
        if below > MAX_FOOTER_ROWS:
            return None
        if is_rule(line):
            box = _box_above(lines, bottom, end)
            if box is not None:
                return box
        elif not line[:1].isspace():
            return None  # Claude indents every row under its box; a pager or shell does not
        below += 1
    return None


def _box_above(lines: Sequence[str], bottom: int, end: int) -> PromptBox | None:
    for top in range(bottom - 1, max(-1, bottom - 1 - MAX_BOX_ROWS), -1):
        if not is_rule(lines[top]):
            continue
        inner = [text for text in map(unbox, lines[top + 1:bottom]) if text]
        rounded = lines[top].strip().startswith("╭")
        if not inner or inner[0][:1] not in ("❯>" if rounded else "❯"):
            return None
        footer = [line.strip() for line in lines[bottom + 1:end + 1] if line.strip()]
        return PromptBox(top, bottom, inner[0], footer, rounded)
    return None


# What Claude shows (dimmed) in an empty prompt box: an example to try, a hint about the
# messages queued while it works, or after an API error (a rate limit's 429) what to do next.
# Plain text cannot tell dim from typed: known by their words.
_PLACEHOLDER = lazy_compile(r'^(?:Try "[^"]*"|Press up to edit queued messages\b.*|Resend your message to try again)$')
BOX_INDENT = "  "  # the rows of a draft after the `❯ ` row


def box_input(lines: Sequence[str], box: PromptBox, columns: int) -> str | None:
    """The text typed in the prompt box, its lines joined by "\\n" (rows the box wrapped are
    joined back); None when the box is empty or shows its placeholder."""
    rows: list[str] = []
    for line in lines[box.top + 1:box.bottom]:
        if box.rounded:
            line = unbox(line)
        if not rows:
            if line[:1] in "❯>":
                rows.append(line[1:].removeprefix(" "))
            continue
        rows.append(line.removeprefix(BOX_INDENT) if line.startswith(BOX_INDENT) else line.strip())
    text = join_input_rows(rows, columns - len(BOX_INDENT))
    return None if text is None or _PLACEHOLDER.match(text) else text


def live_row(lines: Sequence[str], top: int, is_live: Callable[[str], object]) -> int | None:
    """The first unindented row above the box: where the spinner or the done line sits.
    Only indented rows (tips, todos, right-aligned hints) lie between it and the box, and
    perhaps a few queued prompts (`❯ …`) under a row that `is_live` accepts."""
    first: int | None = None
    queued = 0
    for index in range(top - 1, max(-1, top - 1 - MAX_LIVE_SCAN_ROWS), -1):
        line = lines[index]
        if not line.strip() or line[:1].isspace():
            continue
        if first is None:
            first = index
        if not line.startswith("❯"):
            return index if first == index or is_live(line) else first
        queued += 1
        if queued > MAX_QUEUED_PROMPTS:
            break
    return first


def turn_start(lines: Sequence[str], end: int) -> int:
    """Row after the user's last prompt above `end` (0 if it scrolled away)."""
    for index in range(end - 1, -1, -1):
        if lines[index].startswith("❯"):
            return index + 1
    return 0


class Dialog(msgspec.Struct, frozen=True):
    top: int                    # first row of the dialog (its rule, or the first row shown)
    title: str
    prompt: str
    options: list[str]
    question: bool              # the AskUserQuestion picker, not a yes/no approval
    clipped: bool = False       # taller than the pane: its title is cut off above the first row
    panel: bool = False         # under a `▔` edge, titled without a question: about no tool


def find_dialog(lines: Sequence[str]) -> Dialog | None:
    """A dialog that replaced the prompt box: a cursor `❯` on an option list, a question
    ending in `?` above it, key hints (or an old box's border) on the last rows."""
    end = last_row(lines)
    if end < 0:
        return None
    start = max(0, end - MAX_DIALOG_ROWS)
    tail = [unbox(line) for line in lines[max(0, end - MAX_FOOTER_TAIL_ROWS + 1):end + 1] if line.strip()]
    # The key hints are the dialog's last row (an indented note may follow).
    has_keys = _DIALOG_KEY_ROWS
    keyed = has_keys[lines[end]] or (lines[end][:1].isspace() and len(tail) > 1 and has_keys[tail[-2]])
    boxed = lines[end].strip().startswith("╰")
    # Without key hints a dialog is believed only whole: options up to the last row, its
    # question and the rule over it (`Exit plan mode?`).
    keyless = not (keyed or boxed)
    if (keyless and not _ends_in_options(lines, end)) or (is_shell_prompt(lines[end]) and not has_keys[lines[end]]):
        return None
    cursor = next((i for i in range(end, start - 1, -1) if unbox(lines[i]).startswith("❯")), None)
    if cursor is None:
        return None
    question = any(_QUESTION_KEYS.search(text) for text in tail)
    # A question's options carry descriptions on the rows under them; an approval's rows
    # under an option are its own text, wrapped.
    first, options = _options(lines, cursor, end, joined=not question)
    prompt_row = _question_row(lines, first, max(start, first - MAX_OPTION_GAP_ROWS))
    if prompt_row is None:
        return None
    panel = bool(_PANEL_TOP.match(lines[prompt_row - 1].strip())) if prompt_row else False
    top = prompt_row if panel else _dialog_top(lines, prompt_row, start)
    clipped = top is None
    if clipped and keyless:
        return None
    if top is None:
        # A dialog opens with a rule (or an old box's top border), unless it is taller than
        # the pane: then its first rows are cut off, it fills the screen from the top, and
        # what is left shows an approval's numbered options.
        if start > 0 or not lines[0].strip() or not _OPTION.match(unbox(lines[cursor])):
            return None
        top = 0
    prompt = _question_text(lines, prompt_row)
    title = next((unbox(line) for line in lines[top:prompt_row + 1] if unbox(line)), "")
    question = question or bool(_QUESTION_TAB.match(title))
    return Dialog(top, title, prompt, options, question, clipped, panel)


def _ends_in_options(lines: Sequence[str], end: int) -> bool:
    """The last rows are a numbered option list with the cursor `❯` on it, from its `1.` down:
    a dialog drawn without key hints under it (`Exit plan mode?`)."""
    cursor = False
    between = 0  # rows of wrapped option text
    for index in range(end, max(-1, end - MAX_OPTION_ROWS), -1):
        text = unbox(lines[index])
        match = _OPTION.match(text)
        if match is None:
            between += 1
            if not text or not lines[index][:1].isspace() or between > MAX_WRAPPED_OPTION_ROWS:
                return False
            continue
        between = 0
        cursor = cursor or text.startswith("❯")
        if match.group("number") == "1":
            return cursor
    return False


def _options(lines: Sequence[str], cursor: int, end: int, *, joined: bool = False) -> tuple[int, list[str]]:
    """(first option row, option texts as shown) around the cursor row; `joined`: with the
    rows an option wrapped onto (indented, up to a blank row, a rule or the key hints)."""
    numbered = _OPTION.match(unbox(lines[cursor]))
    if numbered:
        first = index = cursor
        number = int(numbered.group("number"))
        while number > 1 and index > max(0, cursor - MAX_OPTION_ROWS):  # options above the cursor
            index -= 1
            match = _OPTION.match(unbox(lines[index]))
            if match and int(match.group("number")) == number - 1:
                number, first = number - 1, index
        options = []
        wrapping = False  # the row above is an option (or its wrapped text)
        for line in lines[first:end + 1]:
            text = unbox(line)
            match = _OPTION.match(text)
            if match:
                options.append(f"{match.group('number')}. {match.group('text').strip()}")
                wrapping = True
            elif joined and wrapping and text and line[:1].isspace() and not (
                    is_rule(line) or _DIALOG_KEY_ROWS[line] or _MORE_ROWS.match(text)):
                options[-1] += " " + text
            else:
                wrapping = False
        return first, options
    first = cursor
    while first > 0 and unbox(lines[first - 1]) and not is_rule(lines[first - 1]):
        first -= 1
    last = cursor
    while last < end and unbox(lines[last + 1]) and not _DIALOG_KEYS.search(lines[last + 1]):
        last += 1
    options = [unbox(line).lstrip("❯").strip() for line in lines[first:last + 1]]
    return first, [option for option in options if option]


def _question_row(lines: Sequence[str], first_option: int, stop: int) -> int | None:
    for index in range(first_option - 1, stop - 1, -1):
        line = lines[index]
        if is_rule(line):
            return None
        if "?" in unbox(line):
            return index
        if _PANEL_TOP.match(line.strip()):
            return index + 1 if index + 1 < first_option else None  # its title
    return None


def _question_text(lines: Sequence[str], row: int) -> str:
    """The question's paragraph up to its first `?` (wrapped rows joined)."""
    start = row
    while start > 0 and unbox(lines[start - 1]) and not _is_separator(lines[start - 1]):
        start -= 1
    text = " ".join(unbox(line) for line in lines[start:row + 1])
    return text[:text.index("?") + 1] if "?" in text else text


def _is_separator(line: str) -> bool:
    text = line.strip()
    return is_rule(line) or (len(text) >= 3 and set(text) <= set("╌─┄┈-═▔ "))


def _dialog_top(lines: Sequence[str], prompt_row: int, start: int) -> int | None:
    """The row under the dialog's top rule, None if there is no rule above the question."""
    for index in range(prompt_row - 1, start - 1, -1):
        if is_rule(lines[index]):
            return index + 1
    return None


def banner_model(lines: Sequence[str]) -> str | None:
    """The model on the welcome banner's second row ("Opus 5.5 · API Usage Billing")."""
    if "Claude Code v" not in screen_text(lines):
        return None  # the banner scrolled away: no row need be looked at
    for index, line in enumerate(lines[:-1]):
        if "Claude Code v" not in line:
            continue
        found = _BANNER_MODELS[line, lines[index + 1]]
        if found is not _NOT_BANNER:
            return found  # type: ignore[no-any-return]
    return None


_NOT_BANNER = object()


def _banner_model_at(rows: tuple[str, str]) -> object:
    """The model (or None) if `rows` are the banner's title row and the row under it, else _NOT_BANNER."""
    line, below = rows
    if not _BANNER.search(line) or not (_LOGO.search(line) or _LOGO.search(below)):
        return _NOT_BANNER
    match = _MODEL.match(_LOGO.sub(" ", below).strip())
    if match and match.group("model").strip():
        return match.group("model").strip()
    return None


# By the banner's two rows: it stays on screen, unchanged, for the first screens of a session.
_BANNER_MODELS = LineMemo(_banner_model_at)  # type: ignore[arg-type]


def has_banner(lines: Sequence[str]) -> bool:
    if "Claude Code v" not in screen_text(lines):
        return False  # the banner's words are nowhere: no row need be looked at
    return any("Claude Code v" in line and _BANNER.search(line) and _LOGO.search(line) for line in lines)


class ExitOutput(msgspec.Struct, frozen=True):
    line: str
    session_id: str | None
    cost_usd: float | None


def find_exit(lines: Sequence[str]) -> ExitOutput | None:
    """Claude's exit output (resume hint, cost summary) right above a shell prompt on the
    last row; or a Claude dialog right above it, left behind when Claude quit from it."""
    end = last_row(lines)
    if end < 1 or not is_shell_prompt(lines[end]):
        return None
    session_id = cost = None
    first: str | None = None
    last = -1
    for index in range(max(0, end - MAX_EXIT_SCAN_ROWS), end):
        text = lines[index].strip()
        resume = _RESUME.search(text)
        money = _COST.match(text)
        if resume:
            session_id = resume.group("id")
        elif money:
            cost = float(money.group("usd"))
        elif not _EXIT_TEXT.match(text):
            continue
        first = first or text
        last = index
    if first is not None and rows_between(lines, last + 1, end) <= MAX_EXIT_GAP_ROWS:
        return ExitOutput(first, session_id, cost)
    if find_dialog(lines[:end]) is not None:
        return ExitOutput(lines[end].strip(), None, None)
    return None


def is_shell_prompt(line: str) -> bool:
    return _SHELL_PROMPTS[line]


def _is_shell_prompt(line: str) -> bool:
    text = line.strip()
    return bool(_SHELL_PROMPT_END.search(text) or _SHELL_PROMPT_USER.match(text))


def context_left(footer: Sequence[str]) -> float | None:
    for line in footer:
        left = _CONTEXT_LEFT[line]
        if left is not None:
            return left
    return None


def _context_left(line: str) -> float | None:
    match = _CONTEXT.search(line)
    return float(next(group for group in match.groups() if group)) if match else None


# By row text: the rules and the footer are looked for on every look, and stay the same.
_RULES = LineMemo(lambda line: bool(_RULE.match(line.strip())))
_CONTEXT_LEFT = LineMemo(_context_left)
# And the last row, which every identify reads for a dialog's key hints or a shell prompt
# (patterns that try every column).
_DIALOG_KEY_ROWS = LineMemo(lambda line: bool(_DIALOG_KEYS.search(line)))
_SHELL_PROMPTS = LineMemo(_is_shell_prompt)
