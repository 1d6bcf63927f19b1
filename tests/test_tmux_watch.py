"""`muxd tmux watch` / `unwatch` end to end: a real private tmux server running real programs and
the fake agents, watched by a real muxd daemon (one for the module; each test its own tmux)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from muxd.testing.mcp_stdio import call_ok, mcp_session
from muxd.testing.outer_terminal import muxd_command, outer_terminals
from muxd.testing.patience import patient_wait_for, stretched
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until

SHELL = "bash --norc --noprofile"
FAKE_CLAUDE = f"{sys.executable} -m muxd.testing.fake_agent claude"


class Tmux:
    """A private tmux server (`tmux -L muxd-watch-…`), started with one detached session."""

    def __init__(self, env: dict[str, str], command: str = SHELL, session: str = "main", name: str = "") -> None:
        self.name = name or f"muxd-watch-{uuid.uuid4().hex[:8]}"
        self.env = {**env, "PS1": "$ ", "TERM": "xterm-256color"}
        self.env.pop("TMUX", None)
        self("-f", "/dev/null", "new-session", "-d", "-s", session, "-x", "80", "-y", "24", command)

    def __call__(self, *args: str, check: bool = True) -> str:
        result = subprocess.run(["tmux", "-L", self.name, *args], env=self.env, capture_output=True, text=True,
                                timeout=stretched(10), check=False)
        if check and result.returncode != 0:
            raise AssertionError(f"tmux {' '.join(args)} failed: {result.stderr}")
        return result.stdout

    def screen(self, pane: str) -> str:
        return self("capture-pane", "-p", "-t", pane)

    def kill(self) -> None:
        socket = self("display-message", "-p", "#{socket_path}", check=False).strip()
        self("kill-server", check=False)
        if socket:
            Path(socket).unlink(missing_ok=True)  # a killed server may leave its socket file


@pytest.fixture
def muxd(muxd_module_server: MuxdTestServer) -> MuxdTestServer:
    return muxd_module_server


@pytest.fixture
def tmux(muxd: MuxdTestServer) -> Iterator[Tmux]:
    server = Tmux(muxd.env)
    try:
        yield server
    finally:
        server.kill()
        muxd.cli("tmux", "unwatch", "-L", server.name)  # exited panes of a dead server go too


def adopted(muxd: MuxdTestServer, tmux: Tmux) -> dict[str, dict]:
    """The muxd panes adopted from `tmux`, by tmux pane id."""
    panes = json.loads(muxd.cli("ls", "--json", check=True).stdout)
    prefix = f"tmux -L {tmux.name} "
    return {p["source"][len(prefix):]: p for p in panes if p["source"].startswith(prefix)}


def wait_adopted(muxd: MuxdTestServer, tmux: Tmux, pane: str, status: str = "running") -> dict:
    found: dict[str, dict] = {}

    def there() -> bool:
        found.update(adopted(muxd, tmux))
        return pane in found and found[pane]["status"] == status

    wait_until(there, timeout=10, message=f"tmux pane {pane} adopted, {status}")
    return found[pane]


def test_watch_shows_output_takes_input_and_lets_go(muxd: MuxdTestServer, tmux: Tmux) -> None:
    tmux("send-keys", "-t", "main", "echo before-$((6*7))", "Enter")
    wait_until(lambda: "before-42" in tmux.screen("main"), message="tmux shell ran")
    out = muxd.cli("tmux", "watch", "-L", tmux.name, check=True).stdout
    assert f"[tmux -L {tmux.name} %0]" in out
    pane = adopted(muxd, tmux)["%0"]
    assert (pane["session"], pane["width"], pane["height"], pane["command"]) == \
        (f"{tmux.name}-main", 80, 24, SHELL.split())
    # The screen tmux showed is seeded (the cursor where tmux has it), then output follows live.
    muxd.wait_for_text(pane["id"], "before-42")
    tmux("send-keys", "-t", "main", "echo after-$((6*7))", "Enter")
    muxd.wait_for_text(pane["id"], "after-42")
    assert muxd.capture(pane["id"]).splitlines()[:4] == tmux.screen("main").splitlines()[:4]
    # Input goes back through tmux, byte for byte.
    muxd.cli("send-keys", "-t", pane["id"], "echo typed-$((2+3)) é", "Enter", check=True)
    wait_until(lambda: "typed-5 é" in tmux.screen("main"), message="muxd's keys reached tmux")
    muxd.wait_for_text(pane["id"], "typed-5 é")
    wait_until(lambda: adopted(muxd, tmux)["%0"]["agent"]["agent_type"] == "shell", message="detected")
    # muxd never sizes a tmux pane.
    refused = muxd.cli("resize-pane", "-t", pane["id"], "-x", "40")
    assert refused.returncode == 1 and "follows tmux" in refused.stderr and "Traceback" not in refused.stderr
    refused = muxd.cli("respawn-pane", "-k", "-t", pane["id"], "--", "true")  # nor starts its program
    assert (refused.returncode, refused.stderr) == (1, f"muxd: pane {pane['id']} is {pane['source']}: its program "
                                                       "is tmux's\n")
    # unwatch lets it go; the tmux pane runs on, untouched.
    muxd.cli("tmux", "unwatch", "-L", tmux.name, check=True)
    assert adopted(muxd, tmux) == {}
    tmux("send-keys", "-t", "main", "echo still-$((1+1))", "Enter")
    wait_until(lambda: "still-2" in tmux.screen("main"), message="tmux pane still running")
    assert tmux("list-clients", "-F", "#{client_control_mode}").strip() == ""  # the control client left


def test_new_panes_are_adopted_and_closed_ones_exit(muxd: MuxdTestServer, tmux: Tmux) -> None:
    muxd.cli("tmux", "watch", "-L", tmux.name, "-t", "main", check=True)
    tmux("split-window", "-t", "main", "-d", "cat")
    split = wait_adopted(muxd, tmux, "%1")
    assert split["command"] == ["cat"] and split["height"] < 24
    tmux("new-window", "-t", "main", "-d", "-n", "second", SHELL)
    window = wait_adopted(muxd, tmux, "%2")
    assert window["window_name"] == "second" and window["window"] == 1
    # Typed into cat through muxd: tmux's pane echoes it, muxd's screen shows it.
    muxd.cli("send-keys", "-t", split["id"], "-l", "meow", check=True)
    muxd.cli("send-keys", "-t", split["id"], "Enter", check=True)
    muxd.wait_for_text(split["id"], "meow\nmeow")
    # Zoomed in tmux, a pane has the whole window.
    tmux("resize-pane", "-Z", "-t", "%0")
    wait_until(lambda: adopted(muxd, tmux)["%0"]["height"] == 24, message="%0 zoomed")
    tmux("resize-pane", "-Z", "-t", "%0")
    wait_until(lambda: adopted(muxd, tmux)["%0"]["height"] < 24, message="%0 unzoomed")
    # Killed in tmux: an exited pane in muxd, its last screen kept; the first pane gets the room.
    tmux("kill-pane", "-t", "%1")
    gone = wait_adopted(muxd, tmux, "%1", "exited")
    assert "meow" in muxd.capture(gone["id"])
    wait_until(lambda: adopted(muxd, tmux)["%0"]["height"] == 24, message="%0 grew back")
    # The whole server exits: every adopted pane ends as exited.
    tmux.kill()
    ended = wait_adopted(muxd, tmux, "%0", "exited")
    wait_adopted(muxd, tmux, "%2", "exited")
    # Its exited panes are let go by their tmux ids, the server being gone.
    muxd.cli("tmux", "unwatch", "-L", tmux.name, "-t", "%2", check=True)
    assert sorted(adopted(muxd, tmux)) == ["%0", "%1"]
    # Started again on that socket, its panes are numbered from %0 again: watched anew, the
    # exited ones still listed beside them.
    again = Tmux(muxd.env, name=tmux.name)
    muxd.cli("tmux", "watch", "-L", again.name, check=True)
    assert adopted(muxd, again)["%0"]["status"] == "running"
    again("split-window", "-t", "main", "-d", "cat")
    wait_adopted(muxd, again, "%1")
    assert ended["id"] in muxd.cli("ls", check=True).stdout


def test_a_program_on_the_alternate_screen_returns_to_the_main_one(muxd: MuxdTestServer, tmux: Tmux) -> None:
    tmux("send-keys", "-t", "main", "echo main-$((5*5)); less /etc/passwd", "Enter")
    wait_until(lambda: "root:" in tmux.screen("main"), message="less drawn")
    muxd.cli("tmux", "watch", "-L", tmux.name, check=True)
    pane = adopted(muxd, tmux)["%0"]["id"]
    assert "root:" in muxd.capture(pane) and "main-25" not in muxd.capture(pane)
    muxd.cli("send-keys", "-t", pane, "q", check=True)
    # less leaves: the main screen it covered is back, in muxd as in tmux.
    muxd.wait_for_text(pane, "main-25")
    wait_until(lambda: muxd.capture(pane).rstrip() == tmux.screen("main").rstrip(), message="same screens")


def test_a_flood_in_tmux_arrives_whole_and_in_order(muxd: MuxdTestServer, tmux: Tmux) -> None:
    muxd.cli("tmux", "watch", "-L", tmux.name, check=True)
    pane = adopted(muxd, tmux)["%0"]["id"]
    tmux("send-keys", "-t", "main", "seq 1 400000; echo flood-$((1+1))-done", "Enter")
    muxd.wait_for_text(pane, "flood-2-done", timeout=30)
    wait_until(lambda: "flood-2-done" in tmux.screen("main"), message="tmux drew it too")
    assert muxd.capture(pane).rstrip("\n").splitlines()[-6:] == tmux.screen("main").rstrip("\n").splitlines()[-6:]
    assert "399999\n400000\n" in muxd.capture(pane)


def test_attached_to_adopted_panes_keys_go_through_tmux(muxd: MuxdTestServer, tmux: Tmux) -> None:
    muxd.cli("tmux", "watch", "-L", tmux.name, check=True)
    with outer_terminals(muxd) as terminal:
        outer = terminal(columns=100, lines=30, command=muxd_command(muxd.name, "attach", "-t", f"{tmux.name}-main"))
        # tmux's name for the window as it is now: muxd follows tmux's renames, one made
        # before its control client started included (seen once under load: muxd kept `tmux`,
        # the name tmux's automatic rename gave the window before the shell's exec).
        outer.wait_for(lambda screen: f"] 0:{tmux('display-message', '-p', '-t', 'main', '#{window_name}').strip()}*"
                       in screen)
        outer.type("echo attached-$((3*3))", enter=True)
        wait_until(lambda: "attached-9" in tmux.screen("main"), message="typed through muxd attach into tmux")
        outer.wait_for(lambda screen: any(line.startswith("attached-9 ") for line in screen.splitlines()))
        # The outer terminal is bigger than the tmux pane: the pane keeps tmux's size.
        assert adopted(muxd, tmux)["%0"]["width"] == 80


def test_watching_one_pane_leaves_its_neighbours(muxd: MuxdTestServer, tmux: Tmux) -> None:
    tmux("split-window", "-t", "main", "-d", "cat")
    muxd.cli("tmux", "watch", "-L", tmux.name, "-t", "%1", check=True)
    assert list(adopted(muxd, tmux)) == ["%1"]
    tmux("split-window", "-t", "%0", "-d", "cat")
    # Then the window: the rest of it, and what appears in it later.
    muxd.cli("tmux", "watch", "-L", tmux.name, "-t", "main:0", check=True)
    assert sorted(adopted(muxd, tmux)) == ["%0", "%1", "%2"]
    # unwatch of one pane inside the watched window lets that one go, and it stays gone.
    muxd.cli("tmux", "unwatch", "-L", tmux.name, "-t", "%2", check=True)
    tmux("split-window", "-t", "%0", "-d", "cat")
    wait_adopted(muxd, tmux, "%3")
    assert sorted(adopted(muxd, tmux)) == ["%0", "%1", "%3"]
    muxd.cli("tmux", "watch", "-L", tmux.name, "-t", "%2", check=True)
    assert sorted(adopted(muxd, tmux)) == ["%0", "%1", "%2", "%3"]


def test_names_with_control_characters_are_adopted_escaped(muxd: MuxdTestServer, tmux: Tmux, tmp_path) -> None:
    """tmux keeps `new-window -n` names as given (controls, newlines, C1, bidirectional overrides);
    it escapes controls in session names and renamed windows itself (`\\001`), not the rest.
    Every pane is adopted, its names shown with muxd's escapes where tmux left the character."""
    bent = tmp_path / "a\nb"  # a directory a pane runs in: computed anew at each look, not framed
    bent.mkdir()
    tmux("new-window", "-d", "-t", "main", "-n", "bad\x01name\ttab", "cat")
    tmux("new-window", "-d", "-t", "main", "-n", "nl\nx\x1fz", "-c", str(bent), "cat")
    tmux("new-window", "-d", "-t", "main", "-n", "c1\x9b\u202e\x1b[31m", "cat")
    tmux("new-session", "-d", "-s", "s\u202eide\x02", "-n", "x\x01", "cat")
    muxd.cli("tmux", "watch", "-L", tmux.name, check=True)
    main, side = f"{tmux.name}-main", f"{tmux.name}-s\\u202eide\\002"

    def as_expected() -> bool:
        # The shell's window: tmux's name for it as it is now (its automatic rename may give
        # `tmux` before the shell's exec, then `bash`; muxd follows tmux's renames).
        shell = tmux("display-message", "-p", "-t", "main:0", "#{window_name}").strip()
        names = {p["window_name"]: p["session"] for p in adopted(muxd, tmux).values()}
        return names == {shell: main, "bad\\x01name\\x09tab": main, "nl\\x0ax\\x1fz": main,
                         "c1\\x9b\\u202e\\x1b[31m": main, "x\\x01": side}

    wait_until(as_expected, message="every window adopted with its name escaped")
    # Renamed later (a %window-renamed notification), and a window made later (read again over
    # the control client once it hears renames).
    tmux("rename-window", "-t", "main:1", "re\x01\u202e")
    tmux("new-window", "-d", "-t", "main", "-n", "later\x01\n", "cat")
    wait_until(lambda: {p["window_name"] for p in adopted(muxd, tmux).values()} >=
               {"re\\001\\u202e", "later\\x01\\x0a"}, message="the renamed and the new window")
    assert len(adopted(muxd, tmux)) == 6 and "bad\\x01name\\x09tab" not in muxd.cli("ls", check=True).stdout


