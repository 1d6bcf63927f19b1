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


def decode_from_server(decoder: msgspec.msgpack.Decoder[Any], body: bytes) -> Any:
    """The message `decoder` reads from `body`; ProtocolError for whatever else the server sent."""
    try:
        return decoder.decode(body)
    except UNDECODABLE as exc:
        raise ProtocolError(f"malformed message from server: {exc}") from exc
