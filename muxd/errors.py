"""One exception root for muxd; each family carries a stable code that crosses the wire."""

from __future__ import annotations

TYPE_CHECKING = False  # typing only for the type checker: `muxd --version` imports this module, not typing
if TYPE_CHECKING:
    from typing import Any


class MuxdError(Exception):
    """Root of every error muxd raises on purpose. `code` is stable; `detail` is structured."""

    code = "internal"

    def __init__(self, message: str, **detail: Any) -> None:
        super().__init__(message)
        self.message = message
        self.detail = detail


class BadRequest(MuxdError):
    code = "bad_request"


class NotUtf8(BadRequest):
    """A word that must be text (a name, a title, a search) holds bytes that are not UTF-8, as the
    shell's $'\\xff' gives; `value` is the word as Python reads argv (os.fsencode gives its bytes)."""

    def __init__(self, value: str, field: str | None = None) -> None:
        shown = repr(value.encode("utf-8", "surrogateescape"))[1:]  # 'caf\xe9', as the shell's $'…'
        super().__init__(f"{field + ' ' if field else ''}{shown} is not valid UTF-8", field=field)
        self.value = value


class ProtocolError(BadRequest):
    """A peer sent bytes that are not a valid muxd frame or message."""


class FrameTooLarge(ProtocolError):
    """A frame header announced more than MAX_FRAME_BYTES."""


class VersionMismatch(BadRequest):
    code = "version_mismatch"


class BadManifest(MuxdError):
    """An agent manifest (muxd/detectors/manifest.py) that cannot be used; the message names its file and line."""

    code = "bad_manifest"


class NotFound(MuxdError):
    code = "not_found"


class Conflict(MuxdError):
    code = "conflict"


class Forbidden(MuxdError):
    code = "forbidden"


class TaskNotActionable(Conflict):
    """A claim on a task that is blocked: dependencies not done, or an open blocking review."""

    code = "task.not_actionable"


class TaskAlreadyClaimed(Conflict):
    """A claim, update or completion by someone who does not hold the task."""

    code = "task.already_claimed"


class TaskInvariantViolated(Conflict):
    """A transition the task state machine does not allow (done -> in_progress)."""

    code = "task.invariant_violated"


class QuotaExceeded(MuxdError):
    """A principal's quota (knowledge_stored) would be exceeded."""

    code = "quota_exceeded"


class RateLimited(MuxdError):
    """More calls than their rate allows (an MCP tool by one principal, a pane's hook events);
    `retry_after_s` says when to try again."""

    code = "rate_limited"


class Unauthorized(MuxdError):
    """A token the daemon does not know, or one that was revoked (HTTP would answer 401)."""

    code = "unauthorized"


class Timeout(MuxdError):
    code = "timeout"


class SpawnFailed(MuxdError):
    code = "spawn_failed"


class ServerNotRunning(MuxdError):
    code = "server_not_running"


class HostUnreachable(ServerNotRunning):
    """Another host's daemon cannot be reached: `muxd -H ssh://…` (ssh could not reach the host,
    log in, or run muxd there), or a target on another host (`%N@host`) from a daemon whose store
    is not shared. A ServerNotRunning: whoever connects handles it as no server there."""

    code = "host_unreachable"


class ServerAlreadyRunning(Conflict):
    code = "server_running"


class ConnectionLost(MuxdError):
    code = "connection_lost"


class ClientClosed(ConnectionLost):
    """The request's own client was closed before its answer came: what was sent had left (a
    close flushes what is written), only the answer is lost."""


class NotATerminal(BadRequest):
    """`muxd attach` (or `muxd new` without -d) was run without a terminal on stdin/stdout."""

    code = "not_a_terminal"


class Internal(MuxdError):
    code = "internal"


class StoreUnavailable(Internal):
    """muxd's database cannot be written or read now (full disk, locked, damaged)."""

    code = "store_unavailable"


_BY_CODE: dict[str, type[MuxdError]] = {}
for _cls in (BadRequest, VersionMismatch, NotFound, Conflict, Forbidden, Unauthorized, Timeout, SpawnFailed,
             ServerNotRunning, HostUnreachable, ServerAlreadyRunning, ConnectionLost, Internal, StoreUnavailable,
             TaskNotActionable, TaskAlreadyClaimed, TaskInvariantViolated, QuotaExceeded, RateLimited):
    _BY_CODE.setdefault(_cls.code, _cls)


ERROR_CODES = frozenset(_BY_CODE)  # every stable code an error can carry ("not_found", …)


def error_from_code(code: str, message: str, detail: dict[str, Any] | None = None) -> MuxdError:
    """Rebuild a typed error on the client side from the code a reply carried."""
    return _BY_CODE.get(code, MuxdError)(message, **(detail or {}))
