"""`muxd run`: a command as a recorded execution, in the caller's directory as tmux's new-window
from a shell runs one. With --wait it is a foreground command: the execution id at once (on
stderr: stdout is the program's), the program's output when it ends, its exit status; Ctrl-C
leaves it running and says how to stop it. The new window closes when the command ends, as tmux's
`new-window -d CMD` does (the history keeps its output and status: `muxd show ID`), unless --keep."""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

from muxd.cli.render import print_json, print_line
from muxd.cli.table import cli_command
from muxd.errors import BadRequest
from muxd.executions.record import ACTIVE_STATUSES

WAIT_CHUNK_S = 60.0            # one wait-executions call; the CLI calls again until the end (or --timeout)
OUTPUT_TAIL_LINES = 200        # what --wait shows of the output; `muxd show ID --transcript` has all of it
INTERRUPTED_STATUS = 130       # the shell's status for a command ended by SIGINT


def _configure_run(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", dest="target", help="type it into this pane's shell (it must write prompt marks); "
                                             "default: a new window")
    p.add_argument("-c", dest="cwd", help="working directory of the new window (default: the current one)")
    p.add_argument("--wait", action="store_true", help="wait for it to end, show its output (the last "
                                                       f"{OUTPUT_TAIL_LINES} lines) and exit with its status; "
                                                       "the execution id is printed at once, on stderr")
    p.add_argument("--timeout", type=float, default=None, help="wait at most this long (seconds; default: "
                                                                "until it ends)")
    p.add_argument("--trace-id", help="W3C trace id (32 hex digits): the command's span is in this trace, and "
                                      "a new window's TRACEPARENT names it")
    p.add_argument("--span-id", help="W3C span id of the command (16 hex digits; default: a new one)")
    p.add_argument("--keep", action="store_true", help="keep the new window when the command ends (default: "
                                                       "it closes; muxd show ID has its output)")
    p.add_argument("--json", action="store_true")
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARGS…]")


def caller_directory(asked: str | None) -> str | None:
    """Where a new window runs: -c (relative to here), else here; None (the server's default,
    $HOME) when this directory is gone, as tmux falls back."""
    if asked:
        return os.path.abspath(os.path.expanduser(asked))
    try:
        return os.getcwd()
    except FileNotFoundError:
        return None


@cli_command("run")(_configure_run)
def run(client: Any, args: argparse.Namespace) -> int:
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        raise BadRequest("muxd run needs a command: muxd run -- make test")
    if args.timeout is not None and args.timeout <= 0:
        raise BadRequest(f"--timeout must be above 0 seconds, got {args.timeout:g}")
    if args.keep and args.target:
        raise BadRequest("--keep is for a new window: a command typed with -t runs in that pane, which stays")
    cwd = None if args.target else caller_directory(args.cwd)  # a typed command runs where that shell is
    e = client.call("run", "execution", command=command, target=args.target, cwd=cwd, wait_s=0.0,
                    trace_id=args.trace_id, span_id=args.span_id, keep=args.keep).execution
    if not args.wait:
        if args.json:
            print_json(e)
        else:
            print(f"{e.id} {e.status}")
        return 0
    try:  # from the id's line on: a Ctrl-C after it has an execution to name
        print(f"{e.id} {e.status}", file=sys.stderr, flush=True)
        e = _wait_for_end(client, e.id, args.timeout)
    except KeyboardInterrupt:
        print(f"muxd: {e.id} still runs; `muxd cancel {e.id}` stops it", file=sys.stderr, flush=True)
        return INTERRUPTED_STATUS
    if e.status in ACTIVE_STATUSES:
        print(f"muxd: {e.id} still runs after {args.timeout:g}s; `muxd cancel {e.id}` stops it", file=sys.stderr)
        return 1
    if args.json:
        print_json(e)
    else:
        _print_output_tail(client, e.id)
        print(f"{e.id} {e.status}" + ("" if e.exit_code is None else f" (exit {e.exit_code})"), file=sys.stderr)
    return e.exit_code if e.exit_code is not None else (0 if e.status == "success" else 1)


def _wait_for_end(client: Any, execution_id: str, timeout_s: float | None) -> Any:
    """The execution once it ended, or as it is when `timeout_s` ran out (None: no limit). The
    wait goes in chunks: one call may wait at most EXECUTION_WAIT_MAX_S in the daemon."""
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    while True:
        chunk = WAIT_CHUNK_S if deadline is None else max(0.0, min(WAIT_CHUNK_S, deadline - time.monotonic()))
        reply = client.call("wait-executions", "execution-list", execution_ids=[execution_id], timeout_s=chunk)
        e = reply.executions[0]
        if e.status not in ACTIVE_STATUSES or (deadline is not None and time.monotonic() >= deadline):
            return e


def output_tail(client: Any, execution_id: str, count: int) -> tuple[list[str], int]:
    """The last `count` lines of what the command wrote (its transcript, as text), and how many
    came before them."""
    transcript = client.call("get-execution", "execution", execution_id=execution_id,
                             include_transcript=True).transcript or ""
    lines = transcript.splitlines()
    return lines[-count:], max(0, len(lines) - count)


def _print_output_tail(client: Any, execution_id: str) -> None:
    lines, earlier = output_tail(client, execution_id, OUTPUT_TAIL_LINES)
    if earlier:
        print(f"[{earlier} earlier lines: muxd show {execution_id} --transcript]", file=sys.stderr)
    for line in lines:
        print_line(line)
    sys.stdout.flush()  # before the status line on stderr, for a terminal showing both
