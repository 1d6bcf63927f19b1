"""The command table: each request type maps to one small handler, declared next to its kin.

As tmux's cmd_entry, a command declares the kind of thing its request's `target` names. The
dispatcher resolves that target once, checks access against what it resolved, and hands the
resolved object to the handler: `async def handler(daemon, request, pane) -> Reply`. A command
without a target kind gets `async def handler(daemon, request) -> Reply`. Handlers raise
MuxdError subclasses for anything the client should hear about. Modules register with
`@command(RequestType, target=...)`.
"""

from __future__ import annotations

from muxd.daemon.commands.table import COMMANDS, Command


def load_all() -> dict[type, Command]:
    """Import every command module (each registers itself) and return the table."""
    from muxd.daemon.commands import agents, panes, server, sessions  # noqa: F401
    from muxd.daemon.commands import layouts  # noqa: F401 - select-layout, swap/join/break/respawn-pane
    from muxd.daemon.commands import access  # noqa: F401 - tokens, grants, audit, metrics
    from muxd.daemon.commands import executions  # noqa: F401 - the history
    from muxd.daemon.commands import tasks  # noqa: F401 - the task queue
    from muxd.daemon.commands import buffers, clients, keys, options, selection  # noqa: F401 - tmux's daily commands
    from muxd.daemon.commands import tmux  # noqa: F401 - watching panes that run in tmux
    from muxd.daemon.commands import hooks  # noqa: F401 - the agents' own hook events
    from muxd.daemon.commands import events  # noqa: F401 - the bus's recent events
    from muxd.daemon.commands import event_hooks  # noqa: F401 - set-hook, show-hooks: tmux's hooks on events

    return COMMANDS
