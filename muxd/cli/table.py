"""The CLI's command table: every command's name, aliases, help and how it reaches the daemon,
in one place (tmux's cmd.c). Its parser options and body live in the module named here, which
is imported only when that command runs: `muxd ls` pays for neither the task queue's modules
nor MCP's."""

from __future__ import annotations

# typing (~2 ms to import) only for the type checker: `muxd --version` needs nothing else of it; nor
# argparse, nor collections (the tmux shim's fast path reads this table without a parser).
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any

    Configure = Callable[[argparse.ArgumentParser], None]
    Body = Callable[[Any, argparse.Namespace], int]  # (client, args) -> exit code; client None when local


class CliCommand:
    """One command. A plain class: a dataclass or a NamedTuple would cost more to import than
    the whole table (dataclasses imports inspect; NamedTuple, typing)."""

    __slots__ = ("name", "help", "module", "aliases", "starts_server", "local", "raw")

    def __init__(self, name: str, help: str, module: str, aliases: tuple[str, ...] = (), *,
                 starts_server: bool = False, local: bool = False, raw: bool = False) -> None:
        self.name = name
        self.help = help
        self.module = module                # muxd.cli.<module> declares options and body: @cli_command(name)
        self.aliases = aliases
        self.starts_server = starts_server  # tmux starts a server for commands that create things
        self.local = local                  # runs without a connection to the daemon
        self.raw = raw                      # its words are its own (muxd tmux -L x ls): no parsing here

    def __repr__(self) -> str:
        return f"CliCommand({self.name!r})"


