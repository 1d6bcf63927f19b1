"""`ClaudeDetector`: Claude Code (Anthropic's CLI), from its process or its screen.

The screen is read from the bottom up (claude_screen.py). With the prompt box (`❯` between
two rules) at the bottom, the live line just above it decides: a spinner means a turn runs,
and the last block of the turn tells Thinking, Generating or ToolUse apart (claude_lines.py);
no spinner means Idle. Without the box, a dialog has replaced it (AwaitingConfirmation, or
AwaitingInput for the question picker), or a shell prompt under Claude's exit output means
Exited. Nothing is matched elsewhere in the conversation, so quoted text never decides.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from msgspec.structs import replace

from muxd.detectors._agent_cli import (
    FOREIGN_PROCESS_CONFIDENCE_MAX, process_is_foreign, shell_in_front, with_session_shown,
)
from muxd.detectors._lazy_re import lazy_compile
from muxd.detectors._text import LineMemo
from muxd.detectors.base import ScreenContext
from muxd.detectors.claude_lines import (
    Block, Spinner, background_wait, classify_block, is_done_line, parse_spinner, sightings, split_blocks,
)
from muxd.detectors.claude_limits import limit_shown
from muxd.detectors.claude_panels import background_agents, find_panel
from muxd.detectors.claude_screen import (
    PromptBox, banner_model, box_input, context_left, find_dialog, find_exit, find_prompt_box,
    has_banner, live_row, turn_start,
)
from muxd.detectors.shell import is_shell_prompt
from muxd.detectors.state import AgentState, Confirmation, Detection
from muxd.detectors.usage_limits import limited

MAX_SCREEN_ROWS = 400           # rows looked at, from the bottom: detection stays cheap
MAX_LINE_CHARS = 1000           # longer rows are cut: no row of Claude's is this wide

# Programs whose screen shows a file, not a live agent, however Claude-like the text.
VIEWERS = frozenset({"vi", "vim", "nvim", "view", "less", "more", "most", "man", "nano", "emacs",
                     "bat", "git", "tig", "htop", "top", "watch", "tail", "head", "cat"})
JS_LAUNCHERS = frozenset({"node", "nodejs", "npx", "npm", "bun", "bunx", "deno", "pnpm", "yarn"})
PACKAGE = "@anthropic-ai/claude-code"
# Footer phrases under Claude's prompt box.
INTERRUPT_HINT = "esc to interrupt"  # in the footer while a turn runs, and only then
FOOTER_MARKS = ("? for shortcuts", "esc to interrupt", "shift+tab to cycle", "mode on", "for agents",
                "Ctrl-C again to exit", "auto-compact", "bypass permissions", "accept edits")
# Those no other CLI here prints under a rounded `│ > │` input box (Gemini's older one).
STRONG_FOOTER_MARKS = ("esc to interrupt", "shift+tab to cycle", "bypass permissions", "auto-accept edits",
                       "plan mode on")

BOX_CONFIDENCE = 0.55           # `❯` between two rules at the bottom, nothing else
ROUNDED_BOX_CONFIDENCE = 0.3    # `│ > │` in a rounded box: other CLIs draw one too
FOOTER_BONUS = 0.3
LIVE_LINE_BONUS = 0.1
BANNER_BONUS = 0.1
DIALOG_CONFIDENCE = 0.75
EXIT_CONFIDENCE = 0.7
BANNER_ONLY_CONFIDENCE = 0.3    # the banner scrolled into view in something else
VIEWER_CAP = 0.2

_INTERRUPTED = lazy_compile(r"^⎿\s+Interrupted\b")


class ClaudeDetector:
    name = "claude"

    def identify(self, ctx: ScreenContext) -> float:
        """1.0 when the foreground process is Claude Code, else a confidence from the screen."""
        if _is_claude_process(ctx.process_name, ctx.process_argv):
            return 1.0
        if shell_in_front(ctx):
            return 0.0  # Claude, if it ran here, has quit: its screen left behind is not Claude
        score = _screen_confidence(_rows(ctx.lines))
        if _program(ctx.process_name, ctx.process_argv) in VIEWERS:
            return min(score, VIEWER_CAP)
        if process_is_foreign(ctx):
            # Another program is in front (Cline draws `❯` between two rules too): a screen
            # like Claude's is not Claude's unless its process is
            return min(score, FOREIGN_PROCESS_CONFIDENCE_MAX)
        return score

    def detect(self, ctx: ScreenContext, prev: AgentState | None) -> Detection:
        """The state Claude's screen shows, with what it says about the turn."""
        lines = _rows(ctx.lines)
        return with_session_shown(self._read(ctx, lines, prev), lines)

    def _read(self, ctx: ScreenContext, lines: list[str], prev: AgentState | None) -> Detection:
        model = banner_model(lines)
        if ctx.exited:
            return Detection(agent_type="claude", state="Exited", rule="pane-exited", model=model)
        box = find_prompt_box(lines)
        if box is not None:
            return _with_box(lines, box, model, ctx.columns, ctx.now)
        exit_output = find_exit(lines)
        if exit_output is not None:
            return Detection(agent_type="claude", state="Exited", rule="exit-output", line=exit_output.line,
                             session_id=exit_output.session_id, cost_usd=exit_output.cost_usd)
        return _without_box(lines, model, prev, ctx.now)


