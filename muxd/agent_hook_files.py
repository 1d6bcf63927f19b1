"""muxd's hooks in each agent CLI's own configuration file, for the agents a person starts by
hand in a muxd pane (`muxd hooks install|uninstall`): where the file is, whether muxd's hooks
are in it, and its text with them added or taken out. Exactly muxd's entries: the user's own
hooks and settings stay as they were, and a file that cannot be read is refused, never rewritten.

Claude Code (~/.claude/settings.json), Gemini CLI (~/.gemini/settings.json) and Qwen Code
(~/.qwen/settings.json) are JSON: muxd's
entries are known by their command (agent_hooks.hook_command_agent). Codex (~/.codex/config.toml)
is TOML, which Python can read but not write: muxd's tables are appended as text between two
marker comments, each header marked `# muxd`, with the trust Codex wants for them."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path

from muxd.agent_hooks import (CLAUDE_HOOK_TIMEOUT_S, GEMINI_HOOK_NAME, GEMINI_HOOK_TIMEOUT_MS, HOOK_EVENTS,
                              QWEN_HOOK_TIMEOUT_MS, codex_hook_key, codex_hook_timeout_s, codex_trusted_hash,
                              hook_command_agent)
from muxd.errors import BadRequest

CODEX_BLOCK_BEGIN = "# >>> muxd hooks: added by `muxd hooks install`, taken out by `muxd hooks uninstall` >>>"
CODEX_BLOCK_END = "# <<< muxd hooks <<<"
CODEX_TABLE_MARK = "# muxd"  # ends the header of every table muxd writes
_HEADER = re.compile(r"^\s*\[")


class HookConfigError(BadRequest):
    """An agent's configuration file muxd cannot read or add to: it is left as it is."""


def config_path(agent: str, env: Mapping[str, str] = os.environ) -> Path:
    """The user's own configuration file of `agent`, where the CLI itself looks for it."""
    home = Path(env.get("HOME") or Path.home())
    if agent == "claude":
        return Path(env.get("CLAUDE_CONFIG_DIR") or home / ".claude") / "settings.json"
    if agent == "codex":
        # Codex canonicalizes $CODEX_HOME; its hook-state keys name the file by that path.
        codex_home = env.get("CODEX_HOME")
        return (Path(codex_home).resolve() if codex_home else home / ".codex") / "config.toml"
    if agent == "gemini":
        return Path(env.get("GEMINI_CLI_HOME") or home) / ".gemini" / "settings.json"
    if agent == "cline":  # a directory: one executable per event
        return home / ".cline" / "hooks"
    if agent == "qwen":
        qwen_home = env.get("QWEN_HOME") or "~/.qwen"  # Qwen expands a leading ~ itself
        return (home / qwen_home[2:] if qwen_home.startswith("~/") else Path(qwen_home)) / "settings.json"
    raise ValueError(f"no hooks for {agent!r}")


def installed(agent: str, env: Mapping[str, str] = os.environ) -> bool:
    """Whether the user's configuration of `agent` has muxd's hooks (False if it cannot tell)."""
    if agent == "cline":
        return all(_is_cline_hook_file(path) for path, _ in cline_hook_files(config_path(agent, env)))
    try:
        text = config_path(agent, env).read_text(encoding="utf-8")
    except (OSError, ValueError):
        return False
    if agent == "codex":
        return CODEX_BLOCK_BEGIN in text
    try:
        return _has_muxd_handler(json.loads(text), agent)
    except ValueError:
        return False


