"""What a fake model server answers: a script of turns, each a list of steps.

A *turn* is the model's answer to one main-loop request of the CLI (the first prompt, or
the request carrying a tool result). Steps play in order with per-chunk delays, so the
CLI's spinners and streaming states stay on screen long enough to be seen. A `Fail` step
answers the request with an HTTP error instead; the turn is only consumed once it has
failed `times` times, so the CLI's retries land on the same turn.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Union

THINK_TEXT = ("Let me think about this carefully. First I consider the question, then I weigh the "
              "options, and finally I decide on an answer.")
DEFAULT_REPLY = "OK."
WORD_DELAY_S = 0.15
TOKEN_DELAY_S = 0.2


@dataclass(frozen=True)
class Think:
    """Reason for `tokens` chunks, one every `delay_s` (the API's thinking/reasoning stream)."""

    tokens: int = 10
    delay_s: float = TOKEN_DELAY_S
    text: str = THINK_TEXT

    def chunks(self) -> list[str]:
        words = self.text.split()
        return [words[i % len(words)] + " " for i in range(self.tokens)]


@dataclass(frozen=True)
class Say:
    """Stream `text` as answer text, one word every `delay_s`."""

    text: str
    delay_s: float = WORD_DELAY_S

    def chunks(self) -> list[str]:
        words = self.text.split(" ")
        return [w + (" " if i < len(words) - 1 else "") for i, w in enumerate(words)]


@dataclass(frozen=True)
class Call:
    """Call tool `name` with `args` (streamed as JSON in a few pieces, `delay_s` apart)."""

    name: str
    args: dict[str, Any]
    delay_s: float = 0.1
    call_id: str = ""

    def arguments_json(self) -> str:
        return json.dumps(self.args)

    def json_chunks(self, pieces: int = 3) -> list[str]:
        text = self.arguments_json()
        size = max(1, -(-len(text) // pieces))
        return [text[i:i + size] for i in range(0, len(text), size)]


@dataclass(frozen=True)
class Pause:
    """Send nothing for `seconds` (the CLI waits on the model with no output yet)."""

    seconds: float


@dataclass(frozen=True)
class Fail:
    """Answer with HTTP `status` and an error body, `times` times (None: every time).

    `in_stream=True` starts a normal 200 stream and fails inside it instead, where the API
    has a way to say so (Responses: `response.failed`; Messages: an `error` event)."""

    status: int = 529
    message: str = "Overloaded"
    times: int | None = 1
    in_stream: bool = False
    code: str | None = None  # the API's error code/type in the body; by default one that fits `status`
    # Response headers: `retry-after`, a rate limit's reset time (`anthropic-ratelimit-…-reset`).
    headers: dict[str, str] = field(default_factory=dict)
    # A usage limit (with status 429): it resets this many seconds after each answer. Each API
    # says so its own way (see `usage_limit`); None: a plain error.
    resets_in_s: float | None = None


Step = Union[Think, Say, Call, Pause, Fail]
Turn = Sequence[Step]


@dataclass
class RecordedRequest:
    at: float  # time.time() when it arrived
    method: str
    path: str
    headers: dict[str, str]
    body: Any  # parsed JSON, or the raw text when it is not JSON
    turn: int | None = None  # the scripted turn it was answered with; None for side requests
    main: bool = False       # a main-loop request (it took a turn of the script)
    usage: dict[str, Any] | None = None  # the `usage` the reply reported (as the API shapes it)
    conversation: str = ""   # the marker of the `converse` script it played; "" for the main one


@dataclass
class Script:
    """The turns a fake server plays, in order; thread-safe. Past the end every main
    request gets `Say(DEFAULT_REPLY)`."""

    turns: list[Turn] = field(default_factory=list)
    _next: int = 0
    _failures: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def of(cls, turns: Iterable[Turn] | Script) -> Script:
        return turns if isinstance(turns, Script) else cls([list(t) for t in turns])

    @property
    def turns_played(self) -> int:
        return self._next

    def extend(self, turns: Iterable[Turn]) -> None:
        """Add turns at the end: for calls whose arguments are only known once the CLI runs
        (its pane id), added before the prompt that plays them is submitted."""
        with self._lock:
            self.turns.extend(list(t) for t in turns)

    def take(self) -> tuple[int | None, list[Step]]:
        """The turn index and the steps to play for the next main request: while the turn still
        fails, its `Fail` (after the `Pause`s before it: a server slow to refuse), then the
        turn's other steps."""
        with self._lock:
            index = self._next
            if index >= len(self.turns):
                self._next += 1
                return None, [Say(DEFAULT_REPLY, delay_s=0)]
            steps = list(self.turns[index])
            fail = next((s for s in steps if isinstance(s, Fail)), None)
            if fail is not None and (fail.times is None or self._failures < fail.times):
                self._failures += 1
                waits = [s for s in steps[:steps.index(fail)] if isinstance(s, Pause)]
                return index, [*waits, fail]
            self._next += 1
            self._failures = 0
            return index, [s for s in steps if not isinstance(s, Fail)]


def failure(steps: list[Step]) -> Fail | None:
    """The `Fail` a request's steps (`Script.take`) answer with, if they fail."""
    return steps[-1] if steps and isinstance(steps[-1], Fail) else None