def _rows(lines: Sequence[str]) -> list[str]:
    return list(map(_CLEAN_ROWS.__getitem__, list(lines)[-MAX_SCREEN_ROWS:]))


def _clean_row(line: str) -> str:
    return line[:MAX_LINE_CHARS].rstrip().replace("\x00", " ").replace("\xa0", " ")


_CLEAN_ROWS = LineMemo(lambda line: _clean_row(str(line)))


def _program(name: str | None, argv: Sequence[str]) -> str:
    if argv:
        return os.path.basename(str(argv[0]))
    return name or ""


def _is_claude_process(name: str | None, argv: Sequence[str]) -> bool:
    verdict: bool = _PROCESS_VERDICTS[(name, tuple(argv))]
    return verdict


# Process verdicts remembered (one per pane's foreground program, give or take): every
# identify asks, and the foreground process rarely changes between looks.
PROCESS_VERDICTS_MAX = 256
_PROCESS_VERDICTS = LineMemo(lambda key: _claude_process(*key), limit=PROCESS_VERDICTS_MAX)


def _claude_process(name: str | None, argv: Sequence[str]) -> bool:
    args = [str(arg) for arg in argv]
    program = _program(name, args)
    if name == "claude" or program in ("claude", "claude.exe"):
        return True
    if args and ("/claude/versions/" in args[0] or PACKAGE in args[0]):
        return True
    if program in JS_LAUNCHERS or name in JS_LAUNCHERS:
        for arg in args[1:]:
            base = os.path.basename(arg)
            if PACKAGE in arg or base == "claude" or (base == "cli.js" and "claude-code" in arg):
                return True
    return False


def _screen_confidence(lines: list[str]) -> float:
    banner = has_banner(lines)
    box = find_prompt_box(lines)
    if box is not None:
        score = ROUNDED_BOX_CONFIDENCE if box.rounded else BOX_CONFIDENCE
        marks = STRONG_FOOTER_MARKS if box.rounded else FOOTER_MARKS
        if any(mark in line for line in box.footer for mark in marks):
            score += FOOTER_BONUS
        row = live_row(lines, box.top, parse_spinner)
        if row is not None and (parse_spinner(lines[row]) or is_done_line(lines[row])):
            score += LIVE_LINE_BONUS
        return min(1.0, score + (BANNER_BONUS if banner else 0.0))
    if find_exit(lines) is not None:
        return EXIT_CONFIDENCE
    if find_dialog(lines) is not None or find_panel(lines) is not None:
        return min(1.0, DIALOG_CONFIDENCE + (BANNER_BONUS if banner else 0.0))
    return BANNER_ONLY_CONFIDENCE if banner else 0.0


