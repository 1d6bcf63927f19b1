"""Sessions, windows and panes on the wire, the server's own requests and interactive attach,
and the greeting and the error any exchange can end in. Part of the unions in messages.py.

Free of the history's and the task queue's messages, which cost far more to import. (The
one-shot CLI imports no messages at all: it speaks msgpack_lite, by tag.)
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from muxd.config import DEFAULT_COLUMNS, DEFAULT_LINES
from muxd.detectors.state import AgentError, AgentState, Confidence, Provenance, UsageLimit
from muxd.protocol.fields import (
    Argv, AttachData, Env, EventKinds, FilePath, FormatText, Keys, Label, Name, PaneTargets, Size, Tags, Target,
)


class _Message(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    pass


# ---------------------------------------------------------------- shared records

class PaneInfo(msgspec.Struct, frozen=True, kw_only=True):
    """Everything muxd tells about a pane. The one definition behind `ls`, `--json` and MCP."""

    id: str
    session: str
    session_id: str
    window: int
    window_id: str
    window_name: str
    index: int
    name: str | None
    tags: list[str]
    command: list[str]
    pid: int | None
    foreground: str | None
    cwd: str | None
    width: int
    height: int
    status: Literal["running", "exited"]
    exit_code: int | None
    created_at: float
    title: str
    active: bool
    agent: AgentState = AgentState()
    # The pane's emulator failed: output is still read (and recorded) but no longer drawn, so
    # the screen, capture-pane and detection show it as it was then.
    emulator_failed: bool = False
    left: int = 0  # the pane's place in its window (tmux's pane_left, pane_top)
    top: int = 0
    # What tmux's formats tell besides (#{pane_tty}, #{cursor_x}, #{history_size}…).
    tty: str | None = None       # the pane's terminal device, /dev/pts/N
    cursor_x: int = 0            # these three only when asked for (list-panes `screen`, show-pane)
    cursor_y: int = 0
    history_size: int = 0        # lines of scrollback
    history_bytes: int = 0       # the memory they take, counted against the pane's budget
    history_limit: int = 0       # full rows of the pane's width that budget holds (muxd counts bytes)
    tmux_shim: bool = False      # its programs see TMUX and a `tmux` leading to muxd (muxd tmux)
    # Where the program runs: "muxd", or the tmux pane it was adopted from ("tmux -L work %3").
    source: str = "muxd"
    # What the pane's agent needs of a person (the attention board, daemon/attention/board.py):
    # waiting, limited, failed or finished; None when nothing. Since when, and its words (the
    # question, the error, the limit's message).
    attention: str | None = None
    attention_since: float | None = None
    attention_text: str | None = None


class SessionInfo(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    name: str
    windows: int
    panes: int
    created_at: float
    attached: int = 0  # clients attached to it
    alerts: str = ""   # tmux's #{session_alerts}: "1#!,3~"
    needs: dict[str, int] = {}  # its agents that need a person, by kind (waiting, limited, failed, finished)


class WindowInfo(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    session: str
    index: int
    name: str
    panes: int
    active: bool
    layout: str = ""  # tmux's #{window_layout}: checksum, then every cell's size and place
    session_id: str = ""
    width: int = 0
    height: int = 0
    zoomed: bool = False
    last: bool = False     # the session's previous window (tmux's '-' flag)
    active_pane: str | None = None
    alerts: str = ""       # tmux's alert flags: # activity, ! bell, ~ silence
    agent_flags: str = ""  # its agents' needs: ? waiting, $ limited, X failed, + finished unseen


class Spawn(msgspec.Struct, frozen=True, kw_only=True):
    """What to run in a new pane and where; empty command means the user's shell."""

    command: Argv = []
    cwd: FilePath | None = None
    env: Env = {}
    pane_name: Name | None = None
    tags: Tags = []
    remove_on_exit: bool = False
    # Made by a person (`muxd`, `new` without -d, C-b c, splits): the pane closes when its program
    # exits unless the remain-on-exit option is on, as in tmux. Other panes (detached, MCP) keep
    # their exit status and last screen for whoever reads their results.
    interactive: bool = False
    # The program is recorded as an execution triggered so (muxd run: "cli"; create_pane: "mcp").
    record_as: Literal["cli", "mcp", "agent"] | None = None
    # Its programs see TMUX/TMUX_PANE and a `tmux` on PATH that leads back to muxd (muxd tmux).
    tmux_shim: bool = False


