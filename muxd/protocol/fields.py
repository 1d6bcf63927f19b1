"""Bounded field types of the requests (limits in muxd.config).

Numbers that reach the store are bounded too: an integer past SQLite's 64 bits would be
acknowledged and then fail to store (or fail a query as an internal error), so it is a
`bad_request` while decoding instead.

msgspec checks a `max_length` against each string's, list's and map's header while decoding,
before it builds anything: a 14 MB frame of five million two-character keys is refused
having cost nothing, instead of growing the daemon by hundreds of MB first.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from muxd.config import (
    ATTACH_INPUT_MAX_BYTES, ENV_ENTRIES_MAX_COUNT, LAYOUT_TEXT_MAX_CHARS, ENV_NAME_MAX_CHARS, ENV_VALUE_MAX_CHARS, LABEL_MAX_CHARS,
    AUDIT_LATENCY_MAX_MS, AUDIT_ROWS_MAX_COUNT, LIST_OFFSET_MAX_ROWS,
    NAME_MAX_CHARS, PANE_LIST_MAX_COUNT, PATH_MAX_CHARS, SEND_KEY_MAX_CHARS, SEND_KEYS_MAX_COUNT,
    PANE_TAGS_MAX, SPAWN_ARG_MAX_CHARS, SPAWN_ARGS_MAX_COUNT, TAG_MAX_CHARS, TARGET_MAX_CHARS,
)


Label = Annotated[str, msgspec.Meta(max_length=LABEL_MAX_CHARS)]
LayoutText = Annotated[str, msgspec.Meta(max_length=LAYOUT_TEXT_MAX_CHARS)]  # a name or tmux's layout string
Size = Annotated[str, msgspec.Meta(max_length=LABEL_MAX_CHARS)]  # tmux's -l: "30" cells or "30%"
Name = Annotated[str, msgspec.Meta(max_length=NAME_MAX_CHARS)]
Target = Annotated[str, msgspec.Meta(max_length=TARGET_MAX_CHARS)]
FilePath = Annotated[str, msgspec.Meta(max_length=PATH_MAX_CHARS)]
FormatText = Annotated[str, msgspec.Meta(max_length=SPAWN_ARG_MAX_CHARS)]  # a tmux format, one word of a command line
Keys = Annotated[list[Annotated[str, msgspec.Meta(max_length=SEND_KEY_MAX_CHARS)]],
                 msgspec.Meta(max_length=SEND_KEYS_MAX_COUNT)]
Argv = Annotated[list[Annotated[str, msgspec.Meta(max_length=SPAWN_ARG_MAX_CHARS)]],
                 msgspec.Meta(max_length=SPAWN_ARGS_MAX_COUNT)]
Env = Annotated[dict[Annotated[str, msgspec.Meta(max_length=ENV_NAME_MAX_CHARS)],
                     Annotated[str, msgspec.Meta(max_length=ENV_VALUE_MAX_CHARS)]],
                msgspec.Meta(max_length=ENV_ENTRIES_MAX_COUNT)]
Tags = Annotated[list[Annotated[str, msgspec.Meta(max_length=TAG_MAX_CHARS)]], msgspec.Meta(max_length=PANE_TAGS_MAX)]
EventKinds = Annotated[list[Annotated[str, msgspec.Meta(max_length=64)]], msgspec.Meta(max_length=64)]
PaneTargets = Annotated[list[Target], msgspec.Meta(max_length=PANE_LIST_MAX_COUNT)]
AttachData = Annotated[bytes, msgspec.Meta(max_length=ATTACH_INPUT_MAX_BYTES)]
AuditRows = Annotated[int, msgspec.Meta(ge=0, le=AUDIT_ROWS_MAX_COUNT)]
LatencyMs = Annotated[float, msgspec.Meta(ge=0, le=AUDIT_LATENCY_MAX_MS)]
ListOffset = Annotated[int, msgspec.Meta(ge=0, le=LIST_OFFSET_MAX_ROWS)]
