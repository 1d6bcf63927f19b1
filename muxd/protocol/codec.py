"""Encoding and decoding of whole messages (msgpack bodies), mapping failures to typed errors."""

from __future__ import annotations

from typing import Any, Union

import msgspec

from muxd.errors import ProtocolError
from muxd.protocol.framing import frame
from muxd.protocol.messages import REQUEST_TAGS, Envelope, Event, Reply, Request

_encoder = msgspec.msgpack.Encoder()
_request_decoder = msgspec.msgpack.Decoder(Request)
_server_message_decoder = msgspec.msgpack.Decoder(Union[Reply, Event])  # type: ignore[arg-type]
_envelope_decoder = msgspec.msgpack.Decoder(Envelope)


class _RequestId(msgspec.Struct):
    id: int = 0


_request_id_decoder = msgspec.msgpack.Decoder(_RequestId)

# Every way a body can fail to decode. Beyond msgspec's own two: a str field holding invalid
# UTF-8 (UnicodeDecodeError) and nesting deeper than msgspec recurses (RecursionError).
_UNDECODABLE = (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError, RecursionError)


def encode(message: Any) -> bytes:
    """The framed bytes of one message."""
    return frame(_encoder.encode(message))


def peek_envelope(body: bytes) -> Envelope:
    """Best-effort id/type of a body, so even an undecodable request gets an answer by id."""
    try:
        return _envelope_decoder.decode(body)
    except _UNDECODABLE:
        pass
    try:  # the type itself may be what is broken (invalid UTF-8, nested): the id may still be fine
        return Envelope(id=_request_id_decoder.decode(body).id)
    except _UNDECODABLE:
        return Envelope()


def decode_request(body: bytes) -> Request:
    """The request in `body`; ProtocolError (bad_request) for whatever else it holds."""
    try:
        return _request_decoder.decode(body)
    except msgspec.ValidationError as exc:
        kind = peek_envelope(body).type
        if kind and kind not in REQUEST_TAGS:
            raise ProtocolError(f"unknown request type {kind!r}", type=kind) from exc
        raise ProtocolError(f"invalid request: {exc}") from exc
    except msgspec.DecodeError as exc:
        raise ProtocolError(f"malformed message body: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise ProtocolError(f"invalid request: a string is not valid UTF-8 ({exc.reason})") from exc
    except RecursionError as exc:
        raise ProtocolError("invalid request: nested too deeply") from exc


def decode_server_message(body: bytes) -> Reply | Event:
    try:
        return _server_message_decoder.decode(body)
    except _UNDECODABLE as exc:
        raise ProtocolError(f"malformed message from server: {exc}") from exc
