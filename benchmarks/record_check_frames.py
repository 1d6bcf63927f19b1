"""Capture a small check corpus of real agent screens, to be labelled by hand (issues 25, 32).

    .venv/bin/python benchmarks/record_check_frames.py [--out tests/detector_data/issue25_check]
        [--agent claude] [--size 80x24]
    .venv/bin/python benchmarks/record_check_frames.py --out tests/detector_data/issue32 \
        --agent qwen --agent pi

Drives Claude Code, Codex, Gemini CLI and Aider (and Qwen Code and pi, when asked; one at a
time) in muxd panes of 60x18, 80x24, 100x30 and 120x40 against the scripted model servers, with the agents' hooks off (MUXD_AGENT_HOOKS=0),
and saves the screen at chosen moments as `<agent>/<agent>_<situation>_<WxH>_<nn>.txt` (what
`muxd capture-pane -p` prints) and `.ansi` (`-e`), with the cursor where the pane had it.

The moments are picked from the script, not from what muxd reads: a model phase is timed from
the arrival of the request that plays it (a `Pause`, then a `Say` streaming word by word), a
tool phase from the key that approved it, up to the request carrying its result. Each frame's
row in `scripted.tsv` says what the agent was doing then, and how many model requests had come
(a tool frame must come before its result's request): the draft from which labels.tsv is
written by reading the screens. No detector state is waited on but the CLI's first prompt.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from muxd.client.blocking import BlockingClient  # noqa: E402
from muxd.testing.fake_models import (  # noqa: E402
    AnthropicFake, Call, Fail, GeminiFake, OpenAIChatFake, OpenAIResponsesFake, Pause, Say, Think)
from muxd.testing.fake_models.agent_pane import AgentPane, CliPanes  # noqa: E402
from muxd.testing.server import MuxdTestServer  # noqa: E402
from muxd.testing.wait import wait_until  # noqa: E402

AGENTS = ("claude", "codex", "gemini", "aider")
MORE_AGENTS = ("qwen", "pi")  # recorded when asked for (issue 32's corpus)
SIZES = ((60, 18), (80, 24), (100, 30), (120, 40))
STARTUP_TIMEOUT_S = 90.0
SCREEN_TIMEOUT_S = 40.0
NO_HOOKS = {"MUXD_AGENT_HOOKS": "0"}
COLUMNS = ("file", "agent", "size", "cursor", "scripted", "tool", "situation", "requests", "check", "note")

LONG_ANSWER = (
    "Here is a longer answer that the fake model streams one word at a time, so that the reply "
    "is still arriving while the screen is captured. It talks about nothing in particular: the "
    "weather over the harbour, the colour of the boats, the way the tide comes in twice a day "
    "and leaves the sand wet and shining, and the gulls that wait on the posts for the fishing "
    "boats to come back. That is the end of the streamed answer.")
LAST_WORDS = "end of the streamed answer."
COUNT6 = "for i in 1 2 3 4 5 6; do echo step $i; sleep 1; done"
COUNT8 = "for i in 1 2 3 4 5 6 7 8; do echo line $i; sleep 1; done"
# Aider's input wraps a long line behind a "> " of its own: short enough for 60 columns.
COUNT8_SHORT = "for i in 1 2 3 4 5 6 7 8;do echo n$i;sleep 1;done"
WORD_S = 0.15


def squeezed(screen: str) -> str:
    """`screen` with its rows joined and its spaces left out: text found wherever it wraps."""
    return screen.replace("\n", "").replace(" ", "")


@dataclass
class Frame:
    file: str
    agent: str
    size: str
    cursor: str
    scripted: str
    tool: str
    situation: str
    at: float
    requests: int
    expect_requests: int | None
    note: str

    def row(self) -> dict[str, str]:
        check = "" if self.expect_requests is None else (
            "ok" if self.requests == self.expect_requests else f"MISMATCH expected {self.expect_requests} requests")
        return {"file": self.file, "agent": self.agent, "size": self.size, "cursor": self.cursor,
                "scripted": self.scripted, "tool": self.tool, "situation": self.situation,
                "requests": str(self.requests), "check": check, "note": self.note}


@dataclass
class Recorder:
    """Saves frames of one pane; `fake` counts the model's main requests at each frame."""

    server: MuxdTestServer
    pane: AgentPane
    fake: Any
    agent: str
    out: Path
    frames: list[Frame] = field(default_factory=list)
    _client: BlockingClient | None = None

    @property
    def size(self) -> str:
        return f"{self.pane.size[0]}x{self.pane.size[1]}"

    def client(self) -> BlockingClient:
        if self._client is None:
            self._client = BlockingClient.connect(self.server.socket_path, client_name="record-check")
        return self._client

    def grab(self) -> tuple[str, str, str]:
        """Text, ANSI and cursor, read one right after the other on one connection."""
        client = self.client()
        text = client.call("capture-pane", "captured", target=self.pane.pane_id).text
        ansi = client.call("capture-pane", "captured", target=self.pane.pane_id, escapes=True).text
        pane = client.call("show-pane", "pane", target=self.pane.pane_id).pane
        return text, ansi, f"{pane.cursor_x},{pane.cursor_y}"

    def screen(self) -> str:
        return self.client().call("capture-pane", "captured", target=self.pane.pane_id).text

    def wait_screen(self, shows: Callable[[str], object], what: str, timeout: float = SCREEN_TIMEOUT_S) -> str:
        seen = [""]

        def holds() -> bool:
            seen[0] = self.screen()
            return bool(shows(seen[0]))

        try:
            wait_until(holds, timeout=timeout, interval=0.2, message=what)
        except AssertionError:
            raise AssertionError(f"{what} not on screen within {timeout}s:\n{seen[0]}") from None
        return seen[0]

    def wait_text(self, text: str, timeout: float = SCREEN_TIMEOUT_S) -> str:
        """Wait until `text` shows, wrapped or not (rows joined, spaces left out)."""
        return self.wait_screen(lambda s: squeezed(text) in squeezed(s), repr(text), timeout)

    def requests(self) -> int:
        return len(self.fake.main_requests())

    def request_at(self, count: int, timeout: float = 60.0) -> float:
        """When the `count`-th main request (1-based) came."""
        return float(self.fake.wait_for_main_requests(count, timeout=timeout)[count - 1].at)

    def snap(self, situation: str, scripted: str, *, tool: str = "", note: str = "",
             at: float | None = None, expect_requests: int | None = None) -> Frame:
        """Save the screen now (or at `at`, a time.time()) as the next frame of this pane."""
        if at is not None:
            late = time.time() - at
            if late > 0.5:
                note = f"{note} (taken {late:.1f}s late)".strip()
            time.sleep(max(0.0, at - time.time()))
        when = time.time()
        text, ansi, cursor = self.grab()
        number = sum(1 for f in self.frames if f.size == self.size) + 1
        name = f"{self.agent}_{situation}_{self.size}_{number:02d}"
        directory = self.out / self.agent
        directory.mkdir(parents=True, exist_ok=True)
        (directory / f"{name}.txt").write_text(text, encoding="utf-8")
        (directory / f"{name}.ansi").write_text(ansi, encoding="utf-8")
        frame = Frame(f"{self.agent}/{name}.txt", self.agent, self.size, cursor, scripted, tool, situation,
                      when, self.requests(), expect_requests, note)
        self.frames.append(frame)
        print(f"  {frame.file}: {scripted} {tool} {note}", flush=True)
        return frame

    def submit(self, text: str) -> None:
        """Type `text`, wait until its end shows (wrapped rows joined, spaces left out), then press Enter apart:
        Codex and Gemini take text and Enter arriving together as a paste."""
        tail = squeezed(text)[-12:]
        before = squeezed(self.screen()).count(tail)
        self.pane.type(text)
        self.wait_screen(lambda s: squeezed(s).count(tail) > before, f"{text!r} typed", timeout=20)
        time.sleep(0.3)
        self.pane.press("Enter")

    def close(self) -> None:
        if self._client is not None:
            self._client.close()


