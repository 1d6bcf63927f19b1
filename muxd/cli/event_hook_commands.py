"""CLI commands for hooks on events: set-hook and show-hooks, flags and output as tmux 3.3a's
(the daemon side is daemon/commands/event_hooks.py)."""

from __future__ import annotations

import argparse

from muxd.cli.table import cli_command

TYPE_CHECKING = False  # typing only for the type checker: see cli/table.py
if TYPE_CHECKING:
    from typing import Any

# The variables a hook's commands may expand, besides the target pane's (#{pane_id}, #{session_name}…).
HOOK_FORMATS = (
    "#{hook} (the event), #{hook_pane}, #{hook_window}, #{hook_window_name}, #{hook_session}, "
    "#{hook_session_name}, #{hook_client}; muxd's: #{hook_agent}, #{hook_state}, #{hook_previous}, "
    "#{hook_question}, #{hook_error}, #{hook_execution}, #{hook_status}, #{hook_resets_at}, "
    "#{hook_exit_code}; #{q:hook_question} quotes a value for the shell")


def _add_level_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", dest="target", help="target session, window or pane")
    p.add_argument("-g", dest="global_", action="store_true", help="the global hooks")
    p.add_argument("-p", dest="pane", action="store_true", help="the target pane's own hooks")
    p.add_argument("-w", dest="window", action="store_true", help="window hooks (pane-died, agent-*…)")


def _configure_set_hook(p: argparse.ArgumentParser) -> None:
    from muxd.daemon.panes.hook_arrays import HOOK_SCOPES
    from muxd.protocol.event_messages import EVENT_KINDS

    _add_level_options(p)
    p.add_argument("-a", dest="append", action="store_true", help="add the command (at the first free index)")
    p.add_argument("-u", dest="unset", action="store_true", help="unset the hook (or its item name[N])")
    p.add_argument("-R", dest="run_now", action="store_true", help="run the hook now")
    p.add_argument("hook", help="the hook's name; name[N]: its Nth command")
    p.add_argument("command", nargs="?", help="muxd commands (`;` between them), run as the server's owner")
    p.add_argument("--tmux-names", dest="tmux_names", action="store_true", help=argparse.SUPPRESS)  # muxd tmux's
    p.epilog = ("hooks: " + "; ".join(f"{name} ({HOOK_SCOPES[name]}): {EVENT_KINDS[name]}" for name in HOOK_SCOPES)
                + ". A session hook is set on a session or globally (-g); a window hook on a pane (-p), a "
                + "window, or globally (-g); the most specific one set runs. Formats: " + HOOK_FORMATS)


@cli_command("set-hook")(_configure_set_hook)
def set_hook(client: Any, args: argparse.Namespace) -> int:
    client.call("set-hook", "ok", name=args.hook, target=args.target, command=args.command,
                global_scope=args.global_, pane=args.pane, append=args.append, unset=args.unset,
                run_now=args.run_now, tmux_names=args.tmux_names)
    return 0


def _configure_show_hooks(p: argparse.ArgumentParser) -> None:
    _add_level_options(p)
    p.add_argument("hook", nargs="?", help="only this hook (name[N]: its Nth command)")


@cli_command("show-hooks")(_configure_show_hooks)
def show_hooks(client: Any, args: argparse.Namespace) -> int:
    hooks = client.call("show-hooks", "hook-list", name=args.hook, target=args.target, global_scope=args.global_,
                        pane=args.pane, window=args.window).hooks
    for hook in hooks:
        print(hook.name if hook.index is None else f"{hook.name}[{hook.index}] {hook.command}")
    return 0
