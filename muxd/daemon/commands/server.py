"""Server-wide commands: status and kill-server."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from muxd import __version__
from muxd.config import PROTOCOL_VERSION
from muxd.daemon.commands.table import command
from muxd.daemon.core import log_file
from muxd.emulator.backend import running_backend
from muxd.protocol.messages import KillServer, Ok, ServerStatus, Status

if TYPE_CHECKING:
    from muxd.daemon.server import Daemon


@command(ServerStatus)
async def server_status(daemon: Daemon, req: ServerStatus) -> Status:
    # A reading of the modules imports none: the emulator backend's name would load it.
    modules = sorted(sys.modules) if req.modules else []
    backlog = daemon.executions.backlog
    access = daemon.access
    return Status(id=req.id, pid=os.getpid(), version=__version__,
                  protocol_version=PROTOCOL_VERSION, socket=str(daemon.socket_path),
                  started_at=daemon.started_at, sessions=len(daemon.registry.sessions),
                  panes=len(daemon.registry.all_panes()), emulator="" if req.modules else running_backend(),
                  unwritten_executions=len(backlog) if backlog is not None else 0,
                  lost_executions=backlog.dropped if backlog is not None else 0,
                  database=access.db.path, database_problem=access.db.problem,
                  audit_rows_dropped=access.audit_queue.dropped, audit_rows_failed=access.audit_queue.failed,
                  log=log_file.configured_path(),
                  host=access.db.host, modules=modules)


@command(KillServer)
async def kill_server(daemon: Daemon, req: KillServer) -> Ok:
    daemon.request_shutdown()
    return Ok(id=req.id)