# ---------------------------------------------------------------- requests

class Hello(_Message, tag="hello"):
    id: int
    protocol_version: int
    client: Label = ""
    token: Label | None = None


class NewSession(_Message, tag="new-session"):
    id: int
    name: Name | None = None
    window_name: Name | None = None
    columns: int = DEFAULT_COLUMNS
    lines: int = DEFAULT_LINES
    spawn: Spawn = Spawn()


class NewWindow(_Message, tag="new-window"):
    id: int
    target: Target | None = None
    name: Name | None = None
    spawn: Spawn = Spawn()
    detached: bool = False  # tmux -d: the session's current window stays current


class SplitWindow(_Message, tag="split-window"):
    id: int
    target: Target | None = None
    horizontal: bool = False  # tmux -h: side by side; default stacks top/bottom
    spawn: Spawn = Spawn()
    detached: bool = False    # tmux -d: the window's active pane stays active
    before: bool = False      # tmux -b: the new pane goes left of (above) the target
    size: Size | None = None  # tmux -l: cells, or "N%" of the target pane; None: half
    full: bool = False        # tmux -f: the new pane spans the whole window's height (width)


class SendKeys(_Message, tag="send-keys"):
    id: int
    target: Target | None = None
    keys: Keys = []
    literal: bool = False
    hex: bool = False


class CapturePane(_Message, tag="capture-pane"):
    id: int
    target: Target | None = None
    start: int | None = None
    end: int | None = None
    escapes: bool = False
    join_wrapped: bool = False
    # Start at this running row number instead (Captured.first_row of an earlier capture):
    # row numbers stay with rows as they scroll, so "from where I stopped" needs no full capture.
    from_row: int | None = None


class ListPanes(_Message, tag="list-panes"):
    id: int
    target: Target | None = None
    all: bool = False
    # Also each pane's cursor and history size (#{cursor_x}, #{history_size}): reading them
    # brings a flooding pane's deferred output onto its screen, which a plain listing skips.
    screen: bool = False


class ShowPane(_Message, tag="show-pane"):
    """One pane's record, its target resolved as every pane command's (display-message)."""

    id: int
    target: Target | None = None


class ListSessions(_Message, tag="list-sessions"):
    id: int


class ExpandFormat(_Message, tag="expand-format"):
    """tmux formats expanded by the daemon from its own records, one round trip for what
    display-message -p and list-* -F print (daemon/commands/formats.py). `listing`: "pane" is the
    target pane (display-message); "panes" its window's (its session's with `session_scope`,
    the server's with `all`), "windows" its session's (the server's with `all`), "sessions"
    the server's. Each item passing `filter` gives `template` expanded; a pane without a
    template gives its every variable as NAME=VALUE. `variables` come first: those of the
    event whose hook runs the command (MUXD_HOOK_VARIABLES)."""

    id: int
    target: Target | None = None
    listing: Literal["pane", "panes", "windows", "sessions"] = "pane"
    template: FormatText | None = None
    filter: FormatText | None = None
    all: bool = False
    session_scope: bool = False
    variables: Env = {}


class ListWindows(_Message, tag="list-windows"):
    id: int
    target: Target | None = None
    all: bool = False


class ResizePane(_Message, tag="resize-pane"):
    """A pane alone in its window resizes the window; a pane in a split moves its dividers, the
    neighbours giving or taking the space (tmux's resize-pane)."""

    id: int
    target: Target | None = None
    columns: int | None = None
    lines: int | None = None
    columns_percent: int | None = None  # -x N%: of the window's width
    lines_percent: int | None = None
    direction: Literal["U", "D", "L", "R"] | None = None  # -U/-D/-L/-R: move by `amount`
    amount: int = 1
    zoom: bool = False  # -Z: toggle the window's zoom on this pane


class KillPane(_Message, tag="kill-pane"):
    id: int
    target: Target | None = None


