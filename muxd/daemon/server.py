"""The daemon, the one place its services meet: it builds each with the narrow things it uses,
owns the registry, accepts clients and spawns panes. main.py hands it the command table
(commands/), whose handlers get this object whole."""

from __future__ import annotations

import asyncio
import functools
import importlib
import logging
import os
import shlex
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from muxd.config import (
    DEFAULT_SCROLLBACK_BYTES, EMULATION_REQUEST_RECENT_S, MAX_COLUMNS, MAX_LINES, MIN_COLUMNS, MIN_LINES,
    SCROLLBACK_BYTES_MAX,
)
from muxd.daemon.access.control import AccessControl, current_principal
from muxd.daemon.attention.alerts import WindowAlerts
from muxd.daemon.attention.hooks_runner import HookRunner, registry_locator
from muxd.daemon.attention.service import Attention, session_fields, window_fields
from muxd.daemon.client_side.hub import AttachHub
from muxd.daemon.commands.table import Command
from muxd.daemon.core.config_load import load_config
from muxd.daemon.core.connection import Connection
from muxd.daemon.core.heap import keep_freed_heap
from muxd.daemon.core.lifecycle import ServerClaim
from muxd.daemon.panes.agent_argv import with_agent_hooks
from muxd.daemon.panes.detection import PaneDetection
from muxd.daemon.panes.emulation import EmulationTurns
from muxd.daemon.panes.names import check_tags, program_name
from muxd.daemon.panes.pane import Pane
from muxd.daemon.panes.recording import recorder_for
from muxd.daemon.panes.registry import Registry, Session, Window
from muxd.daemon.panes.screen_watch import ScreenWatch
from muxd.daemon.panes.shell_command import command_argv, default_shell
from muxd.daemon.panes.watchdog import PaneWatchdog
from muxd.daemon.tmux.shim import remove_launcher, shim_env, write_launcher
from muxd.daemon.work.executions import ExecutionService
from muxd.detectors.registry import Detectors
from muxd.detectors.state import AgentState
from muxd.emulator.backend import running_backend, warm_up_steps
from muxd.emulator.rows import ROW_OVERHEAD_BYTES
from muxd.errors import BadRequest
from muxd.executions.record import Execution
from muxd.executions.shell import integrated_argv
from muxd.executions.tracker import counters_only
from muxd.protocol.codec import request_decoder
from muxd.protocol.event_messages import DaemonEvent
from muxd.protocol.messages import AgentStateChanged, AgentSummary, PaneExited, PaneInfo, Spawn
from muxd.store.database import Database
from muxd.store.retention import Retention
from muxd.store.sqlite_executions import SqliteExecutionStore

if TYPE_CHECKING:
    from muxd.daemon.panes.hook_intake import HookIntake
    from muxd.daemon.panes.pane_pipe import PanePipes
    from muxd.daemon.work.host_link import HostLink
    from muxd.daemon.tmux.watch import TmuxWatcher
    from muxd.daemon.work.fleet_presence import FleetPresence
    from muxd.daemon.work.limit_resume import LimitResume
    from muxd.daemon.work.tasks import TaskService
    from muxd.daemon.work.work_metrics import ExecutionMetrics
    from muxd.telemetry.export import SpanExport

log = logging.getLogger(__name__)

PANE_TERM = "xterm-256color"
# The start's deferred work (_settle_in) runs after the first reply, or this long after the daemon
# listens when no request comes (`muxd start-server` alone): never ahead of the first request.
SETTLE_IN_IDLE_S = 1.0
# How long that work waits, while a client is being answered, before it looks again.
SETTLE_IN_PAUSE_S = 0.05
# Modules the first reply did not wait for, imported once the daemon has a pane unless a first
# use came sooner: a pane's first look (the detectors' runner), a turn's completion.
_PUT_OFF_MODULES = ("muxd.detectors.runner", "muxd.daemon.work.execution_finish")
# Variables of whoever started the daemon that would mislead programs inside a pane.
# A trace context is a traced task's own (spawn_pane), never the daemon starter's.
_ENV_DROPPED = ("TMUX", "TMUX_PANE", "MUXD_PANE", "MUXD_TOKEN", "MUXD_CLI_TOKEN", "MUXD_CONFIG", "COLUMNS", "LINES",
                "TRACEPARENT", "TRACESTATE")