def _without_box(lines: list[str], model: str | None, prev: AgentState | None = None, now: float = 0.0) -> Detection:
    panel = find_panel(lines)
    if panel is not None:
        # /help, /status, /cost: an overlay over the prompt box (Esc closes it); the live row
        # above it still tells a turn at work from Claude at rest. The /model picker: a key
        # there picks a model, so it is no prompt to type at, nor a question.
        live = _live_state(lines, live_row(lines, panel.top, parse_spinner), panel.top, model)
        if live is not None:
            return live
        return Detection(agent_type="claude", state="Idle" if panel.kind == "overlay" else "Unknown",
                         rule=panel.kind, line=panel.title, model=model,
                         tools_seen=sightings(lines[:panel.top], live_tail=False))
    dialog = find_dialog(lines)
    if dialog is None:
        last = next((line.strip() for line in reversed(lines) if line.strip()), None)
        if last is None:
            return Detection(agent_type="claude", state="Unknown", rule="blank-screen")
        if is_shell_prompt(last) and not last.startswith("❯"):
            # Claude gave the terminal back with no exit output of its own (or after a `clear`);
            # a `❯` alone is Claude's own prompt row as often as a shell's (its box half drawn)
            return Detection(agent_type="claude", state="Exited", rule="shell-prompt", line=last, model=model)
        # Still starting, a panel (/status, /model, settings) or a frame mid-redraw: no
        # prompt to type at, so not Idle; what runs cannot be told.
        return Detection(agent_type="claude", state="Unknown", rule="no-prompt-box", line=last, model=model,
                         tools_seen=sightings(lines, live_tail=False))
    above = lines[:dialog.top]
    seen = sightings(above, live_tail=False)
    confirmation = Confirmation(prompt=dialog.prompt, options=dialog.options)
    limit = limit_shown(lines, turn_start(above, len(above)), dialog.top, (), now)
    if limit is not None:  # "What do you want to do?" about the limit just hit (a weekly one)
        return limited(Detection(agent_type="claude", state="Unknown", rule="", model=model, tools_seen=seen),
                       limit, "usage-limit-dialog", confirmation=confirmation)
    if dialog.question:
        return Detection(agent_type="claude", state="AwaitingInput", rule="question-dialog",
                         line=dialog.prompt, model=model, tool="AskUserQuestion",
                         tools_seen=seen, confirmation=confirmation)
    numbered = dialog.options and dialog.options[0][:1].isdigit()
    tool = _dialog_tool(dialog.title, above) if numbered and not dialog.panel else None
    if tool is None and dialog.clipped and prev is not None and prev.activity.state in (
            "ToolUse", "AwaitingConfirmation"):
        tool = prev.tool  # the title that names it is cut off: it asks about the tool just started
    rule = "permission-dialog" if tool else "confirm-dialog"
    return Detection(agent_type="claude", state="AwaitingConfirmation", rule=rule,
                     line=dialog.prompt, model=model, tool=tool, tools_seen=seen, confirmation=confirmation)


# First words of a permission dialog's title, and the tool it asks about.
DIALOG_TITLES = (("bash", "Bash"), ("edit", "Edit"), ("create", "Write"), ("write", "Write"),
                 ("read", "Read"), ("fetch", "WebFetch"), ("web search", "WebSearch"),
                 ("notebook", "NotebookEdit"), ("exit plan mode", "ExitPlanMode"))


def _dialog_tool(title: str, above: list[str]) -> str | None:
    lowered = title.lower()
    for prefix, tool in DIALOG_TITLES:
        if lowered.startswith(prefix):
            return tool
    blocks = split_blocks(above[turn_start(above, len(above)):])
    for block in reversed(blocks):
        found = classify_block(block)
        if found.tool:
            return found.tool
    return None


