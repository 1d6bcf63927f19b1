"""tmux formats printed on the command line: `display-message -p FORMAT`, and the `-F`/`-f` lines
of list-panes, list-windows and list-sessions (one line per item, as tmux prints them). The
bodies of format_commands.py's commands and of the tmux shim's fast path (cli/tmux_fast_path.py),
which imports this without the CLI's command table (~0.5 ms of its call)."""

from __future__ import annotations

import sys

from muxd._environ import hook_variables_from_env

TYPE_CHECKING = False  # typing only for the type checker: see cli/table.py; argparse neither (tmux_fast_path.py)
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Iterable, Mapping
    from typing import Any

    from muxd.daemon.panes.format_variables import FormatScope

# tmux's display-message without a format (its strftime part left out: see the README).
DISPLAY_DEFAULT_FORMAT = "[#{session_name}] #{window_index}:#{window_name}, current pane #{pane_index}"


def print_lines(items: Iterable[Any], variables_of: Callable[[Any], Mapping[str, str]], template: str,
                row_filter: str | None) -> None:
    """One line per item of `items` whose variables pass `row_filter`: `template` expanded."""
    from muxd.daemon.panes.format_variables import expanded_lines

    for line in expanded_lines(items, variables_of, template, row_filter):
        print(line)


def expanded(client: Any, listing: str, target: str | None, template: str | None, **fields: Any) -> None:
    """Print the lines the daemon expands (expand-format: one round trip) for `listing` ("pane",
    "panes", "windows", "sessions") of `target`; `fields`: the request's filter, all and
    session_scope. With the variables of the hook event this command runs for, if any."""
    hook = hook_variables_from_env()
    if hook:
        fields["variables"] = hook
    lines = client.call("expand-format", "expanded", target=target, listing=listing, template=template, **fields).lines
    sys.stdout.write("".join(line + "\n" for line in lines))


def client_variables(client: Any, template: str) -> Callable[[Any], Mapping[str, str]]:
    """An attached client's variables (ClientInfo): tmux's #{client_*} over its session's."""
    from collections import ChainMap

    scope = _scope(client, template)
    sessions = {s.name: s for s in scope.sessions().values()}

    def of_client(attached: Any) -> Mapping[str, str]:
        session = sessions.get(attached.session)
        own = {"client_name": attached.name, "client_tty": attached.name, "client_session": attached.session,
               "client_width": str(attached.columns), "client_height": str(attached.lines)}
        return ChainMap(own, scope.of_session(session) if session is not None else scope.server)

    return of_client


def pane_lines(client: Any, args: argparse.Namespace, template: str) -> None:
    """list-panes as tmux scopes it: the target window, the target's session with -s, every
    pane with -a (the target resolved by the daemon, as every command's)."""
    expanded(client, "panes", args.target, template, filter=args.filter, all=args.all,
             session_scope=args.session_scope)


def window_lines(client: Any, args: argparse.Namespace, template: str) -> None:
    expanded(client, "windows", args.target, template, filter=args.filter, all=args.all)


def session_lines(client: Any, args: argparse.Namespace, template: str) -> None:
    expanded(client, "sessions", None, template, filter=args.filter)


def filtered(client: Any, row_filter: str | None, kind: str, items: list[Any]) -> list[Any]:
    """The records of a table (`kind`: "panes", "windows" or "sessions") whose tmux variables pass
    `row_filter` (-f without -F filters the table, as tmux's -f filters its default lines)."""
    if row_filter is None:
        return items
    from muxd.formats import expand, is_true

    scope = _scope(client, row_filter)
    records, variables_of = {"panes": (scope.panes, scope.of_pane), "windows": (scope.windows, scope.of_window),
                             "sessions": (scope.sessions, scope.of_session)}[kind]
    kept = {key for key, record in records().items() if is_true(expand(row_filter, variables_of(record)))}
    return [item for item in items if item.id in kept]


def _scope(client: Any, template: str = "") -> FormatScope:
    # Imported here: `muxd ls` and `list-panes` without -F need none of it (collections, shlex).
    from muxd.daemon.panes.format_variables import FormatScope

    return FormatScope.of_client(client, template)


def display(client: Any, args: argparse.Namespace) -> int:
    """display-message: the format (or tmux's default) expanded for the target pane, or -a's list."""
    template = args.format if args.format is not None else args.message
    if args.all_variables:
        template = None
    elif template is None:
        template = DISPLAY_DEFAULT_FORMAT
    expanded(client, "pane", args.target, template)
    return 0
