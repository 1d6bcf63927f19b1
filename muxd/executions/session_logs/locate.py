"""Where the agent running in a pane keeps its session log, found from `/proc`: the pane's
process and its descendants (the CLI may be a node wrapper's child, or a shell's), their
environment (HOME, CLAUDE_CONFIG_DIR, CODEX_HOME, GEMINI_CLI_HOME, QWEN_HOME, PI_CODING_AGENT_DIR,
CLINE_DATA_DIR, XDG_DATA_HOME), working directory, arguments and open files (and Cline's
sessions database). Linux only; a process that is gone or not ours gives None. Kilo's "log"
is its database, kilo.db (see kilo.py).

Only regular files are candidates (never a link, a FIFO or a device: the pane may have put
one where its CLI's log goes), and the files looked into to choose (a rollout's first line,
Gemini's projects.json) are opened as the logs are (see _open.py)."""

from __future__ import annotations

import fnmatch
import hashlib
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from muxd.config import SESSION_LOG_INDEX_MAX_BYTES
from muxd.executions.session_logs._open import read_head
from muxd.executions.session_logs._records import json_value, mapping
from muxd.executions.session_logs.cline_store import messages_path

PROC = Path("/proc")
# At most this many processes of a pane's tree are looked at (a CLI, its wrapper, its helpers).
PROCESS_TREE_MAX = 64
# Codex rollouts looked at when no process holds one open: the newest this many.
ROLLOUT_CANDIDATES_MAX = 64
# A rollout's first line (session_meta) names its cwd early; this much of it is read.
ROLLOUT_HEAD_BYTES = 64 * 1024
# Claude Code shortens a project directory's name past this length (and adds a hash).
CLAUDE_SLUG_MAX_CHARS = 200
AIDER_HISTORY_NAME = ".aider.chat.history.md"
# The program and the first few arguments (a launcher's script) may name the agent.
AGENT_ARGS_LOOKED_AT = 4

_ROLLOUT_CWD = re.compile(rb'"cwd"\s*:\s*("(?:[^"\\]|\\.)*")')
# Each agent's log by the shape of its path, for spotting it among a process's open files.
_OPEN_LOG = {
    "claude": re.compile(r"/projects/[^/]+/[0-9a-f-]{36}\.jsonl$"),
    "codex": re.compile(r"/sessions/.*/rollout-[^/]*\.jsonl$"),
    "gemini": re.compile(r"/chats/session-[^/]*\.jsonl$"),
    "aider": re.compile(r"\.aider\.chat\.history\.md$"),
    "qwen": re.compile(r"/projects/[^/]+/chats/[0-9a-f-]{36}\.jsonl$"),
    "pi": re.compile(r"/sessions/--[^/]*--/[^/]+_[0-9a-f-]{36}\.jsonl$"),
    "cline": re.compile(r"/sessions/([^/]+)/\1\.messages\.json$"),
    "kilo": re.compile(r"/kilo/kilo\.db$"),
}
AGENT_TYPES = tuple(_OPEN_LOG)
# Path components of each CLI's own layout below its home, the log's name included:
# `projects/<slug>/<id>.jsonl`, `sessions/YYYY/MM/DD/rollout-….jsonl`,
# `tmp/<project>/chats/session-….jsonl`, `.aider.chat.history.md`, Qwen's
# `projects/<cwd>/chats/<id>.jsonl`, pi's `sessions/--<cwd>--/<time>_<id>.jsonl`. No link is followed there.
# Cline's `sessions/<id>/<id>.messages.json`.
LAYOUT_PARTS = {"claude": 3, "codex": 5, "gemini": 4, "aider": 1, "qwen": 4, "pi": 3, "cline": 3,
                "kilo": 2}  # Kilo's `kilo/kilo.db`
GEMINI_PROJECTS_PARTS = 1  # `projects.json`, right in the Gemini home


def agent_of_log(path: Path | str) -> str | None:
    """Which CLI writes a log at `path`, by the shape of the path (None if no known shape)."""
    return next((agent for agent, shape in _OPEN_LOG.items() if shape.search(str(path))), None)


@dataclass(frozen=True)
class ProcessView:
    """What `/proc` tells about one process; empty fields where it would not tell."""

    pid: int
    uid: int = field(default_factory=os.getuid)  # the user it runs as
    argv: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    open_files: list[str] = field(default_factory=list)


