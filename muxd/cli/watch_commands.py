"""`muxd watch` (alias `events`): the daemon's events as they happen, one JSON object a line
(flushed at once: `muxd watch | jq`, a script's `while read`), or each as a tmux format.

    muxd watch [-t PANE]… [--kind KIND]… [--agent TYPE] [--until KIND] [--timeout S] [--format F]

`--until KIND` is a one-shot wait: it prints the first such event and exits 0. A pane already
in that condition as the watch starts (an agent already waiting) answers at once, with an event
made from the pane's state (`"current": true`); the state is read after subscribing, so an event
in between is not lost. Exits 1 when `--timeout` passes with nothing (or no `--until` event),
1 when the server goes, 130 on Ctrl-C.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Callable

import msgspec

from muxd.cli.table import cli_command
from muxd.daemon.attention.agent_events import LIMITED_STATE, WAITING_STATES, question_of
from muxd.errors import BadRequest, ConnectionLost, Timeout
from muxd.formats import expand
from muxd.protocol.event_messages import EVENT_KINDS, DaemonEvent, unknown_kinds, unknown_kinds_message
from muxd.protocol.messages import ListPanes, PaneInfo, Subscribe
from muxd.terminal_text import visible

# The kinds a pane can already be in when a `--until` watch starts, and how its record shows it.
CONDITIONS: dict[str, Callable[[PaneInfo], bool]] = {
    "agent-waiting": lambda p: p.agent.activity.state in WAITING_STATES,
    "agent-idle": lambda p: p.agent.is_agent and p.agent.activity.state == "Idle",
    "agent-limited": lambda p: p.agent.activity.state == LIMITED_STATE or p.attention == "limited",
    "agent-failed": lambda p: p.attention == "failed",
}
# tmux's names for the event's fields, besides the fields' own (#{kind}, #{pane_id}, #{question}…).
FORMAT_ALIASES = {"session_name": "session", "event": "kind", "agent": "agent_type"}


def _configure_watch(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", dest="targets", metavar="PANE", action="append", default=[],
                   help="only this pane's events (repeatable; a name, %%id or session:window.pane)")
    p.add_argument("--kind", dest="kinds", metavar="KIND", action="append", default=[],
                   help=f"only events of this kind (repeatable): {', '.join(EVENT_KINDS)}")
    p.add_argument("--agent", metavar="TYPE", help="only events of this agent type (claude, codex, …)")
    p.add_argument("--until", metavar="KIND",
                   help="print the first event of this kind and exit 0 (at once if a pane already is in it)")
    p.add_argument("--timeout", type=float, metavar="S",
                   help="give up after S seconds: exit 1 if nothing came (with --until: if it did not come)")
    p.add_argument("--format", dest="template", metavar="FORMAT",
                   help="each event as this tmux format instead of JSON: '#{kind} #{pane_id} #{question}'")


@cli_command("watch")(_configure_watch)
def watch(client: None, args: argparse.Namespace) -> int:
    kinds = list(dict.fromkeys(args.kinds + ([args.until] if args.until else [])))
    unknown = unknown_kinds(kinds)
    if unknown:
        raise BadRequest(unknown_kinds_message(unknown))
    if args.timeout is not None and args.timeout <= 0:
        raise BadRequest(f"--timeout must be more than 0 seconds, got {args.timeout:g}")
    # --until alone prints only what it waits for; with --kind, those kinds on the way too.
    return asyncio.run(_watch(args, kinds or None))


async def _watch(args: argparse.Namespace, kinds: list[str] | None) -> int:
    from muxd.cli.live_client import connect_live, pane_ids

    heard: asyncio.Queue[DaemonEvent] = asyncio.Queue()

    def take(message: object) -> None:
        if isinstance(message, DaemonEvent):
            heard.put_nowait(message)

    def wanted(event: DaemonEvent) -> bool:
        return args.agent is None or event.agent_type == args.agent

    client = await connect_live(args, "muxd-watch", on_event=take)
    try:
        panes = await pane_ids(client, args.targets) if args.targets else None
        await client.call(Subscribe, events=True, kinds=kinds, panes=panes)
        if args.until in CONDITIONS:  # read after subscribing: what changes from here is heard
            condition = CONDITIONS[args.until]
            listed = (await client.call(ListPanes, all=True)).panes
            for pane in listed:
                if (panes is None or pane.id in panes) and condition(pane):
                    event = current_event(args.until, pane)
                    if wanted(event):
                        _print(event, args.template, current=True)
                        return 0
        ended = asyncio.ensure_future(client.ended())
        deadline = None if args.timeout is None else time.monotonic() + args.timeout
        printed = 0

        def show(event: DaemonEvent) -> bool:
            """Print `event` if it is wanted; True when it ends the watch (--until's kind)."""
            nonlocal printed
            if not wanted(event):
                return False
            _print(event, args.template)
            printed += 1
            return args.until is not None and event.kind == args.until

        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            next_event = asyncio.ensure_future(heard.get())
            done, _ = await asyncio.wait({next_event, ended}, timeout=left, return_when=asyncio.FIRST_COMPLETED)
            if next_event in done:
                if show(next_event.result()):
                    return 0
                continue
            next_event.cancel()
            if ended in done:
                while not heard.empty():  # what came before the end is printed first
                    if show(heard.get_nowait()):
                        return 0
                raise ConnectionLost(f"the server went away ({ended.result().message})")
            if args.until or not printed:
                what = f"no {args.until} event" if args.until else "no event"
                raise Timeout(f"{what} within {args.timeout:g} s")
            return 0
    finally:
        await client.close()


def current_event(kind: str, pane: PaneInfo) -> DaemonEvent:
    """The event `kind` as `pane` stands now: what a `--until` watch prints for a pane that is
    already in the condition it waits for."""
    agent = pane.agent
    told = agent.sources.get("state")
    return DaemonEvent(kind=kind, at=pane.attention_since or agent.activity.since or time.time(), pane_id=pane.id,
                       window_id=pane.window_id, window_index=pane.window, window_name=pane.window_name,
                       session=pane.session, session_id=pane.session_id, agent_type=agent.agent_type,
                       state=agent.activity.state, source=told.source if told is not None else None,
                       question=question_of(agent) if kind == "agent-waiting" else None,
                       error=pane.attention_text if kind in ("agent-failed", "agent-limited") else None)


def event_record(event: DaemonEvent, *, current: bool = False) -> dict[str, object]:
    """The event as `watch` prints it: its fields that apply (not the None ones); `current`
    marks one made from a pane's state rather than heard."""
    record = {name: value for name, value in msgspec.structs.asdict(event).items() if value is not None}
    if current:
        record["current"] = True
    return record


def event_variables(event: DaemonEvent) -> dict[str, str]:
    """The event's fields as format variables; times in whole seconds (so #{t:at} shows a date)."""
    variables = {}
    for name, value in msgspec.structs.asdict(event).items():
        if isinstance(value, float) and name in ("at", "resets_at"):
            value = int(value)
        variables[name] = "" if value is None else str(value)
    for alias, name in FORMAT_ALIASES.items():
        variables[alias] = variables[name]
    return variables


def _print(event: DaemonEvent, template: str | None, *, current: bool = False) -> None:
    if template is not None:
        variables = event_variables(event)
        variables["current"] = "1" if current else ""
        line = visible(expand(template, variables))  # a question may hold escapes: never sent raw
    else:
        line = msgspec.json.encode(event_record(event, current=current)).decode()
    sys.stdout.write(line + "\n")
    sys.stdout.flush()
