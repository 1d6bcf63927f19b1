"""msgpack in plain Python, for the one-shot CLI: the daemon's bodies without importing msgspec.

`muxd ls` must start about as fast as the interpreter (issue 14: ≤ 1.5× `python -c pass`), and
importing msgspec alone costs about what the interpreter's whole start does. A one-shot command
sends one small request and reads one reply, so a pure-Python codec of the formats the daemon
writes costs microseconds there. Maps decode to Records, read by attribute as a Struct is
(`reply.panes[0].agent.kind`); the daemon, MCP and attach keep msgspec and its typed decoding.
"""

from __future__ import annotations

import sys

from muxd.errors import NotUtf8
from muxd.protocol.os_bytes import OS_BYTES_EXT

MAX_DEPTH = 64  # deeper nesting than any reply has: a hostile body must not exhaust the stack


class Record(dict):  # type: ignore[type-arg]
    """A decoded msgpack map, its string keys also read as attributes. A dict underneath, so JSON
    output writes it as the Struct it stands for (fields in the daemon's order)."""

    __slots__ = ()

    def __getattr__(self, name: str) -> object:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


class MsgpackError(ValueError):
    """A body that is not msgpack of the kinds a reply holds."""


def pack(value: object) -> bytes:
    """The msgpack bytes of `value`: None, bool, int, float, str, bytes, lists, tuples, dicts."""
    out = bytearray()
    _pack(value, out)
    return bytes(out)


def _pack(value: object, out: bytearray) -> None:
    if value is None:
        out.append(0xC0)
    elif value is True or value is False:
        out.append(0xC3 if value else 0xC2)
    elif isinstance(value, int):
        _pack_int(value, out)
    elif isinstance(value, float):
        import struct  # only for a float: ints and lengths are int.to_bytes's (see _INTEGERS)

        out += struct.pack(">Bd", 0xCB, value)
    elif isinstance(value, str):
        try:
            data = value.encode()
        except UnicodeEncodeError:  # argv bytes that are not UTF-8 (the shell's $'\xe9'): as bytes
            data = _os_bytes(value)
            _pack_head(len(data), out, fix=None, fix_max=-1, heads=(0xC7, 0xC8, 0xC9))
            out.append(OS_BYTES_EXT)
        else:
            _pack_head(len(data), out, fix=0xA0, fix_max=31, heads=(0xD9, 0xDA, 0xDB))
        out += data
    elif isinstance(value, (bytes, bytearray)):
        _pack_head(len(value), out, fix=None, fix_max=-1, heads=(0xC4, 0xC5, 0xC6))
        out += value
    elif isinstance(value, (list, tuple)):
        _pack_head(len(value), out, fix=0x90, fix_max=15, heads=(None, 0xDC, 0xDD))
        for item in value:
            _pack(item, out)
    elif isinstance(value, dict):
        _pack_head(len(value), out, fix=0x80, fix_max=15, heads=(None, 0xDE, 0xDF))
        for key, item in value.items():
            _pack(key, out)
            _pack(item, out)
    else:
        raise TypeError(f"cannot pack a {type(value).__name__}")


def _os_bytes(value: str) -> bytes:
    """The argv bytes `value` stands for (the daemon takes them where tmux passes bytes through,
    else refuses them: os_bytes.py); NotUtf8 for a surrogate that stands for no byte."""
    try:
        return value.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raise NotUtf8(value) from None


def _pack_int(value: int, out: bytearray) -> None:
    if 0 <= value <= 0x7F:
        out.append(value)
    elif -32 <= value < 0:
        out.append(value & 0xFF)
    elif 0 <= value <= 0xFFFFFFFF:
        out.append(0xCE)
        out += value.to_bytes(4, "big")
    elif 0 <= value <= 0xFFFFFFFFFFFFFFFF:
        out.append(0xCF)
        out += value.to_bytes(8, "big")
    elif -(2**63) <= value < 0:
        out.append(0xD3)
        out += value.to_bytes(8, "big", signed=True)
    else:
        raise OverflowError(f"integer out of msgpack's range: {value}")


