"""`python -m muxd.testing.fake_models AGENT`: a real agent CLI in a muxd session, against a
fake model server on this machine — to try muxd with no API key and no network.

    bash .ci/install-agents                                  # once: the pinned CLIs into .agents/
    python -m muxd.testing.fake_models claude -s demo        # claude, codex, gemini or aider

The CLI gets a private HOME (under a temporary directory, or `--dir`) seeded as the tests seed
it, so no first-run dialog appears and nothing of the user's own configuration is read or
changed. Every prompt is answered by a short think and a fixed reply. The fake model lives in
this process: Ctrl-C (or SIGTERM) stops it and kills the session, whose CLI could do nothing
without it.
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from muxd.testing.fake_models import launch
from muxd.testing.fake_models.anthropic import AnthropicFake
from muxd.testing.fake_models.gemini import GeminiFake
from muxd.testing.fake_models.openai_chat import OpenAIChatFake
from muxd.testing.fake_models.openai_responses import OpenAIResponsesFake
from muxd.testing.fake_models.script import Say, Script, Step, Think

# Each CLI and the fake model API it speaks (launch.LAUNCHES says how it is started against it).
FAKES = {"claude": AnthropicFake, "codex": OpenAIResponsesFake, "gemini": GeminiFake, "aider": OpenAIChatFake}
DEMO_REPLY = "This answer comes from muxd's fake model: no API key, nothing left this machine."


class DemoScript(Script):
    """Every main request gets the same turn, however many come."""

    def take(self) -> tuple[int | None, list[Step]]:
        return None, [Think(6), Say(DEMO_REPLY)]


def _muxd(server: str | None, *args: str) -> subprocess.CompletedProcess[str]:
    named = ["-L", server] if server else []
    return subprocess.run([sys.executable, "-m", "muxd", *named, *args], capture_output=True, text=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m muxd.testing.fake_models",
                                     description="run a real agent CLI in a muxd session against a fake model server")
    parser.add_argument("agent", choices=sorted(FAKES))
    parser.add_argument("-s", "--session", help="the session's name (default: the agent's)")
    parser.add_argument("-L", dest="server", metavar="NAME", help="the muxd server (default: default)")
    parser.add_argument("--dir", type=Path, help="where the CLI's HOME and work directory go (default: a new "
                        "temporary directory)")
    args = parser.parse_args(argv)
    session = args.session or args.agent

    bin_dir, why = launch.find_cli(args.agent)
    if bin_dir is None:
        hint = "" if "install-agents" in why else " (bash .ci/install-agents installs the pinned CLIs)"
        print(f"muxd: {why}{hint}", file=sys.stderr)
        return 1
    fake = FAKES[args.agent](DemoScript())
    fake.start()
    own_root = args.dir is None
    root = args.dir or Path(tempfile.mkdtemp(prefix=f"muxd-fake-{args.agent}-"))
    agent = launch.LAUNCHES[args.agent](root, fake.url, bin_dir)
    started = _muxd(args.server, *agent.new_session_args(session))
    if started.returncode != 0:
        fake.stop()
        print(started.stderr.strip() or f"muxd: new-session failed ({started.returncode})", file=sys.stderr)
        return started.returncode

    named = f"-L {shlex.quote(args.server)} " if args.server else ""
    print(f"{args.agent} runs in session {session!r} against a fake model at {fake.url} (home {agent.home}).\n"
          f"  muxd {named}attach -t {shlex.quote(session)}\n"
          f"  muxd {named}submit -t {shlex.quote(session)} 'hello'\n"
          "Ctrl-C here stops the fake model and kills the session.", flush=True)
    stop = threading.Event()
    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, lambda *_: stop.set())
    stop.wait()
    _muxd(args.server, "kill-session", "-t", session)
    fake.stop()
    if own_root:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
