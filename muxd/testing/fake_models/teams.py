"""Claude Code's agent teams, offline: a lead that spawns a teammate into a tmux pane.

What Claude Code 2.1.330 does (read in its bundled source, then recorded through a logging
`tmux`: tests/shim_data/claude_tmux_commands.txt):
- Team mode is on with `CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS=1` (or `--agent-teams`). A
  session has one implicit team: the model calls no TeamCreate.
- `teammateMode` in ~/.claude/settings.json (or `--teammate-mode`) picks where teammates run.
  "tmux" splits a pane with the `tmux` command when TMUX is set; "auto", the default, does
  too, but where no pane can be made it quietly runs the teammate in-process instead, so the
  tests set "tmux": there a failed split is an error on the lead's screen.
- The lead model spawns a teammate with its Agent tool given a `name`:
  `Agent({"description", "prompt", "name"})`.
- Claude Code then runs, each with `-S` and $TMUX's socket: `display-message -p
  '#{window_id}'`, `list-panes -F '#{pane_id}'`, `split-window -d -t %LEAD -h -l 70% -P -F
  '#{pane_id}' -- cat`, `set-option -p`/`select-pane -T` for the border colour and title,
  `set-option -p remain-on-exit failed`, then `respawn-pane -k -t %NEW -- 'cd DIR && env
  K=V… claude --agent-id NAME@TEAM --agent-name NAME --team-name TEAM …'`; `kill-pane` when
  the lead exits.
- The teammate is a second claude talking to the same ANTHROPIC_BASE_URL (passed on in that
  command). It reads its brief from its inbox under the lead's HOME (~/.claude/teams/…), and
  gets HOME and ANTHROPIC_API_KEY from its pane's environment, not from the lead: from the tmux
  server's global environment, or the muxd daemon's. `server_env` gives the server those.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from muxd.testing.fake_models.launch import AgentLaunch
from muxd.testing.fake_models.script import Call, Say, Turn

TEAMS_ENV = {"CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS": "1"}
TEAMMATE_MODE = "tmux"
# What a teammate's pane needs from the server's environment (the lead does not pass them on).
SERVER_VARIABLES = ("HOME", "ANTHROPIC_API_KEY", "PATH")
SPAWN_DELAY_S = 0.02


def with_agent_teams(agent: AgentLaunch) -> AgentLaunch:
    """Claude Code `agent` with its agent teams on and its teammates in tmux panes."""
    settings_path = agent.home / ".claude" / "settings.json"
    settings_path.parent.mkdir(parents=True, exist_ok=True)
    settings: dict[str, Any] = json.loads(settings_path.read_text()) if settings_path.exists() else {}
    settings_path.write_text(json.dumps({**settings, "teammateMode": TEAMMATE_MODE}))
    return replace(agent, env={**agent.env, **TEAMS_ENV})


def server_env(agent: AgentLaunch) -> dict[str, str]:
    """The environment the tmux or muxd server must have for `agent`'s teammates to start as it
    did: what a user's server has, started from the user's shell."""
    return {key: agent.env[key] for key in SERVER_VARIABLES}


def spawn_turns(name: str, brief: str, *, said: str = "The teammate is on it.") -> list[Turn]:
    """The lead's turns: spawn teammate `name` with `brief`, then say `said`. The brief is the
    teammate's first message: give its words to `fake.converse` to script the teammate."""
    spawn = Call("Agent", {"description": f"Brief {name}", "prompt": brief, "name": name},
                 delay_s=SPAWN_DELAY_S)
    return [[Say(f"I will ask {name}.", SPAWN_DELAY_S), spawn], [Say(said, SPAWN_DELAY_S)]]


# ------------------------------------------------------------ what Claude Code asks of tmux

@dataclass(frozen=True)
class TmuxCall:
    """One tmux command line a program ran, as the recording `tmux` saw it."""

    argv: list[str]       # after `tmux`
    exit: int
    stdout: str
    stderr: str
    pane: str | None      # TMUX_PANE of the caller

    @property
    def command(self) -> str:
        """The tmux command's name: the first word after the global options (-S PATH, -L NAME)."""
        words = list(self.argv)
        while words and words[0] in ("-S", "-L"):
            words = words[2:]
        return words[0] if words else ""


_RECORDER = '''#!{python}
"""tmux, with each command line, its exit status and output appended to {log} (JSON lines)."""
import json, os, subprocess, sys
done = subprocess.run([{tmux!r}, *sys.argv[1:]], capture_output=True)
with open({log!r}, "a") as log:
    log.write(json.dumps({{"argv": sys.argv[1:], "exit": done.returncode, "pane": os.environ.get("TMUX_PANE"),
                          "stdout": done.stdout.decode(errors="replace"),
                          "stderr": done.stderr.decode(errors="replace")}}) + "\\n")
sys.stdout.buffer.write(done.stdout)
sys.stderr.buffer.write(done.stderr)
sys.exit(done.returncode)
'''


class TmuxRecorder:
    """A `tmux` for the front of a PATH that runs the real one and records every call."""

    def __init__(self, directory: Path) -> None:
        real = shutil.which("tmux")
        if real is None:
            raise FileNotFoundError("tmux is not installed")
        directory.mkdir(parents=True, exist_ok=True)
        self.bin_dir = directory
        self.log = directory / "calls.jsonl"
        script = directory / "tmux"
        script.write_text(_RECORDER.format(python=sys.executable, tmux=real, log=str(self.log)))
        script.chmod(0o755)

    def path(self, rest: str) -> str:
        """`rest` (a PATH) with this recorder first."""
        return f"{self.bin_dir}{os.pathsep}{rest}"

    def calls(self) -> list[TmuxCall]:
        if not self.log.exists():
            return []
        return [TmuxCall(**json.loads(line)) for line in self.log.read_text().splitlines() if line]