def with_hooks(agent: str, text: str | None, path: Path, command: str) -> str:
    """The configuration `text` (None: no file yet) of `agent` at `path` with muxd's hooks, each
    running `command`, and no earlier ones of muxd's (so installing twice is installing once)."""
    if agent == "codex":
        return _codex_with_hooks(_codex_without_hooks(text or "", path), path, command)
    document = _json_without_hooks(_json_document(text, path), agent)
    handler: dict[str, object] = {"type": "command", "command": command, "timeout": CLAUDE_HOOK_TIMEOUT_S}
    if agent in ("gemini", "qwen"):
        handler = {"type": "command", "name": GEMINI_HOOK_NAME, "command": command,
                   "timeout": GEMINI_HOOK_TIMEOUT_MS if agent == "gemini" else QWEN_HOOK_TIMEOUT_MS}
    hooks = document.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise HookConfigError(f"{path}: \"hooks\" is not an object; not changed")
    for event in HOOK_EVENTS[agent]:
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise HookConfigError(f"{path}: \"hooks.{event}\" is not a list; not changed")
        groups.append({"hooks": [handler]})
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def without_hooks(agent: str, text: str | None, path: Path) -> str | None:
    """The configuration `text` of `agent` without muxd's hooks; None when it has none (nothing
    to write)."""
    if text is None:
        return None
    if agent == "codex":
        _codex_document(text, path)  # refuses a file that does not parse as it is
        stripped = _codex_without_hooks(text, path)
        return None if stripped == text else stripped
    document = _json_document(text, path)
    if not _has_muxd_handler(document, agent):
        return None
    return json.dumps(_json_without_hooks(document, agent), indent=2, ensure_ascii=False) + "\n"


# ------------------------------------------------------------ Cline's hooks directory

CLINE_FILE_MARK = "# muxd's hook: added by `muxd hooks install`, taken out by `muxd hooks uninstall`"


def cline_hook_files(directory: Path) -> list[tuple[Path, str]]:
    """muxd's hook files in Cline's hooks `directory`, with the event of each. Cline matches a
    file's name to its event whatever its case, so muxd's are the lower-case names (`pretooluse`)
    and a user's `PreToolUse` beside it runs too."""
    return [(directory / event.lower(), event) for event in HOOK_EVENTS["cline"]]


def cline_hook_script(command: str) -> str:
    """What each of muxd's hook files runs: `command`, given Cline's payload on its stdin."""
    return f"#!/bin/sh\n{CLINE_FILE_MARK}\n{command}\n"


def cline_file_change(path: Path, install: bool, command: str) -> str | None:
    """The text muxd's hook file at `path` should have ("" for none), or None when it is so
    already. A file there that is not muxd's is refused."""
    try:
        old = path.read_text(encoding="utf-8") if path.exists() else None
    except (OSError, ValueError) as exc:
        raise HookConfigError(f"cannot read {path} ({exc}); not changed") from exc
    if old is not None and CLINE_FILE_MARK not in old:
        raise HookConfigError(f"{path} is not muxd's hook file; not changed")
    new = cline_hook_script(command) if install else ""
    return None if (old or "") == new else new


def _is_cline_hook_file(path: Path) -> bool:
    try:
        return CLINE_FILE_MARK in path.read_text(encoding="utf-8")
    except (OSError, ValueError):
        return False


# ------------------------------------------------------------ JSON (Claude Code, Gemini CLI, Qwen Code)

def _json_document(text: str | None, path: Path) -> dict[str, object]:
    if text is None or not text.strip():
        return {}
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise HookConfigError(f"cannot parse {path} as JSON ({exc}); not changed") from exc
    if not isinstance(document, dict):
        raise HookConfigError(f"{path} is not a JSON object; not changed")
    return document


def _handlers(document: object) -> list[tuple[list[object], object]]:
    """Every hook handler of a settings document, with the list that holds it."""
    found: list[tuple[list[object], object]] = []
    hooks = document.get("hooks") if isinstance(document, dict) else None
    for groups in (hooks.values() if isinstance(hooks, dict) else ()):
        for group in (groups if isinstance(groups, list) else ()):
            handlers = group.get("hooks") if isinstance(group, dict) else None
            found += [(handlers, h) for h in handlers] if isinstance(handlers, list) else []
    return found


def _is_muxd_handler(handler: object, agent: str) -> bool:
    return isinstance(handler, dict) and hook_command_agent(str(handler.get("command", ""))) == agent


def _has_muxd_handler(document: object, agent: str) -> bool:
    return any(_is_muxd_handler(handler, agent) for _, handler in _handlers(document))


