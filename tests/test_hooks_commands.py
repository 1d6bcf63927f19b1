"""`muxd hooks install|uninstall`: muxd's hooks in the user's own configuration of each agent
CLI (a private HOME here), added once however often it runs, taken out exactly, the user's own
hooks and settings untouched, and a file that cannot be read refused and left as it was."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from muxd.agent_hook_files import CODEX_BLOCK_BEGIN, config_path, installed
from muxd.agent_hooks import HOOK_EVENTS, codex_hook_key, codex_trusted_hash, guarded_hook_command
from muxd.testing.patience import stretched

USER_HOOK = "/home/me/bin/on-stop.sh"
CLAUDE_SETTINGS = {"theme": "dark", "permissions": {"allow": ["Bash(ls:*)"]},
                   "hooks": {"Stop": [{"hooks": [{"type": "command", "command": USER_HOOK}]}],
                             "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "lint"}]}]}}
GEMINI_SETTINGS = {"security": {"auth": {"selectedType": "gemini-api-key"}},
                   "hooks": {"AfterAgent": [{"hooks": [{"type": "command", "name": "mine", "command": USER_HOOK}]}]}}
QWEN_SETTINGS = {"$version": 4, "model": {"name": "qwen3-coder-plus"},
                 "hooks": {"Stop": [{"hooks": [{"type": "command", "name": "mine", "command": USER_HOOK}]}]}}
CODEX_CONFIG = f"""\
# my Codex settings
model = "gpt-5-codex"
notify = ["notify-send", "codex"]

[[hooks.Stop]]
[[hooks.Stop.hooks]]
type = "command"
command = "{USER_HOOK}"

[hooks.state."/somewhere/hooks.json:stop:0:0"]
trusted_hash = "sha256:0123"
"""


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME",
                                                            "QWEN_HOME")}
    return {**env, "HOME": str(home)}


def hooks(home: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "muxd", "hooks", *args], env=_env(home),
                          capture_output=True, text=True, timeout=stretched(60))
    if check:
        assert done.returncode == 0, done.stderr
    return done


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A HOME whose Claude Code, Codex, Gemini CLI and Qwen Code already have settings and a hook each."""
    for agent, text in (("claude", json.dumps(CLAUDE_SETTINGS, indent=2) + "\n"), ("codex", CODEX_CONFIG),
                        ("gemini", json.dumps(GEMINI_SETTINGS, indent=2) + "\n"),
                        ("qwen", json.dumps(QWEN_SETTINGS, indent=2) + "\n")):
        path = config_path(agent, _env(tmp_path))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


# The agents whose hooks are in one settings file (Cline's are a directory of files: see below).
FILE_AGENTS = tuple(agent for agent in HOOK_EVENTS if agent != "cline")


def _text(home: Path, agent: str) -> str:
    return config_path(agent, _env(home)).read_text()


def test_install_adds_muxds_hooks_once_and_uninstall_takes_out_exactly_those(home):
    before = {agent: _text(home, agent) for agent in FILE_AGENTS}
    hooks(home, "install")
    after_one = {agent: _text(home, agent) for agent in FILE_AGENTS}
    again = hooks(home, "install")
    assert {agent: _text(home, agent) for agent in FILE_AGENTS} == after_one  # twice is once
    assert again.stdout.count("already in") == len(HOOK_EVENTS)
    assert all(installed(agent, _env(home)) for agent in HOOK_EVENTS)

    claude = json.loads(after_one["claude"])
    assert claude["theme"] == "dark" and claude["permissions"] == CLAUDE_SETTINGS["permissions"]
    assert claude["hooks"]["Stop"][0] == CLAUDE_SETTINGS["hooks"]["Stop"][0]  # the user's, first
    for event in HOOK_EVENTS["claude"]:
        ours = [h for g in claude["hooks"][event] for h in g["hooks"] if h["command"] == guarded_hook_command("claude")]
        assert len(ours) == 1, event
    gemini = json.loads(after_one["gemini"])
    assert gemini["security"] == GEMINI_SETTINGS["security"]
    assert [g["hooks"][0]["name"] for g in gemini["hooks"]["AfterAgent"]] == ["mine", "muxd"]
    assert after_one["codex"].startswith(CODEX_CONFIG)  # the user's text is kept as it was
    qwen = json.loads(after_one["qwen"])
    assert qwen["model"] == QWEN_SETTINGS["model"] and qwen["$version"] == 4
    assert [g["hooks"][0]["name"] for g in qwen["hooks"]["Stop"]] == ["mine", "muxd"]
    assert set(qwen["hooks"]) == set(HOOK_EVENTS["qwen"])  # Claude's event names, not Gemini's

    hooks(home, "uninstall")
    assert json.loads(_text(home, "claude")) == CLAUDE_SETTINGS
    assert json.loads(_text(home, "gemini")) == GEMINI_SETTINGS
    assert json.loads(_text(home, "qwen")) == QWEN_SETTINGS
    assert _text(home, "codex") == before["codex"]
    assert not any(installed(agent, _env(home)) for agent in HOOK_EVENTS)
    assert hooks(home, "uninstall").stdout.count("no muxd hooks in") == len(HOOK_EVENTS)


def test_codex_gets_the_trust_of_muxds_hooks_only(home):
    hooks(home, "install", "--agent", "codex")
    path = config_path("codex", _env(home))
    config = tomllib.loads(path.read_text())
    assert config["notify"] == ["notify-send", "codex"]
    command = guarded_hook_command("codex")
    state = config["hooks"]["state"]
    assert state["/somewhere/hooks.json:stop:0:0"] == {"trusted_hash": "sha256:0123"}
    for event in HOOK_EVENTS["codex"]:
        groups = config["hooks"][event]
        assert groups[-1]["hooks"] == [{"type": "command", "command": command,
                                        "timeout": groups[-1]["hooks"][0]["timeout"]}]
        # muxd's group comes after the user's: its index is in the key its trust is kept under
        key = codex_hook_key(str(path), event, len(groups) - 1)
        assert state[key] == {"trusted_hash": codex_trusted_hash(event, command)}, event
    assert len(state) == 1 + len(HOOK_EVENTS["codex"])
    assert json.loads(_text(home, "claude")) == CLAUDE_SETTINGS  # --agent codex: only Codex's file


def test_install_into_no_configuration_at_all_and_back(tmp_path):
    hooks(tmp_path, "install", "--agent", "claude", "--agent", "codex")
    assert installed("claude", _env(tmp_path)) and installed("codex", _env(tmp_path))
    assert not config_path("gemini", _env(tmp_path)).exists()
    hooks(tmp_path, "uninstall")
    assert json.loads(_text(tmp_path, "claude")) == {}
    assert _text(tmp_path, "codex") == ""


def test_an_install_moved_elsewhere_is_replaced_not_added_to(home):
    """Hooks an older install wrote (muxd elsewhere then) are muxd's too: install replaces them."""
    path = config_path("claude", _env(home))
    old = '[ -z "${MUXD_PANE:-}" ] || /opt/old/bin/muxd hook --agent claude || true'
    settings = json.loads(path.read_text())
    settings["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": old}]})
    path.write_text(json.dumps(settings))
    hooks(home, "install", "--agent", "claude")
    commands = [h["command"] for g in json.loads(path.read_text())["hooks"]["Stop"] for h in g["hooks"]]
    assert commands == [USER_HOOK, guarded_hook_command("claude")]


@pytest.mark.parametrize(("agent", "text"), [
    ("claude", '{"theme": "dark",'),
    ("gemini", "// a comment\n{}"),
    ("codex", "model = \n"),
    ("codex", 'hooks = { Stop = [] }\n'),  # an inline table muxd's [[hooks.Stop]] cannot extend
])
def test_a_file_it_cannot_read_or_add_to_is_refused_and_left_alone(tmp_path, agent, text):
    path = config_path(agent, _env(tmp_path))
    path.parent.mkdir(parents=True)
    path.write_text(text)
    for action in ("install", "uninstall"):
        done = hooks(tmp_path, action, "--agent", agent, check=False)
        if action == "uninstall" and agent == "codex" and "hooks = {" in text:
            assert done.returncode == 0  # it parses, and has none of muxd's: nothing to do
            continue
        assert done.returncode == 1
        [line] = done.stderr.splitlines()
        assert str(path) in line and "not changed" in line
        assert path.read_text() == text


def test_a_refusal_writes_no_other_file_either(home):
    config_path("gemini", _env(home)).write_text("{not json")
    assert hooks(home, "install", check=False).returncode == 1
    assert not installed("claude", _env(home)) and CODEX_BLOCK_BEGIN not in _text(home, "codex")


def test_the_config_files_are_where_each_cli_looks(tmp_path):
    env = {"HOME": str(tmp_path)}
    assert config_path("claude", env) == tmp_path / ".claude/settings.json"
    assert config_path("codex", env) == tmp_path / ".codex/config.toml"
    assert config_path("gemini", env) == tmp_path / ".gemini/settings.json"
    moved = {"HOME": str(tmp_path), "CLAUDE_CONFIG_DIR": str(tmp_path / "c"), "CODEX_HOME": str(tmp_path / "x"),
             "GEMINI_CLI_HOME": str(tmp_path / "g")}
    assert config_path("claude", moved) == tmp_path / "c/settings.json"
    assert config_path("codex", moved) == (tmp_path / "x").resolve() / "config.toml"
    assert config_path("gemini", moved) == tmp_path / "g/.gemini/settings.json"
    assert config_path("qwen", env) == tmp_path / ".qwen/settings.json"
    assert config_path("qwen", {**env, "QWEN_HOME": str(tmp_path / "q")}) == tmp_path / "q/settings.json"
    assert config_path("qwen", {**env, "QWEN_HOME": "~/q"}) == tmp_path / "q/settings.json"


def test_cline_hook_files_beside_the_users_own_and_taken_out_exactly(tmp_path):
    """Cline 3.0.65 reads hooks only as files in ~/.cline/hooks: muxd's are its own, in
    lower-case names, executable, and the user's `PreToolUse` stays as it was."""
    home = tmp_path / "home"
    directory = home / ".cline" / "hooks"
    directory.mkdir(parents=True)
    (directory / "PreToolUse").write_text("#!/bin/sh\necho mine\n")
    assert not installed("cline", {"HOME": str(home)})
    hooks(home, "install", "--agent", "cline")
    hooks(home, "install", "--agent", "cline")
    assert installed("cline", {"HOME": str(home)})
    script = (directory / "pretooluse").read_text()
    assert "hook --agent cline" in script and "MUXD_PANE" in script and script.startswith("#!/bin/sh\n")
    assert os.access(directory / "taskcomplete", os.X_OK)
    assert (directory / "PreToolUse").read_text() == "#!/bin/sh\necho mine\n"
    hooks(home, "uninstall", "--agent", "cline")
    assert sorted(p.name for p in directory.iterdir()) == ["PreToolUse"]
    assert "no muxd hooks in" in hooks(home, "uninstall", "--agent", "cline").stdout


def test_cline_file_not_muxds_is_refused(tmp_path):
    home = tmp_path / "home"
    (home / ".cline" / "hooks").mkdir(parents=True)
    (home / ".cline" / "hooks" / "taskstart").write_text("#!/bin/sh\necho mine\n")
    done = hooks(home, "install", "--agent", "cline", check=False)
    assert done.returncode != 0 and "not muxd's hook file" in done.stderr
    assert sorted(p.name for p in (home / ".cline" / "hooks").iterdir()) == ["taskstart"]