CLI_COMMANDS: tuple[CliCommand, ...] = (
    CliCommand("new-session", "create a session with one pane", "session_commands", ("new",), starts_server=True),
    CliCommand("attach-session", "attach this terminal to a session", "attach_commands", ("attach", "a"),
               local=True),
    CliCommand("new-window", "create a window in a session", "session_commands", ("neww",)),
    CliCommand("split-window", "split a pane in two, running a program in the new half", "session_commands",
               ("splitw",)),
    CliCommand("kill-session", "kill a session and every pane in it", "session_commands"),
    CliCommand("kill-window", "kill a window and its panes", "session_commands", ("killw",)),
    CliCommand("has-session", "exit 0 if the session exists", "session_commands", ("has",)),
    CliCommand("ls", "every session, window and pane at a glance", "pane_commands", ("list-sessions",)),
    CliCommand("list-panes", "list panes", "pane_commands", ("lsp",)),
    CliCommand("list-windows", "list windows", "pane_commands", ("lsw",)),
    CliCommand("display-message", "print a tmux format expanded for a pane (display -p)", "format_commands",
               ("display",)),
    CliCommand("send-keys", "type text and keys into a pane", "pane_commands", ("send",)),
    CliCommand("capture-pane", "print a pane's screen (and scrollback)", "pane_commands", ("capture", "capturep")),
    CliCommand("resize-pane", "set a pane's size", "pane_commands", ("resizep",)),
    CliCommand("kill-pane", "kill a pane and its program", "pane_commands", ("killp",)),
    CliCommand("select-layout", "arrange a window's panes: even-horizontal, even-vertical, main-*, tiled",
               "layout_commands", ("selectl",)),
    CliCommand("next-layout", "arrange a window's panes in the next layout", "layout_commands", ("nextl",)),
    CliCommand("previous-layout", "arrange a window's panes in the previous layout", "layout_commands",
               ("prevl",)),
    CliCommand("swap-pane", "swap two panes (their places and sizes)", "layout_commands", ("swapp",)),
    CliCommand("join-pane", "move a pane into a split of another pane", "layout_commands",
               ("joinp", "move-pane", "movep")),
    CliCommand("break-pane", "move a pane out to a window of its own", "layout_commands", ("breakp",)),
    CliCommand("respawn-pane", "run a program again (or another) in a pane whose program exited",
               "layout_commands", ("respawnp",)),
    CliCommand("wait", "wait until a pane shows some text", "pane_commands"),
    CliCommand("select-pane", "make a pane the active one (-U -D -L -R: its neighbour; -l: the last)",
               "selection_commands", ("selectp",)),
    CliCommand("last-pane", "select the previously active pane", "selection_commands", ("lastp",)),
    CliCommand("select-window", "make a window the current one (-n -p -l: next, previous, last)",
               "selection_commands", ("selectw",)),
    CliCommand("next-window", "select the next window", "selection_commands", ("next",)),
    CliCommand("previous-window", "select the previous window", "selection_commands", ("prev",)),
    CliCommand("last-window", "select the previously current window", "selection_commands", ("last",)),
    CliCommand("rename-window", "rename a window", "selection_commands", ("renamew",)),
    CliCommand("rename-session", "rename a session", "selection_commands", ("rename",)),
    CliCommand("list-clients", "the terminals attached, and their sessions", "client_commands", ("lsc",)),
    CliCommand("detach-client", "detach a client (-s: every client of a session; -a: all but one)",
               "client_commands", ("detach",)),
    CliCommand("switch-client", "show another session, window or pane on an attached client", "client_commands",
               ("switchc",)),
    CliCommand("list-keys", "the key bindings, as tmux's bind-key lines", "client_commands", ("lsk",)),
    CliCommand("bind-key", "bind a key to muxd commands (-n: without the prefix)", "client_commands", ("bind",)),
    CliCommand("unbind-key", "unbind a key (-a: every key of the table)", "client_commands", ("unbind",)),
    CliCommand("list-buffers", "the paste buffers (copies), newest first", "buffer_commands", ("lsb",)),
    CliCommand("show-buffer", "print a paste buffer", "buffer_commands", ("showb",)),
    CliCommand("set-buffer", "set a paste buffer's text", "buffer_commands", ("setb",)),
    CliCommand("delete-buffer", "delete a paste buffer", "buffer_commands", ("deleteb",)),
    CliCommand("paste-buffer", "type a paste buffer into a pane", "buffer_commands", ("pasteb",)),
    CliCommand("load-buffer", "set a paste buffer from a file (- : standard input)", "buffer_commands", ("loadb",)),
    CliCommand("save-buffer", "write a paste buffer to a file (- : standard output; -a appends)", "buffer_commands",
               ("saveb",)),
    CliCommand("pipe-pane", "pipe a pane's output to a shell command (-I: its output into the pane)",
               "buffer_commands", ("pipep",)),
    CliCommand("set-option", "set an option (prefix, status, remain-on-exit, …)", "option_commands", ("set",)),
    CliCommand("set-window-option", "set a window option", "option_commands", ("setw",)),
    CliCommand("show-options", "show options and their values", "option_commands"),
    CliCommand("show-window-options", "show window options", "option_commands", ("showw",)),
    CliCommand("source-file", "run the muxd commands in a file, as the config file at server start",
               "option_commands", ("source",), starts_server=True),
    CliCommand("set-hook", "run muxd commands on an event: a session made, an agent waiting for you, …",
               "event_hook_commands"),
    CliCommand("show-hooks", "show the hooks set on events", "event_hook_commands"),
    CliCommand("run-shell", "run a shell command, its formats expanded (-b: in the background)",
               "run_shell_command"),
    CliCommand("if-shell", "run muxd commands if a shell command succeeds (-F: if a format is true)",
               "if_shell_command", ("if",)),
    CliCommand("start-server", "start the server if it is not running", "server_commands", ("start",), local=True),
    CliCommand("server", "server status", "server_commands"),
    CliCommand("kill-server", "stop the server and every program in it", "server_commands"),
    CliCommand("summary", "what the agent in a pane is doing, in a few words", "agent_commands"),
    CliCommand("explain", "the evidence behind a pane's agent state", "agent_commands"),
    CliCommand("detect", "detect the agent state of a saved screen", "agent_commands", local=True),
    CliCommand("agents", "the agents muxd can recognise: its detectors, your manifests, and any manifest in error",
               "agent_commands", local=True),
    CliCommand("hook", "hand an agent's hook event (JSON on stdin) to muxd: what agents' hooks run in a pane",
               "hook_command", local=True),
    CliCommand("hooks", "install or uninstall muxd's hooks in an agent CLI's own config, for agents started by hand",
               "hooks_commands", local=True),
    CliCommand("replay", "replay a recording through the detectors: the timeline of states", "agent_commands",
               local=True),
    CliCommand("watch", "print the daemon's events as they happen, one JSON object a line (--until: wait for one)",
               "watch_commands", ("events",), local=True),
    CliCommand("top", "a live view of every agent, those that need you first", "top_commands", local=True),
    CliCommand("submit", "give the agent in a pane a prompt, recorded as an execution", "history_commands"),
    CliCommand("run", "run a command as an execution (its exit status is recorded)", "run_command",
               starts_server=True),
    CliCommand("history", "what ran in the panes: executions, newest first", "history_commands"),
    CliCommand("show", "one execution in full", "history_commands"),
    CliCommand("failures", "recent failures and the error patterns they share", "history_commands"),
    CliCommand("stats", "executions, success rate, cost and duration per agent", "history_commands"),
    CliCommand("cancel", "cancel a running or pending execution", "history_commands"),
    CliCommand("task", "the task queue: add, ls, show, approve, reject, comment, run, stop", "task_commands"),
    CliCommand("knowledge", "search what finished tasks learned", "task_commands"),
    CliCommand("token", "create, list and revoke access tokens (admin)", "access_commands"),
    CliCommand("grant", "let a pane's agent (or a pane-bound token) see and use another pane", "access_commands"),
    CliCommand("metrics", "MCP tool call metrics of every MCP server of this muxd (Prometheus text)",
               "access_commands"),
    CliCommand("tmux", "answer a tmux command line as tmux would, with muxd panes; tmux watch|unwatch adopt a tmux server's panes",
               "tmux_commands", local=True, raw=True),
    CliCommand("completion", "print the shell completion script: muxd completion bash|zsh|fish",
               "integration_commands", local=True),
    CliCommand("man", "show muxd's manual page (its roff when not on a terminal)", "integration_commands",
               local=True),
    CliCommand("systemd-unit", "print a systemd user unit that keeps the server running (start-server -f)",
               "integration_commands", local=True),
    CliCommand("proxy", "relay standard input and output to the server's socket: what `muxd -H ssh://…` runs "
               "on the host", "proxy_command", local=True),
    CliCommand("mcp", "serve MCP (stdio, or --http HOST:PORT): agent summaries and pane control for orchestrators",
               "mcp_commands", local=True),
    CliCommand("web", "serve a web view of the agents on a loopback port (log in with a muxd token)",
               "web_commands", local=True),
)


