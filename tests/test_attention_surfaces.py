"""What the attention surfaces write and draw, pure: a notification's text and bytes
(muxd/daemon/attention/notifications.py), the count of agents elsewhere and muxd's default
status-right (elsewhere.py), tmux's window flags as formats (format_variables.py) and the window
tabs of the status line with their alert styles (attach/status.py)."""

from __future__ import annotations

from types import SimpleNamespace

from muxd.attach.status import STATUS_STYLE, StatusLine, WindowTab, status_row
from muxd.attach.tmux_style import parse_style
from muxd.daemon.attention.elsewhere import attention_text, attention_variables, elsewhere, status_right
from muxd.daemon.attention.notifications import (
    NOTIFY_TEXT_MAX_CHARS, notice_bytes, notice_text, safe_text, takes_osc777,
)
from muxd.daemon.client_side.status_formats import DEFAULT_RIGHT, expand_status
from muxd.daemon.panes.format_variables import session_variables, window_variables
from muxd.daemon.panes.options import OPTIONS
from muxd.formats import expand
from muxd.protocol.event_messages import DaemonEvent


def waiting(question: str | None = "Bash: rm -rf build", **fields) -> DaemonEvent:
    where = dict(pane_id="%3", session="work", window_index=2, agent_type="claude")
    return DaemonEvent(kind="agent-waiting", at=1.0, question=question, **{**where, **fields})


def test_a_notice_names_the_agent_its_place_and_what_it_asks():
    assert notice_text(waiting()) == "muxd: claude %3 (work:2) waits: Bash: rm -rf build"
    assert notice_text(waiting(None)) == "muxd: claude %3 (work:2) waits"
    failed = DaemonEvent(kind="agent-failed", at=1.0, pane_id="%4", agent_type="codex", error="API Error: 500")
    assert notice_text(failed) == "muxd: codex %4 failed: API Error: 500"  # its pane gone: no place
    assert notice_text(DaemonEvent(kind="agent-idle", at=1.0, pane_id="%5")) == "muxd: agent %5 finished"
    assert notice_text(DaemonEvent(kind="alert-bell", at=1.0)) is None


def test_a_notice_can_carry_no_control_characters_and_is_bounded():
    # A question is the screen's text: an ESC or BEL in it would end the OSC and write the rest
    # to the terminal as it is.
    hostile = waiting("rm -rf /\x07\x1b]52;c;ZXZpbA==\x07\x1b[2J\u009b31m\nnext line" + "x" * 1000)
    text = notice_text(hostile)
    assert text is not None and len(text) == NOTIFY_TEXT_MAX_CHARS and text.endswith("…")
    assert not any(ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F for ch in text)
    assert "]52;c;ZXZpbA== [2J 31m next line" in text
    assert safe_text("a\tb\r\nc") == "a b c"


def test_the_bytes_of_each_method():
    text = "muxd: claude %3 (work:2) waits: Bash: make; make install"
    assert notice_bytes(text, "osc9") == b"\x1b]9;" + text.encode() + b"\x07"
    assert notice_bytes(text, "bell") == b"\x07"
    # OSC 777's body without ';' (some terminals cut it there), under the title "muxd".
    assert notice_bytes(text, "osc777") == b"\x1b]777;notify;muxd;claude %3 (work:2) waits: Bash: make, make install\x07"
    assert notice_bytes(text, "all") == notice_bytes(text, "osc9") + notice_bytes(text, "osc777") + b"\x07"
    # auto: OSC 9 and a bell, OSC 777 and a bell where only 777 is known to show.
    assert notice_bytes(text, "auto", "xterm-256color", "iTerm.app") == notice_bytes(text, "osc9") + b"\x07"
    assert notice_bytes(text, "auto", "xterm-256color", "vte") == notice_bytes(text, "osc777") + b"\x07"
    assert takes_osc777("rxvt-unicode-256color", "") and takes_osc777("foot", "")
    assert not takes_osc777("tmux-256color", "tmux")


