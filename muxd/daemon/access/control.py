"""Who is asking and what they may do: principals, the risk of every request, pane scopes.

The daemon is the one place that enforces access. A connection's principal is fixed at Hello
(`principal_for`): the socket owner without a token is `system` (admin, every pane); a token
gives that token's tier and, for a pane-bound token (every pane's MUXD_TOKEN), a scope of its
own panes plus the panes granted to it. Each request then goes through
`AccessControl.authorize` (tier check; its target resolved once; pane-scope check on what it
resolved to) and `AccessControl.run` (the handler, given that resolution, and the filtering of
what it answers). Denials are logged (never with a secret) and audited.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import re
import secrets
import sqlite3
import time
from collections.abc import Awaitable, Callable, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

import msgspec

from muxd.config import (
    AGENT_SCOPES_DEFAULT, AGENT_TOKEN_TIER_DEFAULT, REFUSED_TOKEN_LOG_INTERVAL_S, TASK_SCOPES, TOKEN_NAME_MAX_CHARS,
    TOKEN_SECRET_BYTES,
)
from muxd.sampled_log import SampledLog
from muxd.daemon.access.host_targets import other_hosts_pane
from muxd.daemon.panes.target import RemotePane, Resolved, TargetKind, pane_at_host, panes_of, resolve
from muxd.daemon.access.request_rules import Rule, request_name, rule_for
from muxd.daemon.access.scoped_replies import visible_part_of
from muxd.daemon.access.tiers import Tier, check_tier, parse_tier
from muxd.errors import BadRequest, Conflict, Forbidden, MuxdError, NotFound, Unauthorized
from muxd.protocol import messages as m
from muxd.store import audit, tokens
from muxd.store.audit import args_sha256
from muxd.store.database import Database, busy_timeout_from_env, driver_error
from muxd.store.hosts import host_from_env, pane_principal
from muxd.store.location import db_path
from muxd.store.tokens import TokenRecord

if TYPE_CHECKING:
    from muxd.daemon.access.audit_queue import AuditQueue
    from muxd.daemon.access.call_metrics import ToolMetrics
    from muxd.daemon.access.token_feed import TokenFeed
    from muxd.daemon.panes.registry import Registry

log = logging.getLogger(__name__)

TOKEN_PREFIX = "muxd_"
ENV_AGENT_TIER = "MUXD_AGENT_TIER"
ENV_AGENT_SCOPES = "MUXD_AGENT_SCOPES"
_TOKEN_NAME = re.compile(rf"^[A-Za-z0-9_.@+-]{{1,{TOKEN_NAME_MAX_CHARS}}}$")


# ---------------------------------------------------------------- principals

class Principal(msgspec.Struct, frozen=True):
    name: str                     # "system", "token:ci-bot", "agent:%3" ("agent:%3@host": hosts.pane_principal)
    tier: Tier
    token_id: str | None = None
    scoped: bool = False          # True: sees only its panes and the panes granted to it
    scopes: frozenset[str] = frozenset(TASK_SCOPES)  # tasks:read, tasks:write


SYSTEM = Principal("system", "admin")
_current: ContextVar[Principal] = ContextVar("muxd_principal", default=SYSTEM)


def current_principal() -> Principal:
    """The principal of the request being handled (set by `AccessControl.run`)."""
    return _current.get()


def principal_name(token: TokenRecord) -> str:
    return token.name if token.kind == "agent" else f"token:{token.name}"


def is_agent_principal(name: str) -> bool:
    """Whether `name` is a pane agent's own token (agent:%N): a user token's name cannot hold a colon."""
    return name.startswith("agent:")


def parse_scopes(text: str | list[str]) -> tuple[str, ...]:
    """Scopes from "tasks:read,tasks:write" (or a list); bad_request for one muxd does not know."""
    names = [s.strip() for s in (text.split(",") if isinstance(text, str) else text) if s.strip()]
    for name in names:
        if name not in TASK_SCOPES:
            raise BadRequest(f"unknown scope {name!r}: one of {', '.join(TASK_SCOPES)}", field="scopes")
    return tuple(dict.fromkeys(names))


def default_scopes(kind: str, tier: str, agent_scopes: tuple[str, ...]) -> tuple[str, ...]:
    """The scopes of a token created without any: a pane's agent token gets `agent_scopes`; a
    view_only token may read the queue; every other token may also work it."""
    if kind == "agent":
        return agent_scopes
    return ("tasks:read",) if tier == "view_only" else TASK_SCOPES


def secret_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def check_rule(principal: Principal, rule: Rule, what: str) -> None:
    """Return when `principal` may do `what` of `rule` (tier, pane scope, token scope); else Forbidden."""
    check_tier(principal.name, principal.tier, what, rule.risk, rule.read_only)
    if principal.scoped and (not rule.scoped or rule.risk == "admin"):
        raise Forbidden(f"{what} is not available to pane-scoped tokens; {principal.name} is one", action=what)
    if rule.scope is not None and rule.scope not in principal.scopes:
        have = ", ".join(sorted(principal.scopes)) or "none"
        raise Forbidden(f"{what} needs the {rule.scope} scope; {principal.name} has {have}",
                        action=what, scope=rule.scope)


def check_runs_commands(principal: Principal) -> None:
    """Return when `principal` may have muxd run shell commands; else the Forbidden `run` gives.
    One rule for `run` and for a task's `commands` check, which is a command run later."""
    check_rule(principal, rule_for(m.RunCommand), request_name(m.RunCommand))