class Implementation:
    """How a command parses its options and what it then does."""

    __slots__ = ("configure", "body")

    def __init__(self, configure: Configure, body: Body) -> None:
        self.configure = configure
        self.body = body


_IMPLEMENTATIONS: dict[str, Implementation] = {}
_NAMES = frozenset(command.name for command in CLI_COMMANDS)


def cli_command(name: str) -> Callable[[Configure], Callable[[Body], Body]]:
    """Implement the command `name` of CLI_COMMANDS: decorate `configure(parser)`, which returns a
    decorator for the body."""
    if name not in _NAMES:
        raise ValueError(f"{name!r} is not in CLI_COMMANDS: declare it there first")

    def with_configure(configure: Configure) -> Callable[[Body], Body]:
        def with_body(body: Body) -> Body:
            _IMPLEMENTATIONS[name] = Implementation(configure, body)
            return body

        return with_body

    return with_configure


def command_named(word: str) -> CliCommand | None:
    """The command `word` names, by its name or an alias; None if none does."""
    return next((c for c in CLI_COMMANDS if word == c.name or word in c.aliases), None)


def implementation(command: CliCommand) -> Implementation:
    """The options and body of `command`, its module imported now if it was not."""
    __import__(f"muxd.cli.{command.module}")  # not importlib's import_module: importlib costs a shim call ~1 ms
    return _IMPLEMENTATIONS[command.name]
