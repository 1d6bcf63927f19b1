"""Access commands: tokens, grants, recorded MCP calls, call metrics and the audit history.

Who may send each of these is decided before the handler runs (muxd/daemon/access/control.py);
the handlers validate their arguments and read the principal from the request's context.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from muxd.config import (
    AUDIT_ERROR_CODE_MAX_CHARS, AUDIT_HISTORY_LIMIT_MAX, AUDIT_TOOL_MAX_CHARS, TASK_DURATION_BUCKETS_S,
)
from muxd.daemon.access.control import current_principal
from muxd.daemon.access.host_targets import scope_pane_id
from muxd.daemon.commands.table import command
from muxd.daemon.panes.target import pane_at_host, resolve_pane
from muxd.daemon.work.work_metrics import write_task_metrics
from muxd.errors import BadRequest, Forbidden, NotFound, StoreUnavailable
from muxd.prometheus import Exposition
from muxd.protocol.messages import (
    CheckTokens, CreateToken, GetMetrics, GetToolHistory, GrantPane, ListTokens, MetricsReply, Ok, RecordCall,
    RegisterTools, RevokeGrant, RevokeToken, TokenChecks, TokenCreated, TokenInfo, TokenList, TokenReply, ToolHistory,
)
from muxd.store import fleet
from muxd.store.execution_store import Scope
from muxd.store.task_tallies import tally
from muxd.store.tokens import TokenRecord
from muxd.terminal_text import has_unsafe

if TYPE_CHECKING:
    from muxd.daemon.server import Daemon

log = logging.getLogger(__name__)
TOOL_RISKS = ("safe", "moderate", "dangerous")  # as mcp_server/registry.py declares them
CALL_STATUSES = ("ok", "error", "denied", "rate_limited", "timeout")
CREATE_TOKEN_PANES_MAX = 64
_SHA256_HEX_CHARS = 64


def token_info(daemon: Daemon, token: TokenRecord) -> TokenInfo:
    return TokenInfo(id=token.id, name=token.name, kind=token.kind, tier=token.tier,
                     panes=None if token.panes is None else list(token.panes),
                     created_at=token.created_at, revoked_at=token.revoked_at,
                     revoked_reason=token.revoked_reason, scopes=list(daemon.access.scopes_of(token)))


@command(CreateToken)
async def create_token(daemon: Daemon, req: CreateToken) -> TokenCreated:
    if len(req.panes) > CREATE_TOKEN_PANES_MAX:
        raise BadRequest(f"a token binds at most {CREATE_TOKEN_PANES_MAX} panes", field="panes")
    scoped = [await _scope_pane(daemon, target) for target in req.panes]
    panes = [pane_id for pane_id, _ in scoped]
    token, secret = await daemon.access.create_token(tier=req.tier, name=req.name, panes=panes or None,
                                                     scopes=req.scopes, runs=_runs(scoped))
    live = {p.id for p in daemon.registry.all_panes()}
    if panes and not daemon.access.holds_a_pane(panes, live):  # its panes went while it was stored: it goes with them
        daemon.access.pane_gone(panes[0], live)
    return TokenCreated(id=req.id, token=token_info(daemon, daemon.access.find_token(token.id)), secret=secret)


@command(ListTokens)
async def list_tokens(daemon: Daemon, req: ListTokens) -> TokenList:
    return TokenList(id=req.id, tokens=[token_info(daemon, t) for t in daemon.access.tokens(req.include_revoked)])


@command(CheckTokens)
async def check_tokens(daemon: Daemon, req: CheckTokens) -> TokenChecks:
    return TokenChecks(id=req.id, live=[daemon.access.is_live(key) for key in req.token_sha256])


@command(RevokeToken)
async def revoke_token(daemon: Daemon, req: RevokeToken) -> TokenReply:
    token = daemon.access.find_token(req.token)
    return TokenReply(id=req.id, token=token_info(daemon, await daemon.access.revoke(token, "revoked by request")))


async def _scope_pane(daemon: Daemon, target: str) -> tuple[str, float | None]:
    """The id a token's panes or a grant keep for `target` (%N, or another host's `%N@host`), and
    for another host's the run of its daemon now (RemotePane.run); NotFound for a host with none."""
    pane_id = scope_pane_id(daemon.registry, target, host=daemon.access.db.host, shared=daemon.access.db.shared)
    at = pane_at_host(pane_id)
    if at is None:
        return pane_id, None
    run = await daemon.access.db.call(lambda c: fleet.host_run(c, at.host), f"reading host {at.host}'s run")
    if run is None:
        raise NotFound(f"host {at.host} has no daemon in the fleet now: its panes can be granted while one runs",
                       host=at.host)
    return pane_id, run


def _runs(scoped: list[tuple[str, float | None]]) -> dict[str, float]:
    return {pane_id: run for pane_id, run in scoped if run is not None}


def _grantee(daemon: Daemon, ref: str) -> TokenRecord:
    """`--to`: a pane (%N or a pane name: its agent token) or a token id / name."""
    if not ref.startswith("%"):
        try:
            return daemon.access.find_token(ref)
        except NotFound:
            pass
    return daemon.access.agent_token_of(resolve_pane(daemon.registry, ref).id)