class Daemon:
    def __init__(self, socket_path: Path, lock_path: Path, *, commands: Mapping[type, Command],
                 scrollback_bytes: int = DEFAULT_SCROLLBACK_BYTES, detection: bool = True,
                 retention: Retention | None = None, history: bool = True, database: Database | None = None) -> None:
        self.socket_path = socket_path
        self.claim = ServerClaim(socket_path, lock_path)
        self.scrollback_bytes = scrollback_bytes
        self.registry = Registry(on_pane_removed=self.pane_removed, on_window_current=self._window_current,
                                 on_changed=self._registry_changed)
        self.registry.options.defaults["default-shell"] = default_shell()  # what show-options -g shows
        # Tokens, grants, audit (daemon/access/control.py), on `database` when main.py opened it already.
        self.access = AccessControl.open(socket_path.stem, db=database)
        self.commands = commands  # the command table (commands/), handed in by main.py
        self.started_at = time.time()
        # Detection off (MUXD_DETECTION=0) is for measuring what detection costs, nothing else.
        self.detection = detection
        self.detectors = Detectors() if detection else []  # looked up after the first reply (_settle_in)
        self.detections: dict[str, PaneDetection] = {}
        self.subscribers: set[Connection] = set()
        # The event bus and the board of agents that need a person (daemon/attention/).
        self.attention = Attention(find_pane=self.registry.pane_by_id)
        self.attention.bus.listen(self._deliver_bus_event)
        self.registry.need_of = self.attention.board.need  # each pane's record says what it needs
        # set-hook's hooks, run on the bus's events (daemon/attention/hooks_runner.py).
        self.hook_runner = HookRunner(self.registry.options.hooks, socket_path, registry_locator(self.registry))
        self.attention.bus.listen(self.hook_runner.take)
        self.attach_hub = AttachHub(self)  # clients of `muxd attach` (daemon/client_side/hub.py)
        # tmux's window alerts: activity, bell, silence (daemon/attention/alerts.py).
        self.alerts = WindowAlerts(self.registry.options, self.attach_hub, self.attention.publish)
        self.screen_watch = ScreenWatch()  # screen-html requests waiting for a pane's output (the web view)
        self.emulation = EmulationTurns()  # every pane's output shares the loop through it
        # A pane typed into or watched is emulated and drawn ahead of the others' floods.
        self.emulation.attended = lambda pane: pane.typed_recently() or self.attach_hub.shows_active(pane)
        self.emulation.watched = self.attach_hub.shows_active
        self.emulation.after_attended = self.attach_hub.draw_echo
        self.emulation.someone_waits = self._someone_waits
        self.emulation.someone_typing = self.attach_hub.someone_typing
        self.emulation.keys_waiting = self.attach_hub.keys_waiting
        self.watchdog = PaneWatchdog()  # ends the panes' programs when the daemon goes, however it goes
        # The execution history (daemon/work/executions.py) follows every pane from its start.
        self.retention = retention or Retention()
        # History off (MUXD_HISTORY=0) is for measuring what recording costs, nothing else.
        store = SqliteExecutionStore(self.access.db) if history else None
        self.executions = ExecutionService(self.detections, store, self.retention.transcript_max_bytes,
                                           on_ended=self._execution_ended, host=self.access.db.host)
        # The task queue, usage-limit resumes, /metrics' executions and the spans export are built at
        # their first use (the properties below), or by the start's deferred work, after the first reply.
        self.config_errors: list[str] = []  # the config file's bad lines at start (daemon/core/config_load.py)
        self.config_loaded = asyncio.Event()  # requests of other clients wait for it (daemon/core/connection.py)
        self.host_link: HostLink | None = None  # other hosts' actions, on a shared database (_link_hosts)
        self._stop = asyncio.Event()
        self._connections: set[asyncio.Task[None]] = set()
        self._settled = False
        self._had_pane = False  # what only panes use (_pane_steps) is asked for at the first
        self._accepted_at = 0.0  # time.monotonic() of the last connection accepted
        self.clients: set[Connection] = set()
        self.access.on_revoked = self._disconnect_token
        # Its panes' summaries and its heartbeat for the other daemons of a shared database.
        self.fleet: FleetPresence | None = self._fleet_presence() if self.access.db.shared else None

    @functools.cached_property
    def tmux(self) -> TmuxWatcher:
        """Panes adopted from running tmux servers (daemon/tmux/watch.py), followed as muxd's
        own: built at the first tmux-watch, its modules imported then, not at every start."""
        from muxd.daemon.tmux.watch import TmuxWatcher

        return TmuxWatcher(self.registry, add_pane=self.add_pane, pane_exited=self.pane_exited,
                           turns=self.emulation, scrollback_bytes=self.scrollback_bytes)

    @functools.cached_property
    def hooks(self) -> HookIntake:
        """Where the agents' own hook events (`muxd hook`) come in, built at the first."""
        from muxd.daemon.panes.hook_intake import HookIntake

        return HookIntake(self.detections)

    @functools.cached_property
    def pipes(self) -> PanePipes:
        """pipe-pane's commands (daemon/panes/pane_pipe.py), built at the first."""
        from muxd.daemon.panes.pane_pipe import PanePipes

        return PanePipes()

    @functools.cached_property
    def spans(self) -> SpanExport:
        """Executions and task checks as OpenTelemetry spans, over OTLP when the environment asks
        for it (muxd/telemetry/; the SDK, when it does, is imported then)."""
        from muxd.telemetry.export import SpanExport

        return SpanExport.from_env(os.environ)

    @functools.cached_property
    def tasks(self) -> TaskService:
        """The task queue (daemon/work/tasks.py), opening as it is built: its lease sweeper starts
        and the checks a stopped daemon left running resume. Built at its first use or by the
        start's deferred work (_settle_in): a cold start's first reply waits for none of it."""
        from muxd.daemon.work.tasks import TaskService

        tasks = TaskService(self.access.db, registry=self.registry, executions=self.executions,
                            spawn_pane=self.spawn_pane, spans=self.spans,
                            moved=lambda task_id, state: self.attention.publish("task-changed", task_id=task_id,
                                                                                state=state))
        tasks.start(tasks.open())
        return tasks

    @functools.cached_property
    def limit_resume(self) -> LimitResume:
        """Resuming agents stopped at a usage limit (daemon/work/limit_resume.py), built at the
        first agent state it hears of."""
        from muxd.daemon.work.limit_resume import LimitResume

        return LimitResume(self.registry.options, self.executions.submit)

    @functools.cached_property
    def work_metrics(self) -> ExecutionMetrics:
        """/metrics' executions (daemon/work/work_metrics.py), from the first one that ends."""
        from muxd.daemon.work.work_metrics import ExecutionMetrics

        return ExecutionMetrics()

    def _fleet_presence(self) -> FleetPresence:
        from muxd.daemon.panes.summaries import agent_summary
        from muxd.daemon.work.fleet_presence import FleetPresence  # a shared database's alone

        def snapshot() -> dict[str, tuple[PaneInfo, AgentSummary]]:
            return {p.id: (self.registry.pane_info(p), agent_summary(p)) for p in self.registry.all_panes()}

        presence = FleetPresence(self.access.db, snapshot)
        presence.on_taken_back = self.executions.save_active
        presence.on_others_changed = lambda host: self.attention.publish("fleet-changed", host=host)
        self.attention.bus.listen(presence.changed)
        return presence

    def _built(self, name: str) -> bool:
        """Whether the service of cached property `name` was built (and so has something to stop)."""
        return name in self.__dict__

    # ------------------------------------------------------------ running

    async def serve(self, on_ready=None) -> None:  # type: ignore[no-untyped-def]
        """Claim the socket (raises ServerAlreadyRunning), serve until kill-server or a signal."""
        sock = self.claim.acquire()
        try:
            write_launcher(self.socket_path)  # the `tmux` of shimmed panes (daemon/tmux/shim.py)
            await self.executions.open(self.retention)
            if self.executions.backlog is not None:  # what waits is written as soon as the database is back
                backlog, loop = self.executions.backlog, asyncio.get_running_loop()
                self.access.db.when_reconnected(lambda: loop.call_soon_threadsafe(backlog.retry_now))
            if self.fleet is not None:
                await self.fleet.open()
            server = await asyncio.start_unix_server(self._accept, sock=sock)
            try:
                self.config_errors = await load_config(self.socket_path.stem)
            finally:
                self.config_loaded.set()
            await self._link_hosts()  # after the config: the actions left for its panes find them
            if self.watchdog.guarding:  # the config file's panes are guarded from the start
                self.watchdog.start()
            if on_ready is not None:
                on_ready()
            log.info("serving on %s (pid %d)", self.socket_path, os.getpid())
            asyncio.get_running_loop().call_later(SETTLE_IN_IDLE_S, self.replied)
            await self._stop.wait()
            server.close()
        finally:
            await self.hook_runner.close()  # before the panes go: their last events run no hooks
            if self._built("limit_resume"):
                self.limit_resume.close()
            if self._built("tasks"):
                self.tasks.shutdown()
            self.executions.shutdown()
            if self._built("tmux"):
                self.tmux.close()
            self._shutdown_panes()
            self.watchdog.close()  # it kills what ignored the hang-up, after a grace, on its own
            await self.executions.close()
            if self.host_link is not None:
                self.host_link.close()
            if self._built("tasks"):
                await self.tasks.stopped()
            if self._built("spans"):
                await asyncio.to_thread(self.spans.close)  # the spans of what the stop ended, too
            if self.executions.store is not None:
                self.executions.store.close()
            if self.fleet is not None:
                self.fleet.close()
            self.access.close()
            remove_launcher(self.socket_path)
            self.claim.release()
            for task in list(self._connections):
                task.cancel()

    async def _link_hosts(self) -> None:
        """On a database daemons share (with the history on): hear and answer other hosts'
        actions for this host's panes, and their answers to this one's (daemon/work/host_link.py)."""
        db = self.access.db
        apply = getattr(self.commands, "apply_host_action", None)  # main.py's CommandTable has it
        listener = db.listener  # a PgDatabase's
        if listener is None or self.executions.store is None or apply is None:
            return
        from muxd.daemon.work.host_link import HostLink

        self.host_link = HostLink(db, listener, functools.partial(apply, self))
        await self.host_link.open()

    def replied(self) -> None:
        """A request was answered: after the first, start the pane watchdog (its process start
        would delay a cold start's first reply by ~7 ms; the panes that reply started are guarded
        as it starts, one loop turn later) and pay what the start put off (_settle_in)."""
        if not self._settled:
            self._settled = True
            asyncio.get_running_loop().call_soon(self._start_watchdog)
            steps: list[Callable[[], object]] = []
            load_commands = getattr(self.commands, "loading_steps", None)
            if load_commands is not None:
                steps += load_commands()
            if self._had_pane:  # the first request started one (new-session)
                steps += self._pane_steps()
            steps += [request_decoder, lambda: self.spans, lambda: self.tasks, lambda: self.limit_resume,
                      lambda: self.work_metrics, lambda: log.info("settled in")]
            asyncio.get_running_loop().call_soon(self._settle_in, steps)

    def _pane_steps(self) -> list[Callable[[], object]]:
        """The deferred work only a pane uses, asked for at the first pane: the detectors (the
        manifests' RE2 with libstdc++), their runner, the emulator's warm-up (libghostty, the layout
        tables). A daemon with no pane yet (`muxd start-server`, a first `ls`, an MCP or web client)
        holds none of it, ~9 MiB (benchmarks/README.md, bench_cold_start)."""
        steps: list[Callable[[], object]] = []
        if isinstance(self.detectors, Detectors):
            steps += self.detectors.loading_steps()
        steps += [functools.partial(importlib.import_module, name) for name in _PUT_OFF_MODULES]
        # The heap's bounds (ctypes: 0.25 MiB) with the panes, whose output and turns free memory by the batch.
        return steps + [*warm_up_steps(), keep_freed_heap, lambda: log.info("emulator %s", running_backend())]

    def _start_watchdog(self) -> None:
        if self.watchdog.pid is None and not self._stop.is_set():
            self.watchdog.start()

    def _settle_in(self, steps: list[Callable[[], object]]) -> None:
        """One step of what the start put off (a few ms each), then the next on a later loop
        turn; none while a client is being answered (a request read or a connection accepted
        in the last EMULATION_REQUEST_RECENT_S, keys typed), so a request waits behind one
        step at most. Whatever is still put off is paid at its first use instead."""
        loop = asyncio.get_running_loop()
        if self._stop.is_set():
            return
        if self._someone_waits() or time.monotonic() - self._accepted_at < EMULATION_REQUEST_RECENT_S:
            loop.call_later(SETTLE_IN_PAUSE_S, self._settle_in, steps)
            return
        try:
            steps.pop(0)()
        except Exception:  # a step's failure costs its own work only
            log.exception("a step of the start's deferred work failed")
        if steps:
            loop.call_soon(self._settle_in, steps)

    def request_shutdown(self) -> None:
        self.attach_hub.server_exiting()
        # Let the kill-server reply reach its client before the loop winds down.
        asyncio.get_running_loop().call_later(0.05, self._stop.set)

    def _shutdown_panes(self) -> None:
        for session in list(self.registry.sessions):
            self.registry.remove_session(session)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        self._accepted_at = time.monotonic()
        connection = Connection(self, reader, writer)
        self.clients.add(connection)
        try:
            await connection.serve()
        finally:
            self._connections.discard(task)
            self.clients.discard(connection)

    def _someone_waits(self) -> bool:
        """Keys typed into an attached client, or a request read, just now (EmulationTurns)."""
        if self.attach_hub.someone_typing():
            return True
        recent = time.monotonic() - EMULATION_REQUEST_RECENT_S
        return any(connection.heard_at > recent for connection in self.clients)

    def _disconnect_token(self, token_id: str) -> None:
        """End the connections greeted with a token just revoked, so a client that keeps one
        (muxd mcp --http caches one per bearer token) must greet again, and is refused. Their
        write side is shut now, before the revoke's reply goes out: whoever hears that the token
        is revoked, its connections have already ended. A token revoking itself keeps its own
        until the next loop step, so its reply still reaches it."""
        greeted = [c for c in self.clients if c.principal.token_id == token_id]
        if not greeted:
            return
        if current_principal().token_id != token_id:
            for connection in greeted:
                connection.hang_up()
        asyncio.get_running_loop().call_soon(lambda: [c.writer.close() for c in greeted])

    # ------------------------------------------------------------ panes

    @staticmethod
    def check_size(columns: int, lines: int) -> None:
        if not MIN_COLUMNS <= columns <= MAX_COLUMNS:
            raise BadRequest(f"width {columns} is out of range {MIN_COLUMNS}..{MAX_COLUMNS}")
        if not MIN_LINES <= lines <= MAX_LINES:
            raise BadRequest(f"height {lines} is out of range {MIN_LINES}..{MAX_LINES}")

    def pane_env(self, extra: dict[str, str], term: str = PANE_TERM) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in _ENV_DROPPED}
        env["TERM"] = term
        env["MUXD"] = str(self.socket_path)
        for key, value in extra.items():
            if not key or "=" in key or "\0" in key or "\0" in value:
                raise BadRequest(f"invalid environment variable {key!r}")
            env[key] = value
        return env

    def spawn_pane(self, window: Window, spawn: Spawn, columns: int, lines: int, *,
                   link: dict[str, object] | None = None) -> Pane:
        """Start a program in a new pane of `window` (raises SpawnFailed / BadRequest); `link`
        sets fields of its program's execution (a task's verification: task_id, principal)."""
        self.check_size(columns, lines)
        check_tags(spawn.tags)
        cwd = os.path.expanduser(spawn.cwd) if spawn.cwd else os.path.expanduser("~")
        options, session_id = self.registry.options, window.session.id
        argv = command_argv(spawn.command, options.lookup("default-shell", session_id),
                            options.lookup("default-command", session_id))
        number = self.registry.next_pane_number()
        program = None
        if spawn.record_as is not None:  # muxd run, create_pane with a command: the program is an execution
            program = self.executions.program_execution(number, spawn, argv, **(link or {}))
        env = self.pane_env(spawn.env, options.lookup("default-terminal", session_id))
        env["MUXD_PANE"] = f"%{number}"
        if program is not None and program.trace_id and program.span_id:  # a traced task's program
            from muxd.telemetry.trace_ids import traceparent

            env["TRACEPARENT"] = traceparent(program.trace_id, program.span_id)
        # The pane's own agent token: a client presenting it sees this pane and its grants only.
        # Usable at once and stored in the background: pane-bound tokens end with the run (every
        # start revokes them), so a pane neither waits for nor fails on a locked or full database.
        env["MUXD_TOKEN"] = self.access.issue_agent_token(env["MUXD_PANE"])
        if spawn.tmux_shim:
            shim_env(env, self.socket_path, window.session.number, env["MUXD_PANE"])
        pane = Pane(number, command=argv, cwd=cwd, env=env, columns=columns, lines=lines,
                    name=spawn.pane_name, tags=list(spawn.tags), remove_on_exit=spawn.remove_on_exit,
                    scrollback_bytes=self._scrollback_bytes(session_id, columns), on_exit=self.pane_exited,
                    turns=self.emulation)
        pane.tmux_shim = spawn.tmux_shim
        pane.interactive = spawn.interactive
        pane.launch_argv = integrated_argv(with_agent_hooks(argv, env), env)  # agents' hooks; bash's prompt marks
        pane.recorder = recorder_for(pane.id, columns, lines, argv)
        pane.on_reaped = self.watchdog.release
        try:
            pane.start(asyncio.get_running_loop())
        except BaseException:
            self.access.pane_gone(pane.id, set())
            raise
        self.follow(pane, program)
        window.add(pane)
        if not window.name:
            self.registry.name_window(window, program_name(os.path.basename(argv[0])))
        log.info("pane %s started: %s (pid %s)", pane.id, shlex.join(argv), pane.pid)
        return pane

    def follow(self, pane: Pane, program: Execution | None = None) -> None:
        """Watch a pane's newly started program: the watchdog, the history, detection."""
        assert pane.pid is not None
        self.watchdog.guard(pane.pid)  # the program leads its own session: sid == pid
        self.executions.pane_started(pane, program)
        self._detect(pane)

    def unfollow(self, pane: Pane) -> None:
        """Stop watching a pane's program (before respawn-pane starts another in it)."""
        self.executions.pane_removed(pane)
        pane.output_taps.clear()
        detection = self.detections.pop(pane.id, None)
        if detection is not None:
            detection.close()

    def _scrollback_bytes(self, session_id: str, columns: int) -> int:
        """A new pane's history budget: the server's, or room for history-limit full rows (muxd
        counts memory, not lines: a row costs its text and ROW_OVERHEAD_BYTES)."""
        rows = self.registry.options.number("history-limit", session_id)
        if not rows:
            return self.scrollback_bytes
        return min(rows * (columns + ROW_OVERHEAD_BYTES), SCROLLBACK_BYTES_MAX)

    def add_pane(self, window: Window, pane: Pane, program: Execution | None = None) -> None:
        """Follow a pane muxd did not start (adopted from tmux) in `window`: the history,
        detection and attached clients see it."""
        self.executions.pane_started(pane, program)
        self._detect(pane)
        window.add(pane)

    def _detect(self, pane: Pane) -> None:
        if not self._had_pane:
            self._had_pane = True
            if self._settled:  # else replied() asks for the pane's work with the rest
                asyncio.get_running_loop().call_soon(self._settle_in, self._pane_steps())
        if self.detection:
            detection = self.detections[pane.id] = PaneDetection(pane, self.detectors, self._agent_changed)
            pane.on_submit = detection.output  # a prompt sent: looked at though nothing is drawn yet
        pane.on_output = self._output_listener(pane)

    def pane_exited(self, pane: Pane) -> None:
        log.info("pane %s exited with %s", pane.id, pane.exit_code)
        self.executions.pane_exited(pane)
        detection = self.detections.get(pane.id)
        if detection is not None:
            detection.run_now()
        self.broadcast(PaneExited(pane_id=pane.id, exit_code=pane.exit_code), pane.id)
        self.attach_hub.changed()
        self.screen_watch.output(pane.id)
        if pane.window is None:
            return
        closes = pane.remove_on_exit or self._closes_on_exit(pane)
        # tmux's names: pane-exited when the pane closes with its program, pane-died when it stays.
        self.attention.publish("pane-exited" if closes else "pane-died", pane=pane, exit_code=pane.exit_code)
        if closes:
            self.registry.remove_pane(pane)

    def _closes_on_exit(self, pane: Pane) -> bool:
        """A pane made interactively closes when its program exits, as every tmux pane does,
        unless remain-on-exit is on; others keep their exit status and last screen."""
        window = pane.window
        assert isinstance(window, Window)
        remain = self.registry.options.lookup("remain-on-exit", pane.id, window.id)
        return pane.interactive and not (remain == "on" or (remain == "failed" and pane.exit_code != 0))

    def pane_removed(self, pane: Pane) -> None:
        if self._built("pipes"):
            self.pipes.close(pane.id)
        self.executions.pane_removed(pane)
        detection = self.detections.pop(pane.id, None)
        if detection is not None:
            detection.close()
        if self._built("hooks"):
            self.hooks.forget(pane.id)
        self.attention.pane_gone(pane.id)
        self.alerts.pane_gone(pane)
        if self._built("limit_resume"):
            self.limit_resume.forget(pane.id)
        self.attach_hub.pane_removed(pane)
        self.screen_watch.pane_gone(pane.id)
        self.access.pane_gone(pane.id, {p.id for p in self.registry.all_panes()})
        if self.fleet is not None:
            self.fleet.changed()

    def _output_listener(self, pane: Pane) -> Callable[[], None]:
        """Pane output goes to detection (if on) and window alerts, and wakes the attached
        clients showing it and the screen-html requests waiting for it."""
        detection, hub, alerts, watch = self.detections.get(pane.id), self.attach_hub, self.alerts, self.screen_watch

        def output() -> None:
            if detection is not None:
                detection.output()
            alerts.output(pane)
            hub.pane_output(pane)
            watch.output(pane.id)

        return output

    def _window_current(self, window: Window) -> None:
        """A window became its session's current one (keys, commands, a new window)."""
        self.alerts.window_current(window)

    # ------------------------------------------------------------ events

    def _agent_changed(self, pane: Pane, state: AgentState) -> None:
        before, pane.agent = pane.agent, state
        if not counters_only(before, state):  # (most states of a long turn: counted when the next comes)
            self.executions.agent_changed(pane, state, before)
        self.limit_resume.agent_changed(pane, state)
        self.attach_hub.pane_state_changed(pane)  # the status line shows the active pane's state
        self.broadcast(AgentStateChanged(pane_id=pane.id, state=state), pane.id)
        self.attention.agent_changed(pane, before, state)
        self.screen_watch.work_changed(pane.id)

    def _execution_ended(self, execution: Execution) -> None:
        self.screen_watch.work_changed(execution.pane_id)
        self.work_metrics.execution_ended(execution)
        self.attention.execution_ended(execution)
        self.spans.execution_ended(execution)
        if self.host_link is not None:
            self.host_link.execution_ended(execution)

    def _registry_changed(self, kind: str, thing: Session | Window) -> None:
        """A session or window was made, renamed or closed: the bus hears it (tmux's hook names).
        Not while the daemon stops: its sessions end with it, and its clients hear that it went."""
        if self._stop.is_set():
            return
        fields = window_fields(thing) if isinstance(thing, Window) else session_fields(thing)
        self.attention.publish(kind, **fields)

    def broadcast(self, event: object, pane_id: str) -> None:
        for connection in list(self.subscribers):
            connection.deliver_event(event, pane_id)

    def _deliver_bus_event(self, event: DaemonEvent) -> None:
        for connection in list(self.subscribers):
            connection.deliver_bus_event(event)