class KillWindow(_Message, tag="kill-window"):
    id: int
    target: Target | None = None


class KillSession(_Message, tag="kill-session"):
    id: int
    target: Target | None = None


class HasSession(_Message, tag="has-session"):
    id: int
    target: Target | None = None


class _TmuxServerRequest(_Message):
    """A request about a running tmux server: the server `socket_name` (tmux -L) or
    `socket_path` (tmux -S) names, tmux's default without either; `tmux_target` (a tmux target,
    read by that tmux) a session, window or pane of it, the whole server without one."""

    id: int
    socket_name: Label | None = None
    socket_path: FilePath | None = None
    tmux_target: Target | None = None


class TmuxWatch(_TmuxServerRequest, tag="tmux-watch"):
    """Adopt the panes of a running tmux server (muxd tmux watch), and those it opens later."""


class TmuxUnwatch(_TmuxServerRequest, tag="tmux-unwatch"):
    """Let adopted panes go (muxd tmux unwatch); the tmux panes run on, untouched."""


class Subscribe(_Message, tag="subscribe"):
    """Ask for events on this connection: agent state changes and pane exits (AgentStateChanged,
    PaneExited), or with `events` the daemon's bus (DaemonEvent, muxd/protocol/event_messages.py)."""

    id: int
    panes: PaneTargets | None = None  # pane ids to hear about; None means every pane
    events: bool = False              # the bus's DaemonEvents instead of the two above
    kinds: EventKinds | None = None   # with events: only these kinds; None means every kind


class Summary(_Message, tag="summary"):
    id: int
    target: Target | None = None
    include_recent_output: bool = False
    output_lines: int = 10


class KillServer(_Message, tag="kill-server"):
    id: int


class ServerStatus(_Message, tag="server-status"):
    id: int
    modules: bool = False  # the reply lists the modules the daemon has imported (`muxd server modules`)


# ---- interactive attach (issue 5): the connection becomes a terminal client of a session.
# After `Attach` the daemon streams `AttachOutput` (terminal bytes it rendered for this client)
# and ends with `Detached`; the client streams `AttachInput` and `AttachResize`, never answered.

class Attach(_Message, tag="attach"):
    id: int
    target: Target | None = None
    columns: int = DEFAULT_COLUMNS  # the client's whole terminal, status line included
    lines: int = DEFAULT_LINES
    prefix: Label = ""              # a tmux key name; "": the session's prefix option
    tty: Label = ""                 # the client's terminal device, which names it (list-clients)
    term: Label = ""                # its $TERM, and $TERM_PROGRAM ("vte" for a VTE terminal that
    term_program: Label = ""        # sets none): which notifications it shows (notify-method auto)
    direct: bool = False            # it can pass its terminal for the daemon to write frames to


class AttachInput(_Message, tag="attach-input"):
    id: int = 0
    data: AttachData = b""


class AttachResize(_Message, tag="attach-resize"):
    id: int = 0
    columns: int = DEFAULT_COLUMNS
    lines: int = DEFAULT_LINES


class Attached(_Message, tag="attached"):
    id: int
    session: str
    direct: bool = False  # send the terminal now, before anything else: one byte carrying it
                          # as SCM_RIGHTS (daemon/client_side/terminal_output.py)


class AttachOutput(_Message, tag="attach-output"):
    data: bytes


class Detached(_Message, tag="detached"):
    reason: str  # what the client prints, as tmux: "detached (from session s)", "exited"

# ---- end of interactive attach


# ---------------------------------------------------------------- replies

class Welcome(_Message, tag="welcome"):
    id: int
    protocol_version: int
    server_version: str
    principal: str
    pid: int
    tier: str = "admin"              # access: the connection's permission tier
    panes: list[str] | None = None   # access: the panes it may see at greeting; None: every pane
    scopes: list[str] | None = None  # access: its token's scopes (tasks:read, …); None: a daemon that does not say


class Ok(_Message, tag="ok"):
    id: int


class PaneReply(_Message, tag="pane"):
    id: int
    pane: PaneInfo
    execution_id: str | None = None  # the pane's program as an execution (Spawn.record_as)


