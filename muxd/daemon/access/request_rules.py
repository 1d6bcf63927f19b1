"""The risk of every request: its tier, whether pane-scoped tokens may send it, and the token
scope it needs. AccessControl (control.py) checks each request against its rule here; a request
nobody classified is dangerous and for unscoped principals only."""

from __future__ import annotations

from typing import Any

import msgspec

from muxd.daemon.access.tiers import UNKNOWN_RISK
from muxd.protocol import messages as m
from muxd.protocol import task_messages as t


class Rule(msgspec.Struct, frozen=True):
    risk: str                # safe | moderate | dangerous | admin
    read_only: bool = False  # a pure view: view_only may do it
    # Pane-scoped tokens may send it; the panes its target resolves to must all be in scope.
    scoped: bool = False
    scope: str | None = None  # a token scope it needs besides its tier (tasks:read, tasks:write)


VIEW = Rule("safe", read_only=True, scoped=True)
TASKS_READ = Rule("safe", read_only=True, scoped=True, scope="tasks:read")
TASKS_WRITE = Rule("moderate", scoped=True, scope="tasks:write")
REQUEST_RULES: dict[type, Rule] = {
    m.ListPanes: VIEW, m.ListSessions: VIEW, m.ListWindows: VIEW, m.ServerStatus: VIEW,
    m.Subscribe: VIEW, m.ListEvents: VIEW, m.GetMetrics: VIEW, m.GetToolHistory: VIEW,
    m.RecordCall: VIEW,  # every principal reports its own calls, denied ones included
    m.RegisterTools: VIEW,  # every MCP server, whatever its token, says which tools it has
    m.ListFleet: VIEW,  # a pane-scoped token hears of no other host's pane (control.py)
    m.CapturePane: VIEW, m.Summary: VIEW, m.HasSession: VIEW, m.ShowPane: VIEW, m.ExpandFormat: VIEW,
    m.ScreenHtml: VIEW,  # capture-pane's rows, as HTML
    m.SendKeys: Rule("moderate", scoped=True),
    # An agent's own hook events about its pane (`muxd hook`, with the pane's token): they
    # change what muxd reports of that agent, so not for view_only.
    m.HookEvent: Rule("safe", scoped=True),
    m.ResizePane: Rule("moderate", scoped=True),
    # Creating a pane is moderate with or without a command: send-keys into a shell already
    # runs anything, so a finer split would only pretend to be a sandbox.
    m.NewSession: Rule("moderate", scoped=True),
    m.NewWindow: Rule("moderate", scoped=True),
    m.SplitWindow: Rule("moderate", scoped=True),
    # Moving panes between windows and respawning them act on a window's layout or on two
    # panes at once: not for pane-scoped tokens.
    m.SelectLayout: Rule("moderate"), m.SwapPane: Rule("moderate"), m.BreakPane: Rule("moderate"),
    m.JoinPane: Rule("moderate"), m.RespawnPane: Rule("moderate"),
    # Adopting tmux panes creates panes (and reads what every adopted one shows): a control-tier
    # action like creating them, but not for pane-scoped tokens, whose scope tmux's panes are not in.
    m.TmuxWatch: Rule("moderate"), m.TmuxUnwatch: Rule("moderate"),
    m.KillPane: Rule("dangerous", scoped=True),
    m.KillWindow: Rule("dangerous", scoped=True),
    m.KillSession: Rule("dangerous", scoped=True),
    # An attached terminal drives a whole session, prefix-key kills included.
    m.Attach: Rule("dangerous"), m.AttachInput: Rule("dangerous"), m.AttachResize: Rule("dangerous"),
    # tmux's daily commands. Buffers hold copies from any pane, and options change what every
    # new pane runs: neither is for pane-scoped tokens.
    m.SelectPane: Rule("moderate", scoped=True), m.SelectWindow: Rule("moderate", scoped=True),
    m.RenameWindow: Rule("moderate", scoped=True), m.RenameSession: Rule("moderate", scoped=True),
    m.ListClients: Rule("safe", read_only=True), m.DetachClient: Rule("dangerous"),
    # What an attached terminal shows: a choice of its person, as select-window is.
    m.SwitchClient: Rule("moderate"),
    # A bound key runs its command as the socket owner, whoever presses it: the owner's to bind.
    m.BindKey: Rule("admin"), m.ListKeys: Rule("safe", read_only=True),
    m.ShowOptions: Rule("safe", read_only=True), m.SetOption: Rule("dangerous"),
    # A hook runs its commands (run-shell among them) as the socket owner on every event, whoever
    # caused it: the owner's to set, as a bound key. Reading them is a view.
    m.SetHook: Rule("admin"), m.ShowHooks: Rule("safe", read_only=True),
    m.ListBuffers: Rule("safe", read_only=True), m.SetBuffer: Rule("moderate"), m.DeleteBuffer: Rule("moderate"),
    m.PasteBuffer: Rule("moderate"),
    m.PipePane: Rule("dangerous"),  # runs a shell command
    # The history: reads are cut to the principal's scope by the handlers (commands/executions.py).
    m.ShortIds: VIEW,  # the short forms of ids the caller holds: no record is read
    m.ListExecutions: VIEW, m.GetExecution: VIEW, m.ExecutionFailures: VIEW, m.ExecutionStats: VIEW,
    m.ExecutionTimeline: VIEW, m.WaitExecutions: VIEW,
    m.SubmitPrompt: Rule("moderate", scoped=True),
    m.CancelExecution: Rule("moderate", scoped=True),
    m.RunCommand: Rule("dangerous"),  # runs shell commands
    m.KillServer: Rule("admin"),
    m.CreateToken: Rule("admin"), m.ListTokens: Rule("admin"), m.RevokeToken: Rule("admin"),
    m.CheckTokens: Rule("admin"),  # which hashes are live tokens: for the owner's `muxd mcp --http`
    m.GrantPane: Rule("admin"), m.RevokeGrant: Rule("admin"),
    # The task queue (seed 001): reading it needs tasks:read, working it tasks:write.
    t.NextActionable: TASKS_READ, t.ListTasks: TASKS_READ, t.GetTask: TASKS_READ, t.SearchKnowledge: TASKS_READ,
    t.ClaimTask: TASKS_WRITE, t.UpdateTaskStatus: TASKS_WRITE, t.CompleteTask: TASKS_WRITE,
    t.CreateTask: TASKS_WRITE, t.ReviewTask: TASKS_WRITE, t.DispatchTasks: TASKS_WRITE,
}
UNKNOWN_RULE = Rule(UNKNOWN_RISK)


def rule_for(request_type: type) -> Rule:
    """The rule of a request type; one nobody classified is dangerous and unscoped-only."""
    return REQUEST_RULES.get(request_type, UNKNOWN_RULE)


def request_name(request: Any) -> str:
    """The wire tag of a request, or of a request type ("send-keys"), which is what logs and audit rows name."""
    kind = request if isinstance(request, type) else type(request)
    config = getattr(kind, "__struct_config__", None)
    return str(config.tag) if config is not None and config.tag else kind.__name__
