"""Kilo's database (`<XDG_DATA_HOME or ~/.local/share>/kilo/kilo.db`, SQLite, read as
_sqlite.py says) read into `TurnFacts`.

What 7.7.9 keeps (opencode's session store, moved from JSON files into SQLite): a `session`
row per conversation (`directory`: its cwd; `parent_id` for a subagent's), `message` rows
whose JSON `data` has a `role`: `user` or `assistant` (`modelID`, `tokens`, `finish`
"tool-calls" while it goes on, `time.completed`, `error` {name, data.message} for a failed
request), and `part` rows per message: `text`, `tool` {tool, state {status, input}} and
`step-finish` {tokens {input, output, reasoning, cache {read, write}}}: one per request.

A cursor keeps the time (ms) of the newest message it saw; a turn is read from the messages
of the cwd's newest session created after it. A turn is over once an assistant message has
completed with any finish but "tool-calls", or failed.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from muxd.detectors._agent_cli import error_kind
from muxd.executions.session_logs._records import json_value, joined, mapping, render_call, text_of, unique
from muxd.executions.session_logs._sqlite import query
from muxd.executions.session_logs.facts import TokenTally, TurnError, TurnFacts, count

DATABASE_PARTS = 2  # `kilo/kilo.db` below the data home
# Tools whose `filePath` argument the call writes (opencode's, which Kilo kept).
WRITING_TOOLS = frozenset({"write", "edit"})
# A turn's messages read at most: the newest this many, and their parts.
MESSAGES_MAX = 200
PARTS_MAX = 2000
_SESSION = ("SELECT id FROM session WHERE directory = ? AND parent_id IS NULL "
            "ORDER BY time_updated DESC LIMIT 1")

Message = tuple[Mapping[str, Any], list[Mapping[str, Any]]]  # a message's data, its parts' data


def newest_message_ms(database: Path, cwd: str, owner_uid: int) -> int | None:
    """When the newest message of the cwd's newest session was created (0: none yet; None: no
    database muxd reads)."""
    rows = query(database, f"SELECT max(time_created) FROM message WHERE session_id = ({_SESSION})", (cwd,),
                 owner_uid=owner_uid, layout_parts=DATABASE_PARTS)
    return None if rows is None else count(rows[0][0] if rows else None) or 0


def messages_since(database: Path, cwd: str, after_ms: int, owner_uid: int) -> tuple[list[Message], str | None]:
    """The messages of the cwd's newest session created after `after_ms`, oldest first, and
    the session's id."""
    session = query(database, _SESSION, (cwd,), owner_uid=owner_uid, layout_parts=DATABASE_PARTS)
    if not session:
        return [], None
    session_id = str(session[0][0])
    found = query(database, "SELECT id, data FROM message WHERE session_id = ? AND time_created > ? "
                  "ORDER BY time_created DESC, id DESC LIMIT ?", (session_id, after_ms, MESSAGES_MAX),
                  owner_uid=owner_uid, layout_parts=DATABASE_PARTS) or []
    parts = query(database, "SELECT message_id, data FROM part WHERE session_id = ? AND time_created > ? "
                  "ORDER BY id LIMIT ?", (session_id, after_ms, PARTS_MAX),
                  owner_uid=owner_uid, layout_parts=DATABASE_PARTS) or []
    by_message: dict[str, list[Mapping[str, Any]]] = {}
    for message_id, data in parts:
        by_message.setdefault(str(message_id), []).append(mapping(json_value(str(data))))
    return [(mapping(json_value(str(data))), by_message.get(str(mid), [])) for mid, data in reversed(found)], session_id


def parse_turn(messages: list[Message], session_id: str | None = None) -> TurnFacts:
    """The facts of the last turn among `messages` (oldest first)."""
    start = max((i for i, (m, _) in enumerate(messages) if m.get("role") == "user"), default=-1)
    prompt = _text(messages[start][1]) if start >= 0 else None
    return _facts(prompt, messages[start + 1:], session_id)


def _text(parts: list[Mapping[str, Any]]) -> str:
    return "".join(text_of(p.get("text")) or "" for p in parts if p.get("type") == "text" and not p.get("synthetic"))


def _facts(prompt: str | None, turn: list[Message], session_id: str | None) -> TurnFacts:
    tally = TokenTally()
    texts: list[str] = []
    calls: list[str] = []
    written: list[str] = []
    model: str | None = None
    error: TurnError | None = None
    last: Mapping[str, Any] = {}
    for message, parts in turn:
        if message.get("role") != "assistant":
            continue
        last = message
        model = text_of(message.get("modelID")) or model
        failed = mapping(message.get("error"))
        if failed:
            text = text_of(mapping(failed.get("data")).get("message")) or text_of(failed.get("name")) or "error"
            error = TurnError(type=error_kind(text), message=text)
        else:
            error = None  # a retry got through
        texts.append(_text(parts))
        for part in parts:
            if part.get("type") == "step-finish":
                tokens = mapping(part.get("tokens"))
                cache = mapping(tokens.get("cache"))
                output = [v for key in ("output", "reasoning") if (v := count(tokens.get(key))) is not None]
                read, write = count(cache.get("read")), count(cache.get("write"))
                fresh = count(tokens.get("input"))
                # opencode counts cached tokens apart from `input`: added in, as TurnFacts counts them.
                total_in = None if fresh is None else fresh + (read or 0) + (write or 0)
                tally.add(total_in, sum(output) if output else None, read, write, model=text_of(message.get("modelID")))
            elif part.get("type") == "tool":
                state = mapping(part.get("state"))
                name, args = str(part.get("tool") or "?"), mapping(state.get("input"))
                calls.append(render_call(name, args))
                path = text_of(args.get("filePath"))
                if name in WRITING_TOOLS and path and state.get("status") == "completed":
                    written.append(path)
    finished = bool(mapping(last.get("time")).get("completed")) and last.get("finish") not in (None, "tool-calls")
    return TurnFacts(prompt=prompt, response=joined(t for t in texts if t), **tally.fields(),  # type: ignore[arg-type]
                     tool_calls=calls, files_written=unique(written), session_id=session_id, model=model,
                     error=error, complete=error is not None or finished)
