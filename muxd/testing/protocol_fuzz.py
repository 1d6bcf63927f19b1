"""A seeded protocol fuzzer: hostile frames over real connections to a real daemon.

`FrameFuzzer(seed, pane, session)` makes frames: valid requests with mutated fields, wrong
types, unknown tags, invalid UTF-8, deep nesting, huge and lying lengths, random bodies, and
(ending a connection) truncated frames, oversized headers and unframed garbage.
`ProtocolFuzzRun(socket_path, fuzzer).run(frames=N)` sends them over a series of connections,
reading as it writes, and tallies what came back in a `FuzzTally`. Nothing it sends kills the
server or the fuzzed panes, nor creates panes. Used by tests/test_protocol_fuzz.py and
benchmarks/fuzz_protocol.py.
"""

from __future__ import annotations

import contextlib
import random
import selectors
import socket
import struct
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from muxd.config import MAX_FRAME_BYTES, PROTOCOL_VERSION
from muxd.protocol.codec import decode_request, decode_server_message, encode
from muxd.protocol.framing import FrameDecoder
from muxd.protocol.messages import REQUEST_TAGS, AttachInput, AttachResize, Error, Hello, Welcome
from muxd.testing.patience import Deadline
from muxd.testing.hostile_msgpack import LyingHeader, Nested, RawStr, Repeated, pack

# Requests the fuzzer never sends, not even as a mutated tag: they would end the server, kill
# the panes being fuzzed, create panes by the hundred, or turn the connection into a terminal.
UNSENDABLE_TAGS = frozenset({"kill-server", "kill-session", "kill-window", "kill-pane", "new-session",
                             "new-window", "split-window", "attach"})
SENDABLE_TAGS = sorted(REQUEST_TAGS - UNSENDABLE_TAGS)
# The fuzzed session's one pane (%0) reads its input raw and silently: no key typed at it can
# signal or stop it.
FUZZ_SESSION = "fz"
FUZZ_PANE = "%0"
FUZZ_PANE_COMMAND = ("sh", "-c", "stty raw -echo; exec cat > /dev/null")
BATCH_FRAMES_MAX = 24           # frames sent before the replies to them are awaited
REPLY_TIMEOUT_S = 10.0          # a batch's replies must all be in within this
CONNECTION_FRAMES_MAX = 400     # a connection is closed and a new one opened after about this many
HUGE_LIST_ITEMS_MAX = 200_000   # the largest list a frame carries (~600 KB of two-character keys)


@dataclass(frozen=True)
class FuzzFrame:
    data: bytes           # what goes on the wire
    kind: str             # which generator made it
    replies: int          # replies the daemon owes for it (0 or 1; framing damage: 1 if it can tell)
    ends_connection: bool = False  # framing damage: the daemon closes the connection after it


@dataclass
class FuzzTally:
    frames_sent: int = 0
    replies_by_code: Counter[str] = field(default_factory=Counter)  # "ok" for every non-error reply
    replies_missing: int = 0       # replies owed but never received (connection lost or timed out)
    connections: int = 0
    connections_dropped: int = 0   # closed by the daemon although the framing was intact
    left_open: int = 0             # connections the daemon kept open after framing damage
    kinds: Counter[str] = field(default_factory=Counter)

    def summary(self) -> str:
        codes = ", ".join(f"{code} {n}" for code, n in sorted(self.replies_by_code.items()))
        return (f"frames sent {self.frames_sent} over {self.connections} connections; replies: {codes}; "
                f"replies missing {self.replies_missing}; connections dropped {self.connections_dropped}; "
                f"left open after framing damage {self.left_open}")