def test_an_agent_in_tmux_is_detected(muxd: MuxdTestServer) -> None:
    tmux = Tmux(muxd.env, command=FAKE_CLAUDE)
    try:
        wait_until(lambda: "for shortcuts" in tmux.screen("main"), timeout=20, message="fake claude drawn")
        muxd.cli("tmux", "watch", "-L", tmux.name, check=True)
        wait_until(lambda: adopted(muxd, tmux)["%0"]["agent"]["agent_type"] == "claude", timeout=15,
                   message="claude detected in the adopted pane")
        pane = adopted(muxd, tmux)["%0"]
        summary = json.loads(muxd.cli("summary", "-t", pane["id"], "--json", check=True).stdout)
        assert summary["agent_type"] == "claude" and summary["activity"]["state"] == "Idle"
        # A prompt given through muxd reaches the agent through tmux and is recorded as an execution.
        done = json.loads(muxd.cli("submit", "-t", pane["id"], "add a flag", "--wait", "--json", check=True).stdout)
        assert done["status"] == "success" and done["pane_id"] == pane["id"]
        assert "add a flag" in tmux.screen("main")
        history = json.loads(muxd.cli("history", "--json", check=True).stdout)["executions"]
        assert any(e["id"] == done["id"] and e["message"] == "add a flag" for e in history)
        asyncio.run(patient_wait_for(_over_mcp(muxd, pane["id"], f"tmux -L {tmux.name} %0"), timeout=30))
    finally:
        tmux.kill()
        muxd.cli("tmux", "unwatch", "-L", tmux.name)


