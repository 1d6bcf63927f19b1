"""locate(): a CLI's session log found from a real process's /proc entries: its environment,
its cwd, its descendants, the files they hold open; never a link or a FIFO put in its place."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from muxd.executions.session_logs import agent_of_log, locate
from muxd.executions.session_logs.locate import ProcessView, _runs, claude_log_dir, process_tree, read_process
from muxd.testing.wait import returns_within, wait_until

SESSION = "4e3a0430-04d7-4ef4-98a3-7934c4ec3c05"
OTHER_SESSION = "9b2f0c11-1111-4222-8333-944455556666"
LIFETIME = "60"  # seconds a stand-in process lives if a test dies before ending it


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:
        process.kill()
        process.wait()


def start(processes: list[subprocess.Popen[bytes]], argv: list[str], cwd: Path,
          env: dict[str, str]) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(argv, cwd=cwd, env={"PATH": os.environ["PATH"], **env})
    processes.append(process)
    # Until the child has exec'd, /proc shows the forked parent's arguments and environment.
    wait_until(lambda: Path(f"/proc/{process.pid}/cmdline").read_bytes().split(b"\0")[:len(argv)]
               == [a.encode() for a in argv], timeout=10, message=f"{argv[0]} started")
    return process


def named(tmp_path: Path, name: str) -> str:
    """A `sleep` that calls itself `name` (its argv[0]), standing in for that CLI."""
    link = tmp_path / "bin" / name
    link.parent.mkdir(exist_ok=True)
    link.symlink_to("/bin/sleep")
    return str(link)


def children_of(pid: int) -> list[int]:
    return process_tree(pid)[1:]


def open_files_below(pid: int) -> list[str]:
    return [f for p in children_of(pid) if (view := read_process(p)) for f in view.open_files]


def touch(path: Path, content: bytes = b"{}\n", mtime: float | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def test_claude_project_directory_is_named_after_the_cwd():
    # As Claude Code 2.1.330 named it for a session started in /tmp/hlogs/claude1/work.
    view = ProcessView(pid=1, env={"HOME": "/h"}, cwd="/tmp/hlogs/claude1/work")
    assert claude_log_dir(view) == Path("/h/.claude/projects/-tmp-hlogs-claude1-work")
    view = ProcessView(pid=1, env={"HOME": "/h", "CLAUDE_CONFIG_DIR": "/c"}, cwd="/w/my_work 2")
    assert claude_log_dir(view) == Path("/c/projects/-w-my-work-2")


def test_claude_newest_log_of_the_cwd_project(tmp_path, processes):
    home, work = tmp_path / "home", tmp_path / "my work"
    work.mkdir()
    project = home / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(work))
    older = touch(project / f"{OTHER_SESSION}.jsonl", mtime=1_000_000)
    newer = touch(project / f"{SESSION}.jsonl")
    touch(home / ".claude" / "projects" / "-elsewhere" / f"{OTHER_SESSION}.jsonl")
    process = start(processes, [named(tmp_path, "claude"), LIFETIME], work, {"HOME": str(home)})
    assert locate("claude", process.pid) == newer != older


def test_claude_config_dir_of_a_child_under_a_shell(tmp_path, processes):
    """The pane runs a shell; the CLI is its child, with CLAUDE_CONFIG_DIR set for it alone."""
    config, work = tmp_path / "config", tmp_path / "work"
    work.mkdir()
    log = touch(config / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(work)) / f"{SESSION}.jsonl")
    claude = named(tmp_path, "claude")
    shell = start(processes, ["sh", "-c", f"CLAUDE_CONFIG_DIR={config} {claude} {LIFETIME}; true"], work,
                  {"HOME": str(tmp_path / "elsewhere")})
    wait_until(lambda: any((view := read_process(p)) and view.argv[:1] == [claude] for p in children_of(shell.pid)),
               timeout=10, message="the shell's child running claude")
    assert locate("claude", shell.pid) == log


def test_codex_the_rollout_a_descendant_holds_open(tmp_path, processes):
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    held = touch(home / ".codex" / "sessions" / "2026" / "11" / "24" / "rollout-2026-11-24T10-00-00-a.jsonl",
                 mtime=1_000_000)
    touch(held.parent / "rollout-2026-11-24T11-00-00-b.jsonl")  # newer, but not the one being written
    script = f"exec 3>>'{held}'; exec sleep {LIFETIME}"  # the app-server: a child holding the rollout
    wrapper = start(processes, ["sh", "-c", f"sh -c \"{script}\" & wait"], work, {"HOME": str(home)})
    wait_until(lambda: str(held) in open_files_below(wrapper.pid), timeout=10, message="the rollout held open")
    assert locate("codex", wrapper.pid) == held


def test_codex_newest_rollout_of_the_cwd(tmp_path, processes):
    codex_home, work = tmp_path / "codex-home", tmp_path / "work"
    work.mkdir()

    def rollout(day: str, name: str, cwd: Path, mtime: float) -> Path:
        meta = {"timestamp": "t", "type": "session_meta", "payload": {"id": name, "cwd": str(cwd),
                                                                      "base_instructions": "x" * 5000}}
        return touch(codex_home / "sessions" / "2026" / day / f"rollout-{name}.jsonl",
                     json.dumps(meta).encode() + b"\n", mtime)

    rollout("11/23", "old-here", work, 1_000_000)
    mine = rollout("11/24", "mine", work, 2_000_000)
    rollout("11/24", "newest-elsewhere", tmp_path, 3_000_000)
    codex = named(tmp_path, "codex")
    process = start(processes, [codex, LIFETIME], work, {"HOME": str(tmp_path), "CODEX_HOME": str(codex_home)})
    assert locate("codex", process.pid) == mine


def test_gemini_project_by_registry_or_by_hash(tmp_path, processes):
    home, work, other = tmp_path / "home", tmp_path / "work", tmp_path / "other"
    work.mkdir(), other.mkdir()
    gemini_dir = home / ".gemini"
    touch(gemini_dir / "projects.json", json.dumps({"projects": {str(work): "work"}}).encode())
    registered = touch(gemini_dir / "tmp" / "work" / "chats" / "session-2026-11-24T11-10-1b394265.jsonl")
    hashed = touch(gemini_dir / "tmp" / hashlib.sha256(str(other).encode()).hexdigest() / "chats" /
                   "session-2026-11-24T11-11-2c4a5b6d.jsonl")
    gemini = named(tmp_path, "gemini")
    assert locate("gemini", start(processes, [gemini, LIFETIME], work, {"HOME": str(home)}).pid) == registered
    assert locate("gemini", start(processes, [gemini, LIFETIME], other, {"HOME": str(home)}).pid) == hashed


def test_aider_history_in_the_cwd_or_where_told(tmp_path, processes):
    work = tmp_path / "work"
    history = touch(work / ".aider.chat.history.md", b"# aider chat started\n")
    aider = named(tmp_path, "aider")
    assert locate("aider", start(processes, [aider, LIFETIME], work, {"HOME": str(tmp_path)}).pid) == history
    elsewhere = touch(tmp_path / "logs" / "chat.md")
    told = start(processes, [sys.executable, "-c", "import time; time.sleep(60)", "aider",
                             "--chat-history-file", "../logs/chat.md"], work, {"HOME": str(tmp_path)})
    assert locate("aider", told.pid) == elsewhere


def test_pi_newest_session_of_the_cwd_or_its_agent_dir(tmp_path, processes):
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    sessions = home / ".pi" / "agent" / "sessions" / ("--" + str(work).lstrip("/").replace("/", "-") + "--")
    touch(sessions / f"2026-11-29T16-40-00-000Z_{OTHER_SESSION}.jsonl", mtime=1_000)
    newest = touch(sessions / f"2026-11-29T16-44-19-532Z_{SESSION}.jsonl", mtime=2_000)
    touch(home / ".pi" / "agent" / "sessions" / "--elsewhere--" / f"2026-11-29T17-00-00-000Z_{SESSION}.jsonl")
    pi = named(tmp_path, "pi")
    assert locate("pi", start(processes, [pi, LIFETIME], work, {"HOME": str(home)}).pid) == newest
    agent_dir = tmp_path / "agent"
    told = touch(agent_dir / "sessions" / sessions.name / f"2026-11-29T16-50-00-000Z_{SESSION}.jsonl")
    env = {"HOME": str(home), "PI_CODING_AGENT_DIR": str(agent_dir)}
    assert locate("pi", start(processes, [pi, LIFETIME], work, env).pid) == told


def test_an_agent_is_its_own_program_not_one_whose_name_holds_its_name():
    """pi's process is `pi` or its package's script, never `pip` or a `.pipx` path beside it."""
    def runs(*argv: str, agent: str = "pi") -> bool:
        return _runs(ProcessView(pid=1, argv=list(argv)), agent)

    assert runs("/home/u/.local/bin/pi")
    assert runs("node", "/usr/lib/node_modules/@mariozechner/pi-coding-agent/dist/cli.js")
    assert not runs("pip", "install", "x")
    assert not runs("/home/u/.local/pipx/venvs/tool/bin/python", "-m", "tool")
    assert runs("node", "/x/@anthropic-ai/claude-code/cli.js", agent="claude")
    assert runs("/usr/bin/python3", "/home/u/.local/bin/aider", agent="aider")
    assert not runs("sh", "-c", "pi --help", agent="pi")  # a shell's script merely naming it


def test_qwen_session_of_the_cwd_project(tmp_path, processes):
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    chats = home / ".qwen" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(work)) / "chats"
    touch(chats / f"{OTHER_SESSION}.jsonl", mtime=1_000)
    newest = touch(chats / f"{SESSION}.jsonl", mtime=2_000)
    qwen = named(tmp_path, "qwen")
    assert locate("qwen", start(processes, [qwen, LIFETIME], work, {"HOME": str(home)}).pid) == newest


def test_nothing_to_find(tmp_path, processes):
    work = tmp_path / "work"
    work.mkdir()
    process = start(processes, [named(tmp_path, "claude"), LIFETIME], work, {"HOME": str(tmp_path)})
    assert locate("claude", process.pid) is None, "no log yet: the CLI writes it at the first prompt"
    assert locate("opencode", process.pid) is None and locate(None, process.pid) is None
    assert locate("claude", None) is None
    process.kill()
    process.wait()
    assert locate("claude", process.pid) is None, "the process is gone"


def test_agent_of_log():
    assert agent_of_log(f"/h/.claude/projects/-w/{SESSION}.jsonl") == "claude"
    assert agent_of_log("/h/.codex/sessions/2026/11/24/rollout-2026-11-24T11-10-12-x.jsonl") == "codex"
    assert agent_of_log("/h/.gemini/tmp/w/chats/session-2026-11-24T11-10-1b394265.jsonl") == "gemini"
    assert agent_of_log("/w/.aider.chat.history.md") == "aider"
    assert agent_of_log(f"/h/.qwen/projects/-w/chats/{SESSION}.jsonl") == "qwen"
    assert agent_of_log(f"/h/.pi/agent/sessions/--w--/2026-11-29T16-44-19-532Z_{SESSION}.jsonl") == "pi"
    assert agent_of_log("/w/notes.jsonl") is None


# ---------------------------------------------------------------- what a pane may have put there

RESULT_WAIT_S = 10.0



def fifo_at(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    return path


def let_readers_go(path: Path) -> None:
    """A reader still waiting on the FIFO (the bug) gets its end of file."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass


def test_links_and_fifos_are_never_the_log(tmp_path, processes):
    work, secret = tmp_path / "work", touch(tmp_path / "secret.txt", b"TOP-SECRET\n")
    work.mkdir()
    (work / ".aider.chat.history.md").symlink_to(secret)
    aider = named(tmp_path, "aider")
    assert locate("aider", start(processes, [aider, LIFETIME], work, {"HOME": str(tmp_path)}).pid) is None
    fifo = fifo_at(tmp_path / "logs" / "chat.md")
    told = start(processes, [aider, LIFETIME], work, {"HOME": str(tmp_path), "AIDER_CHAT_HISTORY_FILE": str(fifo)})
    assert returns_within(lambda: locate("aider", told.pid), timeout=RESULT_WAIT_S) is None
    project = tmp_path / "home" / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(work))
    real = touch(project / f"{OTHER_SESSION}.jsonl", mtime=1_000_000)
    (project / f"{SESSION}.jsonl").symlink_to(secret)  # newer, but a link
    claude = start(processes, [named(tmp_path, "claude"), LIFETIME], work, {"HOME": str(tmp_path / "home")})
    assert locate("claude", claude.pid) == real


def test_gemini_projects_file_as_a_fifo_is_not_waited_on(tmp_path, processes):
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    projects = fifo_at(home / ".gemini" / "projects.json")
    hashed = touch(home / ".gemini" / "tmp" / hashlib.sha256(str(work).encode()).hexdigest() / "chats" /
                   "session-2026-11-24T11-11-2c4a5b6d.jsonl")
    process = start(processes, [named(tmp_path, "gemini"), LIFETIME], work, {"HOME": str(home)})
    try:
        assert returns_within(lambda: locate("gemini", process.pid), timeout=RESULT_WAIT_S) == hashed
    finally:
        let_readers_go(projects)


def test_gemini_project_named_outside_its_tmp_is_ignored(tmp_path, processes):
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    touch(home / ".gemini" / "projects.json", json.dumps({"projects": {str(work): "../elsewhere"}}).encode())
    (home / ".gemini" / "tmp").mkdir()
    touch(home / ".gemini" / "elsewhere" / "chats" / "session-2026-11-24T11-10-1b394265.jsonl")
    process = start(processes, [named(tmp_path, "gemini"), LIFETIME], work, {"HOME": str(home)})
    assert locate("gemini", process.pid) is None
