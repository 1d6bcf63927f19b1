"""Client input for attached clients: splitting bytes into keys/mouse/pastes, the prefix table,
copy-mode keys and the status line's agent text (all pure; the tmux-driven tests are elsewhere)."""

import pytest

from muxd.daemon.client_side.copy_mode import COPY, LEAVE, STAY, CopyMode, PaneGeometry
from muxd.daemon.client_side.input_parser import InputParser, Key, Mouse, Paste, Text, encode_mouse, next_key_bytes
from muxd.daemon.client_side.prefix_keys import binding_for, list_keys_text, prefix_bytes
from muxd.daemon.client_side.status_line import agent_status
from muxd.daemon.client_side.status_prompt import Prompt
from muxd.detectors.state import Activity, AgentSession, AgentState
from muxd.errors import BadRequest


def test_keys_sequences_and_utf8_are_split_whole():
    tokens = InputParser().feed(b"a\x02\x1b[A\x1bOB\x1b[5~\x1bx\xc3\xa9\x1b")
    assert tokens == [Text(b"a\x02"), Key(b"\x1b[A"), Key(b"\x1bOB"), Key(b"\x1b[5~"),
                      Key(b"\x1bx"), Text("é".encode()), Key(b"\x1b")]


def test_incomplete_sequence_waits_for_the_next_chunk():
    parser = InputParser()
    assert parser.feed(b"x\x1b[1;") == [Text(b"x")]
    assert parser.feed(b"5C") == [Key(b"\x1b[1;5C")]
    assert parser.feed(b"\xe2\x82") == []
    assert parser.feed(b"\xac") == [Text("€".encode())]
    assert parser.feed(b"ab\xf0\x9f") == [Text(b"ab")]  # a character cut by the chunk waits whole
    assert parser.feed(b"\x98\x80cd") == [Text("😀cd".encode())]


def test_plain_bytes_come_as_one_run_however_many():
    paste = b"lorem ipsum \xc3\xa9\r\n\t\x02\x7f" * 50_000
    assert InputParser().feed(paste) == [Text(paste)]  # one object, not one per byte


def test_a_run_splits_into_keys_one_character_each():
    run = "aé€😀".encode()
    keys = []
    while run:
        size = next_key_bytes(run)
        keys.append(run[:size])
        run = run[size:]
    assert keys == [b"a", "é".encode(), "€".encode(), "😀".encode()]


def test_sgr_mouse_reports_become_mouse_events():
    tokens = InputParser().feed(b"\x1b[<64;10;5M\x1b[<0;1;1M\x1b[<0;1;1m")
    assert tokens == [Mouse(64, 9, 4, False), Mouse(0, 0, 0, False), Mouse(0, 0, 0, True)]
    assert tokens[0].wheel == -1 and Mouse(65, 0, 0, False).wheel == 1 and tokens[1].wheel == 0


def test_bracketed_paste_is_one_token_even_across_chunks():
    parser = InputParser()
    assert parser.feed(b"\x1b[200~hello \x1b[A wor") == []
    assert parser.feed(b"ld\x1b[20") == []
    assert parser.feed(b"1~z") == [Paste(b"hello \x1b[A world"), Text(b"z")]


def test_prefix_table_and_prefix_names():
    assert binding_for(b"%").action == "split" and binding_for(b"%").argument == "horizontal"
    assert binding_for(b'"').argument == "vertical"
    assert binding_for(b"\x1bOA").argument == "up" and binding_for(b"\x1b[D").argument == "left"
    assert binding_for(b"7").argument == 7
    assert binding_for(b"Q") is None
    assert prefix_bytes("C-b") == b"\x02" and prefix_bytes("C-a") == b"\x01"
    with pytest.raises(BadRequest):
        prefix_bytes("NotAKey")
    text = "\n".join(list_keys_text("C-a"))
    for needle in ("C-a %", "C-a d", "C-a [", "0..9", "leave copy mode"):
        assert needle in text