def _pack_head(length: int, out: bytearray, *, fix: int | None, fix_max: int,
               heads: tuple[int | None, int, int]) -> None:
    """A length prefix: the fix form, else the 8-, 16- or 32-bit one (None: this kind has no 8-bit form)."""
    if fix is not None and length <= fix_max:
        out.append(fix | length)
    elif heads[0] is not None and length <= 0xFF:
        out += bytes((heads[0], length))
    elif length <= 0xFFFF:
        out.append(heads[1])
        out += length.to_bytes(2, "big")
    else:
        out.append(heads[2])
        out += length.to_bytes(4, "big")


_CONSTANTS = {0xC0: None, 0xC2: False, 0xC3: True}
# Fixed-size integers: head byte -> (size, signed), read with int.from_bytes, and floats with a
# memoryview: struct costs a tmux shim call ~0.4 ms to import (it packs a float only).
_INTEGERS = {
    0xCC: (1, False), 0xCD: (2, False), 0xCE: (4, False), 0xCF: (8, False),
    0xD0: (1, True), 0xD1: (2, True), 0xD2: (4, True), 0xD3: (8, True),
}
_FLOATS = {0xCA: ("f", 4), 0xCB: ("d", 8)}  # head byte -> (memoryview format, size)
_LITTLE_ENDIAN = sys.byteorder == "little"
# Length-prefixed kinds: head byte -> (kind, size of the big-endian length).
_SIZED = {
    0xD9: ("str", 1), 0xDA: ("str", 2), 0xDB: ("str", 4),
    0xC4: ("bin", 1), 0xC5: ("bin", 2), 0xC6: ("bin", 4),
    0xDC: ("array", 2), 0xDD: ("array", 4),
    0xDE: ("map", 2), 0xDF: ("map", 4),
}


def unpack(data: bytes) -> object:
    """The one value in `data`; MsgpackError for truncated or trailing bytes, an unknown or
    extension type, a key that cannot be a dict key, or nesting deeper than MAX_DEPTH.
    UnicodeDecodeError for a str that is not UTF-8."""
    reader = _Reader(data)
    value = reader.value(0)
    if reader.at != len(data):
        raise MsgpackError(f"{len(data) - reader.at} bytes after the message")
    return value


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.at = 0

    def take(self, size: int) -> bytes:
        end = self.at + size
        if end > len(self.data):
            raise MsgpackError("truncated message")
        chunk = self.data[self.at:end]
        self.at = end
        return chunk

    def number(self, size: int, signed: bool = False) -> int:
        return int.from_bytes(self.take(size), "big", signed=signed)

    def value(self, depth: int) -> object:
        if depth > MAX_DEPTH:
            raise MsgpackError(f"nested deeper than {MAX_DEPTH}")
        head = self.take(1)[0]
        if head <= 0x7F:
            return head
        if head >= 0xE0:
            return head - 0x100
        if 0xA0 <= head <= 0xBF:
            return self.take(head & 0x1F).decode()
        if 0x90 <= head <= 0x9F:
            return self.array(head & 0x0F, depth)
        if 0x80 <= head <= 0x8F:
            return self.map(head & 0x0F, depth)
        if head in _CONSTANTS:
            return _CONSTANTS[head]
        if head in _INTEGERS:
            return self.number(*_INTEGERS[head])
        if head in _FLOATS:  # big-endian IEEE 754, cast as the machine's own order puts it
            fmt, size = _FLOATS[head]
            chunk = self.take(size)
            return memoryview(chunk[::-1] if _LITTLE_ENDIAN else chunk).cast(fmt)[0]
        if head in _SIZED:
            kind, size = _SIZED[head]
            length = self.number(size)
            if kind == "str":
                return self.take(length).decode()
            if kind == "bin":
                return self.take(length)
            return self.array(length, depth) if kind == "array" else self.map(length, depth)
        raise MsgpackError(f"unsupported msgpack type 0x{head:02x}")

    def array(self, length: int, depth: int) -> list[object]:
        return [self.value(depth + 1) for _ in range(length)]

    def map(self, length: int, depth: int) -> Record:
        record = Record()
        for _ in range(length):
            key = self.value(depth + 1)
            if isinstance(key, (list, dict)):
                raise MsgpackError(f"a map key of type {type(key).__name__}")
            record[key] = self.value(depth + 1)
        return record
