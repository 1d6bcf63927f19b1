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


def encode(message: Any) -> bytes:
    """The framed bytes of one message."""
    return frame(_encoder.encode(message))


def peek_envelope(body: bytes) -> Envelope:
    """Best-effort id/type of a body, so even an undecodable request gets an answer by id."""
    try:
        return _envelope_decoder.decode(body)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return Envelope()


def decode_request(body: bytes) -> Request:
    try:
        return _request_decoder.decode(body)
    except msgspec.ValidationError as exc:
        kind = peek_envelope(body).type
        if kind and kind not in REQUEST_TAGS:
            raise ProtocolError(f"unknown request type {kind!r}", type=kind) from exc
        raise ProtocolError(f"invalid request: {exc}") from exc
    except msgspec.DecodeError as exc:
        raise ProtocolError(f"malformed message body: {exc}") from exc


def decode_server_message(body: bytes) -> Reply | Event:
    try:
        return _server_message_decoder.decode(body)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise ProtocolError(f"malformed message from server: {exc}") from exc