def test_copy_mode_keys_and_wheel():
    # 100 rows of history, a 10-row screen whose first row is row number 500.
    pane = PaneGeometry(top=500, history=100, lines=10, columns=20)
    copy = CopyMode(cursor=(505, 3))
    assert copy.key(b"\x1b[A", pane) == STAY and copy.cursor == (504, 3) and copy.offset == 0
    for _ in range(6):
        copy.key(b"k", pane)  # past the view's top row: the view follows the cursor
    assert copy.cursor == (498, 3) and copy.offset == 2
    copy.key(b"\x19", pane)  # C-y scrolls the view; the cursor stays on its row
    assert copy.offset == 3 and copy.cursor == (498, 3)
    copy.key(b"\x1b[5~", pane)
    assert copy.offset == 12 and copy.cursor == (489, 3)
    copy.key(b"g", pane)
    assert copy.offset == 100 and copy.cursor == (400, 0)
    copy.key(b"k", pane)
    assert copy.offset == 100 and copy.cursor == (400, 0)  # clamped to the history
    copy.key(b"$", pane)
    assert copy.cursor == (400, 19)
    copy.key(b"G", pane)
    assert copy.offset == 0 and copy.cursor == (509, 0)
    # A selection: Space at the cursor, moves extend it, Enter copies, Escape clears first.
    assert copy.key(b"\r", pane) == LEAVE  # nothing selected: Enter just leaves
    copy.key(b"k", pane)
    copy.key(b" ", pane)
    copy.key(b"l", pane)
    copy.key(b"j", pane)
    assert copy.selection() == ((508, 0), (509, 1))
    assert copy.key(b"\x1b", pane) == STAY and copy.selection() is None
    assert copy.key(b"\x1b", pane) == LEAVE
    copy.key(b"v", pane)
    copy.key(b"h", pane)
    assert copy.key(b"y", pane) == COPY and copy.selection() == ((509, 0), (509, 1))
    assert copy.key(b"q", pane) == LEAVE
    wheel = CopyMode(cursor=(509, 0))
    assert wheel.wheel(-1, pane) and wheel.offset == 3
    assert wheel.cursor == (506, 0)  # kept on the view as it scrolled
    assert wheel.wheel(1, pane) is False  # back at the bottom: leave
    # C-u / C-d move the view half a page (5 rows of 10), C-b / C-f a page (9); the cursor keeps
    # its place on the screen, until the view stops at the end of the history.
    halves = CopyMode(cursor=(505, 2))
    halves.key(b"\x15", pane)
    assert halves.offset == 5 and halves.cursor == (500, 2)
    halves.key(b"\x02", pane)
    assert halves.offset == 14 and halves.cursor == (491, 2)
    halves.key(b"\x04", pane)
    halves.key(b"\x06", pane)
    assert halves.offset == 0 and halves.cursor == (505, 2)
    halves.key(b"\x04", pane)  # at the bottom already: the cursor goes down instead
    assert halves.offset == 0 and halves.cursor == (509, 2)


def test_copy_mode_word_motions_cross_rows_like_vi():
    rows = {400: "echo foo-bar  baz", 401: "", 402: "  x_y.z", 403: "end"}
    pane = PaneGeometry(top=402, history=2, lines=2, columns=20, text_of=lambda n: rows.get(n, ""))

    def after(keys, start):
        copy = CopyMode(cursor=start)
        seen = []
        for key in keys:
            assert copy.key(key, pane) == STAY
            seen.append(copy.cursor)
        return seen

    # w: next word start (a run of letters/digits/_ or of other marks); a row's end separates
    assert after([b"w"] * 9, (400, 0)) == [(400, 5), (400, 8), (400, 9), (400, 14), (402, 2), (402, 5),
                                           (402, 6), (403, 0), (403, 0)]
    assert after([b"e"] * 5, (400, 0)) == [(400, 3), (400, 7), (400, 8), (400, 11), (400, 16)]
    assert after([b"b"] * 5, (403, 2)) == [(403, 0), (402, 6), (402, 5), (402, 2), (400, 14)]
    assert after([b"b"], (400, 2)) == [(400, 0)] and after([b"b"], (400, 0)) == [(400, 0)]
    # a selection follows word motions; without row text (no emulator) they do nothing
    copy = CopyMode(cursor=(400, 5))
    copy.key(b"v", pane)
    copy.key(b"e", pane)
    assert copy.selection() == ((400, 5), (400, 7))
    bare = PaneGeometry(top=402, history=2, lines=2, columns=20)
    assert CopyMode(cursor=(400, 0)).key(b"w", bare) == STAY