def locate(agent_type: str | None, pid: int | None) -> Path | None:
    """The session log of the `agent_type` CLI running as `pid` or one of its descendants,
    or None (unknown agent, no such process, not ours, no log yet)."""
    if agent_type not in _OPEN_LOG or not pid:
        return None
    views, agent = _agent_of(agent_type, pid)
    if agent is None or agent.cwd is None:
        return None
    held = _unique_paths(f for v in views for f in v.open_files if _OPEN_LOG[agent_type].search(f))
    if agent_type == "codex" and len(held) > 1:
        # One app-server may write the rollouts of several Codex sessions: keep this cwd's.
        held = [p for p in held if rollout_cwd(p, agent.uid) == agent.cwd] or held
    if held:  # the file the CLI is writing: no guessing
        return _newest(held)
    if agent_type == "cline":  # its sessions database names the pid of the process running each
        return _cline(agent, [v.pid for v in views])
    return _FINDERS[agent_type](agent)


def process_tree(pid: int) -> list[int]:
    """`pid` then its descendants, breadth first (at most PROCESS_TREE_MAX); [] if it is gone."""
    if not (PROC / str(pid)).exists():
        return []
    tree, i = [pid], 0
    while i < len(tree) and len(tree) < PROCESS_TREE_MAX:
        tree += _children(tree[i])
        i += 1
    return tree[:PROCESS_TREE_MAX]


def _children(pid: int) -> list[int]:
    """The children of `pid`, from each of its threads' `children` lists: a few small reads,
    where listing every process on the machine took milliseconds."""
    found: list[int] = []
    try:
        tasks = os.listdir(PROC / str(pid) / "task")
    except OSError:
        return found
    for task in tasks:
        try:
            found += [int(child) for child in (PROC / str(pid) / "task" / task / "children").read_text().split()]
        except (OSError, ValueError):
            continue
    return sorted(set(found))


def read_process(pid: int) -> ProcessView | None:
    """None if the process is gone; fields it may not read (another user's) stay empty."""
    base = PROC / str(pid)
    try:
        argv = [a.decode("utf-8", "replace") for a in (base / "cmdline").read_bytes().split(b"\0") if a]
    except OSError:
        return None
    return ProcessView(pid=pid, uid=process_owner(pid), argv=argv, env=_environ(base),
                       cwd=_readlink(base / "cwd"), open_files=_open_files(base))


def _environ(base: Path) -> dict[str, str]:
    try:
        raw = (base / "environ").read_bytes()
    except OSError:
        return {}
    pairs = (item.decode("utf-8", "replace").partition("=") for item in raw.split(b"\0") if b"=" in item)
    return {key: value for key, _, value in pairs}


def process_owner(pid: int) -> int:
    """The user a process runs as: the owner its session log must have (muxd's own user for a
    process gone, which muxd started)."""
    try:
        return os.stat(PROC / str(pid)).st_uid
    except OSError:
        return os.getuid()


def _readlink(path: Path) -> str | None:
    try:
        return os.readlink(path)
    except OSError:
        return None


def _open_files(base: Path) -> list[str]:
    try:
        fds = os.listdir(base / "fd")
    except OSError:
        return []
    targets = (_readlink(base / "fd" / fd) for fd in fds)
    return [t for t in targets if t and t.startswith("/")]


def _runs(view: ProcessView, agent_type: str) -> bool:
    """Whether the process is the agent: its name in the program or script it runs (`claude`,
    `node …/.bin/codex`, `node …/@anthropic-ai/claude-code/cli.js`, `python …/bin/aider`).
    A shell's `-c` script merely mentioning it does not count (it holds spaces)."""
    named = re.compile(rf"(?:^|/){re.escape(agent_type)}(?:$|[-./])")  # pi's: not pip's
    return any(" " not in arg and named.search(arg.lower()) is not None for arg in view.argv[:AGENT_ARGS_LOOKED_AT])


def _unique_paths(paths: Iterable[str]) -> list[Path]:
    return [Path(p) for p in dict.fromkeys(paths)]


def _newest(paths: Iterable[Path]) -> Path | None:
    """The most recently modified of `paths` that are regular files."""
    found = [(mtime, str(p), p) for p in paths if (mtime := _mtime(p)) is not None]
    return max(found)[2] if found else None


def _mtime(path: Path) -> float | None:
    """When the regular file at `path` was modified; None for a link, a FIFO, or nothing there."""
    try:
        info = path.lstat()
    except OSError:
        return None
    return info.st_mtime if stat.S_ISREG(info.st_mode) else None


def _home(view: ProcessView) -> Path | None:
    home = view.env.get("HOME")
    return Path(home) if home else None