def _framed(body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + body


class FrameFuzzer:
    """Deterministic for a seed: the same frames in the same order."""

    def __init__(self, seed: int, pane: str, session: str) -> None:
        self.rng = random.Random(seed)
        self.pane, self.session = pane, session
        self.next_id = 100

    # ------------------------------------------------------------ values

    def _text(self) -> str:
        rng = self.rng
        alphabet = rng.choice(("abc%:.$@", "é€😀\u200b", "\x00\x1b\n\x7f", "%0123456789"))
        return "".join(rng.choice(alphabet) for _ in range(rng.choice((0, 1, 3, 12, 300))))

    def value(self, depth: int = 0) -> Any:
        """Any msgpack value, hostile ones included."""
        rng = self.rng
        choice = rng.randrange(14 if depth < 2 else 10)
        if choice == 0:
            return None
        if choice == 1:
            return rng.random() < 0.5
        if choice == 2:
            return rng.choice((0, 1, -1, 2**31, 2**63 - 1, 2**64 - 1, -(2**63), rng.randint(-999, 99999)))
        if choice == 3:
            return rng.choice((0.5, float("nan"), float("inf"), -1e308))
        if choice in (4, 5):
            return self._text()
        if choice == 6:
            return rng.randbytes(rng.choice((0, 1, 64, 5000)))
        if choice == 7:
            return RawStr(rng.choice((b"\xff", b"\xc3\x28", b"ab\xed\xa0\x80", b"\xf8\x88\x80\x80\x80", b"\x80")))
        if choice == 8:
            return Nested(rng.choice((2, 40, 200, 1000, 5000, 20000)))
        if choice == 9:
            return LyingHeader(rng.choice(("array", "map", "str", "bin")),
                               rng.choice((2**16, 2**31, 2**32 - 1)), rng.randrange(3))
        if choice in (10, 11):
            return [self.value(depth + 1) for _ in range(rng.randrange(4))]
        if choice == 12:
            return {self._text(): self.value(depth + 1) for _ in range(rng.randrange(4))}
        return self._huge_list()

    def _huge_list(self) -> Repeated:
        return Repeated("ab", self.rng.choice((1_000, 20_000, HUGE_LIST_ITEMS_MAX)))

    # ------------------------------------------------------------ messages

    def _valid(self) -> dict[str, Any]:
        """A request the daemon should accept, as a plain dict (the mutations start from it)."""
        pane, rng = self.pane, self.rng
        choices: list[dict[str, Any]] = [
            {"type": "list-panes", "all": True}, {"type": "list-sessions"},
            {"type": "list-windows", "target": self.session}, {"type": "has-session", "target": self.session},
            {"type": "capture-pane", "target": pane, "start": -20}, {"type": "summary", "target": pane},
            {"type": "server-status"}, {"type": "send-keys", "target": pane, "keys": ["fuzz", "Enter"]},
            {"type": "resize-pane", "target": pane, "columns": rng.randint(20, 120), "lines": rng.randint(5, 40)},
            {"type": "get-metrics"}, {"type": "tool-history", "limit": 5}, {"type": "list-tokens"},
            {"type": "subscribe", "panes": [pane]}, {"type": "revoke-token", "token": "no-such-token"},
            {"type": "grant", "pane": pane, "to": "no-such-token"},
            {"type": "record-call", "tool": "fuzz", "args_sha256": "0" * 64, "status": "ok"},
            {"type": "register-tools", "tools": [{"name": "fuzz", "category": "engine", "risk": "safe"}]},
            {"type": "attach-input", "data": b"x"}, {"type": "attach-resize", "columns": 80},
            {"type": "hello", "protocol_version": PROTOCOL_VERSION},
        ]
        message = rng.choice(choices)
        message["id"] = self._new_id()
        return message

    def _new_id(self) -> int:
        self.next_id += 1
        return self.next_id

    def _mutated(self) -> tuple[str, Any]:
        rng = self.rng
        message = self._valid()
        fields = list(message)
        how = rng.randrange(6)
        if how == 0:
            message[rng.choice(fields)] = self.value()
            return "field-value", message
        if how == 1:
            message[self._text() or "x"] = self.value()
            return "unknown-field", message
        if how == 2:
            del message[rng.choice(fields)]
            return "field-removed", message
        if how == 3:
            message["type"] = rng.choice((*SENDABLE_TAGS, "teleport", "", "LIST-PANES", "list-panes\x00"))
            return "tag", message
        if how == 4:
            field_name = rng.choice(("keys", "tags", "panes", "command", "env", "data", "target", "token"))
            message[field_name] = self._huge_list() if field_name != "env" else Repeated(
                ("K", "v"), rng.choice((100, 10_000, HUGE_LIST_ITEMS_MAX)), kind="map")
            return "huge-field", message
        return "not-a-map", rng.choice((self.value(), [message], self._text()))

    def _body(self) -> tuple[str, bytes]:
        rng = self.rng
        roll = rng.random()
        if roll < 0.3:
            return "valid", pack(self._valid())
        if roll < 0.8:
            kind, message = self._mutated()
            return kind, pack(message)
        if roll < 0.9:
            body = pack(self._valid())
            return "truncated-body", body[:rng.randrange(len(body))]
        return "random-body", rng.randbytes(rng.choice((0, 1, 7, 100, 4000)))

    def frame(self) -> FuzzFrame:
        """The next frame; about one in a hundred damages the framing and ends its connection."""
        rng = self.rng
        if rng.random() < 0.01:
            return self._framing_damage()
        kind, body = self._body()
        return FuzzFrame(data=_framed(body), kind=kind, replies=_replies_owed(body))

    def _framing_damage(self) -> FuzzFrame:
        rng = self.rng
        how = rng.randrange(3)
        if how == 0:  # a header, part of its body, then the peer is gone
            size = rng.choice((10, 1000, MAX_FRAME_BYTES))
            return FuzzFrame(struct.pack(">I", size) + rng.randbytes(min(size - 1, 500)),
                             "truncated-frame", 0, ends_connection=True)
        if how == 1:
            return FuzzFrame(struct.pack(">I", rng.choice((MAX_FRAME_BYTES + 1, 2**32 - 1))),
                             "oversized-header", 1, ends_connection=True)
        # Starts like a header announcing ~4 GiB: refused (id 0) as soon as it arrives.
        return FuzzFrame(b"\xff\xff" + rng.randbytes(rng.choice((10, 1000))), "unframed-garbage", 1,
                         ends_connection=True)


def _replies_owed(body: bytes) -> int:
    """Every intact frame is answered, except attach input/resize without an id (a terminal's stream)."""
    try:
        request = decode_request(body)
    except Exception:  # noqa: BLE001 - any failure to decode is answered with an Error
        return 1
    return 0 if isinstance(request, (AttachInput, AttachResize)) and request.id == 0 else 1


class ProtocolFuzzRun:
    """Sends a fuzzer's frames to a daemon over a series of connections and tallies the answers."""

    def __init__(self, socket_path: Path | str, fuzzer: FrameFuzzer) -> None:
        self.socket_path = str(socket_path)
        self.fuzzer = fuzzer
        self.tally = FuzzTally()

    def run(self, *, frames: int | None = None, seconds: float | None = None) -> FuzzTally:
        deadline = time.monotonic() + seconds if seconds is not None else None
        while (frames is None or self.tally.frames_sent < frames) and (
                deadline is None or time.monotonic() < deadline):
            budget = CONNECTION_FRAMES_MAX if frames is None else min(
                CONNECTION_FRAMES_MAX, frames - self.tally.frames_sent)
            self._connection(budget)
        return self.tally

    def _connection(self, budget: int) -> None:
        link = _Link(self.socket_path)
        self.tally.connections += 1
        try:
            sent = 0
            while sent < budget:
                batch: list[FuzzFrame] = []
                while sent < budget and len(batch) < BATCH_FRAMES_MAX:
                    frame = self.fuzzer.frame()
                    batch.append(frame)
                    sent += 1
                    if frame.ends_connection:
                        break
                for frame in batch:
                    self.tally.kinds[frame.kind] += 1
                self.tally.frames_sent += len(batch)
                owed = sum(f.replies for f in batch)
                replies, closed = link.exchange(b"".join(f.data for f in batch), owed,
                                                ends=batch[-1].ends_connection)
                for reply in replies:
                    self.tally.replies_by_code[reply.code if isinstance(reply, Error) else "ok"] += 1
                self.tally.replies_missing += max(0, owed - len(replies))
                if batch[-1].ends_connection:
                    self.tally.left_open += not closed  # framing damage must end the connection
                    return
                if closed:
                    self.tally.connections_dropped += 1
                    return
        finally:
            link.close()


class _Link:
    """One greeted connection that reads replies while it writes (so no side waits on the other)."""

    def __init__(self, path: str) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.decoder = FrameDecoder()
        replies, closed = self.exchange(encode(Hello(id=1, protocol_version=PROTOCOL_VERSION, client="fuzz")), 1)
        if closed or not replies or not isinstance(replies[0], Welcome):
            raise AssertionError(f"the daemon did not greet the fuzzer: {replies!r}")
        self.sock.setblocking(False)

    def exchange(self, data: bytes, owed: int, *, ends: bool = False) -> tuple[list[Any], bool]:
        """Send `data`, collect replies until `owed` are in (or, when `ends`, until the daemon
        closes); returns them and whether the daemon closed the connection."""
        self.sock.setblocking(False)
        shut = False
        replies: list[Any] = []
        view = memoryview(data)
        deadline = Deadline(REPLY_TIMEOUT_S)
        with selectors.DefaultSelector() as selector:
            selector.register(self.sock, selectors.EVENT_READ | selectors.EVENT_WRITE)
            while (view or ends or len(replies) < owed) and not deadline.expired():
                if not view and not shut:
                    shut = True
                    if ends:  # all of the damage is out: the rest of a truncated frame never comes
                        with contextlib.suppress(OSError):
                            self.sock.shutdown(socket.SHUT_WR)
                    selector.modify(self.sock, selectors.EVENT_READ)
                for _, events in selector.select(timeout=0.2):
                    if events & selectors.EVENT_WRITE and view:
                        try:
                            view = view[self.sock.send(view[:65536]):]
                        except BlockingIOError:
                            pass
                        except OSError:  # the daemon stopped reading (framing damage): hear it out
                            view = view[:0]
                            ends = True
                    if events & selectors.EVENT_READ:
                        try:
                            chunk = self.sock.recv(1 << 20)
                        except BlockingIOError:
                            continue
                        except OSError:
                            return replies, True
                        if not chunk:
                            return replies, True
                        for body in self.decoder.feed(chunk):
                            message = decode_server_message(body)
                            if hasattr(message, "id"):  # events (no id) are not answers
                                replies.append(message)
        return replies, False

    def close(self) -> None:
        self.sock.close()