def test_prompts_confirm_and_edit():
    confirm = Prompt("kill-pane %1? (y/n)", None, confirm=True)
    assert confirm.key(b"y") == (True, "y")
    assert Prompt("x", None, confirm=True).key(b"n") == (True, None)
    rename = Prompt("(rename-window) ", None, text="bash")
    for key in (b"\x7f", b"\x7f", b"\x7f", b"\x7f", b"w", b"e", b"b"):
        assert rename.key(key) == (False, None)
    assert rename.shown() == "(rename-window) web"
    assert rename.key(b"\r") == (True, "web")
    assert Prompt("p", None).key(b"\x1b") == (True, None)


def test_mouse_is_translated_for_the_pane():
    event = Mouse(0, 30, 12, False)
    assert encode_mouse(event, 3, 2, sgr=True) == b"\x1b[<0;4;3M"
    assert encode_mouse(Mouse(0, 30, 12, True), 3, 2, sgr=True) == b"\x1b[<0;4;3m"
    assert encode_mouse(event, 3, 2, sgr=False) == b"\x1b[M" + bytes((32, 36, 35))


def test_agent_status_text():
    state = AgentState(agent_type="claude", is_agent=True,
                       activity=Activity(state="Thinking", elapsed_s=12),
                       session=AgentSession(tokens_used=4800))
    assert agent_status(state) == "claude · Thinking 12s · 4.8k tok"
    idle = AgentState(agent_type="codex", is_agent=True, activity=Activity(state="Idle"))
    assert agent_status(idle) == "codex · Idle"
    since = AgentState(agent_type="claude", is_agent=True,
                       activity=Activity(state="Generating", since=1000.0))
    assert agent_status(since, now=1005.5) == "claude · Generating 5s"
    assert agent_status(AgentState(agent_type="shell", is_agent=False)) == ""
    assert agent_status(AgentState()) == ""


def test_tmux_bindings_for_panes_windows_chooser_prompt_and_numbers():
    actions = {name: binding_for(name.encode()) for name in ("o", ";", "l", "&", "w", "s", ":", "q")}
    assert {name: b.action for name, b in actions.items()} == {
        "o": "next_pane", ";": "last_pane", "l": "last_window", "&": "kill_window", "w": "choose_tree",
        "s": "choose_tree", ":": "command_prompt", "q": "display_panes"}
    assert (actions["w"].argument, actions["s"].argument) == ("windows", "sessions")
    text = list_keys_text("C-b")
    assert text.count("  C-b 0..9   select window 0..9") == 1
    assert text.index("  C-b 0..9   select window 0..9") < text.index("  C-b :      run a muxd command "
                                                                     "(the active pane is the default -t)")


def test_pane_number_keys_are_digits_then_letters():
    from muxd.daemon.client_side.pane_numbers import pane_index_of_key

    assert [pane_index_of_key(k) for k in (b"0", b"9", b"a", b"z")] == [0, 9, 10, 35]
    assert [pane_index_of_key(k) for k in (b"\x1b[A", b"X", b"!", b"\xc3", b"\xb2")] == [None] * 5


def test_command_prompt_default_target_goes_where_the_command_takes_one():
    from muxd.daemon.core.cli_lines import with_default_target

    assert with_default_target(["split-window", "-h"], "%3") == ["split-window", "-t", "%3", "-h"]
    assert with_default_target(["splitw", "-t", "%1"], "%3") == ["splitw", "-t", "%1"]
    assert with_default_target(["kill-pane", "-t%1"], "%3") == ["kill-pane", "-t%1"]
    # After `--` the words are the program's: its -t is not muxd's.
    assert with_default_target(["new-window", "--", "ls", "-t"], "%3") == ["new-window", "-t", "%3", "--", "ls", "-t"]
    assert with_default_target(["no-such-command"], "%3") == ["no-such-command"]
    assert with_default_target(["kill-server"], "%3") == ["kill-server"]