# ------------------------------------------------------------------ the sessions

def claude_session(rec: Recorder, work: Path) -> None:
    pane = rec.pane
    # 1. Thinking (thinking tokens), then the answer streaming, then at rest.
    rec.submit("please think it over and then answer at length")
    t0 = rec.request_at(1)
    think_s = 30 * 0.3
    rec.snap("think", "Thinking", at=t0 + 3, note="thinking tokens streaming")
    rec.snap("think", "Thinking", at=t0 + 6.5, note="thinking tokens streaming")
    rec.snap("stream", "Generating", at=t0 + think_s + 2.5, note="answer text streaming")
    rec.snap("stream", "Generating", at=t0 + think_s + 6, note="answer text streaming")
    rec.wait_text(LAST_WORDS)
    # 2. Bash that prints slowly: the permission dialog, then the command running.
    rec.submit("please count slowly in the shell")
    rec.wait_text("Do you want to proceed?")
    time.sleep(1.0)
    rec.snap("bashperm", "AwaitingConfirmation", tool="Bash", note="Bash permission dialog for the counting loop",
             expect_requests=2)
    pane.press("Enter")
    started = time.time()
    for offset in (1.5, 3.5, 5.0):
        rec.snap("slowbash", "ToolUse", tool="Bash", at=started + offset, expect_requests=2,
                 note="for-loop printing step N once a second runs")
    t2 = rec.request_at(3)
    rec.snap("aftertool", "Thinking", at=t2 + 3, expect_requests=3,
             note="tool result sent, model silent for 6 s before answering")
    rec.wait_text("Counted to six. Done.")
    time.sleep(2)
    rec.snap("rest", "Idle", note="after the counting turn finished")
    # 3. Write permission dialog, denied with Escape.
    rec.submit("please write a draft file")
    rec.wait_text("Do you want to create")
    time.sleep(1.0)
    rec.snap("writeperm", "AwaitingConfirmation", tool="Write", note="Write permission dialog for draft.txt",
             expect_requests=4)
    pane.press("Escape")
    time.sleep(3)
    rec.snap("denied", "Idle", note="Write denied with Escape; turn over")
    # 4. Read then Edit: the edit's permission dialog, accepted.
    rec.submit("please change the colour in notes.txt")
    rec.wait_text("Do you want to make this edit")
    time.sleep(1.0)
    rec.snap("editperm", "AwaitingConfirmation", tool="Edit", note="Edit permission dialog for notes.txt",
             expect_requests=rec.requests())
    pane.press("Enter")
    rec.wait_text("Changed the colour.")
    time.sleep(1.5)
    # 5. A long silent wait on the model, interrupted with Escape: at rest after it.
    before = rec.requests()
    rec.submit("take your time with this one")
    t5 = rec.request_at(before + 1)
    rec.snap("waitmodel", "Thinking", at=t5 + 4, note="model silent (Pause 40 s), spinner only")
    pane.press("Escape")
    time.sleep(2.5)
    rec.snap("interrupted", "Idle", note="turn interrupted with Escape 2.5 s ago")
    time.sleep(4)
    rec.snap("interrupted", "Idle", note="turn interrupted with Escape 6.5 s ago")


def claude_fake(work: Path) -> AnthropicFake:
    return AnthropicFake([
        [Think(30, 0.3), Say(LONG_ANSWER, WORD_S)],
        [Say("I will count slowly.", 0.05), Call("Bash", {"command": COUNT6, "description": "Count slowly"})],
        [Pause(6), Say("Counted to six. Done.", 0.1)],
        [Say("I will write a draft.", 0.05),
         Call("Write", {"file_path": str(work / "draft.txt"), "content": "a first draft\n"})],
        [Call("Read", {"file_path": str(work / "notes.txt")})],
        [Call("Edit", {"file_path": str(work / "notes.txt"), "old_string": "colour = red",
                       "new_string": "colour = blue"})],
        [Say("Changed the colour.", 0.05)],
        [Pause(40), Say("Too late.", 0.05)],
    ])


def codex_session(rec: Recorder, work: Path) -> None:
    pane = rec.pane
    # 1. Reasoning, then the answer streaming.
    rec.submit("please reason and then answer at length")
    t0 = rec.request_at(1)
    think_s = 20 * 0.3
    rec.snap("think", "Thinking", at=t0 + 3, note="reasoning tokens streaming")
    rec.snap("stream", "Generating", at=t0 + think_s + 3, note="answer text streaming")
    rec.snap("stream", "Generating", at=t0 + think_s + 6.5, note="answer text streaming")
    rec.wait_text("end of the streamed")
    time.sleep(2)
    # 2. A long command inside the sandbox: no approval asked.
    rec.submit("please wait for the sandboxed job")
    t1 = rec.request_at(2)
    for offset in (3, 7, 11):
        rec.snap("sandboxcmd", "ToolUse", tool="exec_command", at=t1 + offset, expect_requests=2,
                 note="sleep 14 runs in the sandbox without approval (waited on for up to 30 s), no output")
    rec.wait_text("The sandboxed job finished.")
    time.sleep(2)
    rec.snap("rest", "Idle", note="after the sandboxed command turn")
    # 2b. A command left running: Codex stops waiting on it after 2 s and the turn ends.
    rec.submit("please start the watcher and leave it")
    rec.wait_text("The watcher keeps running.")
    time.sleep(3)
    rec.snap("bgrest", "Idle", note="turn over, sleep 60 left running as a background terminal")
    # 3. A command asking to leave the sandbox: the approval, then it prints slowly.
    rec.submit("please print eight lines outside the sandbox")
    rec.wait_text("Would you like to run")
    time.sleep(1.0)
    rec.snap("approval", "AwaitingConfirmation", tool="exec_command", expect_requests=6,
             note="approval for the escalated counting loop")
    pane.press("Enter")
    started = time.time()
    for offset in (2, 4.5, 7):
        rec.snap("approvedcmd", "ToolUse", tool="exec_command", at=started + offset, expect_requests=6,
                 note="approved loop printing line N once a second runs")
    t4 = rec.request_at(7)
    rec.snap("aftertool", "Thinking", at=t4 + 3, expect_requests=7,
             note="command output sent, model silent for 6 s")
    rec.wait_text("All eight lines printed.")
    time.sleep(2)
    # 4. The model fails (529): at rest with the error.
    rec.submit("one more thing please")
    rec.request_at(8)
    time.sleep(4)
    rec.snap("error", "Idle", note="turn failed with 529 4 s ago")
    time.sleep(4)
    rec.snap("error", "Idle", note="turn failed with 529 8 s ago")


