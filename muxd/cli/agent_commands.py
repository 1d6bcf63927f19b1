"""CLI commands about agents: summary, explain, the agents muxd knows, and offline detect / replay."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from muxd.cli.render import duration, print_json, print_json_line, print_line, print_table, tokens
from muxd.cli.table import cli_command
from muxd.errors import BadRequest

TYPE_CHECKING = False  # typing (~2 ms to import) only for the type checker: see cli/table.py
if TYPE_CHECKING:
    from typing import Any

    from muxd.detectors.state import AgentState


def _configure_summary(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", dest="target", help="target pane")
    p.add_argument("--output", dest="output_lines", type=int, nargs="?", const=10, default=None,
                   help="include the last N lines of output (default 10, at most 50)")
    p.add_argument("--json", action="store_true", help="the summary as JSON (seed 002's schema)")


@cli_command("summary")(_configure_summary)
def summary(client: Any, args: argparse.Namespace) -> int:
    reply = client.call("summary", "summary-reply", target=args.target,
                        include_recent_output=args.output_lines is not None,
                        output_lines=args.output_lines or 10)
    s = reply.summary
    if args.json:
        print_json(s)
        return 0
    agent = s.agent_type or "no agent"
    parts = [f"{s.pane_id} {agent}", s.activity.state]
    if s.activity.duration_secs is not None:
        parts[-1] += f" {duration(s.activity.duration_secs)}"
    told = s.sources.get("state")
    parts.append(s.confidence + ("" if told is None else f" ({told.source}{' ' + told.detail if told.detail else ''})"))
    if s.activity.description:
        parts.append(s.activity.description)
    if s.activity.tool:
        parts.append(s.activity.tool + (f": {s.activity.tool_input}" if s.activity.tool_input else ""))
    if s.background:
        parts.append(f"{s.background} in background")
    if s.session.tokens_used is not None:
        parts.append(f"{tokens(s.session.tokens_used)} tok")
    if s.session.model:
        parts.append(s.session.model)
    if s.recent_tools:
        parts.append("tools " + ",".join(s.recent_tools))
    if s.context.is_awaiting_confirmation:
        asked = s.confirmation
        parts.append("AWAITING CONFIRMATION" + ("" if asked is None else
                                                 f" {asked.tool + ': ' if asked.tool else ''}{asked.prompt}"))
    if s.error is not None:
        parts.append(f"error {s.error.type}: {s.error.message}")
    if s.limit is not None:
        import time

        from muxd.units import limit_text

        parts.append(limit_text(s.limit.resets_at, time.time()).replace("usage limit", "USAGE LIMIT", 1))
    print_line(" · ".join(parts))
    for line in s.recent_output or []:
        print_line(f"  {line}")
    return 0


def _configure_explain(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", dest="target", help="target pane")
    p.add_argument("--json", action="store_true")


@cli_command("explain")(_configure_explain)
def explain(client: Any, args: argparse.Namespace) -> int:
    pane_id = client.call("summary", "summary-reply", target=args.target).summary.pane_id
    panes = client.call("list-panes", "pane-list", all=True).panes
    state = next(p.agent for p in panes if p.id == pane_id)
    if args.json:
        print_json(state)
        return 0
    print_state(state)
    return 0


def print_state(state: AgentState) -> None:
    """The state field by field; where hooks spoke, both views and the rule that chose, and
    where each field came from."""
    import time

    from muxd.detectors.provenance import confidence_at

    evidence = state.evidence
    fusion = state.fusion
    rows = [
        ["agent", state.agent_type or "none"],
        ["state", state.activity.state],
        ["description", state.activity.description or ""],
        ["elapsed", "" if state.activity.elapsed_s is None else f"{state.activity.elapsed_s}s"],
        ["tokens", "" if state.session.tokens_used is None else str(state.session.tokens_used)],
        ["model", state.session.model or ""],
        ["session id", state.session.id or ""],
        ["cost", "" if state.session.cost_usd is None else f"${state.session.cost_usd:g}"],
        ["context left", "" if state.session.context_left_pct is None else f"{state.session.context_left_pct:g}%"],
        ["tool", state.tool or ""],
        ["recent tools", ", ".join(state.recent_tools)],
        ["confirmation", "" if state.confirmation is None else
         state.confirmation.prompt + (" [" + " | ".join(state.confirmation.options) + "]"
                                      if state.confirmation.options else "")],
        ["error", "" if state.error is None else f"{state.error.type}: {state.error.message}"],
        ["limit", "" if state.limit is None else f"{state.limit.message} [{_reset(state.limit.resets_at)}]"],
        ["tool input", state.tool_input or ""],
        ["prompt", (state.prompt or "").split("\n", 1)[0][:PROMPT_SHOWN_CHARS]],
        ["background", "" if state.background is None else str(state.background)],
        ["detector", evidence.detector if evidence else ""],
        ["rule", evidence.rule if evidence else ""],
        ["line", (evidence.line or "") if evidence else ""],
        ["confidence", confidence_at(state, time.time()) if state.sources else ""],
    ]
    if fusion is not None:
        rows += [
            ["screen says", f"{fusion.screen or 'nothing'}{_since(fusion.screen_at)}"],
            ["hooks say", "nothing now" if fusion.hook is None else
             f"{fusion.hook} ({fusion.hook_event}{_since(fusion.hook_at, ' at')})"],
            ["decided by", fusion.rule],
        ]
    print_table(["FIELD", "VALUE"], [r for r in rows if r[1]])
    if state.sources:
        print_line("")
        print_table(["FIELD", "SOURCE", "OBSERVED", "DETAIL"],
                    [[name, told.source, _clock(told.observed_at), told.detail or ""]
                     for name, told in state.sources.items()])


PROMPT_SHOWN_CHARS = 80


def _reset(resets_at: float | None) -> str:
    import time

    if resets_at is None:
        return "reset not said"
    return "resets " + time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(resets_at))


def _clock(at: float) -> str:
    import time

    return time.strftime("%H:%M:%S", time.localtime(at)) + f".{int(at * 1000) % 1000:03d}"


def _since(at: float | None, word: str = " since") -> str:
    return "" if at is None or at == float("-inf") else f"{word} {_clock(at)}"


def read_input(name: str) -> bytes:
    """The bytes of file `name` (`-`: standard input); BadRequest in one line when it cannot be read."""
    if name == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(name).read_bytes()
    except IsADirectoryError:
        raise BadRequest(f"{name}: a directory, not a file") from None
    except OSError as exc:
        raise BadRequest(f"{name}: {exc.strerror or exc}") from None


def _configure_detect(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="a capture (plain or with escapes) or a raw byte stream; - reads stdin")
    p.add_argument("--cols", type=int, help="screen width (default: fits a plain capture, else 120)")
    p.add_argument("--rows", type=int, help="screen height (default: fits a plain capture, else 40)")
    p.add_argument("--agent", help="use this detector instead of identifying the agent")
    p.add_argument("--json", action="store_true")


@cli_command("detect")(_configure_detect)
def detect(client: Any, args: argparse.Namespace) -> int:
    import time

    from muxd.detectors.registry import load_detectors
    from muxd.detectors.replay import detect_saved_screen, only

    # (read as on screen now: "resets 3pm" is the coming 3pm)
    state = detect_saved_screen(read_input(args.file), only(load_detectors(), args.agent),
                                columns=args.cols, lines=args.rows, now=time.time())
    if args.json:
        print_json(state)
    else:
        print_state(state)
    return 0


def _configure_agents(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true")


@cli_command("agents")(_configure_agents)
def agents(client: Any, args: argparse.Namespace) -> int:
    """Exit status 1 when a manifest is in error: a check to run after writing one."""
    from muxd.detectors.registry import catalogue

    found, errors = catalogue(quiet=True)  # each error said once, below
    rows = [{"name": detector.name, "kind": "manifest" if source.endswith(".toml") else "python", "from": source}
            for detector, source in found]
    if args.json:
        print_json({"agents": rows, "errors": [{"path": e.detail["path"], "line": e.detail["line"],
                                               "message": e.message} for e in errors]})
    else:
        print_table(["NAME", "KIND", "FROM"], [[row["name"], row["kind"], row["from"]] for row in rows])
        for error in errors:
            print(f"muxd: agent manifest skipped: {error.message}", file=sys.stderr)
    return 1 if errors else 0


def _configure_replay(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="an asciicast v2/v3 recording, or a raw byte log; - reads stdin")
    p.add_argument("--cols", type=int, help="screen width (a raw log's default: 120)")
    p.add_argument("--rows", type=int, help="screen height (a raw log's default: 40)")
    p.add_argument("--agent", help="use this detector instead of identifying the agent")
    p.add_argument("--until", type=float, metavar="SECONDS",
                   help="stop there: print the screen at that moment and the state published by then")
    p.add_argument("--json", action="store_true", help="one JSON object per published state")


@cli_command("replay")(_configure_replay)
def replay(client: Any, args: argparse.Namespace) -> int:
    from muxd.detectors.registry import load_detectors
    from muxd.detectors.replay import read_recording, replay as run_replay

    recording = read_recording(Path(args.file), columns=args.cols, lines=args.rows, data=read_input(args.file))
    if args.until is not None:
        return _replay_until(recording, only(load_detectors(), args.agent), args.until, as_json=args.json)
    rows = []
    for when, state in run_replay(recording, only(load_detectors(), args.agent)):
        if args.json:
            print_json_line({"t": round(when, 3), "state": state})
            continue
        rows.append([f"{when:8.2f}", state.agent_type or "-", state.activity.state,
                     state.activity.description or "", tokens(state.session.tokens_used),
                     ",".join(state.recent_tools[-3:])])
    if not args.json:
        print_table(["TIME", "AGENT", "STATE", "DOING", "TOKENS", "TOOLS"], rows)
    return 0


def _replay_until(recording: Any, detectors: list, until: float, *, as_json: bool) -> int:
    """The screen at `until` and the state published by then: how to see why a timeline says
    what it says at a moment."""
    from muxd.detectors.replay import replay as run_replay
    from muxd.detectors.state import AgentState
    from muxd.emulator.backend import new_emulator

    emulator = new_emulator(columns=recording.columns, lines=recording.lines)
    state = AgentState(pane_id="replay")
    for _, state in run_replay(recording, detectors, until=until, emulator=emulator):
        pass
    screen = emulator.display_lines()
    if as_json:
        print_json_line({"t": until, "screen": screen, "state": state})
        return 0
    shown = len(screen)
    while shown and not screen[shown - 1]:
        shown -= 1
    print(f"screen at {until:g} s ({emulator.columns}x{emulator.lines}):")  # after any recorded resize
    for row, line in enumerate(screen[:shown]):
        print_line(f"{row:4} | {line}")
    print("state published by then:")
    print_state(state)
    return 0


def only(detectors: list, agent: str | None) -> list:
    from muxd.detectors.replay import only as restrict

    return restrict(detectors, agent)