def test_agent_phrases_for_the_chooser():
    from muxd.daemon.client_side.status_line import agent_phrase

    asking = AgentState(agent_type="claude", is_agent=True, activity=Activity(state="AwaitingConfirmation"))
    assert agent_phrase(asking) == "claude: waiting for yes"
    tool = AgentState(agent_type="codex", is_agent=True, activity=Activity(state="ToolUse"), tool="Bash")
    assert agent_phrase(tool) == "codex: running Bash"
    assert agent_phrase(AgentState(agent_type="shell", is_agent=False)) == ""
    assert agent_phrase(AgentState(agent_type="gemini", is_agent=True)) == "gemini"
    limited = AgentState(agent_type="codex", is_agent=True, activity=Activity(state="UsageLimited"))
    assert agent_phrase(limited) == "codex: at its usage limit"


def test_prompt_line_editing_and_history():
    history = ["list-panes", "split-window -h"]
    prompt = Prompt(":", None, history=history)
    for key in (b"k", b"i", b"l", b"l", b"\x1b[D", b"\x1b[D", b"\x1b[D", b"\x1b[D", b"x", b"\x05", b"!"):
        prompt.key(key)
    assert prompt.shown() == ":xkill!" and prompt.cursor_cell() == 7
    prompt.key(b"\x01")  # C-a, then Delete
    prompt.key(b"\x1b[3~")
    assert prompt.text == "kill!" and prompt.cursor_cell() == 1
    prompt.key(b"\x1b[A")
    assert prompt.text == "split-window -h" and prompt.cursor == 15
    prompt.key(b"\x17")  # C-w: the word before the cursor
    assert prompt.text == "split-window "
    prompt.key(b"\x1b[A")
    prompt.key(b"\x1b[A")  # the oldest stays
    assert prompt.text == "list-panes"
    prompt.key(b"\x1b[B")
    prompt.key(b"\x1b[B")  # back to the line being typed
    assert prompt.text == "kill!"
    prompt.key(b"\x02")  # C-b: left; C-k cuts from there
    prompt.key(b"\x0b")
    assert prompt.key(b"\r") == (True, "kill") and history[-1] == "kill"
    assert Prompt("y/n", None, confirm=True).cursor_cell() is None


def test_the_readme_lists_every_binding_of_the_table():
    from pathlib import Path

    from muxd.daemon.client_side.prefix_keys import BINDINGS

    readme = (Path(__file__).parent.parent / "README.md").read_text()
    named = {b.name for b in BINDINGS if b.action not in ("select_window", "select_pane", "resize_pane")}
    missing = sorted(name for name in named if f"`C-b {name}`" not in readme)
    assert not missing, f"README's key table lacks {missing}"
    assert "`C-b 0`…`9`" in readme and "`C-b` arrow" in readme and "`C-b M-Up`… / `C-b C-Up`…" in readme


def test_the_help_view_shows_the_users_bindings_and_copy_modes_keys():
    from muxd.daemon.client_side.key_bindings import KeyBindings

    bindings = KeyBindings()
    bindings.bind("prefix", "|", "split-window -h")
    bindings.unbind("prefix", "c")
    bindings.bind("prefix", "3", "display-message three")
    bindings.bind("root", "F6", "new-window -d")
    text = list_keys_text("C-b", bindings, "emacs")
    assert "  C-b |      split-window -h" in text and "  C-b 3      display-message three" in text
    assert not any(line.startswith("  C-b c ") for line in text)  # unbound
    assert "  C-b 2      select window 2" in text and "  C-b 0..9   select window 0..9" not in text
    assert text[text.index("Keys bound alone (bind-key -n)") + 1] == "  F6            new-window -d"
    assert "Copy mode (emacs keys: the mode-keys option)" in text and any("M-w" in line for line in text)
    assert not any("hjkl" in line for line in text)
    bindings.unbind_all("prefix")
    assert not any(line.startswith("  C-b ") for line in list_keys_text("C-b", bindings))
    assert any("hjkl" in line for line in list_keys_text("C-b", bindings))  # vi: muxd's default
