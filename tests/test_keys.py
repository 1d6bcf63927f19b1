import pytest

from muxd.errors import BadRequest
from muxd.keys import key_name_to_text, keys_to_bytes


@pytest.mark.parametrize("name, expected", [
    ("Enter", "\r"), ("Escape", "\x1b"), ("Tab", "\t"), ("BSpace", "\x7f"), ("Space", " "),
    ("Up", "\x1b[A"), ("Down", "\x1b[B"), ("Right", "\x1b[C"), ("Left", "\x1b[D"),
    ("Home", "\x1b[H"), ("End", "\x1b[F"), ("PageUp", "\x1b[5~"), ("PageDown", "\x1b[6~"),
    ("PPage", "\x1b[5~"), ("NPage", "\x1b[6~"), ("DC", "\x1b[3~"), ("IC", "\x1b[2~"),
    ("F1", "\x1bOP"), ("F4", "\x1bOS"), ("F5", "\x1b[15~"), ("F12", "\x1b[24~"),
    ("C-c", "\x03"), ("C-a", "\x01"), ("C-z", "\x1a"), ("C-Space", "\x00"), ("C-[", "\x1b"),
    ("^D", "\x04"), ("M-x", "\x1bx"), ("M-C-a", "\x1b\x01"), ("C-M-a", "\x1b\x01"),
    ("S-Up", "\x1b[1;2A"), ("C-Left", "\x1b[1;5D"), ("M-Right", "\x1b[1;3C"), ("C-F5", "\x1b[15;5~"),
    ("S-a", "A"), ("enter", "\r"), ("ESCAPE", "\x1b"),
])
def test_key_names(name, expected):
    assert key_name_to_text(name) == expected


@pytest.mark.parametrize("text", ["echo hi", "a", "-l", "C-", "Enterprise", "F13", "C-é", ""])
def test_non_key_names_are_text(text):
    assert key_name_to_text(text) is None or len(text) == 1


def test_send_keys_mixes_text_and_key_names_like_tmux():
    assert keys_to_bytes(["echo hello-$((6*7))", "Enter"]) == b"echo hello-$((6*7))\r"


def test_literal_sends_key_names_as_text():
    assert keys_to_bytes(["Enter", "C-c"], literal=True) == b"EnterC-c"


def test_hex_bytes():
    assert keys_to_bytes(["1b", "5b 41", "0D"], hex_bytes=True) == b"\x1b[A\r"


@pytest.mark.parametrize("bad", ["zz", "100", "-1"])
def test_bad_hex_is_refused(bad):
    with pytest.raises(BadRequest):
        keys_to_bytes([bad], hex_bytes=True)


def test_unicode_text_is_utf8():
    assert keys_to_bytes(["héllo 世界"]) == "héllo 世界".encode()


@pytest.mark.parametrize("name, normal, application", [
    ("Up", "\x1b[A", "\x1bOA"), ("Left", "\x1b[D", "\x1bOD"), ("Home", "\x1b[H", "\x1bOH"),
    ("End", "\x1b[F", "\x1bOF"), ("S-Up", "\x1b[1;2A", "\x1b[1;2A"), ("KP5", "5", "\x1bOu"),
    ("KP0", "0", "\x1bOp"), ("KPEnter", "\n", "\x1bOM"), ("KP/", "/", "\x1bOo"), ("PageUp", "\x1b[5~", "\x1b[5~"),
])
def test_cursor_and_keypad_modes(name, normal, application):
    assert key_name_to_text(name) == normal
    assert key_name_to_text(name, frozenset({1, 66})) == application


def test_keypad_mode_alone_leaves_cursor_keys_normal():
    assert keys_to_bytes(["Up", "KP1"], modes=frozenset({66})) == b"\x1b[A\x1bOq"
    assert keys_to_bytes(["Up", "KP1"], modes=frozenset({1})) == b"\x1bOA1"
