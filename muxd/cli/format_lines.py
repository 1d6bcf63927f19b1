"""tmux formats printed on the command line: `display-message -p FORMAT`, and the `-F`/`-f` lines
of list-panes, list-windows and list-sessions (one line per item, as tmux prints them). The
bodies of format_commands.py's commands and of the tmux shim's fast path (cli/tmux_fast_path.py),
which imports this without the CLI's command table (~0.5 ms of its call)."""

from __future__ import annotations

from muxd.formats import expand, is_true

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
    for item in items:
        variables = variables_of(item)
        if row_filter is None or is_true(expand(row_filter, variables)):
            print(expand(template, variables))


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
    scope = _scope(client, template + (args.filter or ""))
    panes = sorted(scope.panes().values(), key=lambda p: p.session)  # tmux lists sessions by name
    if not args.all:
        anchor = client.call("show-pane", "pane", target=args.target).pane
        if args.session_scope:
            panes = [p for p in panes if p.session_id == anchor.session_id]
        else:
            panes = [p for p in panes if p.window_id == anchor.window_id]
    print_lines(panes, scope.of_pane, template, args.filter)


def window_lines(client: Any, args: argparse.Namespace, template: str) -> None:
    scope = _scope(client, template + (args.filter or ""))
    windows = sorted(scope.windows().values(), key=lambda w: w.session)
    if not args.all:
        session_id = client.call("show-pane", "pane", target=args.target).pane.session_id
        windows = [w for w in windows if w.session_id == session_id]
    print_lines(windows, scope.of_window, template, args.filter)


def session_lines(client: Any, args: argparse.Namespace, template: str) -> None:
    scope = _scope(client, template + (args.filter or ""))
    print_lines(sorted(scope.sessions().values(), key=lambda s: s.name), scope.of_session, template, args.filter)


def filtered(client: Any, row_filter: str | None, kind: str, items: list[Any]) -> list[Any]:
    """The records of a table (`kind`: "panes", "windows" or "sessions") whose tmux variables pass
    `row_filter` (-f without -F filters the table, as tmux's -f filters its default lines)."""
    if row_filter is None:
        return items
    scope = _scope(client, row_filter)
    records, variables_of = {"panes": (scope.panes, scope.of_pane), "windows": (scope.windows, scope.of_window),
                             "sessions": (scope.sessions, scope.of_session)}[kind]
    kept = {key for key, record in records().items() if is_true(expand(row_filter, variables_of(record)))}
    return [item for item in items if item.id in kept]


def _scope(client: Any, template: str = "") -> FormatScope:
    # Imported here: `muxd ls` and `list-panes` without -F need none of it (collections, shlex).
    from muxd.daemon.panes.format_variables import FormatScope

    return FormatScope(client, template)


def display(client: Any, args: argparse.Namespace) -> int:
    """display-message: the format (or tmux's default) expanded for the target pane, or -a's list."""
    pane = client.call("show-pane", "pane", target=args.target).pane
    variables = _scope(client).of_pane(pane)
    if args.all_variables:
        for name in sorted(variables):
            print(f"{name}={variables[name]}")
        return 0
    template = args.format if args.format is not None else args.message
    print(expand(DISPLAY_DEFAULT_FORMAT if template is None else template, variables))
    return 0
