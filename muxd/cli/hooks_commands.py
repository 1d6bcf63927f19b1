"""`muxd hooks install|uninstall [--agent claude|codex|gemini|qwen|cline]`: muxd's hooks in the user's own
configuration of each agent CLI, for agents a person starts by hand in a muxd pane (the daemon
gives the agents it starts their hooks per run). Installing twice is installing once; uninstall
takes out exactly what install added. A file that cannot be read is refused, and nothing is
written: every file is worked out before the first is written."""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from muxd.agent_hook_files import cline_file_change, cline_hook_files, config_path, with_hooks, without_hooks
from muxd.agent_hooks import HOOK_AGENTS, guarded_hook_command
from muxd.cli.table import cli_command

TYPE_CHECKING = False  # typing only for the type checker: see cli/table.py
if TYPE_CHECKING:
    from typing import Any

# Gemini CLI and Qwen Code take hooks from their user settings only: no per-run way.
_SETTINGS_ONLY_NOTE = "({} takes hooks from its user settings only: agents muxd starts get them from here too)"
_SETTINGS_ONLY_AGENTS = {"gemini": "Gemini CLI", "qwen": "Qwen Code", "cline": "Cline"}


def _configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=("install", "uninstall"))
    p.add_argument("--agent", choices=HOOK_AGENTS, action="append",
                   help="only this agent's configuration (repeatable; default: all of them)")


@cli_command("hooks")(_configure)
def hooks(_client: Any, args: argparse.Namespace) -> int:
    agents = args.agent or list(HOOK_AGENTS)
    changes: list[tuple[str, Path, str | None, str | None]] = []  # agent, file, old text, new text
    for agent in dict.fromkeys(agents):
        if agent == "cline":  # a directory of files, one per event; "" for a file to take out
            command = guarded_hook_command(agent)
            changes += [(agent, path, None, new) for path, _ in cline_hook_files(config_path(agent))
                        if (new := cline_file_change(path, args.action == "install", command)) is not None]
            if not any(change[0] == agent for change in changes):
                changes.append((agent, config_path(agent), None, None))
            continue
        path = config_path(agent)
        old = path.read_text(encoding="utf-8") if path.exists() else None
        if args.action == "install":
            new: str | None = with_hooks(agent, old, path, guarded_hook_command(agent))
        else:
            new = without_hooks(agent, old, path)
        changes.append((agent, path, old, new))
    for agent, path, old, new in changes:
        if new is None or new == old:
            said = "muxd's hooks are already in" if args.action == "install" else "no muxd hooks in"
            print(f"{agent}: {said} {path}")
            continue
        if agent == "cline" and not new:
            path.unlink()  # one of muxd's own hook files
        else:
            _write(path, new, 0o755 if agent == "cline" else 0o600)  # Cline runs its hook files itself
        done = "installed in" if args.action == "install" else "removed from"
        settings_only = _SETTINGS_ONLY_AGENTS.get(agent) if args.action == "install" else None
        note = " " + _SETTINGS_ONLY_NOTE.format(settings_only) if settings_only else ""
        print(f"{agent}: muxd's hooks {done} {path}{note}")
    return 0


def _write(path: Path, text: str, new_mode: int) -> None:
    """Replace `path` with `text` at once (a reader never sees half a file), keeping its mode."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o7777 if path.exists() else new_mode
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".muxd")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise
