"""A msgpack writer that can also lie: invalid UTF-8 in strings, deep nesting, headers
announcing more items than follow. Real encoders refuse to produce these; a fuzzer needs them.

`pack(value)` takes None, bool, int, float, str, bytes, list, dict and the hostile values
below, nested freely.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RawStr:
    """A msgpack str whose payload is these bytes, UTF-8 or not."""

    data: bytes


@dataclass(frozen=True)
class Nested:
    """`depth` one-element arrays inside each other around a nil."""

    depth: int


@dataclass(frozen=True)
class LyingHeader:
    """A container or string header announcing `count`, followed by `present` items only."""

    kind: str  # "array" | "map" | "str" | "bin"
    count: int
    present: int = 0


@dataclass(frozen=True)
class Repeated:
    """An array of `count` copies of `item` (or, for kind "map", `count` copies of the pair
    `item`): the huge lists of an attack, packed in no time."""

    item: Any
    count: int
    kind: str = "array"


def _sized(count: int, small: tuple[int, int] | None, codes: tuple[int, int, int]) -> bytes:
    """The header of a sized msgpack value: the fix form when `small` allows, else 8/16/32 bit."""
    if small is not None and count < small[1]:
        return bytes((small[0] | count,))
    for code, fmt, limit in zip(codes, (">B", ">H", ">I"), (1 << 8, 1 << 16, 1 << 32)):
        if code and count < limit:
            return bytes((code,)) + struct.pack(fmt, count)
    raise ValueError(f"{count} items do not fit msgpack")


_STR = ((0xA0, 32), (0xD9, 0xDA, 0xDB))
_BIN = (None, (0xC4, 0xC5, 0xC6))
_ARRAY = ((0x90, 16), (0, 0xDC, 0xDD))
_MAP = ((0x80, 16), (0, 0xDE, 0xDF))
_HEADERS = {"str": _STR, "bin": _BIN, "array": _ARRAY, "map": _MAP}


def _header(kind: str, count: int) -> bytes:
    small, codes = _HEADERS[kind]
    return _sized(count, small, codes)  # type: ignore[arg-type]


def _int(value: int) -> bytes:
    if 0 <= value < 128:
        return bytes((value,))
    if -32 <= value < 0:
        return struct.pack(">b", value)
    if value >= 0:
        return b"\xcf" + struct.pack(">Q", value & (2**64 - 1))  # larger values wrap: still a uint64
    return b"\xd3" + struct.pack(">q", max(value, -(2**63)))


def pack(value: Any) -> bytes:
    if value is None:
        return b"\xc0"
    if value is True or value is False:
        return b"\xc3" if value else b"\xc2"
    if isinstance(value, int):
        return _int(value)
    if isinstance(value, float):
        return b"\xcb" + struct.pack(">d", value)
    if isinstance(value, str):
        value = RawStr(value.encode("utf-8", "surrogatepass"))
    if isinstance(value, RawStr):
        return _header("str", len(value.data)) + value.data
    if isinstance(value, (bytes, bytearray)):
        return _header("bin", len(value)) + bytes(value)
    if isinstance(value, Nested):
        return b"\x91" * value.depth + b"\xc0"
    if isinstance(value, LyingHeader):
        filler = b"\xa1x\xc0" if value.kind == "map" else b"\xc0" if value.kind == "array" else b"x"
        return _header(value.kind, value.count) + filler * value.present
    if isinstance(value, Repeated):
        item = pack(value.item[0]) + pack(value.item[1]) if value.kind == "map" else pack(value.item)
        return _header(value.kind, value.count) + item * value.count
    if isinstance(value, (list, tuple)):
        return _header("array", len(value)) + b"".join(pack(item) for item in value)
    if isinstance(value, dict):
        return _header("map", len(value)) + b"".join(pack(k) + pack(v) for k, v in value.items())
    raise TypeError(f"cannot pack {type(value).__name__}")
