"""Message bodies: any message to its framed msgpack bytes, and bytes back to a message of the
types a reader expects, every way of failing mapped to one ProtocolError.

Free of the message unions (codec.py builds the decoders of those), so a client that expects a
few replies pays only for their types.
"""

from __future__ import annotations

from typing import Any

import msgspec

from muxd.errors import NotUtf8, ProtocolError
from muxd.protocol.framing import frame

_encoder = msgspec.msgpack.Encoder()

# Every way a body can fail to decode. Beyond msgspec's own two: a str field holding invalid
# UTF-8 (UnicodeDecodeError) and nesting deeper than msgspec recurses (RecursionError).
UNDECODABLE = (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError, RecursionError)


def encode(message: Any) -> bytes:
    """The framed bytes of one message; NotUtf8 when a string in it holds argv bytes that are not
    UTF-8 (the surrogates Python reads them as)."""
    try:
        return frame(_encoder.encode(message))
    except UnicodeEncodeError as exc:
        raise NotUtf8(exc.object if isinstance(exc.object, str) else "") from None


def encode_shown(message: Any) -> bytes:
    """The framed bytes of one message the daemon sends: a string in it holding bytes that are not
    UTF-8 (a pane's directory or command, a buffer, as the system gave them) goes as the shell
    shows those bytes ('d\\xe9'), where `encode` would refuse the message."""
    try:
        return frame(_encoder.encode(message))
    except UnicodeEncodeError:  # rare: walk the message only then
        builtins = msgspec.to_builtins(message, builtin_types=(bytes, bytearray, memoryview))
        return frame(_encoder.encode(_shown(builtins)))


def _shown(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        except UnicodeEncodeError:  # a surrogate that stands for no byte (JSON's "\\ud800")
            return value.encode("utf-8", "backslashreplace").decode()
    if isinstance(value, list):
        return [_shown(item) for item in value]
    if isinstance(value, dict):
        return {_shown(key): _shown(item) for key, item in value.items()}
    return value


def decode_from_server(decoder: msgspec.msgpack.Decoder[Any], body: bytes) -> Any:
    """The message `decoder` reads from `body`; ProtocolError for whatever else the server sent."""
    try:
        return decoder.decode(body)
    except UNDECODABLE as exc:
        raise ProtocolError(f"malformed message from server: {exc}") from exc