def _json_without_hooks(document: dict[str, object], agent: str) -> dict[str, object]:
    """`document` with muxd's handlers taken out, and the groups, events and `hooks` object
    they leave empty."""
    hooks = document.get("hooks")
    if not isinstance(hooks, dict) or not _has_muxd_handler(document, agent):
        return document
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept = []
        for group in groups:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if isinstance(handlers, list) and any(_is_muxd_handler(h, agent) for h in handlers):
                handlers[:] = [h for h in handlers if not _is_muxd_handler(h, agent)]
                if not handlers:
                    continue
            kept.append(group)
        if groups and not kept:
            del hooks[event]
        else:
            hooks[event] = kept
    if not hooks:
        del document["hooks"]
    return document


# ------------------------------------------------------------ TOML (Codex)

def _codex_document(text: str, path: Path) -> dict[str, object]:
    import tomllib  # Codex's files only: not at every daemon's start

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise HookConfigError(f"cannot parse {path} as TOML ({exc}); not changed") from exc


def _codex_with_hooks(text: str, path: Path, command: str) -> str:
    """`text` (without muxd's tables) with muxd's hook tables and their trust appended. Each of
    muxd's matcher groups comes after the user's of the same event, which fixes its index in
    the trust key."""
    document = _codex_document(text, path)
    hooks = document.get("hooks", {})
    if not isinstance(hooks, dict):
        raise HookConfigError(f"{path}: hooks is not a table; not changed")
    trust = hooks.get("state", {})
    lines = [CODEX_BLOCK_BEGIN]
    states = []
    for event in HOOK_EVENTS["codex"]:
        groups = hooks.get(event, [])
        if not isinstance(groups, list):
            raise HookConfigError(f"{path}: hooks.{event} is not an array of tables; not changed")
        lines += [f"[[hooks.{event}]] {CODEX_TABLE_MARK}", f"[[hooks.{event}.hooks]] {CODEX_TABLE_MARK}",
                  'type = "command"', f"command = {json.dumps(command, ensure_ascii=False)}",
                  f"timeout = {codex_hook_timeout_s(event)}", ""]
        key = codex_hook_key(str(path), event, len(groups))
        digest = codex_trusted_hash(event, command)
        if isinstance(trust, dict) and isinstance(trust.get(key), dict):
            if trust[key].get("trusted_hash") == digest:
                continue  # trusted already, in the user's own part of the file
            raise HookConfigError(f"{path}: hooks.state has {key!r} already, for another hook; not changed")
        states += [f"[hooks.state.{json.dumps(key, ensure_ascii=False)}] {CODEX_TABLE_MARK}",
                   f"trusted_hash = {json.dumps(digest)}"]
    lines += [*states, CODEX_BLOCK_END]
    kept = text.rstrip("\n")
    result = (kept + "\n\n" if kept else "") + "\n".join(lines) + "\n"
    import tomllib

    try:
        tomllib.loads(result)
    except tomllib.TOMLDecodeError as exc:  # e.g. the user's `hooks.Stop = [...]` cannot be added to
        raise HookConfigError(f"cannot add muxd's hooks to {path} ({exc}); not changed") from exc
    return result


def _codex_without_hooks(text: str, path: Path) -> str:
    """`text` without the tables whose header muxd marked, nor its marker lines; anything else
    Codex may have written between the markers stays."""
    kept: list[str] = []
    in_muxd_table = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped in (CODEX_BLOCK_BEGIN, CODEX_BLOCK_END):
            in_muxd_table = False
            continue
        if _HEADER.match(line):
            in_muxd_table = stripped.endswith(CODEX_TABLE_MARK)
        if not in_muxd_table:
            kept.append(line)
    result = "\n".join(kept).rstrip("\n")  # the blank line install put before its block goes too
    result = result + "\n" if result else ""
    if text.strip() and result != text:
        _codex_document(result, path)  # taking muxd's tables out must leave a file Codex reads
    return result