def codex_fake(work: Path) -> OpenAIResponsesFake:
    return OpenAIResponsesFake([
        [Think(20, 0.3), Say(LONG_ANSWER, WORD_S)],
        [Call("exec_command", {"cmd": "sleep 14; echo slept", "yield_time_ms": 30000})],
        [Say("The sandboxed job finished.", 0.05)],
        [Call("exec_command", {"cmd": "sleep 60; echo watched", "yield_time_ms": 2000})],
        [Say("The watcher keeps running.", 0.05)],
        [Call("exec_command", {"cmd": COUNT8, "sandbox_permissions": "require_escalated",
                               "justification": "Print eight lines slowly outside the sandbox"})],
        [Pause(6), Say("All eight lines printed.", 0.05)],
        [Fail(529, "Overloaded", times=None)],
    ])


def silent_then_streamed(rec: Recorder, streaming: str, *, settle_s: float, rest_note: str) -> None:
    """1. A silent wait on the model (6 s), then the answer streaming, then at rest."""
    rec.submit("please answer at length")
    t0 = rec.request_at(1)
    rec.snap("waitmodel", "Thinking", at=t0 + 3, note="model silent for 6 s")
    rec.snap("stream", "Generating", at=t0 + 6 + 3, note=streaming)
    rec.snap("stream", "Generating", at=t0 + 6 + 6.5, note=streaming)
    rec.wait_text("end of the streamed")
    time.sleep(settle_s)  # the CLI settles at its prompt before the rest frame
    rec.snap("rest", "Idle", note=rest_note)


def gemini_session(rec: Recorder, work: Path) -> None:
    silent_then_streamed(rec, "answer text streaming", settle_s=2, rest_note="after the streamed answer")
    approved_long_shell(rec, 28, (4, 12, 23, 26.5))