async def _over_mcp(muxd: MuxdTestServer, pane: str, source: str) -> None:
    async with mcp_session(muxd) as session:
        listed = (await call_ok(session, "list_panes"))["panes"]
        assert {"id": pane, "source": source, "agent_type": "claude"}.items() <= \
            next(p for p in listed if p["id"] == pane).items()
        summary = await call_ok(session, "agent_summary", pane_id=pane)
        assert summary["agent_type"] == "claude" and summary["activity"]["state"] == "Idle"


def test_a_server_named_by_its_socket_path(muxd: MuxdTestServer, tmp_path) -> None:
    socket = str(tmp_path / "work.sock")
    env = {k: v for k, v in muxd.env.items() if k != "TMUX"}
    subprocess.run(["tmux", "-S", socket, "-f", "/dev/null", "new-session", "-d", "-s", "main", SHELL], env=env,
                   check=True, timeout=stretched(10))
    try:
        panes = json.loads(muxd.cli("tmux", "watch", "-S", socket, "--json", check=True).stdout)
        assert [(p["source"], p["session"]) for p in panes] == [(f"tmux -S {socket} %0", "work-sock-main")]
        muxd.cli("tmux", "unwatch", "-S", socket, check=True)
        assert f"tmux -S {socket}" not in muxd.cli("ls", check=True).stdout
    finally:
        subprocess.run(["tmux", "-S", socket, "kill-server"], env=env, check=False, timeout=stretched(10))


