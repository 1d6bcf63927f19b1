"""The one-shot CLI's msgpack codec against msgspec's, which the daemon speaks: what one writes the
other reads back equal, a reply's fields read as attributes, and a broken body is a typed error."""

from __future__ import annotations

import random

import msgspec
import pytest

from muxd.protocol.messages import Reply, Request
from muxd.protocol.msgpack_lite import MAX_DEPTH, MsgpackError, Record, pack, unpack

# Each kind at the edges of its encodings (fix, 8-, 16-, 32-bit lengths; every integer width).
VALUES = [
    None, True, False, 0, 127, 128, 255, 256, 65535, 65536, 2**32 - 1, 2**32, 2**63 - 1, 2**64 - 1,
    -1, -32, -33, -128, -129, -32768, -32769, -(2**31), -(2**31) - 1, -(2**63),
    0.0, -0.0, 1.5, 1e300, float("inf"),
    "", "a" * 31, "a" * 32, "é" * 200, "x" * 70000, "\x00\x1b[31m",
    b"", b"\xff" * 300, b"z" * 70000,
    [], [1] * 15, [1] * 16, ["x"] * 70000, {}, {"a": 1}, {str(i): i for i in range(16)},
    {str(i): [i] for i in range(70000)}, {"pane": {"agent": {"tools": [{"name": "Bash"}]}}}, {1: "int key"},
]


@pytest.mark.parametrize("value", VALUES, ids=lambda v: f"{type(v).__name__}-{len(v) if hasattr(v, '__len__') else v}")
def test_values_cross_between_the_two_codecs(value):
    assert unpack(msgspec.msgpack.encode(value)) == value
    assert msgspec.msgpack.decode(pack(value)) == value


def test_random_nested_values_cross_both_ways():
    rng = random.Random(14)

    def value(depth: int) -> object:
        kind = rng.randrange(8 if depth < 4 else 5)
        if kind == 0:
            return rng.choice([None, True, False])
        if kind == 1:
            return rng.randint(-(2**63), 2**64 - 1) >> rng.randrange(64)
        if kind == 2:
            return rng.uniform(-1e9, 1e9)
        if kind == 3:
            return "".join(chr(rng.choice([rng.randrange(32, 127), rng.randrange(0x80, 0x3000)]))
                           for _ in range(rng.randrange(40)))
        if kind == 4:
            return rng.randbytes(rng.randrange(40))
        if kind == 5:
            return [value(depth + 1) for _ in range(rng.randrange(20))]
        return {f"k{rng.randrange(99)}": value(depth + 1) for _ in range(rng.randrange(20))}

    for _ in range(300):
        v = value(0)
        assert unpack(msgspec.msgpack.encode(v)) == v
        assert msgspec.msgpack.decode(pack(v)) == v


def test_a_reply_reads_by_attribute_and_writes_as_its_struct():
    info = msgspec.msgpack.encode({"type": "pane-list", "id": 3, "panes": [{"id": "%1", "agent": {"kind": None}}]})
    reply = unpack(info)
    assert isinstance(reply, Record)
    assert (reply.type, reply.id, reply.panes[0].id, reply.panes[0].agent.kind) == ("pane-list", 3, "%1", None)
    with pytest.raises(AttributeError, match="missing"):
        reply.missing  # noqa: B018 - the attribute read is the test
    assert msgspec.json.encode(reply) == msgspec.json.encode(msgspec.msgpack.decode(info))


def _structs(kind: object, seen: set[type]) -> None:
    """Every Struct `kind` can hold, however deep."""
    info = msgspec.inspect.type_info(kind)  # type: ignore[arg-type]
    stack = [info]
    while stack:
        node = stack.pop()
        if isinstance(node, msgspec.inspect.StructType):
            if node.cls in seen:
                continue
            seen.add(node.cls)
            stack += [field.type for field in node.fields]
        for attr in ("types", "item_type", "key_type", "value_type", "item_types"):
            inner = getattr(node, attr, None)
            stack += list(inner) if isinstance(inner, tuple) else [inner] if inner is not None else []


def test_no_field_of_any_message_hides_behind_a_dict_method():
    """Records are dicts: a field named `items` or `keys` would read as the method, not the value."""
    seen: set[type] = set()
    _structs(Reply, seen)
    _structs(Request, seen)
    hidden = {f"{cls.__name__}.{name}" for cls in seen for name in cls.__struct_fields__ if hasattr(dict, name)}
    # SendKeys.keys is a request's field: the CLI writes it, never reads it back as an attribute.
    assert hidden <= {"SendKeys.keys"}, hidden
    assert len(seen) > 40  # the walk did reach the nested records (PaneInfo, AgentState, …)


@pytest.mark.parametrize(("body", "error"), [
    (b"", "truncated"),
    (b"\xc1", "unsupported msgpack type 0xc1"),
    (b"\xd4\x01\x00", "unsupported msgpack type 0xd4"),           # an extension: never in a reply
    (b"\x92\x01", "truncated"),
    (b"\xdb\xff\xff\xff\xff", "truncated"),                        # a length past the end
    (b"\x01\x02", "1 bytes after the message"),
    (b"\x81\x90\x01", "a map key of type list"),
    (b"\x91" * (MAX_DEPTH + 2) + b"\x01", f"nested deeper than {MAX_DEPTH}"),
], ids=["empty", "never-used", "ext", "short-array", "long-str", "trailing", "list-key", "deep"])
def test_a_broken_body_is_a_typed_error(body, error):
    with pytest.raises(MsgpackError, match=error):
        unpack(body)


def test_a_str_that_is_not_utf8_is_a_unicode_error():
    with pytest.raises(UnicodeDecodeError):
        unpack(b"\xa2\xff\xfe")


def test_packing_what_the_wire_cannot_say_is_refused():
    with pytest.raises(TypeError, match="cannot pack a set"):
        pack({1, 2})
    with pytest.raises(OverflowError):
        pack(2**64)


@pytest.mark.parametrize("value", [0.0, -0.0, 1.5, -2.25, 1e300, -1e-300, float("inf"), 3.4e38])
def test_floats_of_both_widths_read_as_struct_reads_them(value):
    import struct

    assert unpack(b"\xcb" + struct.pack(">d", value)) == value
    if abs(value) <= 3.4e38 or value == float("inf"):  # what a 32-bit float holds
        assert unpack(b"\xca" + struct.pack(">f", value)) == struct.unpack(">f", struct.pack(">f", value))[0]
