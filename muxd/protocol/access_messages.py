"""Access control on the wire: tokens, grants, the audit and call metrics (muxd/daemon/access/control.py,
daemon/commands/access.py). Part of the unions in messages.py; Welcome (pane_messages.py) carries
the connection's tier and pane scope."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

from muxd.config import METRICS_TOOLS_MAX, TOKEN_CHECK_BATCH_MAX
from muxd.protocol.fields import AuditRows, Label, LatencyMs, Name, PaneTargets, Target
from muxd.store.audit_row import AuditRow

Sha256Hex = Annotated[str, msgspec.Meta(max_length=64)]


class _Message(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    pass


class TokenInfo(msgspec.Struct, frozen=True, kw_only=True):
    """A token as `muxd token list` shows it: never its secret, nor the secret's hash."""

    id: str
    name: str
    kind: str                       # "user" | "agent" (the MUXD_TOKEN of a spawned pane)
    tier: str
    panes: list[str] | None         # None: every pane
    created_at: float
    revoked_at: float | None = None
    revoked_reason: str | None = None
    scopes: list[str] = []          # tasks:read, tasks:write


class CreateToken(_Message, tag="create-token"):
    id: int
    tier: Label
    name: Name | None = None
    panes: PaneTargets = []         # pane targets the token is bound to; empty: every pane
    scopes: Annotated[list[Label], msgspec.Meta(max_length=8)] | None = None  # None: the default


class ListTokens(_Message, tag="list-tokens"):
    id: int
    include_revoked: bool = False


class RevokeToken(_Message, tag="revoke-token"):
    id: int
    token: Label                    # id or name


class CheckTokens(_Message, tag="check-tokens"):
    """Which of these token hashes are live tokens (`muxd mcp --http` checking bearer tokens in bulk)."""

    id: int
    token_sha256: Annotated[list[Sha256Hex], msgspec.Meta(max_length=TOKEN_CHECK_BATCH_MAX)]


class GrantPane(_Message, tag="grant"):
    id: int
    pane: Target                    # the pane target to share
    to: Target                      # a pane (%N: its agent token) or a token id / name


class RevokeGrant(_Message, tag="revoke-grant"):
    id: int
    pane: Target
    to: Target


class RecordCall(_Message, tag="record-call"):
    """An MCP server reports one finished tool call; the principal is the connection's."""

    id: int
    tool: Label
    args_sha256: Label
    status: Label
    error_code: Label | None = None
    rows: AuditRows = 0
    latency_ms: LatencyMs = 0.0


class DeclaredTool(msgspec.Struct, frozen=True, kw_only=True):
    """One tool an MCP server registered: its name, category and risk (safe / moderate / dangerous)."""

    name: Label
    category: Label
    risk: Label


class RegisterTools(_Message, tag="register-tools"):
    """An MCP server's tools, told once per daemon connection: each gets its metrics (at zero), and
    one new to the daemon a `tool-registered` event."""

    id: int
    tools: Annotated[list[DeclaredTool], msgspec.Meta(max_length=METRICS_TOOLS_MAX)]


class GetMetrics(_Message, tag="get-metrics"):
    id: int
    tool: Label | None = None


class GetToolHistory(_Message, tag="tool-history"):
    id: int
    tool: Label | None = None
    principal: Label | None = None
    status: Label | None = None
    limit: int = 50


class TokenCreated(_Message, tag="token-created"):
    id: int
    token: TokenInfo
    secret: str                     # shown once; the daemon keeps only its sha256


class TokenList(_Message, tag="token-list"):
    id: int
    tokens: list[TokenInfo]


class TokenReply(_Message, tag="token"):
    id: int
    token: TokenInfo


class TokenChecks(_Message, tag="token-checks"):
    id: int
    live: list[bool]                # one per hash asked about, in order


class MetricsReply(_Message, tag="metrics"):
    id: int
    tools: dict[str, Any]           # per tool: calls, errors_by_code, latency buckets ...
    prometheus: str


class ToolHistory(_Message, tag="tool-history-reply"):
    id: int
    rows: list[AuditRow]

