"""expand-format (daemon/commands/formats.py): the daemon expands a tmux format from its own
records to the very lines a client's FormatScope expands from list-sessions, list-windows and
list-panes; a pane-scoped token's expansion sees only what its lists would; a hook's variables
come first; bad requests get a one-line error and the daemon keeps serving."""

import json
import subprocess

import pytest

from muxd.client.blocking import BlockingClient
from muxd.daemon.tmux.shim import launcher_path
from muxd.daemon.panes.format_variables import FormatScope, expanded_lines, variable_lines
from muxd.errors import BadRequest, Forbidden, NotFound
from muxd.testing.mcp_http import create_token
from muxd.testing.patience import stretched
from muxd.testing.wait import wait_until

TEMPLATES = [
    "#{session_name}:#{window_index}.#{pane_index} #{pane_id} #{pane_width}x#{pane_height}",
    "#{window_id} #{window_name} #{window_flags} #{window_panes} #{window_layout}",
    "#{session_id} #{session_windows} #{session_attached} [#{agent_attention}] #{agents_waiting}",
    "#{cursor_x},#{cursor_y} #{history_size} #{pane_start_command} #{pane_current_command}",
    "#{host_short} #{pid} #{version} #{socket_path} #{focus-events} #{?pane_active,on,off}",
]


@pytest.fixture(scope="module")
def two_sessions(muxd_module_server):
    s = muxd_module_server
    first = s.cli("new-session", "-d", "-P", "-s", "ef-one", "--", "sh", "-c", "echo one; exec sleep 600",
                  check=True).stdout.strip()
    s.cli("split-window", "-d", "-t", first, "--", "sleep", "600", check=True)
    s.cli("new-window", "-d", "-t", "ef-one", "-n", "second", "--", "sleep", "600", check=True)
    other = s.cli("new-session", "-d", "-P", "-s", "ef-two", "--", "sleep", "600", check=True).stdout.strip()
    wait_until(lambda: "one" in s.cli("capture-pane", "-p", "-t", first).stdout, timeout=stretched(10))
    return s, first, other


def _client(s, token=None):
    return BlockingClient.connect(s.socket_path, token=token)


def _expanded(client, **fields):
    return client.call("expand-format", "expanded", **fields).lines


@pytest.mark.parametrize("template", TEMPLATES)
def test_the_daemon_expands_what_a_client_scope_expands(two_sessions, template):
    s, first, _ = two_sessions
    with _client(s) as client:
        scope = FormatScope.of_client(client, template)
        panes = sorted(scope.panes().values(), key=lambda p: p.session)
        windows = sorted(scope.windows().values(), key=lambda w: w.session)
        sessions = sorted(scope.sessions().values(), key=lambda x: x.name)
        target = client.call("show-pane", "pane", target=first).pane
        assert _expanded(client, listing="panes", all=True, template=template) == expanded_lines(
            panes, scope.of_pane, template, None)
        assert _expanded(client, listing="panes", target=first, template=template) == expanded_lines(
            [p for p in panes if p.window_id == target.window_id], scope.of_pane, template, None)
        assert _expanded(client, listing="panes", target=first, session_scope=True, template=template) == expanded_lines(
            [p for p in panes if p.session_id == target.session_id], scope.of_pane, template, None)
        assert _expanded(client, listing="windows", all=True, template=template) == expanded_lines(
            windows, scope.of_window, template, None)
        assert _expanded(client, listing="sessions", template=template) == expanded_lines(
            sessions, scope.of_session, template, None)
        assert _expanded(client, listing="pane", target=first, template=template) == expanded_lines(
            [target], scope.of_pane, template, None)
        assert _expanded(client, listing="pane", target=first) == variable_lines(scope.of_pane(target))


def test_a_filter_keeps_the_items_it_holds_true_for(two_sessions):
    s, _, other = two_sessions
    with _client(s) as client:
        assert _expanded(client, listing="panes", all=True, template="#{pane_id}",
                         filter="#{==:#{session_name},ef-two}") == [other]
        assert _expanded(client, listing="windows", target="ef-one", template="#{window_name}",
                         filter="#{window_active}") != []


def test_a_hooks_variables_come_first(two_sessions):
    s, first, _ = two_sessions
    with _client(s) as client:
        assert _expanded(client, listing="pane", target=first, template="#{hook}|#{hook_pane}|#{pane_id}",
                         variables={"hook": "after-new-window", "hook_pane": "%99"}) == [f"after-new-window|%99|{first}"]


def test_a_pane_bound_token_expands_only_what_it_sees(two_sessions):
    s, first, other = two_sessions
    token = create_token(s, "execute_advanced", "ef-bound", "--pane", other)
    with _client(s, token) as client:
        assert _expanded(client, listing="panes", all=True, template="#{pane_id}") == [other]
        assert _expanded(client, listing="sessions", template="#{session_name} #{session_windows}") == ["ef-two 1"]
        assert _expanded(client, listing="pane", target=other, template="#{pane_id}") == [other]
        with pytest.raises(Forbidden):
            _expanded(client, listing="pane", target=first, template="#{pane_id}")
        with pytest.raises(Forbidden):  # no target: "the newest session" is not for it to pick
            _expanded(client, listing="windows", template="#{window_id}")


@pytest.mark.parametrize(("fields", "error"), [
    ({"listing": "panes", "target": "%0"}, BadRequest),          # a listing without a template
    ({"listing": "everything", "template": "x"}, BadRequest),
    ({"listing": "pane", "target": "nosuch", "template": "x"}, NotFound),
    ({"listing": "pane", "template": "x", "variables": {"hook": 1}}, BadRequest),
])
def test_bad_requests_get_an_error_and_the_daemon_serves_on(two_sessions, fields, error):
    s, first, _ = two_sessions
    with _client(s) as client:
        with pytest.raises(error):
            _expanded(client, **fields)
        assert _expanded(client, listing="pane", target=first, template="#{pane_id}") == [first]


def test_a_pane_passes_its_filter_or_gives_no_line(two_sessions):
    s, first, _ = two_sessions
    with _client(s) as client:
        assert _expanded(client, listing="pane", target=first, template="#{pane_id}", filter="#{pane_active}") == [first]
        assert _expanded(client, listing="pane", target=first, template="#{pane_id}", filter="#{pane_dead}") == []


def test_the_cli_in_a_hooks_command_sends_the_hooks_variables(two_sessions):
    """A hook's commands run with MUXD_HOOK_VARIABLES (daemon/attention/hooks_runner.py): the
    CLI's display-message and -F lines hand them to the daemon, as their client-side expansion
    read them before."""
    s, first, _ = two_sessions
    hook = {"MUXD_HOOK_VARIABLES": json.dumps({"hook": "pane-exited", "hook_pane": "%42", "other": "x"})}
    shown = s.cli("display-message", "-p", "-t", first, "#{hook}|#{hook_pane}|#{other}", env=hook)
    assert (shown.returncode, shown.stdout) == (0, "pane-exited|%42|\n")
    listed = subprocess.run([str(launcher_path(s.socket_path)), "-L", s.name, "list-panes", "-t", first,
                             "-F", "#{hook_pane} #{pane_id}"], env={**s.env, **hook}, capture_output=True, text=True,
                            timeout=stretched(30))
    assert (listed.returncode, listed.stdout.splitlines()[0]) == (0, f"%42 {first}")