# ---------------------------------------------------------------- each CLI's own layout

def claude_log_dir(view: ProcessView) -> Path | None:
    """`<CLAUDE_CONFIG_DIR or ~/.claude>/projects/<cwd with every non-alphanumeric as "-">`."""
    config = view.env.get("CLAUDE_CONFIG_DIR")
    home = _home(view)
    root = Path(config) if config else (home / ".claude" if home else None)
    if root is None or view.cwd is None:
        return None
    slug = re.sub(r"[^A-Za-z0-9]", "-", view.cwd)
    projects = root / "projects"
    if len(slug) <= CLAUDE_SLUG_MAX_CHARS:
        return projects / slug
    # Past the limit the name is cut and a hash of the path added: match on the cut part.
    return _newest(p for p in _subdirs(projects) if p.name.startswith(slug[:CLAUDE_SLUG_MAX_CHARS]))


def _claude(view: ProcessView) -> Path | None:
    directory = claude_log_dir(view)
    return _newest(_glob(directory, "*.jsonl")) if directory else None


def _codex(view: ProcessView) -> Path | None:
    """The newest rollout under `$CODEX_HOME/sessions` whose session ran in the agent's cwd."""
    home = _home(view)
    codex_home = Path(view.env["CODEX_HOME"]) if view.env.get("CODEX_HOME") else (home / ".codex" if home else None)
    if codex_home is None:
        return None
    rollouts: list[Path] = []
    for day in _days_newest_first(codex_home / "sessions"):
        rollouts += _glob(day, "rollout-*.jsonl")
        if len(rollouts) >= ROLLOUT_CANDIDATES_MAX:
            break
    by_age = sorted(rollouts, key=lambda p: _mtime(p) or 0.0, reverse=True)[:ROLLOUT_CANDIDATES_MAX]
    return next((p for p in by_age if rollout_cwd(p, view.uid) == view.cwd), None)


def _days_newest_first(sessions: Path) -> Iterator[Path]:
    """sessions/YYYY/MM/DD directories, the newest day first."""
    for year in sorted(_subdirs(sessions), reverse=True):
        for month in sorted(_subdirs(year), reverse=True):
            yield from sorted(_subdirs(month), reverse=True)


def rollout_cwd(path: Path, owner_uid: int) -> str | None:
    """The cwd a rollout's session_meta names (read from the file's first ROLLOUT_HEAD_BYTES)."""
    head = read_head(path, ROLLOUT_HEAD_BYTES, owner_uid=owner_uid, layout_parts=LAYOUT_PARTS["codex"])
    found = _ROLLOUT_CWD.search(head.split(b"\n", 1)[0]) if head else None
    value = json_value(found.group(1)) if found else None
    return value if isinstance(value, str) else None


def _gemini(view: ProcessView) -> Path | None:
    """`<GEMINI_CLI_HOME or HOME>/.gemini/tmp/<project>/chats/session-*.jsonl`, the project
    named in `projects.json` (0.61) or by the SHA-256 of the cwd (older releases)."""
    home = Path(view.env["GEMINI_CLI_HOME"]) if view.env.get("GEMINI_CLI_HOME") else _home(view)
    if home is None or view.cwd is None:
        return None
    base = home / ".gemini"
    names = [hashlib.sha256(view.cwd.encode()).hexdigest()]
    index = read_head(base / "projects.json", SESSION_LOG_INDEX_MAX_BYTES, owner_uid=view.uid,
                      layout_parts=GEMINI_PROJECTS_PARTS)
    named = mapping(mapping(json_value(index) if index else None).get("projects")).get(view.cwd)
    if isinstance(named, str) and named not in ("", ".", "..") and "/" not in named:
        names.insert(0, named)  # one directory's name, never a way out of tmp/
    for name in names:
        if found := _newest(_glob(base / "tmp" / name / "chats", "session-*.jsonl")):
            return found
    return None


def _aider(view: ProcessView) -> Path | None:
    """`--chat-history-file`, `$AIDER_CHAT_HISTORY_FILE`, else the history in the git root or the cwd."""
    if view.cwd is None:
        return None
    named = _option(view.argv, "--chat-history-file") or view.env.get("AIDER_CHAT_HISTORY_FILE")
    if named:
        path = Path(os.path.normpath(os.path.join(view.cwd, named)))
        return path if _mtime(path) is not None else None
    places = [Path(view.cwd)]
    git_root = next((d for d in [Path(view.cwd), *Path(view.cwd).parents] if (d / ".git").exists()), None)
    if git_root is not None:
        places.append(git_root)
    return _newest(p / AIDER_HISTORY_NAME for p in places)