@command(GrantPane)
async def grant_pane(daemon: Daemon, req: GrantPane) -> TokenReply:
    pane_id, run = await _scope_pane(daemon, req.pane)
    token = _grantee(daemon, req.to)
    await daemon.access.grant(token, pane_id, run=run)
    return TokenReply(id=req.id, token=token_info(daemon, token))


@command(RevokeGrant)
async def revoke_grant(daemon: Daemon, req: RevokeGrant) -> TokenReply:
    pane_id = scope_pane_id(daemon.registry, req.pane, host=daemon.access.db.host, shared=daemon.access.db.shared)
    token = _grantee(daemon, req.to)
    await daemon.access.revoke_grant(token, pane_id)
    return TokenReply(id=req.id, token=token_info(daemon, token))


def _check_tool_name(name: str, field: str = "tool") -> None:
    if not 1 <= len(name) <= AUDIT_TOOL_MAX_CHARS or has_unsafe(name):
        raise BadRequest(f"{field} must have 1..{AUDIT_TOOL_MAX_CHARS} characters, no control characters",
                         field=field)


@command(RegisterTools)
async def register_tools(daemon: Daemon, req: RegisterTools) -> Ok:
    for declared in req.tools:  # all checked before any is kept: a bad list changes nothing
        _check_tool_name(declared.name, "tools.name")
        if declared.risk not in TOOL_RISKS or has_unsafe(declared.category):
            raise BadRequest(f"tool {declared.name}: risk must be one of {', '.join(TOOL_RISKS)}, and the category "
                             "printable", field="tools")
    who = current_principal().name
    for declared in req.tools:
        if daemon.access.metrics.register(declared.name):
            daemon.attention.publish("tool-registered", tool=declared.name, category=declared.category,
                                     risk=declared.risk, principal=who)
    return Ok(id=req.id)


@command(RecordCall)
async def record_call(daemon: Daemon, req: RecordCall) -> Ok:
    _check_tool_name(req.tool)
    if len(req.args_sha256) != _SHA256_HEX_CHARS or any(c not in "0123456789abcdef" for c in req.args_sha256):
        raise BadRequest("args_sha256 must be 64 lowercase hex digits", field="args_sha256")
    if req.status not in CALL_STATUSES:
        raise BadRequest(f"status must be one of {', '.join(CALL_STATUSES)}", field="status")
    if req.error_code is not None and (not 1 <= len(req.error_code) <= AUDIT_ERROR_CODE_MAX_CHARS
                                       or has_unsafe(req.error_code)):
        raise BadRequest(f"error_code must have 1..{AUDIT_ERROR_CODE_MAX_CHARS} characters, no control characters",
                         field="error_code")
    principal = current_principal()
    await daemon.access.record_call(principal, req)
    daemon.attention.publish("tool-called", tool=req.tool, principal=principal.name, status=req.status,
                             error=req.error_code, latency_ms=req.latency_ms)
    return Ok(id=req.id)


@command(GetMetrics)
async def get_metrics(daemon: Daemon, req: GetMetrics) -> MetricsReply:
    metrics = daemon.access.metrics
    out = Exposition()
    metrics.write(out)
    daemon.access.audit_queue.write(out)
    if daemon.access.visible(current_principal()) is None:  # the fleet's work: for who sees every pane
        daemon.work_metrics.write(out, daemon.executions.active(Scope()))
        try:
            tallies = await daemon.tasks.call(lambda c: tally(c, TASK_DURATION_BUCKETS_S), "counting the tasks")
        except StoreUnavailable as exc:  # the other families still answer; the log says why these do not
            log.warning("metrics without the task queue: %s", exc.message)
        else:
            write_task_metrics(out, tallies)
    return MetricsReply(id=req.id, tools=metrics.snapshot(req.tool), prometheus=out.text())


@command(GetToolHistory)
async def tool_history(daemon: Daemon, req: GetToolHistory) -> ToolHistory:
    if not 1 <= req.limit <= AUDIT_HISTORY_LIMIT_MAX:
        raise BadRequest(f"limit must be between 1 and {AUDIT_HISTORY_LIMIT_MAX}, got {req.limit}", field="limit")
    if req.status is not None and req.status not in CALL_STATUSES:
        raise BadRequest(f"status must be one of {', '.join(CALL_STATUSES)}", field="status")
    principal = current_principal()
    wanted: str | frozenset[str] | None = req.principal
    if principal.tier != "admin":
        # A token's trail is its own and its panes' agents', whoever else used this daemon.
        own = daemon.access.history_principals(principal)
        if wanted is not None and wanted not in own:
            raise Forbidden(f"{principal.name} may read only its own history and its panes'",
                            principal=principal.name)
        wanted = wanted if wanted is not None else own
    rows = await daemon.access.history(limit=req.limit, tool=req.tool, principal=wanted, status=req.status)
    return ToolHistory(id=req.id, rows=rows)

