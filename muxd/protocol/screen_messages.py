"""A pane's screen as HTML, for the web view (`muxd web`): read as capture-pane reads it."""

from __future__ import annotations

from muxd.protocol.fields import Target
from muxd.protocol.pane_messages import _Message


class ScreenHtml(_Message, tag="screen-html"):
    id: int
    target: Target | None = None
    start: int | None = None  # rows as capture-pane numbers them; None: the first visible row
    end: int | None = None    # None: the last visible row
    # Answer only once the screen differs from ScreenHtmlReply.version `after` (an earlier
    # reply's) or the pane's work (its agent's state, an execution's end) from `after_work` (an
    # earlier reply's work_version), waiting up to `wait_s`: a live view without a timer.
    after: int | None = None
    after_work: int | None = None
    # With `after`: the cursor (x, y, shown) the page shows; a move (an arrow key in a shell) is a change.
    after_cursor: tuple[int, int, bool] | None = None
    wait_s: float = 0.0


class ScreenHtmlReply(_Message, tag="screen-html-reply"):
    id: int
    pane: str       # the pane the target resolved to ("%3")
    html: str       # escaped text in <span class=…> runs, one line a row (emulator/screen_html.py)
    columns: int
    lines: int
    cursor_x: int
    cursor_y: int
    cursor_visible: bool
    first_row: int = 0  # running number of the first row given (as Captured.first_row)
    version: int = 0    # the screen's version: pass it as `after` to wait for the next change
    exited: bool = False  # the pane's program has exited: its screen changes no more
    agent_state: str = ""  # its agent's activity state (Idle, Thinking, …); "" where no agent runs
    work_version: int = 0  # counts its agent's changes of state and its executions' ends (ScreenWatch)