def test_bad_requests_are_one_line(muxd: MuxdTestServer, tmux: Tmux) -> None:
    for args, says in [(["watch", "-L", "muxd-watch-none"], "no tmux -L muxd-watch-none is running"),
                       (["watch", "-L", tmux.name, "-t", "nosuch"], "has no session 'nosuch'"),
                       (["unwatch", "-L", tmux.name], "not watching tmux -L"),
                       (["watch", "-L", "a", "-S", "/b"], "not allowed with")]:
        result = muxd.cli("tmux", *args)
        assert result.returncode != 0 and says in result.stderr, (args, result.stderr)
        assert "Traceback" not in result.stderr
    # `muxd tmux unwatch` as the first words (the launcher's way) errs in one line too.
    result = subprocess.run([sys.executable, "-m", "muxd", "tmux", "unwatch", "-L", tmux.name], capture_output=True,
                            text=True, env={**muxd.env, "MUXD_SOCKET_DIR": str(muxd.socket_dir / "none")}, timeout=stretched(30))
    assert (result.returncode, result.stderr) == (1, f"muxd: no server running on {muxd.socket_dir}/none/default.sock\n")
    assert muxd.cli("ls", check=True).returncode == 0  # the daemon serves on


def test_adopting_is_a_control_tier_action(muxd: MuxdTestServer, tmux: Tmux) -> None:
    def as_token(tier: str, *extra: str) -> subprocess.CompletedProcess[str]:
        token = muxd.cli("token", "create", "--tier", tier, "--name", f"w{uuid.uuid4().hex[:6]}", *extra,
                         check=True).stdout.strip()
        return muxd.cli("--token", token, "tmux", "watch", "-L", tmux.name)

    basic = as_token("execute_basic")
    assert basic.returncode == 1 and "needs tier execute_advanced" in basic.stderr
    pane = muxd.cli("new-session", "-d", "-P", "--", "cat", check=True).stdout.strip()
    scoped = as_token("admin", "--pane", pane)
    assert scoped.returncode == 1 and "not available to pane-scoped tokens" in scoped.stderr
    assert adopted(muxd, tmux) == {}
    assert as_token("execute_advanced").returncode == 0
    assert list(adopted(muxd, tmux)) == ["%0"]
    muxd.cli("kill-pane", "-t", pane, check=True)


def test_muxd_going_leaves_tmux_running() -> None:
    server = MuxdTestServer().start()
    tmux = Tmux(server.env)
    try:
        server.cli("tmux", "watch", "-L", tmux.name, check=True)
        assert tmux("list-clients", "-F", "#{client_control_mode}").strip() == "1"
        server.cli("kill-server", check=True)
        wait_until(lambda: tmux("list-clients", "-F", "#{client_control_mode}").strip() == "",
                   message="muxd's control client gone")
        tmux("send-keys", "-t", "main", "echo alive-$((4*4))", "Enter")
        wait_until(lambda: "alive-16" in tmux.screen("main"), message="the tmux pane runs on")
    finally:
        tmux.kill()
        server.stop()

