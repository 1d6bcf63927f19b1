"""The requests' variable-size fields are bounded while decoding (muxd/protocol/fields.py)."""

import resource

import pytest

from muxd import config
from muxd.errors import ProtocolError
from muxd.protocol.codec import decode_request
from muxd.protocol.messages import SendKeys
from muxd.testing.hostile_msgpack import Repeated, pack

_SPAWN = {"type": "new-session", "id": 3}


def _spawn(**fields):
    return {**_SPAWN, "spawn": fields}


# (message at the limit, the same one past it, the field msgspec names)
BOUNDED = {
    "keys count": (lambda n: {"type": "send-keys", "id": 1, "keys": Repeated("a", n)},
                   config.SEND_KEYS_MAX_COUNT, "$.keys"),
    "one key": (lambda n: {"type": "send-keys", "id": 1, "keys": ["x" * n]}, config.SEND_KEY_MAX_CHARS, "$.keys[0]"),
    "tags": (lambda n: _spawn(tags=Repeated("t", n)), config.PANE_TAGS_MAX, "$.spawn.tags"),
    "one tag": (lambda n: _spawn(tags=["t" * n]), config.TAG_MAX_CHARS, "$.spawn.tags[0]"),
    "env entries": (lambda n: _spawn(env={f"K{i}": "v" for i in range(n)}), config.ENV_ENTRIES_MAX_COUNT,
                    "$.spawn.env"),
    "env name": (lambda n: _spawn(env={"K" * n: "v"}), config.ENV_NAME_MAX_CHARS, "`key` in `$.spawn.env`"),
    "env value": (lambda n: _spawn(env={"K": "v" * n}), config.ENV_VALUE_MAX_CHARS, "$.spawn.env[...]"),
    "argv count": (lambda n: _spawn(command=Repeated("a", n)), config.SPAWN_ARGS_MAX_COUNT, "$.spawn.command"),
    "one arg": (lambda n: _spawn(command=["a" * n]), config.SPAWN_ARG_MAX_CHARS, "$.spawn.command[0]"),
    "cwd": (lambda n: _spawn(cwd="/" * n), config.PATH_MAX_CHARS, "$.spawn.cwd"),
    "pane name": (lambda n: _spawn(pane_name="p" * n), config.NAME_MAX_CHARS, "$.spawn.pane_name"),
    "session name": (lambda n: {**_SPAWN, "name": "s" * n}, config.NAME_MAX_CHARS, "$.name"),
    "target": (lambda n: {"type": "list-panes", "id": 1, "target": "%" * n}, config.TARGET_MAX_CHARS, "$.target"),
    "token": (lambda n: {"type": "hello", "id": 1, "protocol_version": 1, "token": "t" * n},
              config.LABEL_MAX_CHARS, "$.token"),
    "subscribed panes": (lambda n: {"type": "subscribe", "id": 1, "panes": Repeated("%1", n)},
                         config.PANE_LIST_MAX_COUNT, "$.panes"),
    "token panes": (lambda n: {"type": "create-token", "id": 1, "tier": "view_only", "panes": Repeated("%1", n)},
                    config.PANE_LIST_MAX_COUNT, "$.panes"),
    "attach data": (lambda n: {"type": "attach-input", "id": 1, "data": b"x" * n}, config.ATTACH_INPUT_MAX_BYTES,
                    "$.data"),
}


@pytest.mark.parametrize("name", BOUNDED)
def test_a_field_at_its_limit_decodes_and_one_past_it_is_refused(name):
    make, limit, path = BOUNDED[name]
    decode_request(pack(make(limit)))
    with pytest.raises(ProtocolError) as info:
        decode_request(pack(make(limit + 1)))
    assert f"<= {limit}" in info.value.message and path in info.value.message, info.value.message
    assert info.value.code == "bad_request"


def test_keys_bounds_leave_room_above_send_keys_own_byte_cap():
    # A whole SEND_KEYS_MAX_BYTES goes in one key, as hex too (three characters a byte) or as
    # one key per byte: the handler's byte cap, not the wire, decides.
    assert config.SEND_KEY_MAX_CHARS >= 3 * config.SEND_KEYS_MAX_BYTES
    decode_request(pack({"type": "send-keys", "id": 1, "hex": True,
                         "keys": ["41 " * config.SEND_KEYS_MAX_BYTES]}))
    assert config.SEND_KEYS_MAX_COUNT * config.SEND_KEY_MAX_CHARS > config.MAX_FRAME_BYTES


def test_five_million_keys_are_refused_before_they_are_built():
    body = pack({"type": "send-keys", "id": 9, "target": "%0", "keys": Repeated("ab", 5_000_000)})
    assert len(body) > 14_000_000
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(ProtocolError, match=f"length <= {config.SEND_KEYS_MAX_COUNT}"):
        decode_request(body)
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 32 * 1024, grown_kib  # unbounded, the list alone took ~350 MB


def test_the_wire_bounds_do_not_bind_messages_built_in_process():
    # Clients build requests directly; only what arrives on the wire is checked.
    assert len(SendKeys(id=1, keys=["a"] * (config.SEND_KEYS_MAX_COUNT + 1)).keys) > config.SEND_KEYS_MAX_COUNT
