"""`muxd ls --all-hosts`: this daemon's panes and, on a database daemons share (PostgreSQL, issue
30), every other host's as its daemon last published them, each row saying its host. Another
host's pane is shown as its target, `%N@host`; a stale host's (no heartbeat within its bound)
says `stale` by its host and Unknown as its state, the last state it published kept apart. When
the database cannot be read, this host's panes are shown and one line says why no others (exit 1)."""

from __future__ import annotations

from muxd.cli.render import print_json, print_panes

TYPE_CHECKING = False  # typing (~2 ms to import) only for the type checker: see cli/table.py
if TYPE_CHECKING:
    from typing import Any


def _row(host: str, target: str, pane: Any, **fleet: Any) -> dict[str, Any]:
    """One pane as --json shows it: its host and target first, its record's fields after."""
    return {"host": host, "target": target, "stale": False, **fleet, **pane}


def list_all_hosts(client: Any, *, json: bool, color: bool) -> int:
    local = client.call("list-panes", "pane-list", all=True).panes
    fleet = client.call("list-fleet", "fleet-list")
    rows = [_row(fleet.host, p.id, p) for p in local]
    rows += [_row(f.host, f.target, f.pane, stale=f.stale, last_state=f.last_state,
                  last_heartbeat_at=f.last_heartbeat_at, observed_at=f.observed_at, state_source=f.state_source)
             for f in fleet.panes]
    done = 0 if fleet.unreadable is None else 1
    if json:
        print_json({"host": fleet.host, "shared": fleet.shared, "stale_after_s": fleet.stale_after_s,
                    "hosts": fleet.hosts, "panes": rows, "unreadable": fleet.unreadable})
        return done
    from muxd.protocol.msgpack_lite import Record

    shown = [Record(row, id=row["target"]) for row in rows]  # another host's pane by its target
    hosts = [f"{row['host']} (stale)" if row["stale"] else row["host"] for row in rows]
    print_panes(shown, color=color, hosts=hosts)
    if fleet.unreadable is not None:
        import sys

        print(f"muxd: the other hosts are not shown: {fleet.unreadable}", file=sys.stderr)
    return done
