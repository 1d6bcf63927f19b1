"""What recording one execution costs the daemon's threads, in one process, without the noise of
a shared machine's daemons: the execution history's whole cycle as the daemon runs it, on the
real `ExecutionService` and a real SQLite store, against the same cycle with the history off.

    .venv/bin/python benchmarks/bench_history_cycle.py [--panes 20] [--rounds 5] [--publishes 13] [--pairs 3]

Each round, on every pane: a person's prompt seen busy (the turn begins: its running row), the
mid-turn states the detectors publish (`--publishes`: a fake Claude turn of 8 s publishes ~13),
the turn's output read in ~140 reads of a real fake-Claude turn (captured from
muxd.testing.fake_agent at start) into the pane's transcript, the prompt back (the settle timer
ends the turn: snapshot of the screen, answer read, row and transcript saved). The panes are
stand-ins with real emulators (the screens the turn drew). `--pairs` alternate runs off and on;
printed: each run's loop-thread CPU and other threads' (the writer's), and the medians' difference
per execution with the on/off ratio of the loop. bench_history_daemon.py measures the same
through real daemons and panes, where a busy machine moves the figure by several points.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import select
import statistics
import subprocess
import tempfile
import time
import types

from _peers import run_benchmark

from muxd.config import EXECUTION_IDLE_SETTLE_S
from muxd.daemon.work.executions import ExecutionService
from muxd.detectors.state import Activity, AgentSession, AgentState
from muxd.emulator.backend import new_emulator
from muxd.executions.tracker import counters_only
from muxd.store.database import Database
from muxd.store.execution_store import ExecutionQuery
from muxd.store.sqlite_executions import SqliteExecutionStore
from muxd.testing.fake_agent_panes import FAKE_AGENT

READS = 140  # reads of a fake 8 s turn's output (what the daemon's pane took per turn)
SETTLE_MARGIN_S = 1.5  # past the settle: the turns' ends are saved before the next round
NO_SUCH_PID = 4_194_000  # the agents' pids: none exists, so their logs are looked for twice, then not


def fake_turn() -> tuple[bytes, bytes]:
    """(the screen before the prompt, the turn's output) of a fake Claude Code turn on a PTY."""
    import pty

    master, slave = pty.openpty()
    env = {**os.environ, "MUXD_FAKE_THINK_S": "8", "TERM": "xterm-256color", "COLUMNS": "80", "LINES": "24"}
    proc = subprocess.Popen([*FAKE_AGENT, "claude"], stdin=slave, stdout=slave, stderr=slave, env=env,
                            start_new_session=True)
    out = bytearray()

    def read_for(seconds: float) -> None:  # a fixed span of the fake's own clock, not a synchronisation
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if select.select([master], [], [], 0.05)[0]:
                out.extend(os.read(master, 65536))

    try:
        read_for(3.0)
        before = len(out)
        os.write(master, b"think")
        read_for(0.1)
        os.write(master, b"\r")
        read_for(10.0)
    finally:
        proc.kill()
        proc.wait()
        os.close(master)
        os.close(slave)
    return bytes(out[:before]), bytes(out[before:])


def other_threads_cpu() -> float:
    """CPU seconds of this process's threads but the main one (the store's writer and readers,
    the session-log lanes), read before any of them ends."""
    total = 0
    for tid in os.listdir(f"/proc/{os.getpid()}/task"):
        if int(tid) != os.getpid():
            try:
                with open(f"/proc/{os.getpid()}/task/{tid}/schedstat") as fh:
                    total += int(fh.read().split()[0])
            except OSError:
                continue  # an earlier run's thread, ending now
    return total / 1e9


def _pane(n: int, screen: bytes) -> types.SimpleNamespace:
    emulator = new_emulator(columns=80, lines=24, scrollback_bytes=1 << 20)
    emulator.feed(screen)
    pane = types.SimpleNamespace(id=f"%{n}", name=f"a{n}", columns=80, lines=24, output_taps=[], transcript=None,
                                 exited=False, pid=None, agent=AgentState(agent_type="claude", is_agent=True),
                                 emulator=emulator)
    pane.foreground_pid = lambda: NO_SUCH_PID + n
    return pane


def _read(pane: types.SimpleNamespace, data: bytes) -> None:
    """What Pane._take_output does with a read for the history: its taps, its transcript."""
    for tap in pane.output_taps:
        tap(data)
    transcript = pane.transcript
    if transcript is not None:
        if transcript.room > 0:
            transcript.chunks.append(data)
            transcript.room -= len(data)
        else:
            transcript.past += len(data)


def publish(service: ExecutionService, pane: types.SimpleNamespace, state: AgentState) -> None:
    """What the daemon does with a published state for the history (daemon/server.py)."""
    before, pane.agent = pane.agent, state
    if not counters_only(before, state):
        service.agent_changed(pane, state, before)


async def cycle(history: bool, turn: tuple[bytes, bytes], panes: int, rounds: int, publishes: int) -> tuple[float, int]:
    """(other threads' CPU seconds, executions stored) of `rounds` turns on `panes` panes."""
    screen, output = turn
    directory = tempfile.TemporaryDirectory(prefix="muxd-cycle-")
    db = Database(os.path.join(directory.name, "history.db")) if history else None
    store = SqliteExecutionStore(db) if db is not None else None
    service = ExecutionService({}, store, 4 << 20)
    service._loop = asyncio.get_running_loop()  # (what open() sets, without its prune task)
    stand_ins = [_pane(n, screen) for n in range(panes)]
    for pane in stand_ins:
        service.pane_started(pane)
    idle = AgentState(agent_type="claude", is_agent=True, activity=Activity(state="Idle"))
    busy = [AgentState(agent_type="claude", is_agent=True, session=AgentSession(tokens_used=100 + k),
                       activity=Activity(state="Thinking", description="Gusting", elapsed_s=k, since=1.0))
            for k in range(publishes)]
    step = -(-len(output) // READS)
    reads = [output[i:i + step] for i in range(0, len(output), step)]
    for pane in stand_ins:
        publish(service, pane, idle)
    before = other_threads_cpu()
    for _ in range(rounds):
        for state in busy:
            for pane in stand_ins:
                publish(service, pane, state)
        for pane in stand_ins:
            for data in reads:
                _read(pane, data)
            pane.emulator.feed(output)
        for pane in stand_ins:
            publish(service, pane, idle)
        await asyncio.sleep(EXECUTION_IDLE_SETTLE_S + SETTLE_MARGIN_S)  # the settle timers end the turns
    stored = (await store.list(ExecutionQuery(limit=1)))[1] if store is not None else 0
    spent = other_threads_cpu() - before
    if store is not None and db is not None:
        store.close()
        db.close()
    directory.cleanup()
    return spent, stored


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--panes", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--publishes", type=int, default=13, help="mid-turn states published per turn")
    parser.add_argument("--pairs", type=int, default=3, help="runs off then on")
    args = parser.parse_args()
    turn = fake_turn()
    asyncio.run(cycle(True, turn, args.panes, 2, args.publishes))  # imports, the first ended turn's work
    runs: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
    executions = args.panes * args.rounds
    for _ in range(args.pairs):
        for history in (False, True):
            started = time.thread_time()
            others, stored = asyncio.run(cycle(history, turn, args.panes, args.rounds, args.publishes))
            loop = time.thread_time() - started
            runs[history].append((loop, others))
            print(f"history {'on ' if history else 'off'}: loop {loop:.3f} s, other threads {others:.3f} s"
                  + (f", {stored} executions stored" if history else ""), flush=True)
            if history and stored != executions:
                print(f"  expected {executions} executions stored")
                return 1
    loop_off, loop_on = (statistics.median(r[0] for r in runs[h]) for h in (False, True))
    others_off, others_on = (statistics.median(r[1] for r in runs[h]) for h in (False, True))
    print(f"per execution recorded ({executions} a run, {args.publishes} mid-turn publishes each): "
          f"loop {(loop_on - loop_off) / executions * 1000:+.3f} ms, other threads "
          f"{(others_on - others_off) / executions * 1000:+.3f} ms; loop on/off {loop_on / loop_off:.3f}x "
          f"(the off run's loop is the stand-ins' emulation and timers)")
    return 0


if __name__ == "__main__":
    run_benchmark(main)
