"""Hooks on events through a real daemon: set-hook / show-hooks as tmux 3.3a's (real tmux as the
oracle of show-hooks' lines), hooks run on agent events (a fake agent asking for a yes) and on
tmux's lifecycle events, from the CLI, `muxd tmux`, the config file and the command prompt;
levels, arrays, -u -a -R; refusals; a failing hook and a storm of events leave the daemon serving."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from pathlib import Path

from muxd.config import HOOK_RUNS_MAX
from muxd.protocol.event_messages import TMUX_EVENT_KINDS, DaemonEvent
from muxd.protocol.messages import Subscribe
from muxd.testing.fake_agent_panes import start_fake_agent
from muxd.testing.outer_terminal import attached_terminal as attached
from muxd.testing.outer_terminal import outer_terminals, status_line
from muxd.testing.patience import stretched
from muxd.testing.server import MuxdTestServer
from muxd.testing.tmux_oracle import TmuxOracle
from muxd.testing.wait import async_wait_until, wait_until

SHELL = ["--", "bash", "--norc", "--noprofile"]
HOOK_WAIT_S = 30.0  # a hook's command is a `muxd` process started by the daemon: slow on a busy machine


def lines_of(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def wait_for_line(path: Path, wanted: str, timeout: float = HOOK_WAIT_S) -> list[str]:
    return wait_until(lambda: wanted in lines_of(path) and lines_of(path), timeout=timeout,
                      message=f"{wanted!r} in {path.name}; the file has {lines_of(path)!r}")


def logged(server: MuxdTestServer) -> str:
    return server.log_path.read_text() if server.log_path.exists() else ""


def test_an_agent_asking_for_a_yes_runs_the_agent_waiting_hook_with_its_pane_and_question(muxd_server, tmp_path):
    s = muxd_server
    out = tmp_path / "waiting.txt"
    s.cli("set-hook", "-g", "agent-waiting",
          f'run-shell "echo #{{hook_pane}} #{{hook_agent}} #{{q:hook_question}} >> {out}"', check=True)
    s.cli("set-hook", "-ga", "agent-waiting", f'run-shell "echo #{{hook}} #{{pane_id}} #{{session_name}} >> {out}"',
          check=True)
    pane = start_fake_agent(s, "asker")
    s.cli("send-keys", "-t", pane, "tool", "Enter", check=True)
    found = wait_until(lambda: len(lines_of(out)) >= 2 and lines_of(out), timeout=HOOK_WAIT_S,
                       message="both commands of the hook ran")
    pane_id, agent, question = found[0].split(" ", 2)
    assert (pane_id, agent) == (pane, "claude")
    assert "proceed" in question.lower()  # unquoted again by the shell: the words as the agent asked
    assert found[1] == f"agent-waiting {pane} asker"  # the pane's own variables too: it is the default target

    # The turn's end: agent-idle, and execution-finished with its execution and status.
    ended = tmp_path / "ended.txt"
    for hook in ("agent-idle", "execution-finished"):
        s.cli("set-hook", "-g", hook, f'run-shell "echo #{{hook}} #{{hook_state}} #{{hook_status}} '
                                      f'#{{hook_execution}} >> {ended}"', check=True)
    s.cli("send-keys", "-t", pane, "1", "Enter", check=True)
    wait_until(lambda: len(lines_of(ended)) == 2, timeout=HOOK_WAIT_S, message="the turn's end ran both hooks")
    by_kind = {line.split(" ", 1)[0]: line.split(" ")[1:] for line in lines_of(ended)}
    assert by_kind["agent-idle"][0] == "Idle"
    status, execution = by_kind["execution-finished"]
    executions = json.loads(s.cli("history", "--json", check=True).stdout)["executions"]
    assert status == "success" and execution in {e["id"] for e in executions}


def test_tmux_lifecycle_events_run_their_hooks_with_tmux_variables(muxd_server, tmp_path):
    s = muxd_server
    out = tmp_path / "events.txt"
    record = f'run-shell "echo #{{hook}} #{{hook_session_name}} #{{hook_window_name}} #{{hook_pane}} #{{hook_exit_code}} >> {out}"'
    for hook in ("session-created", "session-renamed", "session-closed", "window-linked", "window-unlinked",
                 "window-renamed", "pane-exited", "pane-died"):
        s.cli("set-hook", "-g", hook, record, check=True)
    s.cli("new-session", "-d", "-s", "life", *SHELL, check=True)
    wait_for_line(out, "session-created life")
    wait_for_line(out, "window-linked life bash")
    s.cli("rename-session", "-t", "life", "living", check=True)
    wait_for_line(out, "session-renamed living")
    s.cli("rename-window", "-t", "living:0", "main", check=True)
    wait_for_line(out, "window-renamed living main")

    # A pane that closes with its program is pane-exited; one that stays (not --rm, detached) pane-died.
    gone = s.cli("new-window", "-d", "-P", "-t", "living", "-n", "gone", "--rm", "--", "sh", "-c", "exit 3",
                 check=True).stdout.strip()
    wait_for_line(out, f"pane-exited living gone {gone} 3")
    wait_for_line(out, "window-unlinked living gone")
    kept = s.cli("new-window", "-d", "-P", "-t", "living", "-n", "kept", "--", "sh", "-c", "exit 4",
                 check=True).stdout.strip()
    wait_for_line(out, f"pane-died living kept {kept} 4")

    s.cli("kill-session", "-t", "living", check=True)
    wait_for_line(out, "session-closed living")


def test_lifecycle_events_reach_subscribers_in_the_order_they_happen(muxd_server):
    s = muxd_server
    events: list[object] = []

    async def watch() -> None:
        client = await s.client(on_event=events.append)
        try:
            await client.call(Subscribe, events=True, kinds=sorted(TMUX_EVENT_KINDS))
            s.cli("new-session", "-d", "-s", "order", *SHELL, check=True)
            s.cli("rename-window", "-t", "order:0", "first", check=True)
            s.cli("rename-session", "-t", "order", "ordered", check=True)
            s.cli("new-window", "-d", "-t", "ordered", "--rm", "--", "sh", "-c", "exit 5", check=True)
            s.cli("kill-session", "-t", "ordered", check=True)
            await async_wait_until(_said(lambda: any(e.kind == "session-closed" for e in events)), timeout=20,
                                   message="session-closed")
        finally:
            await client.close()

    asyncio.run(watch())
    seen = [(e.kind, e.session, e.window_name, e.exit_code) for e in events if isinstance(e, DaemonEvent)]
    assert seen[:4] == [("session-created", "order", None, None), ("window-linked", "order", "bash", None),
                        ("window-renamed", "order", "first", None), ("session-renamed", "ordered", None, None)]
    exited = seen.index(("pane-exited", "ordered", "sh", 5))
    assert seen[exited - 1] == ("window-linked", "ordered", "sh", None)
    assert seen[exited + 1] == ("window-unlinked", "ordered", "sh", None)
    assert seen[-2:] == [("window-unlinked", "ordered", "first", None), ("session-closed", "ordered", None, None)]


def _said(check):
    async def predicate():
        return check()
    return predicate


def test_a_bell_runs_the_alert_hook_of_its_session(muxd_server, tmp_path):
    s = muxd_server
    out = tmp_path / "bell.txt"
    for name in ("rings", "quiet"):
        s.cli("new-session", "-d", "-s", name, *SHELL, check=True)
    s.cli("set-hook", "-t", "rings", "alert-bell",
          f'run-shell "echo #{{hook}} #{{hook_session_name}} #{{hook_window_name}} >> {out}"', check=True)
    s.cli("send-keys", "-t", "quiet", "printf '\\a'", "Enter", check=True)  # its session has no hook
    s.cli("send-keys", "-t", "rings", "printf '\\a'", "Enter", check=True)
    assert wait_for_line(out, "alert-bell rings bash") == ["alert-bell rings bash"]


def test_the_most_specific_level_set_runs_and_unset_falls_back(muxd_server, tmp_path):
    s = muxd_server
    out = tmp_path / "levels.txt"

    def hook(level: str) -> str:
        return f'run-shell "echo {level} #{{hook_window_name}} >> {out}"'

    s.cli("new-session", "-d", "-s", "lv", "-n", "w0", *SHELL, check=True)
    pane = s.panes("lv:0")[0]["id"]
    s.cli("set-hook", "-g", "window-renamed", hook("global"), check=True)
    s.cli("set-hook", "-t", "lv:0", "window-renamed", hook("window"), check=True)
    s.cli("set-hook", "-p", "-t", pane, "window-renamed", hook("pane"), check=True)
    assert s.cli("show-hooks", "-p", "-t", pane, check=True).stdout == f"window-renamed[0] {hook('pane')}\n"
    assert s.cli("show-hooks", "-w", "-t", "lv:0", check=True).stdout == f"window-renamed[0] {hook('window')}\n"
    assert s.cli("show-hooks", "-t", "lv", check=True).stdout == ""  # nothing set on the session itself

    # window-renamed names a window, not a pane: the window's hook runs, and only it.
    s.cli("rename-window", "-t", "lv:0", "w1", check=True)
    wait_for_line(out, "window w1")
    s.cli("set-hook", "-u", "-t", "lv:0", "window-renamed", check=True)
    s.cli("rename-window", "-t", "lv:0", "w2", check=True)
    assert wait_for_line(out, "global w2") == ["window w1", "global w2"]

    # A pane's own hook wins for its pane's events.
    s.cli("set-hook", "-p", "-t", pane, "pane-died", f'run-shell "echo pane-level >> {out}"', check=True)
    s.cli("set-hook", "-g", "pane-died", f'run-shell "echo global-level >> {out}"', check=True)
    s.cli("send-keys", "-t", pane, "exit", "Enter", check=True)  # a detached session's pane stays
    wait_for_line(out, "pane-level")
    assert "global-level" not in lines_of(out)


def test_arrays_append_index_unset_and_run_now(muxd_server, tmp_path):
    s = muxd_server
    out = tmp_path / "array.txt"
    s.cli("new-session", "-d", "-s", "arr", *SHELL, check=True)
    s.cli("set-hook", "-g", "session-renamed[3]", f'run-shell "echo three #{{hook}} >> {out}"', check=True)
    s.cli("set-hook", "-ga", "session-renamed", f"run-shell 'echo zero >> {out}'", check=True)  # first free: 0
    s.cli("set-hook", "-ga", "session-renamed", f"run-shell 'echo one >> {out}'", check=True)
    shown = s.cli("show-hooks", "-g", "session-renamed", check=True).stdout.splitlines()
    assert [line.split(" ", 1)[0] for line in shown] == ["session-renamed[0]", "session-renamed[1]",
                                                          "session-renamed[3]"]
    assert shown[0] == f'session-renamed[0] run-shell "echo zero >> {out}"'  # as tmux quotes it
    s.cli("set-hook", "-gu", "session-renamed[1]", check=True)
    assert s.cli("show-hooks", "-g", "session-renamed[1]", check=True).stdout == "session-renamed[1] \n"

    s.cli("set-hook", "-R", "session-renamed", check=True)  # now: items in index order, #{hook} set
    assert wait_until(lambda: len(lines_of(out)) == 2 and lines_of(out), timeout=HOOK_WAIT_S,
                      message="-R ran both") == ["zero", "three session-renamed"]

    s.cli("set-hook", "-g", "session-renamed", f"run-shell 'echo replaced >> {out}'", check=True)
    assert s.cli("show-hooks", "-g", "session-renamed", check=True).stdout == \
        f'session-renamed[0] run-shell "echo replaced >> {out}"\n'
    s.cli("set-hook", "-gu", "session-renamed", check=True)
    assert s.cli("show-hooks", "-g", "session-renamed", check=True).stdout == "session-renamed\n"


def test_show_hooks_lines_are_tmuxs(muxd_server):
    """The same set-hook lines given to tmux 3.3a and to muxd: show-hooks prints the same (for the
    hooks both have)."""
    s = muxd_server
    tmux = TmuxOracle()
    try:
        s.cli("new-session", "-d", "-s", "oracle-keep", *SHELL, check=True)  # the oracle's session's name
        lines = [
            ["-g", "session-created", 'run-shell "echo #{hook_pane} >> /tmp/muxd-none; true"'],
            ["-ga", "session-created", "display 'a b' ; display \"c'd\""],
            ["-g", "session-closed[4]", "display -p x"],
            ["-g", "pane-died", "run-shell -b 'echo #{q:pane_title}'"],
            ["-g", "window-renamed", "display ''"],
            ["-t", "oracle-keep", "session-renamed", "display-message -p renamed"],
            ["-w", "-t", "oracle-keep:0", "window-renamed", "display w"],
            ["-gu", "session-created[1]"],
        ]
        for words in lines:
            tmux.run("set-hook", *words)
            s.cli("set-hook", *words, check=True)
        ours_all = set(_hook_names(s.cli("show-hooks", "-g", check=True).stdout))
        for flags in (["-g"], ["-gw"], ["-t", "oracle-keep"], ["-w", "-t", "oracle-keep:0"],
                      ["-g", "session-closed"], ["-g", "session-created"], ["-g", "session-closed[4]"],
                      ["-g", "pane-exited"]):
            theirs = [line for line in tmux.run("show-hooks", *flags).splitlines()
                      if _hook_names(line)[0] in ours_all or _hook_names(line)[0] in _WINDOW_HOOKS]
            ours = [line for line in s.cli("show-hooks", *flags, check=True).stdout.splitlines()
                    if not line.startswith(("agent-", "execution-", "tool-", "task-", "fleet-"))]
            assert ours == theirs, flags
    finally:
        tmux.close()


_WINDOW_HOOKS = {"pane-died", "pane-exited", "window-renamed"}


def _hook_names(text: str) -> list[str]:
    return [re.split(r"[\[ ]", line, maxsplit=1)[0] for line in text.splitlines()]


def test_unknown_hooks_and_bad_commands_are_refused_in_one_line(muxd_server):
    s = muxd_server
    s.cli("new-session", "-d", "-s", "bad", *SHELL, check=True)
    for words, error in (
        (["-g", "agent-sneezed", "display x"], "invalid option: agent-sneezed"),
        (["-g", "session", "display x"], "ambiguous option: session"),
        (["-g", "session-created[x]", "display x"], "invalid option: session-created[x]"),
        (["-g", "session-created", "no-such-command x"], "unknown command: no-such-command"),
        (["-g", "session-created", "display -Z"], "command display-message:"),
        (["-g", "session-created", "display 'unclosed"], "syntax error: no closing quotation"),
        (["-g", "session-created"], "empty value"),
        (["-t", "nosuch", "session-created", "display x"], "can't find session: nosuch"),
    ):
        result = s.cli("set-hook", *words)
        assert result.returncode == 1 and result.stdout == "", words
        assert len(result.stderr.splitlines()) == 1 and error in result.stderr, (words, result.stderr)
    assert "invalid option: nope" in s.cli("show-hooks", "-g", "nope").stderr
    # A unique prefix names a hook, as in tmux.
    s.cli("set-hook", "-g", "session-cr", "display x", check=True)
    assert s.cli("show-hooks", "-g", "session-created", check=True).stdout == "session-created[0] display-message x\n"


def test_a_failing_hook_is_logged_and_the_daemon_goes_on(muxd_server, tmp_path):
    s = muxd_server
    out = tmp_path / "after.txt"
    s.cli("set-hook", "-g", "session-created", 'run-shell "echo to-the-log; exit 3"', check=True)
    s.cli("set-hook", "-ga", "session-created", "kill-pane -t %99999 ; display never-runs", check=True)
    s.cli("set-hook", "-ga", "session-created", f"run-shell 'echo next-item-runs >> {out}'", check=True)
    s.cli("new-session", "-d", "-s", "fails", *SHELL, check=True)
    wait_for_line(out, "next-item-runs")
    log = wait_until(lambda: "can't find pane: %99999" in logged(s) and logged(s), timeout=HOOK_WAIT_S,
                     message="the failures in the server log")
    assert "hook session-created: run-shell: to-the-log" in log
    assert "hook session-created: run-shell failed: 'echo to-the-log; exit 3' returned 3" in log
    assert "hook session-created: kill-pane failed: can't find pane: %99999" in log
    assert "never-runs" not in log  # the rest of a failed item is skipped, as tmux's queue does
    assert s.cli("has-session", "-t", "fails").returncode == 0


def test_what_a_hooks_own_commands_cause_runs_no_hooks(muxd_server, tmp_path):
    """As tmux: a session-created hook that makes a session does not run itself again (no loop),
    while the session it made is an ordinary one afterwards."""
    s = muxd_server
    out = tmp_path / "loop.txt"
    s.cli("set-hook", "-g", "session-created", f'run-shell "echo ran #{{hook_session_name}} >> {out}"', check=True)
    s.cli("set-hook", "-ga", "session-created", "new-session -d -s child -- bash --norc --noprofile", check=True)
    s.cli("set-hook", "-g", "session-renamed", f'run-shell "echo renamed #{{hook_session_name}} >> {out}"', check=True)
    s.cli("new-session", "-d", "-s", "parent", *SHELL, check=True)
    wait_until(lambda: s.cli("has-session", "-t", "child").returncode == 0, timeout=HOOK_WAIT_S,
               message="the hook made its session")
    s.cli("rename-session", "-t", "child", "grown", check=True)  # later, by someone else: hooks run
    assert wait_for_line(out, "renamed grown") == ["ran parent", "renamed grown"]
    assert s.cli("ls", "-F", "#{session_name}", check=True).stdout.split() == ["grown", "parent"]


def test_a_storm_of_events_runs_at_most_the_bound_at_once_and_drops_the_excess(muxd_server, tmp_path):
    s = muxd_server
    out = tmp_path / "storm.txt"
    s.cli("new-session", "-d", "-s", "storm", *SHELL, check=True)
    s.cli("set-hook", "-g", "window-renamed", f'run-shell "echo start >> {out}; sleep 2; echo end >> {out}"',
          check=True)
    renames = tmp_path / "renames.conf"
    renames.write_text("".join(f"rename-window -t storm:0 w{n}\n" for n in range(100)))
    s.cli("source-file", str(renames), check=True)  # one connection: faster than hooks can run
    wait_until(lambda: "hook run dropped, too many events at once" in logged(s), timeout=HOOK_WAIT_S,
               message="the excess dropped and logged")
    wait_until(lambda: lines_of(out).count("start") > HOOK_RUNS_MAX, timeout=HOOK_WAIT_S,
               message="more runs than the bound, one after another")
    running = most = 0
    for line in lines_of(out):
        running += 1 if line == "start" else -1
        most = max(most, running)
    assert most <= HOOK_RUNS_MAX
    assert s.cli("ls", check=True).returncode == 0  # serving all along


def test_hooks_from_muxd_tmux_and_the_config_file(muxd_unstarted, tmp_path):
    s = muxd_unstarted
    out = tmp_path / "config.txt"
    config = tmp_path / "muxd.conf"
    config.write_text(f"set-hook -g session-created 'run-shell \"echo made #{{hook_session_name}} >> {out}\"'\n"
                      "new-session -d -s fromconfig -- sleep 600\n")
    s.env["MUXD_CONFIG"] = str(config)
    s.start()
    wait_for_line(out, "made fromconfig")
    s.cli("tmux", "set-hook", "-g", "session-renamed", f"run -b 'echo renamed #{{hook_session_name}} >> {out}'",
          check=True)
    assert s.cli("tmux", "show-hooks", "-g", "session-renamed", check=True).stdout == \
        f'session-renamed[0] run-shell -b "echo renamed #{{hook_session_name}} >> {out}"\n'
    s.cli("tmux", "rename-session", "-t", "fromconfig", "renamed", check=True)
    wait_for_line(out, "renamed renamed")


def test_hooks_are_for_admins_and_showing_them_is_a_view(muxd_server):
    s = muxd_server
    s.cli("new-session", "-d", "-s", "tiers", *SHELL, check=True)
    advanced = s.cli("token", "create", "--tier", "execute_advanced", check=True).stdout.strip()
    viewer = s.cli("token", "create", "--tier", "view_only", check=True).stdout.strip()
    refused = s.cli("--token", advanced, "set-hook", "-g", "session-created", "display x")
    assert refused.returncode == 1 and "needs tier admin" in refused.stderr
    s.cli("set-hook", "-g", "session-created", "display x", check=True)
    shown = s.cli("--token", viewer, "show-hooks", "-g", "session-created")
    assert shown.returncode == 0 and shown.stdout == "session-created[0] display-message x\n"


def test_the_command_prompt_sets_a_session_hook_that_a_detach_runs(muxd_server, tmp_path):
    s = muxd_server
    out = tmp_path / "clients.txt"
    s.cli("new-session", "-d", "-s", "prompt", *SHELL, check=True)
    s.cli("set-hook", "-g", "client-attached",
          f'run-shell "echo #{{hook}} #{{hook_client}} #{{hook_session_name}} >> {out}"', check=True)
    with outer_terminals(s) as make:
        term = attached(make, s, "prompt")
        term.keys("C-b", ":")
        term.wait_for(lambda sc: status_line(sc).startswith(":"))
        # No -g: the current session's, as tmux's prompt targets the current pane.
        term.type(f"set-hook client-detached 'run-shell \"echo #{{hook}} #{{hook_client}} #{{session_name}} >> {out}\"'")
        term.keys("Enter")
        wait_until(lambda: s.cli("show-hooks", "-t", "prompt", check=True).stdout.startswith("client-detached[0] "),
                   timeout=10, message="the prompt set the hook")
        clients = json.loads(s.cli("list-clients", "--json", check=True).stdout)
        wait_until(lambda: lines_of(out), timeout=HOOK_WAIT_S, message="client-attached ran")
        term.keys("C-b", "d")
        term.wait_for("[detached")
    wait_until(lambda: len(lines_of(out)) == 2, timeout=HOOK_WAIT_S, message="client-detached ran")
    name = clients[0]["name"]
    assert lines_of(out) == [f"client-attached {name} prompt", f"client-detached {name} prompt"]


def test_run_shell_expands_formats_waits_and_reports_the_exit_status(muxd_server, tmp_path):
    s = muxd_server
    pane = s.cli("new-session", "-d", "-P", "-s", "rs", *SHELL, check=True).stdout.strip()
    ran = s.cli("run-shell", "-t", pane, "echo #{pane_id} #{session_name} #{q:window_name}; echo err >&2")
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, f"{pane} rs bash\n", "err\n")
    failed = s.cli("run-shell", "exit 3")
    assert (failed.returncode, failed.stderr) == (3, "muxd: 'exit 3' returned 3\n")
    go, marker = tmp_path / "go", tmp_path / "background.txt"
    # -b: back while the command still runs (it waits for a file made only once we are back). Its
    # output would be ours: not captured here, or reading it would wait for the command too.
    quick = subprocess.run([sys.executable, "-m", "muxd", "-L", s.name, "run-shell", "-b",
                            f"while [ ! -e {go} ]; do sleep 0.05; done; echo late > {marker}"],
                           env=s.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=stretched(30))
    assert quick.returncode == 0 and not marker.exists()
    go.touch()
    wait_until(marker.exists, timeout=10, message="the background command ran")
    assert s.cli("run-shell", "-C", "rename-session -t rs renamed-by-run").returncode == 0
    assert s.cli("has-session", "-t", "renamed-by-run").returncode == 0
    assert "can't find pane: %99999" in s.cli("run-shell", "-t", "%99999", "true").stderr
