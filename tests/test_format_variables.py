"""tmux's format variables (muxd/daemon/panes/format_variables.py): #{pane_start_command} is
quoted exactly as shlex.join quotes it, without shlex (whose re costs a tmux shim call)."""

import random
import shlex

import pytest

from muxd.daemon.panes.format_variables import shell_join

TRICKY = [
    [], [""], ["", ""], ["sh"], ["sh", "-c", "echo ready; exec sleep 600"], ["a b"], ["it's"], ["'"], ["''"],
    ['"'], ["$HOME"], ["`x`"], ["a\nb"], ["tab\there"], ["-"], ["--"], ["=x"], ["@%+=:,./-_"], ["~"], ["*"],
    ["é"], ["日本"], ["ǅ"], ["١٢٣"], ["ß"], ["\x00"], ["\x7f"], ["a\u00a0b"], ["\U0001f600"], ["x'y'z"],
    ["'a'", "b c", ""], ["/usr/bin/env", "python3", "-m", "muxd"], ["a!b"], ["a#b"], ["[x]"], ["{a,b}"],
    ["a\\b"], ["a;b"], ["a&b"], ["a|b"], ["a>b"], ["(x)"], ["x^y"], ["\r"],
]


@pytest.mark.parametrize("words", TRICKY, ids=repr)
def test_it_quotes_as_shlex_join_does(words):
    assert shell_join(words) == shlex.join(words)


def test_it_quotes_every_character_as_shlex_join_does():
    """Each character of the ASCII range and of a wide sample beyond, alone and inside a word."""
    for code in [*range(128), *range(128, 0x3000, 7), *range(0x10000, 0x10400, 13)]:
        char = chr(code)
        for words in ([char], [f"a{char}b"], [char * 2, "x"]):
            assert shell_join(words) == shlex.join(words), repr(words)


def test_random_words_quote_as_shlex_join_does():
    alphabet = "aZ09_@%+=:,./- '\"$\\\n\té!;&*"
    chooser = random.Random(29)
    for _ in range(2000):
        words = ["".join(chooser.choices(alphabet, k=chooser.randrange(6))) for _ in range(chooser.randrange(4))]
        assert shell_join(words) == shlex.join(words), repr(words)


def test_layers_read_as_a_chainmap_of_the_same_maps():
    """Layers stands where collections.ChainMap stood: the same lookups, names and order."""
    from collections import ChainMap

    from muxd.daemon.panes.format_variables import Layers, OptionDefaults

    hook, server = {"hook": "pane-exited", "pid": "shadowed"}, {"pid": "7", "host": "h"}
    pane, window = {"pane_id": "%1", "host": "mine"}, {"window_id": "@0", "pane_id": "ignored"}
    maps = [pane, window, Layers(hook, server, OptionDefaults())]
    layers, chain = Layers(*maps), ChainMap(*maps)
    for name in ("pane_id", "host", "pid", "hook", "window_id", "focus-events", "status", "nosuch"):
        assert (name in layers, layers.get(name), layers.get(name, "")) == (name in chain, chain.get(name),
                                                                            chain.get(name, ""))
    assert list(layers) == list(chain) and len(layers) == len(chain) and dict(layers) == dict(chain)
    with pytest.raises(KeyError):
        layers["nosuch"]


def test_the_attention_layer_holds_what_attention_variables_gives():
    from muxd.daemon.attention.elsewhere import attention_variables, elsewhere
    from muxd.daemon.panes.format_variables import ATTENTION_PREFIXES, Attention
    from muxd.protocol.msgpack_lite import Record

    sessions = {"$0": Record(id="$0", needs={"waiting": 1}), "$1": Record(id="$1", needs={"failed": 2, "finished": 1}),
                "$2": Record(id="$2", needs=None)}
    expected = attention_variables(elsewhere([("$0", {"waiting": 1}), ("$1", {"failed": 2, "finished": 1})], "$0"))
    layer = Attention(sessions, "$0")
    assert all(name.startswith(ATTENTION_PREFIXES) for name in expected)
    assert dict(layer) == expected and len(layer) == len(expected)
    assert [layer[name] for name in expected] == list(expected.values())
    assert "agent_type" not in layer and "agents_nosuch" not in layer
    with pytest.raises(KeyError):
        layer["host"]
