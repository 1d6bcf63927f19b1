"""A manifest rule's reading of the rows around its own (muxd/detectors/manifest.py): `requires`
(rows shown elsewhere too), `block_above` (what comes just before the matched row's block), a
signature in its own region, a foreign signature (another agent's words: not this one's
screen), and Exited rules read after the agent's process has ended. Kilo's manifest is built
on them (tests/test_detector_kilo.py replays its real screens)."""

from __future__ import annotations

import pytest

from muxd.detectors.base import ScreenContext
from muxd.detectors.manifest import parse
from muxd.detectors.manifest_detector import ManifestDetector
from muxd.errors import BadManifest

MANIFEST = r"""
name = "chat"
[identify]
process_names = ["chat"]
region = "bottom"
signatures = [
    { pattern = '^chat>', weight = 0.6 },
    { pattern = '^== chat ==$', weight = 0.8, region = "screen" },
]
[regions]
bottom = { last = 2 }
[[rules]]
name = "bye"
state = "Exited"
region = "bottom"
pattern = 'resume with chat --session (?P<session_id>\w+)'
[[rules]]
name = "tool"
state = "ToolUse"
region = "screen"
pattern = '^  \* (?P<description>.+)'
requires = [{ region = "bottom", pattern = 'busy' }]
[[rules]]
name = "busy"
state = "Thinking"
region = "bottom"
pattern = 'busy'
[[rules]]
name = "unanswered"
state = "Unknown"
region = "screen"
pattern = '^chat>'
block_above = '^you: |^$'
[[rules]]
name = "prompt"
state = "Idle"
region = "bottom"
pattern = '^chat>'
"""
CHAT = ManifestDetector(parse(MANIFEST, "chat.toml"))


def read(*rows: str, **kwargs: object) -> tuple[str, str | None]:
    found = CHAT.detect(ScreenContext(lines=list(rows), columns=80, **kwargs), None)  # type: ignore[arg-type]
    return found.state, found.rule


def test_requires_needs_its_row_shown_too() -> None:
    assert read("  * ls -l", "", "chat> ", "busy") == ("ToolUse", "tool")
    assert read("  * ls -l", "", "you: hi", "", "chat> ") != ("ToolUse", "tool")  # the tool row, not busy


def test_block_above_reads_what_comes_just_before_the_block() -> None:
    assert read("you: hi", "", "", "chat> ") == ("Unknown", "unanswered")  # the message, no answer
    assert read("", "", "chat> ") == ("Unknown", "unanswered")  # nothing above: tried on ""
    assert read("you: hi", "", "bot: hello", "", "chat> ") == ("Idle", "prompt")
    # the rows of the matched row's own block are not "above" it
    assert read("bot: hello", "", "you: hi", "chat> ") == ("Idle", "prompt")


def test_a_foreign_signature_makes_the_screen_anothers() -> None:
    fork = ManifestDetector(parse(MANIFEST.replace('region = "bottom"\n', 'region = "bottom"\n'
                                                   "foreign_signatures = ['^fork mode']\n", 1), "chat.toml"))
    assert fork.identify(ScreenContext(lines=["chat> "])) == 0.6
    assert fork.identify(ScreenContext(lines=["chat> ", "fork mode"])) == 0.0
    assert fork.identify(ScreenContext(lines=["fork mode", "chat> "], process_name="chat")) == 1.0  # its process


def test_a_signature_reads_its_own_region() -> None:
    assert CHAT.identify(ScreenContext(lines=["x", "y", "chat> "])) == 0.6
    # the banner is far above the bottom region, in the screen region its signature names
    assert CHAT.identify(ScreenContext(lines=["== chat ==", "a", "b", "c", "chat> "])) == 0.8


@pytest.mark.parametrize("exited, last", [(True, "x"), (False, "user@host:~$ ")])
def test_an_exited_rule_reads_what_the_agent_left(exited: bool, last: str) -> None:
    rows = ("bye", "resume with chat --session abc123", last)
    found = CHAT.detect(ScreenContext(lines=list(rows), columns=80, exited=exited), None)
    assert (found.state, found.rule, found.session_id) == ("Exited", "bye", "abc123")
    gone = CHAT.detect(ScreenContext(lines=["bye", last], columns=80, exited=exited), None)
    assert (gone.state, gone.rule) == ("Exited", "pane-exited" if exited else "shell-prompt")


@pytest.mark.parametrize("extra, words", [
    ("requires = [{ pattern = 'a', regin = 'x' }]\n", "unknown key 'rules[0].requires[0].regin'"),
    ("requires = [{ region = 'top', pattern = 'a' }]\n", "region 'top' is not defined"),
    ("block_above = '(?<=a)'\n", "rules[0].block_above is not an RE2 regex"),
])
def test_a_bad_context_key_names_its_line(extra: str, words: str) -> None:
    text = 'name = "x"\n[identify]\nprocess_names = ["x"]\n[[rules]]\nname = "a"\nstate = "Idle"\npattern = "a"\n'
    with pytest.raises(BadManifest) as caught:
        parse(text + extra, "x.toml")
    assert words in str(caught.value) and caught.value.detail == {"path": "x.toml", "line": 8}