def _qwen(view: ProcessView) -> Path | None:
    """`<QWEN_RUNTIME_DIR, QWEN_HOME or ~/.qwen>/projects/<cwd, every non-alphanumeric as
    "-">/chats/*.jsonl`, the newest."""
    home = _home(view)
    named = view.env.get("QWEN_RUNTIME_DIR") or view.env.get("QWEN_HOME")
    base = Path(named) if named else (home / ".qwen" if home else None)
    if base is None or view.cwd is None:
        return None
    return _newest(_glob(base / "projects" / re.sub(r"[^A-Za-z0-9]", "-", view.cwd) / "chats", "*.jsonl"))


def _pi(view: ProcessView) -> Path | None:
    """`<PI_CODING_AGENT_DIR or ~/.pi/agent>/sessions/--<cwd, its first "/" dropped and every
    "/", "\\" or ":" as "-">--/*.jsonl`, the newest."""
    home = _home(view)
    agent_dir = Path(view.env["PI_CODING_AGENT_DIR"]) if view.env.get("PI_CODING_AGENT_DIR") else (
        home / ".pi" / "agent" if home else None)
    if agent_dir is None or view.cwd is None:
        return None
    slug = "--" + re.sub(r"[/\\:]", "-", re.sub(r"^[/\\]", "", view.cwd)) + "--"
    return _newest(_glob(agent_dir / "sessions" / slug, "*.jsonl"))


def _cline(view: ProcessView, pids: list[int]) -> Path | None:
    """The messages file of the session one of `pids` runs, from Cline's sessions database in
    its data directory (`$CLINE_DATA_DIR`, `--data-dir`, else `<$CLINE_DIR, --config or
    ~/.cline>/data`); see cline_store.py."""
    home = _home(view)
    named = _option(view.argv, "--data-dir") or view.env.get("CLINE_DATA_DIR", "").strip()
    config = _option(view.argv, "--config") or view.env.get("CLINE_DIR", "").strip()
    data = Path(named) if named else (Path(config) / "data" if config else (
        home / ".cline" / "data" if home else None))
    if data is None or view.cwd is None:
        return None
    found = messages_path(data, view.env, view.cwd, pids, view.uid)
    return found if found is not None and _mtime(found) is not None else None


def _option(argv: list[str], name: str) -> str | None:
    for i, arg in enumerate(argv):
        if arg == name and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith(name + "="):
            return arg[len(name) + 1:]
    return None


def _kilo(view: ProcessView) -> Path | None:
    """`<XDG_DATA_HOME or ~/.local/share>/kilo/kilo.db` (a database: see kilo.py)."""
    home = _home(view)
    data = Path(view.env["XDG_DATA_HOME"]) if view.env.get("XDG_DATA_HOME") else (
        home / ".local" / "share" if home else None)
    return data / "kilo" / "kilo.db" if data and _mtime(data / "kilo" / "kilo.db") is not None else None


def agent_cwd(agent_type: str | None, pid: int | None) -> str | None:
    """The working directory of the `agent_type` CLI running as `pid` or one of its descendants."""
    return agent.cwd if pid and agent_type and (agent := _agent_of(agent_type, pid)[1]) else None


def _agent_of(agent_type: str, pid: int) -> tuple[list[ProcessView], ProcessView | None]:
    """The views of `pid`'s tree, and the agent's among them (else the first)."""
    views = [view for p in process_tree(pid) if (view := read_process(p)) is not None]
    return views, next((v for v in views if _runs(v, agent_type)), views[0] if views else None)


_FINDERS: dict[str, Callable[[ProcessView], Path | None]] = {
    "claude": _claude, "codex": _codex, "gemini": _gemini, "aider": _aider, "qwen": _qwen, "pi": _pi,
    "kilo": _kilo}


def _glob(directory: Path, pattern: str) -> list[Path]:
    """The regular files in `directory` whose names match `pattern` (links left out)."""
    try:
        with os.scandir(directory) as entries:
            return [Path(e.path) for e in entries if fnmatch.fnmatchcase(e.name, pattern)
                    and e.is_file(follow_symlinks=False)]
    except OSError:
        return []


def _subdirs(directory: Path) -> list[Path]:
    """The directories in `directory` (links left out)."""
    try:
        with os.scandir(directory) as entries:
            return [Path(e.path) for e in entries if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []
