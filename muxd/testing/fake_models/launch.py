"""How to start each real agent CLI against a fake model server: a private HOME seeded
with the config files that skip first-run dialogs, the environment, and the command line.
The facts come from shared/corpus/README.md ("How the real CLIs were run offline")."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from muxd.testing.fake_models.openai_chat import MODEL_ID, SIDE_MODEL
from muxd.testing.patience import stretched

if TYPE_CHECKING:
    from muxd.testing.server import MuxdTestServer

AGENTS_DIR_ENV = "MUXD_AGENTS_DIR"  # where .ci/install-agents put the CLIs; default <repo>/.agents
# Each CLI's executable inside the agents directory.
CLI_PATHS = {"claude": "npm/node_modules/.bin/claude", "codex": "npm/node_modules/.bin/codex",
             "gemini": "npm/node_modules/.bin/gemini", "aider": "aider/bin/aider",
             "opencode": "npm/node_modules/.bin/opencode", "qwen": "npm/node_modules/.bin/qwen",
             "pi": "npm/node_modules/.bin/pi", "cline": "npm/node_modules/.bin/cline",
             # Kilo's wrapper package is not published at the pinned version: its platform
             # package is installed alone, and has no entry in .bin
             "kilo": "npm/node_modules/@kilocode/cli-linux-x64/bin/kilo"}
FAKE_API_KEY = "sk-fake-0123456789abcdefghijklmnopqrstuvwxyz"
CODEX_MODEL = "gpt-5-codex"
AIDER_MODEL = "openai/fake-model"
# The shell an agent is started from, when a test types the command as a person would: no
# start-up files, so its prompt is the plain `bash-5.2$` (or `#`) whoever runs the tests.
SHELL_ARGV = ["bash", "--norc", "--noprofile"]
OPENCODE_PROVIDER = "fake"
# What every CLI gets, whatever the caller's environment holds.
BASE_ENV = {"TERM": "xterm-256color", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "NO_UPDATE_NOTIFIER": "1"}
CLI_SETUP_TIMEOUT_S = 30  # a CLI's own setup command run before it starts (`cline auth`)
MCP_STARTUP_TIMEOUT_S = 30  # how long a CLI gives an MCP server to start (a loaded CI machine)
MUXD_MCP_NAME = "muxd"  # muxd's MCP server's name in the CLI's configuration
MUXD_MCP_PANE_VARIABLES = ("MUXD_TOKEN", "MUXD_PANE")  # what `muxd mcp` must get from the pane
MUXD_MCP_SECRETS = ("MUXD_TOKEN",)  # of those, the ones holding a secret


@dataclass(frozen=True)
class AgentLaunch:
    """`argv` to run in `cwd` with `env` added to the pane's environment."""

    argv: list[str]
    env: dict[str, str]
    cwd: Path
    home: Path
    pane_flags: tuple[str, ...] = ()  # more `muxd new-session` flags for its pane (`--tmux-shim`)

    def new_session_args(self, session: str, width: int = 120, height: int = 40, *,
                         from_shell: bool = False) -> list[str]:
        """`muxd new-session` arguments that start this CLI detached; `from_shell` starts the
        shell it is typed into instead (see `command_line`)."""
        args = ["new-session", "-d", "-s", session, "-x", str(width), "-y", str(height), "-c", str(self.cwd),
                *self.pane_flags]
        for key, value in self.env.items():
            args += ["-e", f"{key}={value}"]
        # A CLI that believes it runs in CI goes non-interactive (Gemini CLI does): the pane
        # inherits CI=true from a CI job, so take it away. In a GitHub job (GITHUB_SHA) Gemini
        # also starts MCP servers with all but a few named variables taken away.
        unset = [arg for key in sorted(os.environ) if _is_ci_variable(key) for arg in ("-u", key)]
        return [*args, "--", "env", *unset, *(SHELL_ARGV if from_shell else self.argv)]

    @property
    def command_line(self) -> str:
        """What a person types at the shell prompt to start this CLI."""
        return shlex.join(self.argv)


@dataclass(frozen=True)
class McpServer:
    """A stdio MCP server for a CLI to start: `argv` with `env` added, and the variables of the
    CLI's own environment it must get too (`forward`: Codex passes only those it is told to),
    and which of them hold a secret (`secrets`: Gemini CLI drops those unless told to keep them)."""

    name: str
    argv: list[str]
    env: dict[str, str]
    forward: tuple[str, ...] = ()
    secrets: tuple[str, ...] = ()


def muxd_mcp_server(server: MuxdTestServer) -> McpServer:
    """`muxd mcp` of `server`'s daemon, as an MCP server a CLI starts. The socket directory is
    given outright: were it wrong, `muxd mcp` would start a daemon of its own."""
    return McpServer(MUXD_MCP_NAME, [sys.executable, "-m", "muxd", "-L", server.name, "mcp"],
                     {"MUXD_SOCKET_DIR": str(server.socket_dir)}, forward=MUXD_MCP_PANE_VARIABLES,
                     secrets=MUXD_MCP_SECRETS)


def claude_allow_rule(server: str) -> str:
    """Claude Code's permission rule for every tool of the MCP server named `server`."""
    return f"mcp__{server}"


def with_mcp_server(agent: AgentLaunch, server: McpServer) -> AgentLaunch:
    """`agent` (Claude Code, Codex or Gemini CLI) configured to start `server` and to call its tools
    without asking; every other tool asks as before.

    Claude Code: `--mcp-config FILE --strict-mcp-config` (no other MCP server), `--allowedTools
    mcp__<name>` (a rule for all the server's tools) and `--permission-mode default` unless a
    mode is given (its default, auto, may decide by itself); `ENABLE_TOOL_SEARCH=false` puts the
    tools with their schemas in every request instead of behind ToolSearch. It starts the
    server with its whole environment. Codex: `[mcp_servers.<name>]` in config.toml with
    `env_vars` (the forwarded variables), `default_tools_approval_mode = "approve"`
    (else it asks before a tool not marked read-only) and `required = true` (else its first
    turn does not wait for the server: a `muxd mcp` slow to start on a loaded machine made the
    first call `unsupported call: mcp__muxdlist_panes`); `daemon_auto_start` off, so that the
    server is started by this Codex with its environment, not by the background app-server
    every Codex of the same CODEX_HOME shares (started from another pane, with its token).
    Gemini CLI: `mcpServers.<name>` in settings.json with `trust: true` (no confirmation; it
    needs a trusted folder, as every stdio server does: folder trust is off here) and
    `security.environmentVariableRedaction.allowed` naming the server's secrets: Gemini starts
    the server with its own environment less every variable whose name says TOKEN, KEY, …
    (always, whatever `…Redaction.enabled` says), and expands `env` values from that too."""
    program = os.path.basename(agent.argv[0])
    if program == "claude":
        config = agent.home / f"mcp-{server.name}.json"
        config.write_text(json.dumps({"mcpServers": {server.name: {
            "type": "stdio", "command": server.argv[0], "args": server.argv[1:], "env": server.env}}}))
        mode = [] if "--permission-mode" in agent.argv else ["--permission-mode", "default"]
        argv = [*agent.argv, "--mcp-config", str(config), "--strict-mcp-config",
                "--allowedTools", claude_allow_rule(server.name), *mode]
        env = {**agent.env, "ENABLE_TOOL_SEARCH": "false",
               "MCP_TIMEOUT": f"{stretched(MCP_STARTUP_TIMEOUT_S) * 1000:.0f}"}
        return replace(agent, argv=argv, env=env)
    if program == "codex":
        config = Path(agent.env["CODEX_HOME"]) / "config.toml"
        env = ", ".join(f"{key} = {_toml(value)}" for key, value in server.env.items())
        with config.open("a") as fh:
            fh.write(f"""
[mcp_servers.{server.name}]
command = {_toml(server.argv[0])}
args = [{", ".join(map(_toml, server.argv[1:]))}]
env = {{ {env} }}
env_vars = [{", ".join(map(_toml, server.forward))}]
startup_timeout_sec = {stretched(MCP_STARTUP_TIMEOUT_S):.0f}
required = true
default_tools_approval_mode = "approve"

[features]
daemon_auto_start = false
""")
        return agent
    if program == "gemini":
        path = agent.home / ".gemini" / "settings.json"
        settings = json.loads(path.read_text())
        settings.setdefault("mcpServers", {})[server.name] = {
            "command": server.argv[0], "args": server.argv[1:], "env": server.env, "trust": True,
            "timeout": MCP_STARTUP_TIMEOUT_S * 1000}
        if server.secrets:
            redaction = settings["security"].setdefault("environmentVariableRedaction", {})
            redaction["allowed"] = [*redaction.get("allowed", []), *server.secrets]
        path.write_text(json.dumps(settings, indent=2))
        return agent
    raise ValueError(f"no MCP configuration known for {program}")


def _toml(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's)."""
    return json.dumps(text)


def _is_ci_variable(key: str) -> bool:
    return key in ("CI", "CONTINUOUS_INTEGRATION", "BUILD_NUMBER", "RUN_ID", "GITHUB_ACTIONS", "GITHUB_SHA") or \
        key.startswith("CI_")


def agents_dir() -> Path:
    default = Path(__file__).resolve().parents[3] / ".agents"
    return Path(os.environ.get(AGENTS_DIR_ENV) or default)


def find_cli(agent: str) -> tuple[Path | None, str]:
    """The directory holding `agent`'s executable, or None and why it is missing (the reason
    .ci/install-agents wrote down when it could not install it)."""
    directory = agents_dir()
    executable = directory / CLI_PATHS[agent]
    if os.access(executable, os.X_OK):
        return executable.parent, ""
    skip_note = directory / f"{agent}.skip"
    if skip_note.exists():
        return None, f"{agent} not installed: {skip_note.read_text().strip()}"
    return None, f"{agent} not installed at {executable}: run bash .ci/install-agents"


def _dirs(root: Path) -> tuple[Path, Path]:
    home, work = root / "home", root / "work"
    home.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    return home, work


def _path_with(bin_dir: Path) -> str:
    return f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '/usr/local/bin:/usr/bin:/bin')}"


def claude(root: Path, base_url: str, bin_dir: Path, *args: str) -> AgentLaunch:
    home, work = _dirs(root)
    # Pre-accepted: onboarding, the API key (by its last 20 characters) and the folder trust dialog.
    (home / ".claude.json").write_text(json.dumps({
        "hasCompletedOnboarding": True, "theme": "dark", "autoUpdates": False,
        "customApiKeyResponses": {"approved": [FAKE_API_KEY[-20:]], "rejected": []},
        "projects": {str(work): {"hasTrustDialogAccepted": True, "allowedTools": []}},
    }))
    env = {**BASE_ENV, "HOME": str(home), "PATH": _path_with(bin_dir), "ANTHROPIC_BASE_URL": base_url,
           "ANTHROPIC_API_KEY": FAKE_API_KEY, "DISABLE_AUTOUPDATER": "1",
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1",
           "DISABLE_ERROR_REPORTING": "1"}
    return AgentLaunch(["claude", *args], env, work, home)


def codex(root: Path, base_url: str, bin_dir: Path, *args: str) -> AgentLaunch:
    home, work = _dirs(root)
    codex_home = home / ".codex"
    codex_home.mkdir(exist_ok=True)
    (codex_home / "config.toml").write_text(f"""\
model = "{CODEX_MODEL}"
model_provider = "fake"
approval_policy = "on-request"
sandbox_mode = "read-only"
check_for_update_on_startup = false

[model_providers.fake]
name = "fake"
base_url = "{base_url}/v1"
env_key = "FAKE_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
stream_idle_timeout_ms = 60000

[analytics]
enabled = false

[projects."{work}"]
trust_level = "trusted"
""")
    env = {**BASE_ENV, "HOME": str(home), "PATH": _path_with(bin_dir), "CODEX_HOME": str(codex_home),
           "FAKE_API_KEY": FAKE_API_KEY}
    return AgentLaunch(["codex", *args], env, work, home)


def gemini(root: Path, base_url: str, bin_dir: Path, *args: str) -> AgentLaunch:
    home, work = _dirs(root)
    settings = home / ".gemini"
    settings.mkdir(exist_ok=True)
    (settings / "settings.json").write_text(json.dumps({
        "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True, "enableAutoUpdate": False,
                    "enableAutoUpdateNotification": False},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "ui": {"hideTips": False},
    }, indent=2))
    env = {**BASE_ENV, "HOME": str(home), "PATH": _path_with(bin_dir), "GEMINI_API_KEY": FAKE_API_KEY,
           "GOOGLE_GEMINI_BASE_URL": base_url, "GEMINI_CLI_NO_RELAUNCH": "true"}
    return AgentLaunch(["gemini", *args], env, work, home)


def aider(root: Path, base_url: str, bin_dir: Path, *files: str) -> AgentLaunch:
    home, work = _dirs(root)
    for name in files:
        (work / name).touch()
    env = {**BASE_ENV, "HOME": str(home), "PATH": _path_with(bin_dir), "OPENAI_API_BASE": f"{base_url}/v1",
           "OPENAI_API_KEY": FAKE_API_KEY, "LITELLM_LOCAL_MODEL_COST_MAP": "True",
           "AIDER_CHECK_UPDATE": "false", "AIDER_ANALYTICS_DISABLE": "true"}
    argv = ["aider", "--model", AIDER_MODEL, "--no-git", "--no-show-model-warnings",
            "--no-show-release-notes", *files]
    return AgentLaunch(argv, env, work, home)


def opencode(root: Path, base_url: str, bin_dir: Path, *args: str) -> AgentLaunch:
    home, work = _dirs(root)
    # No models.dev fetch, no update check, no LSP download: offline.
    env = {**BASE_ENV, "HOME": str(home), "PATH": _path_with(bin_dir),
           "OPENCODE_CONFIG_CONTENT": json.dumps(_opencode_config(base_url)),
           "OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_MODELS_FETCH": "1",
           "OPENCODE_DISABLE_LSP_DOWNLOAD": "1", "OPENCODE_DISABLE_SHARE": "1"}
    return AgentLaunch(["opencode", *args], env, work, home)


def qwen(root: Path, base_url: str, bin_dir: Path, *args: str) -> AgentLaunch:
    home, work = _dirs(root)
    settings = home / ".qwen"
    settings.mkdir(exist_ok=True)
    # OpenAI-compatible auth at the fake; no auto-update, update nag, usage statistics or
    # folder-trust dialog: nothing on first run waits for a key.
    (settings / "settings.json").write_text(json.dumps({
        "security": {"auth": {"selectedType": "openai"}, "folderTrust": {"enabled": False}},
        "general": {"enableAutoUpdate": False, "disableAutoUpdate": True, "disableUpdateNag": True},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "model": {"name": MODEL_ID},
        "memory": {"enableManagedAutoMemory": False},  # its memory agent's requests would take turns
    }, indent=2))
    env = {**BASE_ENV, "HOME": str(home), "PATH": _path_with(bin_dir), "OPENAI_API_KEY": FAKE_API_KEY,
           "OPENAI_BASE_URL": f"{base_url}/v1", "OPENAI_MODEL": MODEL_ID, "QWEN_CODE_NO_RELAUNCH": "true"}
    return AgentLaunch(["qwen", *args], env, work, home)


PI_PROVIDER = "fake"


def pi(root: Path, base_url: str, bin_dir: Path, *args: str) -> AgentLaunch:
    home, work = _dirs(root)
    agent_dir = home / ".pi" / "agent"
    agent_dir.mkdir(parents=True, exist_ok=True)
    # An OpenAI-compatible provider at the fake, chosen by default; PI_OFFLINE stops its start-up
    # network calls (update and package checks, the install ping).
    (agent_dir / "models.json").write_text(json.dumps({"providers": {PI_PROVIDER: {
        "baseUrl": f"{base_url}/v1", "api": "openai-completions", "apiKey": FAKE_API_KEY,
        "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
        "models": [{"id": MODEL_ID, "name": "Fake Model", "contextWindow": 128000, "maxTokens": 8000,
                    "cost": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0}}]}}}, indent=2))
    (agent_dir / "settings.json").write_text(json.dumps({
        "defaultProvider": PI_PROVIDER, "defaultModel": MODEL_ID, "enableInstallTelemetry": False,
        "collapseChangelog": True}, indent=2))
    env = {**BASE_ENV, "HOME": str(home), "PATH": _path_with(bin_dir), "PI_OFFLINE": "1",
           "PI_SKIP_VERSION_CHECK": "1", "PI_TELEMETRY": "0"}
    return AgentLaunch(["pi", *args], env, work, home)


def _opencode_config(base_url: str) -> dict[str, object]:
    """An OpenAI-compatible provider at the fake for opencode and its fork Kilo; titles go to
    the side model, so that they take no scripted turn."""
    models = {MODEL_ID: {"name": "Fake Model"}, SIDE_MODEL: {"name": "Fake Small"}}
    return {"autoupdate": False, "share": "disabled",
            "model": f"{OPENCODE_PROVIDER}/{MODEL_ID}", "small_model": f"{OPENCODE_PROVIDER}/{SIDE_MODEL}",
            "provider": {OPENCODE_PROVIDER: {"npm": "@ai-sdk/openai-compatible", "name": "Fake", "models": models,
                                             "options": {"baseURL": f"{base_url}/v1", "apiKey": FAKE_API_KEY}}}}


def cline(root: Path, base_url: str, bin_dir: Path, *args: str) -> AgentLaunch:
    home, work = _dirs(root)
    # `cline auth` writes the provider (OpenAI-compatible, at the fake) as a person would; with
    # one configured, `cline -i` skips its welcome and sign-in screens. The ClinePass notice
    # is turned off by its own variable. Tools ask first (`--auto-approve false`).
    subprocess.run([str(bin_dir / "cline"), "auth", "-p", "openai", "-k", FAKE_API_KEY, "-m", MODEL_ID,
                    "-b", f"{base_url}/v1"], env={"HOME": str(home), "PATH": _path_with(bin_dir)},
                   check=True, capture_output=True, timeout=stretched(CLI_SETUP_TIMEOUT_S))
    env = {**BASE_ENV, "HOME": str(home), "PATH": _path_with(bin_dir), "CLINE_DISABLE_CLINE_PASS_NOTICE": "1"}
    return AgentLaunch(["cline", "-i", "--auto-approve", "false", *args], env, work, home)


def kilo(root: Path, base_url: str, bin_dir: Path, *args: str) -> AgentLaunch:
    home, work = _dirs(root)
    # opencode's configuration under Kilo's names; no update check, models fetch, LSP
    # download, telemetry or session upload: offline.
    env = {**BASE_ENV, "HOME": str(home), "PATH": _path_with(bin_dir),
           "KILO_CONFIG_CONTENT": json.dumps(_opencode_config(base_url)), "KILO_DISABLE_AUTOUPDATE": "1",
           "KILO_DISABLE_MODELS_FETCH": "1", "KILO_DISABLE_LSP_DOWNLOAD": "1", "KILO_DISABLE_SHARE": "1",
           "KILO_TELEMETRY_LEVEL": "off", "KILO_DISABLE_SESSION_INGEST": "1"}
    return AgentLaunch(["kilo", *args], env, work, home)


# How each CLI is started against a fake model server (`LAUNCHES[cli](root, base_url, bin_dir, …)`).
LAUNCHES = {"claude": claude, "codex": codex, "gemini": gemini, "aider": aider, "opencode": opencode,
            "qwen": qwen, "pi": pi, "cline": cline, "kilo": kilo}
