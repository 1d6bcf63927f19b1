"""The tmux format engine (muxd/formats.py): pure cases, and real tmux 3.3a as the oracle for
the same templates over the same variables."""

import shutil
import subprocess
import uuid

import pytest

from muxd.formats import expand
from muxd.testing.patience import stretched

VARIABLES = {
    "session_name": "alpha-beta", "window_name": "w/x", "window_index": "3", "pane_index": "0",
    "pane_id": "%0", "pane_active": "1", "pane_dead": "0", "window_panes": "1", "pane_title": "",
}


@pytest.mark.parametrize(("template", "expected"), [
    ("#{session_name}:#{window_index}.#{pane_index}", "alpha-beta:3.0"),
    ("#S:#I.#P #D #W", "alpha-beta:3.0 %0 w/x"),
    ("#{?pane_active,yes,no}|#{?pane_dead,yes,no}", "yes|no"),
    ("#{?pane_dead,dead,#{?pane_active,act,idle}}", "act"),
    ("#{?pane_dead,a,pane_active,b,c}", "pane_active,b,c"),  # tmux 3.3 has no else-if
    ("a#{?pane_active,yes}b", "a"),  # malformed: the rest goes, as in tmux 3.3
    ("a#{==:1}b", "a"),
    ("#{==:#{session_name},alpha-beta}#{!=:#{window_index},3}", "10"),
    ("#{?#{==:#{window_index},3},three,other}", "three"),
    ("#{||:#{pane_dead},#{pane_active}}#{&&:#{pane_dead},#{pane_active}}", "10"),
    ("#{m:alpha*,#{session_name}}#{m:beta*,#{session_name}}", "10"),
    ("#{=5:session_name}|#{=-4:session_name}", "alpha|beta"),
    ("#{p-6:pane_id}|#{p6:pane_id}|", "    %0|%0    |"),
    ("#{s/-/+/:session_name}", "alpha+beta"),
    ("#{b:window_name} #{d:window_name}", "x w"),
    ("#{n:session_name}", "10"),
    ("#{l:#{session_name}}", "#{session_name}"),
    ("a##b#,c#}", "a#b,c}"),
    ("#{no_such_variable}|#{}", "|"),
    ("#[fg=red]#S", "#[fg=red]alpha-beta"),
    ("before#(echo no shell)after", "beforeafter"),
    ("#{pane_id}\u241e#{session_name}\u241e", "%0\u241ealpha-beta\u241e"),  # libtmux's separator
    ("a#{session_name", "a"),  # unclosed: nothing from there on
])
def test_expand(template, expected):
    assert expand(template, VARIABLES) == expected


def test_e_expands_a_value_as_a_format_once_asked():
    variables = {"fmt": "#{session_name}!", "session_name": "s"}
    assert expand("#{fmt}|#{E:fmt}", variables) == "#{session_name}!|s!"


def test_self_reference_stops():
    assert expand("#{E:loop}", {"loop": "#{E:loop}"}) == ""


ORACLE_TEMPLATES = [
    "#{session_name}:#{window_index}.#{pane_index}", "#S:#I.#P #D #W",
    "#{?pane_active,yes,no}", "#{?pane_dead,dead,#{?pane_active,act,idle}}", "a#{?pane_active,yes}b",
    "#{?pane_dead,a,pane_active,b,c}", "#{==:#{session_name},alpha-beta}", "#{!=:#{window_index},3}",
    "#{?#{==:#{window_index},3},three,other}", "#{||:#{pane_dead},#{pane_active}}",
    "#{m:alpha*,#{session_name}}", "#{=5:session_name}", "#{=-4:session_name}", "#{p-6:pane_id}|",
    "#{p6:pane_id}|", "#{s/-/+/:session_name}", "#{b:window_name}", "#{d:window_name}",
    "#{n:session_name}", "#{l:#{session_name}}", "a##b#,c", "#{no_such_variable}x",
    "#[fg=red]#S", "#{window_panes} panes", "#{?,a,b}", "a#{==:1}b", "a#{m:x}b", "a#{}b", "a#{session_name",
]


@pytest.fixture(scope="module")
def tmux_oracle():
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    name = f"muxd-formats-{uuid.uuid4().hex[:8]}"

    def tmux(*args):
        return subprocess.run(["tmux", "-L", name, "-f", "/dev/null", *args], capture_output=True, text=True,
                              check=True, timeout=stretched(10)).stdout

    tmux("new-session", "-d", "-s", "alpha-beta", "-x", "80", "-y", "24", "cat")
    tmux("move-window", "-s", "alpha-beta:0", "-t", "alpha-beta:3")
    tmux("rename-window", "-t", "alpha-beta:3", "w/x")
    try:
        yield tmux
    finally:
        subprocess.run(["tmux", "-L", name, "kill-server"], capture_output=True, check=False, timeout=stretched(10))


def test_templates_expand_as_tmux_expands_them(tmux_oracle):
    assert VARIABLES["pane_id"] == tmux_oracle("display-message", "-p", "-t", "alpha-beta:3.0", "#D").strip()
    theirs = [tmux_oracle("display-message", "-p", "-t", "alpha-beta:3.0", template).rstrip("\n")
              for template in ORACLE_TEMPLATES]
    assert [expand(template, VARIABLES) for template in ORACLE_TEMPLATES] == theirs
