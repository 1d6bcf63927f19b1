"""Agent manifests (muxd/detectors/manifest.py) and the detector they make: a bad one is one
error naming its file and line and never stops the others; a good one reads the fake agent
`mini` (tests/agent_manifests/mini.toml) frame by frame, Unknown where no rule matches."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from muxd.detectors.base import ScreenContext
from muxd.detectors.manifest import load, parse
from muxd.detectors.manifest_detector import ManifestDetector
from muxd.detectors.registry import PACKAGED_MANIFEST_DIR, load_detectors, load_manifests
from muxd.detectors.runner import DetectorRunner
from muxd.detectors.state import Confirmation
from muxd.errors import BadManifest
from muxd.testing.fake_agents.mini import COMMAND, FakeMini
from muxd.testing.screens import assert_survives_garbage

MINI_PATH = Path(__file__).parent / "agent_manifests" / "mini.toml"
MINI = ManifestDetector(load(MINI_PATH))
MINI_ARGV = [sys.executable, "-m", "muxd.testing.fake_agent", "mini"]
README = Path(__file__).parent.parent / "README.md"

HEAD = 'name = "x"\n[identify]\nprocess_names = ["x"]\n'
RULE = '[[rules]]\nname = "prompt"\nstate = "Idle"\npattern = "ready"\n'


def frame(*rows: str, hint: str = "enter to send", tokens: int = 0) -> list[str]:
    fake = FakeMini(terminal=None)  # type: ignore[arg-type]  # drawing only
    fake.tokens = tokens
    return fake.frame(*rows, hint=hint)


def ctx(rows: list[str], **kwargs: object) -> ScreenContext:
    return ScreenContext(lines=rows, columns=80, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("text, line, words", [
    ('name = "x"\n[identify\n', 2, "not TOML: Expected ']'"),
    (HEAD + RULE + '\n[[rules]]\nname = "b"\nstate = "Idle"\npatern = "y"\n', 12, "unknown key 'rules[1].patern'"),
    (HEAD + RULE.replace('"ready"', '"(?=ready)"'), 7, "rules[0].pattern is not an RE2 regex"),
    (HEAD + RULE.replace('"ready"', "'(a)\\1'"), 7, "is not an RE2 regex"),
    (HEAD + RULE.replace('"Idle"', '"Idel"'), 6, "state 'Idel' is not one of"),
    (HEAD + RULE.replace('"ready"', "'(?P<modle>\\S+)'"), 7, "captures unknown group 'modle'"),
    ('name = "x"\n[identify]\nsignatures = [\n  { pattern = "a", weight = 0.5 },\n  { pattern = "b", weight = 1 },\n]\n'
     + RULE, 5, "weight must be above 0 and at most 0.9"),
    ('name = "x"\n' + RULE, 1, "[identify] needs process_names, argv_contains or signatures"),
    (HEAD + RULE + 'region = "bottom"\n', 8, "region 'bottom' is not defined in [regions]"),
    (HEAD + RULE + "input = true\n", 8, "input = true needs an [input] table"),
    (HEAD + RULE + RULE, 9, "two rules are named 'prompt'"),
    ('name = "Bad Name"\n' + RULE, 1, "name 'Bad Name' must be lower-case"),
    (HEAD + "[regions]\nbottom = { last = 0 }\n" + RULE, 5, "regions.bottom.last must be 1..500"),
    (HEAD, 1, "rules is required"),
    (HEAD + RULE + "tools = [{ pattern = 'x' }]\n", 8, "needs `tool = \"name\"` or a (?P<tool>...) group"),
    (HEAD + RULE + "[confirm]\nyes = []\n", 9, "confirm.yes must name at least one key"),
    (HEAD.replace('["x"]', '["mini", "node"]') + RULE, 3, "process name 'node' runs other programs too"),
    (HEAD + 'region = "nope"\n' + RULE, 4, "region 'nope' is not defined in [regions]"),
    (HEAD.replace('"x"', '"shell"', 1) + RULE, 1, "the name 'shell' is muxd's own"),
    (HEAD + "".join(RULE.replace('"prompt"', f'"r{n}"').replace('"ready"', f'"ready{n}"') for n in range(201)), 1,
     "more than 200 different patterns"),
], ids=["syntax", "unknown-key", "lookahead", "backreference", "state", "group", "inline-array", "no-identify",
        "region", "input", "duplicate", "name", "region-size", "no-rules", "tool", "confirm", "launcher",
        "identify-region", "shell", "too-many"])
def test_a_bad_manifest_is_one_error_naming_its_file_and_line(text: str, line: int, words: str) -> None:
    with pytest.raises(BadManifest) as raised:
        parse(text, "agents/x.toml")
    assert str(raised.value).startswith(f"agents/x.toml:{line}: "), str(raised.value)
    assert words in str(raised.value)
    assert raised.value.detail == {"path": "agents/x.toml", "line": line}


def test_a_bad_manifest_never_stops_the_others(tmp_path: Path) -> None:
    (tmp_path / "a_bad.toml").write_text(HEAD + RULE.replace('"Idle"', '"Sleeping"'))
    (tmp_path / "b_bytes.toml").write_bytes(b'name = "y"\n# \xff\n')
    (tmp_path / "mini.toml").write_text(MINI_PATH.read_text())
    (tmp_path / "notes.txt").write_text("not a manifest")
    detectors, errors = load_manifests(str(tmp_path))
    assert [d.name for d in detectors] == ["mini"]
    assert [str(e) for e in errors] == [f"{tmp_path / 'a_bad.toml'}:6: state 'Sleeping' is not one of "
                                        "AwaitingConfirmation, AwaitingInput, Exited, Generating, Idle, Thinking, "
                                        "ToolUse, Unknown, UsageLimited",
                                        f"{tmp_path / 'b_bytes.toml'}:2: not UTF-8"]
    assert load_manifests(str(tmp_path / "absent")) == ([], [])


def test_the_users_manifest_replaces_a_packaged_one_of_the_same_name(tmp_path, monkeypatch) -> None:
    agents = tmp_path / "muxd" / "agents"
    agents.mkdir(parents=True)
    (agents / "mine.toml").write_text(MINI_PATH.read_text().replace('name = "mini"', 'name = "opencode"'))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    by_name = {d.name: d for d in load_detectors()}
    assert {"claude", "codex", "gemini", "aider", "opencode"} <= set(by_name)
    assert by_name["opencode"].manifest.path == str(agents / "mine.toml")  # type: ignore[attr-defined]
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "empty"))
    packaged = {d.name: d for d in load_detectors()}["opencode"]
    assert packaged.manifest.path.startswith(PACKAGED_MANIFEST_DIR)  # type: ignore[attr-defined]


def test_identify_by_process_then_by_screen() -> None:
    assert MINI.identify(ctx([], process_name="python3", process_argv=MINI_ARGV)) == 1.0
    assert MINI.identify(ctx(frame())) == 0.7
    assert MINI.identify(ctx(frame(), process_name="bash")) == 0.0  # the agent has gone
    assert MINI.identify(ctx(frame(), process_name="vim")) <= 0.3  # another program owns the screen
    assert MINI.identify(ctx(["Bye from mini.", "user@host:~$"])) == 0.6  # its exit, then the shell
    assert MINI.identify(ctx(["hello", "user@host:~$"])) == 0.0


def test_each_state_from_its_rule_with_its_fields() -> None:
    idle = MINI.detect(ctx(frame(tokens=2468)), None)
    assert (idle.agent_type, idle.state, idle.rule, idle.model, idle.tokens) == ("mini", "Idle", "prompt", "mini-1",
                                                                                 2468)
    assert idle.field_rules == {"model": "status-row", "tokens_used": "status-row"}
    busy = MINI.detect(ctx(frame("⠙ Pondering (12s · esc to stop)", hint="esc to stop")), None)
    assert (busy.state, busy.rule, busy.description, busy.elapsed_s) == ("Thinking", "spinner", "Pondering", 12)
    tool = MINI.detect(ctx(frame(f"⚙ bash: {COMMAND} (3s · esc to stop)", hint="esc to stop")), None)
    assert (tool.state, tool.tool, tool.description, tool.elapsed_s) == ("ToolUse", "bash", COMMAND, 3)
    asking = MINI.detect(ctx(["> tool", "", f"? Run bash: {COMMAND}", "  1. Yes", "  2. No", "  (type 1 or 2)"]),
                         None)
    assert (asking.state, asking.rule, asking.tool) == ("AwaitingConfirmation", "run-question", "bash")
    assert asking.confirmation == Confirmation(prompt=f"Run bash: {COMMAND}", options=["1. Yes", "2. No"])


def test_no_rule_matching_is_unknown_never_idle() -> None:
    half = MINI.detect(ctx(["Mini 0.1, a fake agent", "", "mini> "]), None)  # drawn before its status row
    assert (half.state, half.rule, half.line) == ("Unknown", "no-match", "mini>")
    # the idle footer above the live rows is old text: the bottom region does not reach it
    scrolled = frame(tokens=5) + [f"row {n}" for n in range(6)]
    assert MINI.detect(ctx(scrolled), None).state == "Unknown"
    assert MINI.detect(ctx(frame(), exited=True), None).state == "Exited"
    gone = MINI.detect(ctx(["Bye from mini.", "user@host:~$"]), None)
    assert (gone.state, gone.rule) == ("Exited", "shell-prompt")


def test_unless_below_and_the_first_match() -> None:
    manifest = parse(HEAD + '[[rules]]\nname = "ask"\nstate = "AwaitingConfirmation"\n'
                     'pattern = "^Allow (?P<tool>\\\\w+)"\n'
                     'search = "first"\nunless_below = ["^ready"]\noptions = ["Yes", "No", "Later"]\n' + RULE, "x.toml")
    detector = ManifestDetector(manifest)
    asking = detector.detect(ctx(["Allow bash?", "Allow edit?", "Yes  No"]), None)
    assert (asking.state, asking.tool, asking.confirmation.options) == ("AwaitingConfirmation", "bash", ["Yes", "No"])
    old = detector.detect(ctx(["Allow bash?", "Yes  No", "ready"]), None)
    assert (old.state, old.rule) == ("Idle", "prompt")


def test_provenance_per_field_through_the_runner() -> None:
    runner = DetectorRunner("%1", detectors=[MINI], clock=lambda: 100.0)
    runner.run(ctx(frame(tokens=10), process_name="python3", process_argv=MINI_ARGV), settled=True)
    state = runner.state
    assert state.activity.state == "Idle" and state.agent_type == "mini"
    assert state.sources["state"].detail == "prompt" and state.sources["model"].detail == "status-row"
    assert state.sources["tokens_used"].detail == "status-row" and state.sources["model"].source == "screen"


def test_garbage_never_raises() -> None:
    assert_survives_garbage(MINI, "⠋⚙?·() model mini-1 tokens enter to send esc to stop 1. Yes$#", seed=5,
                            widths=(1, 20, 80))


def test_the_readme_example_is_a_manifest_that_reads_mini() -> None:
    section = README.read_text(encoding="utf-8").split("### Adding an agent with a manifest", 1)[1]
    example = re.search(r"```toml\n(.*?)```", section, re.DOTALL)
    assert example is not None
    detector = ManifestDetector(parse(example.group(1), "README.md"))
    assert detector.detect(ctx(frame()), None).state == "Idle"
    busy = frame("⠙ Pondering (2s · esc to stop)", hint="esc to stop")
    assert detector.detect(ctx(busy), None).state == "Thinking"


def test_muxd_agents_lists_the_manifests_and_says_which_are_in_error(tmp_path: Path) -> None:
    import os
    import subprocess

    agents = tmp_path / "muxd" / "agents"
    agents.mkdir(parents=True)
    (agents / "mini.toml").write_text(MINI_PATH.read_text())
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path)}
    good = subprocess.run([sys.executable, "-m", "muxd", "agents"], env=env, capture_output=True, text=True)
    assert good.returncode == 0 and good.stderr == ""
    rows = [line.split() for line in good.stdout.splitlines()[1:]]
    assert ["mini", "manifest", str(agents / "mini.toml")] in rows and rows[0][:2] == ["claude", "python"]
    (agents / "broken.toml").write_text('name = "broken"\n[identify\n')
    bad = subprocess.run([sys.executable, "-m", "muxd", "agents", "--json"], env=env, capture_output=True, text=True)
    assert bad.returncode == 1 and bad.stderr == ""
    assert '"line": 2' in bad.stdout and f"{agents / 'broken.toml'}:2: not TOML" in bad.stdout
    assert '"name": "mini"' in bad.stdout


def test_an_error_and_a_usage_limit_in_the_agents_words() -> None:
    manifest = parse(HEAD + '[[rules]]\nname = "limit"\nstate = "UsageLimited"\n'
                     "pattern = '^! (?P<error>.*limit.*)$'\n\n[[rules]]\nname = \"retry\"\nstate = \"Thinking\"\n"
                     "pattern = '^! (?P<error>.+) \\(retrying\\)$'\n" + RULE, "x.toml")
    detector = ManifestDetector(manifest)
    limited = detector.detect(ScreenContext(lines=["! You've hit your usage limit · resets 3pm (UTC)"],
                                            now=1_700_000_000.0), None)
    assert (limited.state, limited.error.type) == ("UsageLimited", "usage_limit")
    assert limited.limit is not None and limited.limit.message == "You've hit your usage limit · resets 3pm (UTC)"
    assert limited.limit.resets_at is not None and limited.limit.resets_at > 1_700_000_000.0
    retrying = detector.detect(ctx(["! 529 Overloaded (retrying)"]), None)
    assert (retrying.state, retrying.error.type, retrying.error.message) == ("Thinking", "overloaded", "529 Overloaded")


def test_tool_lines_are_the_tools_seen() -> None:
    rows = ["> tool", "✓ bash: ls demo", "  x.txt", "> again", "✓ edit: notes.md"] + frame()
    found = MINI.detect(ctx(rows), None)
    assert [(s.name, s.signature) for s in found.tools_seen] == [("bash", "✓ bash: ls demo"),
                                                                ("edit", "✓ edit: notes.md")]
    assert MINI.detect(ctx(frame()), None).tools_seen == []