def _with_box(lines: list[str], box: PromptBox, model: str | None, columns: int, now: float) -> Detection:
    found = _read_box(lines, box, model, columns, now)
    background = max(found.background, background_agents(box.footer))
    return replace(found, background=background) if background else found


def _read_box(lines: list[str], box: PromptBox, model: str | None, columns: int, now: float) -> Detection:
    context = context_left(box.footer)
    row = live_row(lines, box.top, parse_spinner)
    live = _live_state(lines, row, box.top, model)
    if live is not None:
        return replace(live, context_left_pct=context)
    if any(INTERRUPT_HINT in text for text in box.footer):
        # A turn runs (its footer offers to interrupt it) though no spinner row is drawn: in
        # fullscreen mode a long answer streams with the spinner scrolled off. Not Idle.
        return Detection(agent_type="claude", state="Generating", rule="footer-interrupt",
                         line=next(t.strip() for t in box.footer if INTERRUPT_HINT in t), model=model,
                         context_left_pct=context, tools_seen=sightings(lines[:box.top], live_tail=True))
    rule, line = "prompt-idle", box.input_line
    if row is not None and is_done_line(lines[row]):
        rule, line = "turn-done", lines[row].strip()
    elif any(_INTERRUPTED.match(text.strip()) for text in lines[max(0, box.top - 4):box.top]):
        rule = "interrupted"
    found = Detection(agent_type="claude", state="Idle", rule=rule, line=line, model=model,
                      context_left_pct=context, tools_seen=sightings(lines[:box.top], live_tail=False),
                      input_text=box_input(lines, box, columns))
    limit = limit_shown(lines, turn_start(lines, box.top), box.top, box.footer, now)
    return found if limit is None else limited(found, limit, "usage-limit")


def _live_state(lines: list[str], row: int | None, top: int, model: str | None) -> Detection | None:
    """What the live row `row` above row `top` (the prompt box, or a panel over it) says is
    running: a turn (its spinner) or background agents; None when it says nothing runs."""
    if row is None:
        return None
    waiting = background_wait(lines[row])
    if waiting is not None:
        # The turn is over, the prompt takes input, but a subagent started in the background
        # still runs and its result starts the next turn by itself: the work is not done.
        words, count = waiting
        return Detection(agent_type="claude", state="ToolUse", rule="background-agents", line=lines[row].strip(),
                         description=words, model=model, tool="Agent",
                         tools_seen=sightings(lines[:top], live_tail=False), background=count)
    spinner = parse_spinner(lines[row])
    if spinner is None:
        return None
    conversation = lines[:row]
    state, rule, tool = _busy_state(spinner, conversation)
    return Detection(agent_type="claude", state=state, rule=rule, line=lines[row].strip(),
                     description=spinner.description, elapsed_s=spinner.elapsed_s, tokens=spinner.tokens,
                     model=model, tool=tool, tools_seen=sightings(conversation, live_tail=True), error=spinner.error)


def _busy_state(spinner: Spinner, conversation: list[str]) -> tuple[str, str, str | None]:
    """Thinking, Generating or ToolUse from the last block between the user's prompt and the spinner."""
    if spinner.error is not None:
        return "Thinking", "api-retry", None
    blocks = split_blocks(conversation[turn_start(conversation, len(conversation)):])
    block = classify_block(blocks[-1]) if blocks else Block("user", None, "")
    if block.kind == "tool-running":
        return "ToolUse", "tool-running", block.tool
    if spinner.thinking:
        return "Thinking", "spinner-thinking", None
    if block.kind == "text":
        return "Generating", "answer-block", None
    if block.kind == "tool-done":
        return "Thinking", "tool-finished", None
    if block.kind == "thinking":
        return "Thinking", "thinking-block", None
    return "Thinking", "spinner-no-block", None