class PaneList(_Message, tag="pane-list"):
    id: int
    panes: list[PaneInfo]


class Released(_Message, tag="released"):
    id: int
    panes: list[str]  # the muxd ids of the panes let go


class SessionList(_Message, tag="session-list"):
    id: int
    sessions: list[SessionInfo]


class WindowList(_Message, tag="window-list"):
    id: int
    windows: list[WindowInfo]


class Expanded(_Message, tag="expanded"):
    id: int
    lines: list[str]  # ExpandFormat's, one per item, without their newlines


class Captured(_Message, tag="captured"):
    id: int
    text: str
    first_row: int = 0  # running number of the first row in `text` (rows ever scrolled off + its index)


class Status(_Message, tag="status"):
    id: int
    pid: int
    version: str
    protocol_version: int
    socket: str
    started_at: float
    sessions: int
    panes: int
    emulator: str = ""  # the panes' emulator backend: "ghostty" or "pyte"
    unwritten_executions: int = 0  # ended executions waiting in memory for the history database
    lost_executions: int = 0       # dropped from that wait, never written (daemon/work/execution_backlog.py)
    database: str = ""  # the file tokens, audit, history and tasks are kept in (":memory:": none)
    database_problem: str | None = None  # why nothing more is written to it (found damaged), and what to do
    audit_rows_dropped: int = 0  # denied requests' rows that found the audit queue full
    audit_rows_failed: int = 0   # rows the store refused (locked, full, damaged)
    log: str = ""  # the daemon's log file ("": it logs nowhere, as a daemon run inside a test)
    host: str = ""  # the host its rows are written as (MUXD_HOST, else the hostname)
    modules: list[str] = []  # asked for (ServerStatus.modules): sys.modules' names, sorted; what its memory holds


class SummaryActivity(msgspec.Struct, frozen=True, kw_only=True):
    state: str
    description: str | None
    duration_secs: int | None
    tool: str | None = None        # the tool in use (or asked for) and its input, one short line
    tool_input: str | None = None


class SummarySession(msgspec.Struct, frozen=True, kw_only=True):
    id: str | None
    model: str | None
    tokens_used: int | None


class SummaryContext(msgspec.Struct, frozen=True, kw_only=True):
    is_awaiting_input: bool
    is_awaiting_confirmation: bool
    tags: list[str]
    cwd: str | None


class SummaryConfirmation(msgspec.Struct, frozen=True, kw_only=True):
    """What an agent awaiting confirmation asks: its question, its options as shown, and the
    tool (or command) it asks to use, where the agent names one."""

    prompt: str
    options: list[str] = []
    tool: str | None = None


class AgentSummary(msgspec.Struct, frozen=True, kw_only=True):
    """The compact summary of seed 002 (~80 tokens instead of a raw screen), field for field,
    and what an orchestrator needs besides: the question an agent awaits an answer to, the
    error it shows and the usage limit that stopped it (null when there is none)."""

    pane_id: str
    agent_type: str | None
    is_agent: bool
    activity: SummaryActivity
    session: SummarySession
    recent_tools: list[str]
    context: SummaryContext
    confirmation: SummaryConfirmation | None = None  # only while it asks (a confirmation, a limit's dialog)
    error: AgentError | None = None
    limit: UsageLimit | None = None  # only while UsageLimited: the agent's words, when it resets (epoch s)
    recent_output: list[str] | None = None
    background: int = 0  # subagents and background tasks still running apart from the turn
    confidence: Confidence = "screen"  # certain: hook and screen agree; screen/hook: one alone; stale
    # Summary field ("state", "tool", "session_id", "tokens_used", …) -> its source and first observation.
    sources: dict[str, Provenance] = {}


class SummaryReply(_Message, tag="summary-reply"):
    id: int
    summary: AgentSummary


class Error(_Message, tag="error"):
    id: int
    code: str
    message: str
    detail: dict[str, Any] = {}


# ---------------------------------------------------------------- events

class PaneExited(_Message, tag="pane-exited"):
    pane_id: str
    exit_code: int | None


class AgentStateChanged(_Message, tag="agent-state"):
    pane_id: str
    state: AgentState