def may_read_tasks(principal: Principal) -> bool:
    """Whether `principal` may list the task queue: who hears its events (task-changed)."""
    try:
        check_rule(principal, rule_for(m.ListTasks), request_name(m.ListTasks))
    except Forbidden:
        return False
    return True


# ---------------------------------------------------------------- the daemon's access state

class AccessControl:
    """Tokens and grants (in memory, stored in the database), checks, audit and call metrics.

    A change someone asks for (token create and revoke, grant, revoke-grant) is committed first
    and applied to the tables in memory after: what is answered is what is stored, and a write
    that fails answers store_unavailable with the tables as they were. The pane bindings the
    daemon makes on its own (a new pane's agent token, the grant of a pane to the scoped token
    that created it, the revocations when a pane goes) take effect at once and are written in
    the background: none of them outlives the run, since every start revokes its host's
    pane-bound tokens and drops its grants (`tokens.forget_pane_bindings`). A write of theirs lost to a
    crash or a locked file so changes nothing a restart shows, a pane does not wait on the disk
    to start, and a gone pane's token stops working whether or not the disk takes the change."""

    def __init__(self, db: Database, *, agent_tier: Tier = AGENT_TOKEN_TIER_DEFAULT,
                 agent_scopes: tuple[str, ...] = parse_scopes(AGENT_SCOPES_DEFAULT)) -> None:
        self.db = db
        self.agent_tier = agent_tier
        self.agent_scopes = agent_scopes
        # Anyone who can reach the socket can send made-up tokens: not one log line each.
        self.refused_hellos = SampledLog(log, logging.WARNING, "refused a hello with an unknown or revoked token",
                                         interval_s=REFUSED_TOKEN_LOG_INTERVAL_S)
        # Told the id of each token revoked, at once (the daemon closes the connections greeted with it).
        self.on_revoked: Callable[[str], None] | None = None
        self._by_hash: dict[str, TokenRecord] = {}
        self._by_id: dict[str, TokenRecord] = {}
        self._storing: dict[str, TokenRecord] = {}  # created, being committed: id and name taken
        self._grants: dict[str, set[str]] = {}
        # (token id, %N@host) -> the run of that host's daemon it was bound in (RemotePane.run)
        self._remote_runs: dict[tuple[str, str], float] = {}
        now = time.time()
        doing = "revoking the pane-bound tokens of the previous run"
        try:
            forgotten = db.call_sync(lambda c: tokens.forget_pane_bindings(c, now))
            doing = "loading the tokens"
            loaded = db.call_sync(tokens.load_tokens)
        except db.driver_errors as exc:  # a start that cannot revoke them must not serve them
            raise db.refusal_of(exc, doing) from exc
        if forgotten:
            log.info("revoked %d pane-bound token(s) left from the previous run", forgotten)
        for token in loaded:
            self._remember(token)
        self._feed = _token_feed(db)  # what other daemons of a shared database change in the tokens

    @classmethod
    def open(cls, server_name: str, env: dict[str, str] | None = None, *, db: Database | None = None) -> AccessControl:
        """The access state of server `server_name`, from its database (MUXD_DB or the default;
        `db`: that database, opened already). StoreUnavailable when that file cannot be used:
        muxd then does not start, rather than keep in memory what the user believes stored."""
        env = dict(os.environ) if env is None else env
        agent_tier = parse_tier(env.get(ENV_AGENT_TIER) or AGENT_TOKEN_TIER_DEFAULT)
        agent_scopes = parse_scopes(env.get(ENV_AGENT_SCOPES, AGENT_SCOPES_DEFAULT))
        if db is None:
            from muxd.store.opening import open_database  # the daemon's start passes its database

            db = open_database(db_path(server_name, env), busy_timeout_s=busy_timeout_from_env(env),
                               host=host_from_env(env))
        log.info("database: %s", db.path)
        try:
            return cls(db, agent_tier=agent_tier, agent_scopes=agent_scopes)
        except BaseException:
            db.close()
            raise

    @functools.cached_property
    def metrics(self) -> ToolMetrics:
        """The MCP tools' call metrics, from the first call recorded or metrics read (a cold
        start's first reply waits for none of it)."""
        from muxd.daemon.access.call_metrics import ToolMetrics

        return ToolMetrics()

    @functools.cached_property
    def audit_queue(self) -> AuditQueue:
        """The audit rows on their way to the store, from the first row (or count read)."""
        from muxd.daemon.access.audit_queue import AuditQueue

        return AuditQueue(self.db)

    def close(self) -> None:
        if self._feed is not None:
            self._feed.stop()
        self.refused_hellos.flush()
        if "audit_queue" in self.__dict__:
            self.audit_queue.close()
        self.db.close()

    def _write_soon(self, job: Callable[[sqlite3.Connection], object], what: str) -> None:
        """A background write of a pane binding (see the class): a failure is logged."""
        try:
            self.db.submit(job, what)
        except RuntimeError:  # the writer is shut down (the daemon is stopping)
            log.error("not written (the database is closed): %s", what)

    # ------------------------------------------------------------ tokens

    def _remember(self, token: TokenRecord) -> None:
        self._by_id[token.id] = token
        if token.revoked_at is None:
            self._by_hash[token.hash] = token
        else:
            self._by_hash.pop(token.hash, None)
            self._grants.pop(token.id, None)

    def _catch_up(self) -> None:
        """Take in the tokens other daemons of a shared database made or revoked (TokenFeed): on
        the loop, before a principal is checked. A token revoked here stays revoked (a row read
        before this daemon's own revocation was written may still say live)."""
        if self._feed is None:
            return
        for token in self._feed.take():
            known = self._by_id.get(token.id)
            if known is not None and known.revoked_at is not None:
                continue
            if token.revoked_at is not None and known is not None:
                self._revoked(known, token.revoked_at, token.revoked_reason or "revoked")
            else:
                self._remember(token)

    def principal_for(self, secret: str | None) -> Principal:
        """The principal of a Hello: `system` without a token; Unauthorized for an unknown/revoked one."""
        if secret is None or secret == "":
            return SYSTEM
        self._catch_up()
        token = self._by_hash.get(secret_hash(secret))
        if token is None:
            self.refused_hellos.event()
            raise Unauthorized("unknown or revoked token")
        return Principal(principal_name(token), token.tier, token.id,  # type: ignore[arg-type]
                         scoped=token.panes is not None, scopes=frozenset(self.scopes_of(token)))

    def is_live(self, token_sha256: str) -> bool:
        """Whether a Hello with the token of this sha256 would be welcomed (live, not revoked)."""
        self._catch_up()
        return token_sha256 in self._by_hash

    def scopes_of(self, token: TokenRecord) -> tuple[str, ...]:
        if token.scopes is not None:
            return token.scopes
        return default_scopes(token.kind, token.tier, self.agent_scopes)

    def _new_id(self) -> str:
        # Unique among the tokens this daemon knows; on a database daemons share, among everyone's
        # too, by 64 random bits in place of 32 (the database's key refuses the unlikely double).
        while True:
            token_id = f"tk-{secrets.token_hex(8 if self.db.shared else 4)}"
            if token_id not in self._by_id and token_id not in self._storing:
                return token_id

    def _live_named(self, name: str) -> TokenRecord | None:
        return next((t for t in self._by_hash.values() if t.name == name), None)

    def _new_token(self, *, tier: str, name: str | None, panes: list[str] | None, kind: str,
                   scopes: list[str] | None) -> tuple[TokenRecord, str]:
        tier = parse_tier(tier)
        token_id = self._new_id()
        if name is None:
            name = (f"token-{token_id[3:]}" if kind == "user"
                    else pane_principal((panes or ['?'])[0], self.db.principal_host))
        elif not _TOKEN_NAME.match(name):
            raise BadRequest(f"invalid token name {name!r}: 1-{TOKEN_NAME_MAX_CHARS} of letters, digits, _.@+-",
                             field="name")
        elif "@" in name and self.db.shared:  # `token:ci@alpha` is token ci's sends from host alpha (hosts.sent_from)
            raise BadRequest(f"invalid token name {name!r}: on a database daemons share, '@' names the host a "
                             "principal sent from", field="name")
        if self._live_named(name) is not None or any(t.name == name for t in self._storing.values()):
            raise Conflict(f"a live token is already named {name}", name=name)
        secret = TOKEN_PREFIX + secrets.token_urlsafe(TOKEN_SECRET_BYTES)
        token = TokenRecord(id=token_id, name=name, hash=secret_hash(secret), kind=kind, tier=tier,
                            panes=tuple(panes) if panes else None, created_at=time.time(),
                            scopes=None if scopes is None else parse_scopes(scopes))
        return token, secret

    async def create_token(self, *, tier: str, name: str | None = None, panes: list[str] | None = None,
                           scopes: list[str] | None = None, runs: dict[str, float] | None = None,
                           ) -> tuple[TokenRecord, str]:
        """A new token and its secret (the only time the secret exists outside its holder), once
        stored; StoreUnavailable (and no token) when it cannot be."""
        token, secret = self._new_token(tier=tier, name=name, panes=panes, kind="user", scopes=scopes)
        self._storing[token.id] = token

        def insert(c: sqlite3.Connection) -> None:
            try:
                tokens.insert_token(c, token)
            except driver_error(c) as exc:
                # Another daemon of a shared database made a token of this name since this one loaded its tokens.
                if tokens.LIVE_NAME in str(exc):
                    raise Conflict(f"a live token is already named {token.name}", name=token.name) from exc
                raise

        try:
            await self.db.call(insert, f"creating token {token.name}")
        finally:
            del self._storing[token.id]
        self._remember(token)
        for pane_id, run in (runs or {}).items():  # its other hosts' panes: in the runs they were bound in
            self._remote_runs[token.id, pane_id] = run
        log.info("token %s (%s, %s) created", token.id, principal_name(token), token.tier)
        return token, secret

    def issue_agent_token(self, pane_id: str) -> str:
        """The secret for a new pane's MUXD_TOKEN: bound to that pane, tier `agent_tier`; usable at
        once, stored in the background (see the class: it ends with the run whatever is stored)."""
        token, secret = self._new_token(tier=self.agent_tier, name=None, panes=[pane_id], kind="agent",
                                        scopes=None)
        self._remember(token)
        self._write_soon(lambda c: tokens.insert_token(c, token), f"creating token {token.name}")
        return secret

    def find_token(self, ref: str) -> TokenRecord:
        """A token by id, else a live token by name."""
        self._catch_up()
        token = self._by_id.get(ref) or self._live_named(ref)
        if token is None:
            raise NotFound(f"no token {ref!r}", token=ref)
        return token

    def agent_token_of(self, pane_id: str) -> TokenRecord:
        token = next((t for t in self._by_hash.values() if t.kind == "agent" and t.panes == (pane_id,)), None)
        if token is None:
            raise NotFound(f"pane {pane_id} has no live agent token", pane=pane_id)
        return token

    def tokens(self, include_revoked: bool = False) -> list[TokenRecord]:
        self._catch_up()
        found = self._by_id.values() if include_revoked else self._by_hash.values()
        return sorted(found, key=lambda t: (t.created_at, t.id))

    async def revoke(self, token: TokenRecord, reason: str) -> TokenRecord:
        """`token` revoked, once stored; StoreUnavailable (and the token still live) when it cannot be."""
        if token.revoked_at is not None:
            return token
        at = time.time()
        await self.db.call(lambda c: tokens.revoke_token(c, token.id, at, reason), f"revoking token {token.name}")
        current = self._by_id[token.id]
        if current.revoked_at is not None:  # another request revoked it meanwhile: that one stands
            return current
        return self._revoked(current, at, reason)

    def _revoked(self, token: TokenRecord, at: float, reason: str) -> TokenRecord:
        revoked = msgspec.structs.replace(token, revoked_at=at, revoked_reason=reason)
        self._remember(revoked)
        log.info("token %s (%s) revoked: %s", token.id, principal_name(token), reason)
        if self.on_revoked is not None:
            self.on_revoked(token.id)
        return revoked

    # ------------------------------------------------------------ scopes and grants

    def visible(self, principal: Principal) -> set[str] | None:
        """The pane ids `principal` may see; None: every pane."""
        if not principal.scoped or principal.token_id is None:
            return None
        token = self._by_id.get(principal.token_id)
        if token is None:
            return set()
        return set(token.panes or ()) | self._grants.get(token.id, set())

    def sees(self, principal: Principal, pane_id: str) -> bool:
        visible = self.visible(principal)
        return visible is None or pane_id in visible

    @staticmethod
    def _check_grantee(token: TokenRecord) -> None:
        if token.revoked_at is not None:
            raise BadRequest(f"token {token.name} is revoked", token=token.id)
        if token.panes is None:
            raise BadRequest(f"{principal_name(token)} is not pane-bound: it already sees every pane",
                             token=token.id)

    async def grant(self, token: TokenRecord, pane_id: str, *, run: float | None = None) -> None:
        """Let pane-bound `token` use `pane_id` too, once stored (StoreUnavailable otherwise);
        `run`: another host's pane's, the run of its daemon it is granted in."""
        self._check_grantee(token)
        now = time.time()
        await self.db.call(lambda c: tokens.add_grant(c, token, pane_id, now),
                           f"granting {pane_id} to {principal_name(token)}")
        self._check_grantee(self._by_id[token.id])  # revoked while the grant was stored: it lapsed with it
        self._grants.setdefault(token.id, set()).add(pane_id)
        if run is not None:
            self._remote_runs[token.id, pane_id] = run
        log.info("pane %s granted to %s", pane_id, principal_name(token))

    def _grant_now(self, token: TokenRecord, pane_id: str) -> None:
        """The grant of a pane to the scoped token that created it: at once, stored in the background."""
        if token.revoked_at is not None:  # revoked while its request ran: its grants went with it
            return
        self._grants.setdefault(token.id, set()).add(pane_id)
        now = time.time()
        self._write_soon(lambda c: tokens.add_grant(c, token, pane_id, now),
                         f"granting {pane_id} to {principal_name(token)}")

    async def revoke_grant(self, token: TokenRecord, pane_id: str) -> None:
        """Take back a grant, once stored (StoreUnavailable, and the grant kept, otherwise)."""
        if pane_id not in self._grants.get(token.id, set()):
            raise NotFound(f"pane {pane_id} is not granted to {principal_name(token)}", pane=pane_id)
        await self.db.call(lambda c: tokens.remove_grant(c, token.id, pane_id),
                           f"taking {pane_id} back from {principal_name(token)}")
        self._grants.get(token.id, set()).discard(pane_id)
        self._remote_runs.pop((token.id, pane_id), None)

    @staticmethod
    def holds_a_pane(panes: Sequence[str], live_panes: set[str]) -> bool:
        """Whether a token bound to `panes` still has one: this host's among `live_panes`, or any of
        another host's (`%N@host`: that host's daemon says whether it is there when it is used)."""
        return any(p in live_panes or pane_at_host(p) is not None for p in panes)

    def pane_gone(self, pane_id: str, live_panes: set[str]) -> None:
        """A pane was removed: drop the grants of it; revoke tokens none of whose panes is left.
        At once, stored in the background (see the class)."""
        for granted in self._grants.values():
            granted.discard(pane_id)
        self._write_soon(lambda c: tokens.remove_grants_of_pane(c, pane_id), f"dropping the grants of {pane_id}")
        at, reason = time.time(), f"pane {pane_id} gone"
        for token in list(self._by_hash.values()):
            if token.panes is not None and pane_id in token.panes and not self.holds_a_pane(token.panes, live_panes):
                self._revoked(token, at, reason)
                self._write_soon(lambda c, token_id=token.id: tokens.revoke_token(c, token_id, at, reason),
                                 f"revoking token {token.name}")

    # ------------------------------------------------------------ checking requests

    def _check_live(self, principal: Principal) -> None:
        self._catch_up()
        token = self._by_id.get(principal.token_id) if principal.token_id is not None else None
        if principal.token_id is not None and (token is None or token.revoked_at is not None):
            raise Unauthorized("this connection's token was revoked")

    def authorize(self, principal: Principal, request: Any, kind: TargetKind | None,
                  registry: Registry, *, remote: bool = False) -> Resolved | RemotePane | None:
        """What `request.target` names as a `kind` (None without one), once `principal` may send
        `request` to it; Forbidden (logged and audited) otherwise. `remote`: the request may
        name another host's pane (`%N@host`), checked by the same rules (a scoped principal
        needs that pane granted by that name) and answered as a RemotePane.

        The caller hands what this returns to the handler with no await in between, so the
        target that was checked is the target that is acted on."""
        self._check_live(principal)
        rule = rule_for(type(request))
        what = request_name(request)
        try:
            check_rule(principal, rule, what)
            elsewhere = other_hosts_pane(request.target if kind == "pane" else None, what, remote=remote,
                                         host=self.db.host, shared=self.db.shared)
            if elsewhere is not None:
                if not principal.scoped:
                    return elsewhere
                if not self.sees(principal, elsewhere.qualified):
                    raise self._out_of_scope(principal, what, request.target)
                return msgspec.structs.replace(
                    elsewhere, run=self._remote_runs.get((principal.token_id or "", elsewhere.qualified)))
            resolved = self._resolve(principal, request, kind, registry, what)
            if principal.scoped and resolved is not None:
                if not all(self.sees(principal, p.id) for p in panes_of(resolved)):
                    raise self._out_of_scope(principal, what, request.target)
        except Forbidden as exc:
            self.denied(principal, what, msgspec.to_builtins(request), exc, kind="request")
            raise
        return resolved

    def _resolve(self, principal: Principal, request: Any, kind: TargetKind | None, registry: Registry,
                 what: str) -> Resolved | None:
        if kind is None:
            return None
        target = request.target
        at = pane_at_host(target) if kind == "pane" else None
        if at is not None:  # this host's own (_elsewhere took the others')
            target = at.pane_id
        if principal.scoped and not target:
            # "The newest session" is whatever another client created last: a scoped principal
            # names what it acts on.
            raise Forbidden(f"{what}: a pane-scoped token must name its target; {principal.name} is one",
                            action=what)
        try:
            return resolve(registry, kind, target)
        except NotFound:
            if principal.scoped:  # the same answer as for a pane it may not see: names do not leak
                raise self._out_of_scope(principal, what, target) from None
            raise

    @staticmethod
    def _out_of_scope(principal: Principal, what: str, target: str | None) -> Forbidden:
        return Forbidden(f"{what}: target {target!r} is not among the panes {principal.name} may use",
                         action=what, target=target)

    def denied(self, principal: Principal, what: str, args: Any, exc: MuxdError, *, kind: str) -> None:
        log.warning("denied %s to %s: %s", what, principal.name, exc.message)
        self.audit(m.AuditRow(ts=time.time(), principal=principal.name, kind=kind, tool=what,
                               args_sha256=args_sha256(_without_id(args)), status="denied",
                               error_code=exc.code, rows=0, latency_ms=0.0))

    async def run(self, principal: Principal, request: Any, registry: Registry,
                  handle: Callable[[], Awaitable[Any]]) -> Any:
        """Run an already checked request's handler as `principal`; cut its answer to what it may see."""
        _current.set(principal)  # each request runs in a task of its own: this stays local to it
        reply = await handle()
        if not principal.scoped:
            return reply
        return self._scoped_reply(principal, request, reply, registry)

    def visible_part(self, principal: Principal, listing: Any, registry: Registry) -> Any:
        """A PaneList, SessionList or WindowList cut to what `principal` sees, as its own request's
        reply would be: for a handler that reads these lists itself (commands/formats.py)."""
        return self._scoped_reply(principal, None, listing, registry) if principal.scoped else listing

    def _scoped_reply(self, principal: Principal, request: Any, reply: Any, registry: Registry) -> Any:
        visible = self.visible(principal) or set()
        if isinstance(reply, m.PaneReply) and isinstance(request, (m.NewSession, m.NewWindow, m.SplitWindow)):
            token = self._by_id.get(principal.token_id or "")
            if token is not None:
                self._grant_now(token, reply.pane.id)  # what it creates, it may use
            return reply
        runs = {pane: run for (token_id, pane), run in self._remote_runs.items() if token_id == principal.token_id}
        return visible_part_of(reply, registry, visible, runs)

    # ------------------------------------------------------------ audit and metrics

    def audit(self, record: m.AuditRow) -> None:
        """Queue a row without waiting (a denied request): dropped and counted if the queue is full."""
        self.audit_queue.add(record)

    async def record_call(self, principal: Principal, call: m.RecordCall) -> None:
        """One finished MCP tool call: an audit row (waiting for room in the queue) and the
        per-tool metrics."""
        if call.status == "denied":  # the MCP server refused it before asking us: log it here too
            log.warning("denied MCP tool %s to %s (%s)", call.tool, principal.name, call.error_code)
        self.metrics.record(call.tool, call.latency_ms, None if call.status == "ok" else call.error_code or call.status)
        await self.audit_queue.put(m.AuditRow(ts=time.time(), principal=principal.name, kind="mcp", tool=call.tool,
                                              args_sha256=call.args_sha256, status=call.status,
                                              error_code=call.error_code, rows=call.rows,
                                              latency_ms=call.latency_ms))

    def history_principals(self, principal: Principal) -> frozenset[str]:
        """Whose audit rows `principal` may read unless admin: its own and its panes' agents'."""
        visible = self.visible(principal) or set()
        return frozenset({principal.name} | {pane_principal(pane_id, self.db.principal_host) for pane_id in visible})

    async def history(self, *, limit: int, tool: str | None, principal: str | frozenset[str] | None,
                      status: str | None) -> list[m.AuditRow]:
        await self.audit_queue.drain()  # the rows recorded before this read are in what it reads
        return await self.db.call(lambda c: audit.recent(c, limit=limit, tool=tool, principal=principal,
                                                         status=status), "reading the audit")


def _token_feed(db: Database) -> TokenFeed | None:
    """The feed of other daemons' token changes on a shared (PostgreSQL) database; None on SQLite."""
    listener = db.listener  # a PgDatabase's, started now
    if listener is None:
        return None
    from muxd.daemon.access.token_feed import TokenFeed  # psycopg's: never loaded by a SQLite start

    return TokenFeed(db, listener)


def _without_id(args: Any) -> Any:
    if isinstance(args, dict):
        return {k: v for k, v in args.items() if k != "id"}
    return args
