"""Capture the real CLIs' usage-limit screens, to be labelled by hand (issue 26).

    .venv/bin/python benchmarks/record_limit_frames.py [--out tests/detector_data/usage_limits]
        [--agent claude] [--size 80x24]

Each situation starts the CLI in a muxd pane (hooks off) against a scripted model server whose
first answer is a 429 with the provider's reset (`Fail(429, resets_in_s=…)`), submits a
prompt and saves the screen once the CLI has drawn the limit (`.txt` as `muxd capture-pane -p`
prints it, `.ansi` with `-e`). `captured.tsv` gives each frame's capture time and the reset the
server announced (epoch seconds), from which labels.tsv's expected reset is read off the screen.
Claude Code runs as a subscriber (an OAuth token) but in `apikey`: to an API key the limit is a
plain 429 (and a 429 without the unified headers is retried ten times over minutes).
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from record_check_frames import NO_HOOKS, STARTUP_TIMEOUT_S, Recorder  # noqa: E402

from muxd.testing.fake_models import AnthropicFake, Fail, GeminiFake, OpenAIResponsesFake, Say  # noqa: E402
from muxd.testing.fake_models.agent_pane import CliPanes  # noqa: E402
from muxd.testing.server import MuxdTestServer  # noqa: E402

SIZES = ((60, 18), (80, 24), (120, 40))
COLUMNS = ("file", "agent", "size", "cursor", "situation", "captured_at", "server_reset_at", "note")
SUBSCRIBER = {**NO_HOOKS, "CLAUDE_CODE_OAUTH_TOKEN": "sk-ant-oat01-fake", "ANTHROPIC_API_KEY": ""}
PROMPT = "hello there"
LATER_TIMEOUT_S = 150.0  # Claude Code continues by itself up to a minute or so after the reset


@dataclass(frozen=True)
class Situation:
    agent: str
    name: str
    fake: Callable[[], Any]
    resets_in_s: float | None
    shows: str                         # text the screen shows once the limit is drawn
    env: dict[str, str]
    then: tuple[str, ...] = ()         # keys pressed after the first frame (if any), then a second
    then_shows: str = ""               # frame once this shows
    note: str = ""


def _claude(claim: str, resets_in_s: float) -> Callable[[], AnthropicFake]:
    return lambda: AnthropicFake([[Fail(429, "Rate limited", times=None, resets_in_s=resets_in_s,
                                        headers={"anthropic-ratelimit-unified-representative-claim": claim}),
                                   Say("Resumed.", 0)]])


SITUATIONS = (
    Situation("claude", "fivehour", _claude("five_hour", 3 * 3600), 3 * 3600, "Continuing automatically", SUBSCRIBER,
              note="5-hour limit, Claude's own auto-continue armed"),
    Situation("claude", "continued", lambda: AnthropicFake([[Fail(429, "Rate limited", times=1, resets_in_s=10),
                                                             Say("Resumed after the limit.", 0)]]), 10,
              "Continuing", SUBSCRIBER, then_shows="Resumed after the limit.",
              note="a 5-hour limit 10 s long: Claude waits, then continues by itself"),
    Situation("claude", "weekly", _claude("seven_day", 3 * 86400), 3 * 86400, "What do you want to do?", SUBSCRIBER,
              note="weekly limit: a dialog over the limit row"),
    Situation("claude", "apikey", _claude("five_hour", 3 * 3600), 3 * 3600, "Request rejected (429)", NO_HOOKS,
              note="the same limit to an API key: a plain 429, no reset said"),
    Situation("codex", "usage", lambda: OpenAIResponsesFake([[Fail(429, "The usage limit has been reached",
                                                                  times=None, resets_in_s=2 * 3600)]]),
              2 * 3600, "try again at", NO_HOOKS, note="ChatGPT plan's limit, reset today"),
    Situation("codex", "usagedate", lambda: OpenAIResponsesFake([[Fail(429, "The usage limit has been reached",
                                                                      times=None, resets_in_s=3 * 86400)]]),
              3 * 86400, "try again at", NO_HOOKS, note="ChatGPT plan's limit, reset in 3 days"),
    Situation("codex", "ratelimit", lambda: OpenAIResponsesFake([[Fail(429, "Rate limit reached", times=None)]]),
              None, "429 Too Many Requests", NO_HOOKS, note="a 429 Codex gave up retrying: no reset said"),
    Situation("gemini", "quota", lambda: GeminiFake([[Fail(429, "You exceeded your current quota, please check "
                                                            "your plan and billing details.", times=None,
                                                            resets_in_s=400)]]),
              400, "Keep trying", NO_HOOKS, ("Down", "Enter"), "This request failed",
              note="a quota of 400 s: the dialog, then Stop chosen"),
    Situation("gemini", "daily", lambda: GeminiFake([[Fail(429, "You exceeded your current quota, please check "
                                                            "your plan and billing details.", times=None,
                                                            resets_in_s=8 * 3600)]]),
              8 * 3600, "Keep trying", NO_HOOKS, ("Down", "Enter"), "This request failed",
              note="a daily quota: the dialog, then Stop chosen"),
)


def record(situation: Situation, size: tuple[int, int], out: Path) -> list[dict[str, str]]:
    server = MuxdTestServer().start()
    rows: list[dict[str, str]] = []
    try:
        with TemporaryDirectory(prefix=f"lim-{situation.agent}-") as directory:
            fake = situation.fake()
            panes = CliPanes(server, Path(directory), timeout=STARTUP_TIMEOUT_S)
            try:
                args = ("--permission-mode", "default") if situation.agent == "claude" else ()
                pane = panes.start(situation.agent, fake, *args, size=size, env=situation.env)
                if pane is None:
                    raise SystemExit(panes.missing)
                rec = Recorder(server, pane, fake, situation.agent, out)
                asked_at = time.time()
                rec.submit(PROMPT)
                reset = "" if situation.resets_in_s is None else f"{asked_at + situation.resets_in_s:.0f}"
                frames = []
                rec.wait_text(situation.shows)
                time.sleep(1.5)  # what follows the limit's first row (the footer, the note) drawn too
                frames.append(rec.snap(situation.name, "UsageLimited", note=situation.note))
                if situation.then_shows:
                    if situation.then:
                        pane.press(*situation.then)
                    rec.wait_text(situation.then_shows, timeout=LATER_TIMEOUT_S)
                    time.sleep(1.0)
                    frames.append(rec.snap(situation.name, "UsageLimited", note=f"{situation.note} (after)"))
                for frame in frames:
                    rows.append({"file": frame.file, "agent": frame.agent, "size": frame.size, "cursor": frame.cursor,
                                 "situation": situation.name, "captured_at": f"{frame.at:.0f}",
                                 "server_reset_at": reset, "note": frame.note})
                rec.close()
            finally:
                panes.close()
    finally:
        server.stop()
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "detector_data" / "usage_limits")
    parser.add_argument("--agent", action="append", help="only this agent (repeatable)")
    parser.add_argument("--situation", action="append", help="only this situation (repeatable)")
    parser.add_argument("--size", action="append", help="only this size, e.g. 80x24 (repeatable)")
    args = parser.parse_args(argv)
    sizes = [s for s in SIZES if not args.size or f"{s[0]}x{s[1]}" in args.size]
    table = args.out / "captured.tsv"
    rows: list[dict[str, str]] = []
    if table.exists():
        with table.open(encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh, delimiter="\t"))
    for situation in SITUATIONS:
        if (args.agent and situation.agent not in args.agent) or (args.situation and situation.name not in args.situation):
            continue
        for size in sizes:
            label = f"{size[0]}x{size[1]}"
            print(f"{situation.agent} {situation.name} {label}", flush=True)
            prefix = f"{situation.agent}/{situation.agent}_{situation.name}_{label}_"
            for old in args.out.glob(f"{prefix}*"):
                old.unlink()
            rows = [r for r in rows if not r["file"].startswith(prefix)]
            rows += record(situation, size, args.out)
            args.out.mkdir(parents=True, exist_ok=True)
            with table.open("w", encoding="utf-8", newline="") as fh:
                writer = csv.DictWriter(fh, COLUMNS, delimiter="\t", lineterminator="\n")
                writer.writeheader()
                writer.writerows(sorted(rows, key=lambda r: r["file"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
