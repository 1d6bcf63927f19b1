"""Every message on the muxd socket: frozen msgspec structs with explicit string tags.

Three unions: `Request` (client → daemon), `Reply` (daemon → client, carrying the
request's id back) and `Event` (daemon → client, unsolicited). New fields get defaults;
bump `PROTOCOL_VERSION` in muxd.config when a message changes incompatibly.
"""

from __future__ import annotations

from typing import Any, Literal, Union

import msgspec

from muxd.config import DEFAULT_COLUMNS, DEFAULT_LINES
from muxd.detectors.state import AgentState


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


class SessionInfo(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    name: str
    windows: int
    panes: int
    created_at: float


class WindowInfo(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    session: str
    index: int
    name: str
    panes: int
    active: bool


class Spawn(msgspec.Struct, frozen=True, kw_only=True):
    """What to run in a new pane and where; empty command means the user's shell."""

    command: list[str] = []
    cwd: str | None = None
    env: dict[str, str] = {}
    pane_name: str | None = None
    tags: list[str] = []
    remove_on_exit: bool = False


# ---------------------------------------------------------------- requests

class Hello(_Message, tag="hello"):
    id: int
    protocol_version: int
    client: str = ""
    token: str | None = None


class NewSession(_Message, tag="new-session"):
    id: int
    name: str | None = None
    window_name: str | None = None
    columns: int = DEFAULT_COLUMNS
    lines: int = DEFAULT_LINES
    spawn: Spawn = Spawn()


class NewWindow(_Message, tag="new-window"):
    id: int
    target: str | None = None
    name: str | None = None
    spawn: Spawn = Spawn()


class SplitWindow(_Message, tag="split-window"):
    id: int
    target: str | None = None
    horizontal: bool = False  # tmux -h: side by side; default stacks top/bottom
    spawn: Spawn = Spawn()


class SendKeys(_Message, tag="send-keys"):
    id: int
    target: str | None = None
    keys: list[str] = []
    literal: bool = False
    hex: bool = False


class CapturePane(_Message, tag="capture-pane"):
    id: int
    target: str | None = None
    start: int | None = None
    end: int | None = None
    escapes: bool = False
    join_wrapped: bool = False


class ListPanes(_Message, tag="list-panes"):
    id: int
    target: str | None = None
    all: bool = False


class ListSessions(_Message, tag="list-sessions"):
    id: int


class ListWindows(_Message, tag="list-windows"):
    id: int
    target: str | None = None
    all: bool = False


class ResizePane(_Message, tag="resize-pane"):
    id: int
    target: str | None = None
    columns: int | None = None
    lines: int | None = None


class KillPane(_Message, tag="kill-pane"):
    id: int
    target: str | None = None


class KillWindow(_Message, tag="kill-window"):
    id: int
    target: str | None = None


class KillSession(_Message, tag="kill-session"):
    id: int
    target: str | None = None


class HasSession(_Message, tag="has-session"):
    id: int
    target: str | None = None


class Subscribe(_Message, tag="subscribe"):
    """Ask for events (agent state changes, pane exits) on this connection."""

    id: int
    panes: list[str] | None = None  # pane ids to hear about; None means every pane


class Summary(_Message, tag="summary"):
    id: int
    target: str | None = None
    include_recent_output: bool = False
    output_lines: int = 10


class KillServer(_Message, tag="kill-server"):
    id: int


class ServerStatus(_Message, tag="server-status"):
    id: int


Request = Union[
    Hello, NewSession, NewWindow, SplitWindow, SendKeys, CapturePane, ListPanes, ListSessions,
    ListWindows, ResizePane, KillPane, KillWindow, KillSession, HasSession, KillServer,
    ServerStatus, Subscribe, Summary,
]


# ---------------------------------------------------------------- replies

class Welcome(_Message, tag="welcome"):
    id: int
    protocol_version: int
    server_version: str
    principal: str
    pid: int


class Ok(_Message, tag="ok"):
    id: int


class PaneReply(_Message, tag="pane"):
    id: int
    pane: PaneInfo


class PaneList(_Message, tag="pane-list"):
    id: int
    panes: list[PaneInfo]


class SessionList(_Message, tag="session-list"):
    id: int
    sessions: list[SessionInfo]


class WindowList(_Message, tag="window-list"):
    id: int
    windows: list[WindowInfo]


class Captured(_Message, tag="captured"):
    id: int
    text: str


class Status(_Message, tag="status"):
    id: int
    pid: int
    version: str
    protocol_version: int
    socket: str
    started_at: float
    sessions: int
    panes: int


class SummaryActivity(msgspec.Struct, frozen=True, kw_only=True):
    state: str
    description: str | None
    duration_secs: int | None


class SummarySession(msgspec.Struct, frozen=True, kw_only=True):
    id: str | None
    model: str | None
    tokens_used: int | None


class SummaryContext(msgspec.Struct, frozen=True, kw_only=True):
    is_awaiting_input: bool
    is_awaiting_confirmation: bool
    tags: list[str]
    cwd: str | None


class AgentSummary(msgspec.Struct, frozen=True, kw_only=True):
    """The compact summary of seed 002 (~80 tokens instead of a raw screen), field for field."""

    pane_id: str
    agent_type: str | None
    is_agent: bool
    activity: SummaryActivity
    session: SummarySession
    recent_tools: list[str]
    context: SummaryContext
    recent_output: list[str] | None = None


class SummaryReply(_Message, tag="summary-reply"):
    id: int
    summary: AgentSummary


class Error(_Message, tag="error"):
    id: int
    code: str
    message: str
    detail: dict[str, Any] = {}


Reply = Union[Welcome, Ok, PaneReply, PaneList, SessionList, WindowList, Captured, Status,
              SummaryReply, Error]


# ---------------------------------------------------------------- events

class PaneExited(_Message, tag="pane-exited"):
    pane_id: str
    exit_code: int | None


class AgentStateChanged(_Message, tag="agent-state"):
    pane_id: str
    state: AgentState


Event = Union[PaneExited, AgentStateChanged]


class Envelope(msgspec.Struct, kw_only=True):
    """The least of any request: enough to answer a message we cannot otherwise decode."""

    id: int = 0
    type: str = ""


REQUEST_TAGS = frozenset(t.__struct_config__.tag for t in Request.__args__)  # type: ignore[attr-defined]