def approved_long_shell(rec: Recorder, seconds: int, offsets: tuple[float, ...]) -> None:
    """2. A long shell command (Gemini CLI's Shell tool, or Qwen Code's): the approval, then
    `seconds` without output, frames `offsets` seconds in, then at rest."""
    rec.submit("please run the slow job")
    rec.wait_text("Allow execution")
    time.sleep(1.0)
    rec.snap("approval", "AwaitingConfirmation", tool="Shell", expect_requests=2,
             note=f"approval for sleep {seconds}")
    rec.pane.press("Enter")
    started = time.time()
    for offset in offsets:
        rec.snap("longshell", "ToolUse", tool="Shell", at=started + offset, expect_requests=2,
                 note=f"sleep {seconds} running, {offset:g} s in, no output")
    rec.wait_text("The slow job finished.", timeout=60)
    time.sleep(2)
    rec.snap("rest", "Idle", note="after the shell turn")


def gemini_fake(work: Path) -> GeminiFake:
    return GeminiFake([
        [Pause(6), Say(LONG_ANSWER, WORD_S)],
        [Call("run_shell_command", {"command": "sleep 28; echo finished", "description": "Wait for the slow job"})],
        [Say("The slow job finished.", 0.05)],
    ])


def aider_session(rec: Recorder, work: Path) -> None:
    pane = rec.pane
    silent_then_streamed(rec, "reply streaming", settle_s=3, rest_note="after the streamed reply")
    # 2. /run of a slow loop: nothing drawn until it ends, then the question about its output.
    rec.submit(f"/run {COUNT8_SHORT}")
    started = time.time()
    for offset in (2, 4.5, 7):
        rec.snap("runslow", "ToolUse", tool="run", at=started + offset, note="/run loop printing line N runs")
    rec.wait_text("(Y)es/(N)o", timeout=30)
    time.sleep(1.0)
    rec.snap("runask", "AwaitingConfirmation", note="asks whether to add the output to the chat")
    pane.type("n")
    pane.press("Enter")
    time.sleep(3)
    rec.snap("rest", "Idle", note="after declining to add the output")


def aider_fake(work: Path) -> OpenAIChatFake:
    return OpenAIChatFake([[Pause(6), Say(LONG_ANSWER, WORD_S)]])


def qwen_session(rec: Recorder, work: Path) -> None:
    pane = rec.pane
    silent_then_streamed(rec, "answer text streaming", settle_s=2, rest_note="after the streamed answer")
    approved_long_shell(rec, 10, (3, 6, 8.5))
    # 3. The model refuses the request (400): at rest with the error.
    rec.submit("one more thing please")
    rec.wait_text("API Error")
    time.sleep(1.5)
    rec.snap("error", "Idle", note="turn failed with 400")
    # 4. Ctrl+C twice (a typed /quit stops at its completion menu): the goodbye box.
    pane.press("C-c")
    rec.wait_text("again to exit")
    pane.press("C-c")
    rec.wait_text("qwen --resume")  # the goodbye box is taller than a small pane
    time.sleep(1.5)
    rec.snap("exit", "Exited", note="after Ctrl+C twice")


def qwen_fake(work: Path) -> OpenAIChatFake:
    return OpenAIChatFake([
        [Pause(6), Say(LONG_ANSWER, WORD_S)],
        [Call("run_shell_command", {"command": "mkdir -p job && sleep 10 && echo finished",
                                    "description": "Wait for the slow job"})],
        [Say("The slow job finished.", 0.05)],
        [Fail(400, "fake bad request", times=None)],
    ])


