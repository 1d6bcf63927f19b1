"""The pure parts of hooks on events: hook names and levels (daemon/panes/hook_arrays.py), the
form set-hook keeps a command line in (daemon/core/cli_lines.py; tmux 3.3a's own quoting as the
oracle), and the variables an event gives a hook's commands (daemon/attention/hooks_runner.py)."""

from __future__ import annotations

import shlex
import subprocess

import pytest

from muxd.daemon.attention.hooks_runner import hook_variables
from muxd.daemon.core.cli_lines import checked_line, line_commands, tmux_word
from muxd.daemon.panes.hook_arrays import HOOK_SCOPES, HookArrays, hook_named
from muxd.errors import BadRequest
from muxd.protocol.event_messages import EVENT_KINDS, DaemonEvent
from muxd.testing.tmux_oracle import TmuxOracle


def test_every_event_kind_is_a_hook_with_tmuxs_scope():
    assert set(HOOK_SCOPES) == set(EVENT_KINDS)
    assert {n for n, s in HOOK_SCOPES.items() if s == "session"} == {
        "alert-activity", "alert-bell", "alert-silence", "client-attached", "client-detached",
        "session-closed", "session-created", "session-renamed", "window-linked", "window-unlinked"}
    assert HOOK_SCOPES["pane-died"] == HOOK_SCOPES["agent-waiting"] == HOOK_SCOPES["window-renamed"] == "window"


def test_hook_names_indexes_and_prefixes():
    assert hook_named("agent-waiting") == ("agent-waiting", None)
    assert hook_named("session-created[12]") == ("session-created", 12)
    assert hook_named("agent-w[0]") == ("agent-waiting", 0)  # a unique prefix, as tmux's options_match
    for bad, words in (("agent", "ambiguous option: agent"), ("nope", "invalid option: nope"),
                       ("pane-died[-1]", "invalid option"), ("pane-died[x]", "invalid option"),
                       ("", "invalid option"), ("pane-died[99999]", "index too large")):
        with pytest.raises(BadRequest, match=words.replace("[", r"\[")):
            hook_named(bad)


def test_the_nearest_level_that_has_the_hook_wins_even_when_empty():
    hooks = HookArrays()
    assert hooks.commands("pane-died", ["%1", "@1"]) == []
    hooks.set("pane-died", None, "display global")
    hooks.set("pane-died", "@1", "display window")
    assert hooks.commands("pane-died", ["%1", "@1"]) == ["display window"]
    assert hooks.commands("pane-died", ["%2", "@2"]) == ["display global"]
    hooks.set("pane-died", "%1", "display pane")
    hooks.unset("pane-died", "%1", 0)  # its only item gone, the pane's array stays: it still wins
    assert hooks.commands("pane-died", ["%1", "@1"]) == []
    hooks.unset("pane-died", "%1")  # the whole hook gone: the window's again
    assert hooks.commands("pane-died", ["%1", "@1"]) == ["display window"]
    hooks.forget("@1")  # the window closed
    assert hooks.commands("pane-died", ["%1", "@1"]) == ["display global"]


def test_arrays_set_replace_append_at_the_first_free_index_and_show():
    hooks = HookArrays()
    hooks.set("session-created", None, "c", 2)
    hooks.set("session-created", None, "a", append=True)
    hooks.set("session-created", None, "b", append=True)
    hooks.set("session-created", None, "d", append=True)
    assert hooks.own("session-created", None) == {0: "a", 1: "b", 2: "c", 3: "d"}
    hooks.set("session-created", None, "only")
    assert hooks.commands("session-created", [None]) == ["only"]
    shown = hooks.shown(None, "session")
    assert ("session-created", 0, "only") in shown and ("session-closed", None, "") in shown
    assert [row[0] for row in shown] == sorted(row[0] for row in shown)
    assert hooks.shown("$0", "session") == []  # a session shows only what is set on it
    assert hooks.own("session-created", "$0") is None


def test_a_kept_line_names_tmuxs_commands_and_quotes_as_tmux():
    assert checked_line("display 'a b' ; run-shell -b \"echo #{hook_pane}\"") == \
        'display-message "a b" ; run-shell -b "echo #{hook_pane}"'
    assert checked_line("run -b 'echo hi'") == 'run-shell -b "echo hi"'  # a config line's `run` is tmux's
    assert checked_line("run -b 'echo hi'", tmux_names=True) == 'run-shell -b "echo hi"'
    assert checked_line("ls") == "list-sessions"
    assert checked_line("send-keys -t %1 y Enter") == 'send-keys -t "%1" y Enter'  # tmux quotes a %
    for line, words in (("nosuch", "unknown command: nosuch"), ("display -Z", "command display-message:"),
                        ("display 'open", "syntax error"), ("  ", "empty value"),
                        ("copy-mode", "copy-mode: not supported by muxd"),
                        ("run --wait make", "command run-shell:")):  # not muxd's run: no --wait
        with pytest.raises(BadRequest, match=words):
            checked_line(line)
    # What it keeps reads back as the same commands.
    line = "display \"it's $HOME\" ; display ~/x ; send-keys 'a\tb' 'x;y'"
    assert line_commands(checked_line(line)) == [["display-message", "it's $HOME"], ["display-message", "~/x"],
                                                 ["send-keys", "a\tb", "x;y"]]


TRICKY_WORDS = ("plain", "a b", "a#b", "it's", 'say "hi"', "x;y", "50%", "{x}", "", "~", "~/x", "a\\b", '"',
                "'", "#", ";", "é ü", "#{q:hook_question}", 'a"b c', "-p")


def test_words_are_quoted_as_tmux_quotes_them():
    tmux = TmuxOracle()
    try:
        for word in TRICKY_WORDS:
            tmux.run("set-hook", "-g", "session-closed", "display-message " + shlex.quote(word))
            (line,) = tmux.run("show-hooks", "-g", "session-closed").splitlines()
            assert line.split(" ", 2)[2] == tmux_word(word), word
    finally:
        tmux.close()


def test_where_tmuxs_quoting_would_read_back_otherwise_the_shells_is_kept():
    for word in ("$HOME", "a\tb", "a\nb"):  # tmux writes "\$HOME", a\tb, a\nb: not read back alike here
        assert shlex.split(tmux_word(word)) == [word]


def test_an_events_fields_are_the_hooks_variables():
    event = DaemonEvent(kind="agent-limited", at=1.0, pane_id="%3", window_id="@2", window_index=0,
                        window_name="w", session="s", session_id="$1", agent_type="claude", state="UsageLimited",
                        previous="Thinking", error="limit reached", resets_at=1700000000.7)
    assert hook_variables(event) == {
        "hook": "agent-limited", "hook_pane": "%3", "hook_window": "@2", "hook_window_name": "w",
        "hook_session": "$1", "hook_session_name": "s", "hook_agent": "claude", "hook_state": "UsageLimited",
        "hook_previous": "Thinking", "hook_error": "limit reached", "hook_resets_at": "1700000000"}
    exited = hook_variables(DaemonEvent(kind="pane-exited", at=1.0, pane_id="%4", exit_code=0))
    assert exited == {"hook": "pane-exited", "hook_pane": "%4", "hook_exit_code": "0"}


def test_tmux_is_there_for_the_oracle():
    assert subprocess.run(["tmux", "-V"], capture_output=True, text=True).stdout.startswith("tmux 3.3")