def test_the_count_elsewhere_leaves_out_the_session_in_view_and_finished_agents():
    needs = [("$0", {"waiting": 1}), ("$1", {"waiting": 1, "failed": 2, "finished": 3}), ("$2", {"limited": 1})]
    here = elsewhere(needs, "$0")
    assert attention_text(here) == "1 waiting · 1 limited · 2 failed"
    variables = attention_variables(here)
    assert (variables["agents_waiting"], variables["agents_finished"]) == ("1", "3")
    assert attention_text(elsewhere(needs[:1], "$0")) == ""


def test_the_default_status_right_expands_as_muxd_draws_it():
    assert OPTIONS["status-right"].default == DEFAULT_RIGHT
    for attention, agent in (("2 waiting", "claude · Idle"), ("2 waiting", ""), ("", "claude · Idle"), ("", "")):
        variables = {"agent_attention": attention, "agent_status": agent}
        assert expand_status(DEFAULT_RIGHT, variables, 0.0) == status_right(attention, agent)
    assert status_right("1 failed", "codex · Idle") == "1 failed · codex · Idle"


def window_record(**fields):
    base = dict(id="@1", index=1, name="bash", active=False, last=True, zoomed=False, panes=1, width=80, height=24,
                layout="", session="work", session_id="$0", alerts="", agent_flags="")
    return SimpleNamespace(**{**base, **fields})


def test_window_flags_are_tmuxs_then_the_agents():
    variables = window_variables(window_record(alerts="#!~", agent_flags="?+"))
    # As tmux: #{window_flags} escapes its '#' (a status line draws it once); raw does not.
    assert (variables["window_flags"], variables["window_raw_flags"]) == ("##!~-?+", "#!~-?+")
    assert [variables[f"window_{name}_flag"] for name in ("activity", "bell", "silence")] == ["1", "1", "1"]
    assert variables["window_agent_flags"] == "?+"
    assert expand("#F", variables) == "##!~-?+"
    assert expand_status("#I:#W#F", variables, 0.0) == "1:bash#!~-?+"
    quiet = window_variables(window_record(active=True, last=False, zoomed=True))
    assert (quiet["window_flags"], quiet["window_bell_flag"]) == ("*Z", "0")
    session = SimpleNamespace(id="$0", name="work", windows=2, attached=1, created_at=0.0, alerts="1!,3#~")
    assert session_variables(session)["session_alerts"] == "1!,3#~"


def test_a_flagged_tab_is_drawn_in_its_alert_style():
    reverse = parse_style("reverse", STATUS_STYLE)
    tabs = (WindowTab(0, "bash", active=True), WindowTab(1, "claude", active=False, alerts="!", needs="?",
                                                            style=reverse))
    assert tabs[1].label() == "1:claude!?"
    assert WindowTab(2, "w", active=False, last=True, zoomed=True, alerts="#", needs="X").label() == "2:w#-ZX"
    row = status_row(StatusLine("s", tabs, right="1 waiting"), 40)
    text = "".join(cell.data for cell in row)
    assert text.startswith("[s] 0:bash* 1:claude!?") and text.rstrip().endswith("1 waiting")
    flagged = text.index("1:claude")
    assert all(cell.reverse for cell in row[flagged:flagged + len("1:claude!?")])
    # Only the tab: the space before it, and the rest of the line, keep the status style.
    assert not row[flagged - 1].reverse and not row[flagged + len("1:claude!?")].reverse
    assert not any(cell.reverse for cell in row[-5:])


def test_attach_tells_the_daemon_which_terminal_it_is():
    from muxd.client.attach import terminal_kind

    assert terminal_kind({"TERM": "xterm-256color", "TERM_PROGRAM": "iTerm.app"}) == ("xterm-256color", "iTerm.app")
    # GNOME Terminal and Tilix set no TERM_PROGRAM, only VTE_VERSION: OSC 777 is theirs.
    kind = terminal_kind({"TERM": "xterm-256color", "VTE_VERSION": "7600"})
    assert kind == ("xterm-256color", "vte") and takes_osc777(*kind)
    assert terminal_kind({}) == ("", "")
    assert len(terminal_kind({"TERM": "x" * 1000})[0]) == 256  # what the Attach message takes
