"""Every message on the muxd socket: frozen msgspec structs with explicit string tags.

Three unions: `Request` (client → daemon), `Reply` (daemon → client, carrying the
request's id back) and `Event` (daemon → client, unsolicited). New fields get defaults;
bump `PROTOCOL_VERSION` in muxd.config when a message changes incompatibly.

The messages are defined by concern (pane_messages, access_messages, execution_messages,
task_messages); this module gathers them, so `messages.X` names any of them. Importing it
costs every one of them: a client that needs a few imports their own module instead.
"""

from __future__ import annotations

from typing import Union

import msgspec

# Records (PaneInfo, TokenInfo, ...) are imported to be named here too, though no union lists them.
from muxd.protocol.access_messages import (  # noqa: F401
    AuditRow, CheckTokens, CreateToken, DeclaredTool, GetMetrics, GetToolHistory, GrantPane, ListTokens, MetricsReply,
    RecordCall, RegisterTools, RevokeGrant, RevokeToken, TokenChecks, TokenCreated, TokenInfo, TokenList, TokenReply,
    ToolHistory,
)
from muxd.protocol.command_messages import (  # noqa: F401
    BindKey, BufferInfo, BufferList, ClientInfo, ClientList, DeleteBuffer, DetachClient, HookList, HookValue,
    KeyBindingInfo, KeyBindingList, ListBuffers, ListClients, ListKeys, OptionList, OptionValue, PasteBuffer, PipePane,
    RenameSession, RenameWindow, SelectPane, SelectWindow, SetBuffer, SetHook, SetOption, ShowHooks, ShowOptions,
    SwitchClient,
)
from muxd.protocol.execution_messages import (
    CancelExecution, ExecutionFailures, ExecutionList, ExecutionReply, ExecutionStats, ExecutionTimeline,
    FailureReport, GetExecution, ListExecutions, RunCommand, ShortIdList, ShortIds, StatsReply, SubmitPrompt,
    TimelineReply, WaitExecutions,
)
from muxd.protocol.event_messages import DaemonEvent, EventList, ListEvents
from muxd.protocol.fleet_messages import FleetHost, FleetList, FleetPane, ListFleet  # noqa: F401
from muxd.protocol.hook_messages import HookEvent
from muxd.protocol.layout_messages import BreakPane, JoinPane, RespawnPane, SelectLayout, SwapPane
from muxd.protocol.pane_messages import (  # noqa: F401
    AgentStateChanged, AgentSummary, Attach, Attached, AttachInput, AttachOutput, AttachResize, Captured,
    CapturePane, Detached, Error, ExpandFormat, Expanded, HasSession, Hello, KillPane, KillServer, KillSession, KillWindow, ListPanes,
    ListSessions, ListWindows, NewSession, NewWindow, Ok, PaneExited, PaneInfo, PaneList, PaneReply, Released,
    ResizePane, SendKeys, ServerStatus, SessionInfo, SessionList, ShowPane, Spawn, SplitWindow, Status, Subscribe,
    Summary, SummaryActivity, SummaryConfirmation, SummaryContext, SummaryReply, SummarySession, TmuxUnwatch,
    TmuxWatch, Welcome, WindowInfo, WindowList,
)
from muxd.protocol.screen_messages import ScreenHtml, ScreenHtmlReply
from muxd.protocol.task_messages import (
    ClaimTask, CompleteTask, CreateTask, DispatchReply, DispatchTasks, GetTask, KnowledgeList, ListTasks,
    NextActionable, ReviewTask, SearchKnowledge, TaskList, TaskReply, UpdateTaskStatus,
)

Request = Union[
    Hello, NewSession, NewWindow, SplitWindow, SendKeys, CapturePane, ListPanes, ListSessions,
    ListWindows, ShowPane, ExpandFormat, ResizePane, KillPane, KillWindow, KillSession, HasSession, KillServer,
    ServerStatus, Subscribe, Summary, TmuxWatch, TmuxUnwatch,
    ListEvents,  # the bus's recent events
    HookEvent,  # the agents' own hooks
    Attach, AttachInput, AttachResize,
    SelectLayout, SwapPane, BreakPane, JoinPane, RespawnPane,  # layouts and pane moves
    SelectPane, SelectWindow, RenameWindow, RenameSession, ListClients, DetachClient, SwitchClient,  # daily tmux
    BindKey, ListKeys,
    SetOption, ShowOptions, ListBuffers, SetBuffer, DeleteBuffer, PasteBuffer, PipePane,
    SetHook, ShowHooks,  # hooks on events
    CreateToken, ListTokens, RevokeToken, GrantPane, RevokeGrant, RecordCall, GetMetrics,  # access
    GetToolHistory, CheckTokens, RegisterTools,
    SubmitPrompt, RunCommand, CancelExecution, GetExecution, ListExecutions, ExecutionFailures,  # history
    ExecutionStats, ExecutionTimeline, WaitExecutions, ShortIds,
    CreateTask, ListTasks, GetTask, NextActionable, ClaimTask, UpdateTaskStatus, CompleteTask,  # tasks
    ReviewTask, SearchKnowledge, DispatchTasks,
    ListFleet,  # other hosts' panes on a shared database
    ScreenHtml,  # the web view's screens
]

Reply = Union[Welcome, Ok, PaneReply, PaneList, SessionList, WindowList, Captured, Expanded, Status,
              SummaryReply, Error, Attached, Released, EventList,
              OptionList, BufferList, ClientList, KeyBindingList, HookList,  # daily tmux commands
              TokenCreated, TokenList, TokenReply, MetricsReply, ToolHistory, TokenChecks,  # access
              ExecutionReply, ExecutionList, FailureReport, StatsReply, TimelineReply, ShortIdList,  # history
              TaskReply, TaskList, KnowledgeList, DispatchReply,  # tasks
              FleetList, ScreenHtmlReply]

Event = Union[PaneExited, AgentStateChanged, DaemonEvent, AttachOutput, Detached]


class Envelope(msgspec.Struct, kw_only=True):
    """The least of any request: enough to answer a message we cannot otherwise decode."""

    id: int = 0
    type: str = ""


REQUEST_TAGS = frozenset(t.__struct_config__.tag for t in Request.__args__)  # type: ignore[attr-defined]