def pi_session(rec: Recorder, work: Path) -> None:
    silent_then_streamed(rec, "answer text streaming (pi's spinner says Working... throughout)", settle_s=2,
                         rest_note="after the streamed answer")
    # 2. bash printing slowly (pi asks before no tool), then a silent model.
    rec.submit("please count slowly in the shell")
    t1 = rec.request_at(2)
    for offset in (2.5, 5, 7.5):
        rec.snap("slowbash", "ToolUse", tool="bash", at=t1 + offset, expect_requests=2,
                 note="for-loop printing line N once a second runs")
    t2 = rec.request_at(3)
    rec.snap("aftertool", "Thinking", at=t2 + 3, expect_requests=3, note="tool result sent, model silent for 6 s")
    rec.wait_text("All eight lines printed.")
    time.sleep(2)
    rec.snap("rest", "Idle", note="after the bash turn")
    # 3. The model keeps failing (500): its client's own retries, then pi's three, then at rest.
    rec.submit("one more thing please")
    rec.wait_text("Retrying (1/3)")
    time.sleep(0.5)
    rec.snap("retry", "Thinking", note="500 retried by pi (1/3), its error above")
    rec.wait_screen(lambda s: "Retrying" not in s and "Working..." not in s and "Error: 500" in s,
                    "the turn given up", timeout=60)
    time.sleep(1.5)
    rec.snap("error", "Idle", note="turn failed with 500 after the retries")


def pi_fake(work: Path) -> OpenAIChatFake:
    return OpenAIChatFake([
        [Pause(6), Say(LONG_ANSWER, WORD_S)],
        [Say("I will count.", 0.05), Call("bash", {"command": COUNT8})],
        [Pause(6), Say("All eight lines printed.", 0.05)],
        [Fail(500, "fake overload", times=None)],
    ])


SESSIONS = {"claude": (claude_fake, claude_session, ("--permission-mode", "default")),
            "codex": (codex_fake, codex_session, ()),
            "gemini": (gemini_fake, gemini_session, ()),
            "aider": (aider_fake, aider_session, ("notes.txt",)),
            "qwen": (qwen_fake, qwen_session, ()),
            "pi": (pi_fake, pi_session, ())}


def record(agent: str, size: tuple[int, int], out: Path) -> list[Frame]:
    make_fake, session, args = SESSIONS[agent]
    server = MuxdTestServer().start()
    frames: list[Frame] = []
    try:
        with TemporaryDirectory(prefix=f"chk-{agent}-") as directory:
            root = Path(directory)
            work = root / "work"
            work.mkdir()
            (work / "notes.txt").write_text("colour = red\nsize = 3\n")
            fake = make_fake(work)
            panes = CliPanes(server, root, timeout=STARTUP_TIMEOUT_S)
            try:
                pane = panes.start(agent, fake, *args, size=size, env=NO_HOOKS)
                if pane is None:
                    raise SystemExit(panes.missing)
                time.sleep(2)
                rec = Recorder(server, pane, fake, agent, out)
                try:
                    session(rec, work)
                finally:
                    frames = rec.frames
                    rec.close()
            finally:
                panes.close()
    finally:
        server.stop()
    return frames


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "detector_data" / "issue25_check")
    parser.add_argument("--agent", choices=AGENTS + MORE_AGENTS, action="append", help="only this agent (repeatable)")
    parser.add_argument("--size", action="append", help="only this size, e.g. 80x24 (repeatable)")
    args = parser.parse_args(argv)
    sizes = [s for s in SIZES if not args.size or f"{s[0]}x{s[1]}" in args.size]
    draft = args.out / "scripted.tsv"
    rows: list[dict[str, str]] = []
    if draft.exists():
        with draft.open(encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh, delimiter="\t"))
    failed = []
    for agent in args.agent or AGENTS:
        for size in sizes:
            label = f"{size[0]}x{size[1]}"
            print(f"{agent} {label}", flush=True)
            for old in args.out.glob(f"{agent}/{agent}_*_{label}_*"):
                old.unlink()
            rows = [r for r in rows if not (r["agent"] == agent and r["size"] == label)]
            try:
                frames = record(agent, size, args.out)
            except (AssertionError, OSError) as exc:
                print(f"{agent} {label} failed: {exc}", file=sys.stderr)
                failed.append(f"{agent} {label}")
                continue
            rows += [f.row() for f in frames]
            args.out.mkdir(parents=True, exist_ok=True)
            with draft.open("w", encoding="utf-8", newline="") as fh:
                writer = csv.DictWriter(fh, COLUMNS, delimiter="\t", lineterminator="\n")
                writer.writeheader()
                writer.writerows(sorted(rows, key=lambda r: r["file"]))
    if failed:
        print("failed: " + ", ".join(failed), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
