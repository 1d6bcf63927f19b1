"""Decoding of whole messages of the unions (the daemon's requests, the async client's replies and
events), mapping failures to typed errors. Encoding is one for all: bodies.encode."""

from __future__ import annotations

import functools
from typing import Union

import msgspec

from muxd.config import OS_BYTES_BODY_MAX_BYTES
from muxd.errors import ProtocolError
from muxd.protocol.bodies import UNDECODABLE, decode_from_server, encode, encode_shown  # noqa: F401 - every sender's
from muxd.protocol.os_bytes import os_bytes_ext, taken_os_bytes
from muxd.protocol.messages import REQUEST_TAGS, Envelope, Event, Reply, Request


# Each union's decoder is built at its first use (~5-15 ms each): a daemon decodes no replies
# nor events, a client no requests.
@functools.cache
def request_decoder() -> msgspec.msgpack.Decoder[Request]:
    """The decoder of every request, built at its first call: by the daemon's deferred start
    (server.py), or by the first request whose type no smaller decoder knows (_decoder_for)."""
    return msgspec.msgpack.Decoder(Request)  # type: ignore[arg-type]


_REQUEST_TYPES = {t.__struct_config__.tag: t for t in Request.__args__}  # type: ignore[attr-defined]


@functools.cache
def _one_request_decoder(tag: str) -> msgspec.msgpack.Decoder[Request]:
    return msgspec.msgpack.Decoder(_REQUEST_TYPES[tag])


def _decoder_for(body: bytes) -> msgspec.msgpack.Decoder[Request]:
    """The union's decoder once built; until then the decoder of the one type `body` names, so
    a cold start's first requests (hello, new-session, capture-pane) wait for the few types they
    use, not for the union's ~10 ms. The same errors either way: a body naming no request type
    is left to the union."""
    if request_decoder.cache_info().currsize:
        return request_decoder()
    tag = peek_envelope(body).type
    return _one_request_decoder(tag) if tag in _REQUEST_TYPES else request_decoder()


@functools.cache
def _server_message_decoder() -> msgspec.msgpack.Decoder[Reply | Event]:
    return msgspec.msgpack.Decoder(Union[Reply, Event])  # type: ignore[arg-type]


_envelope_decoder = msgspec.msgpack.Decoder(Envelope)


class _RequestId(msgspec.Struct):
    id: int = 0


_request_id_decoder = msgspec.msgpack.Decoder(_RequestId)


def peek_envelope(body: bytes) -> Envelope:
    """Best-effort id/type of a body, so even an undecodable request gets an answer by id."""
    try:
        return _envelope_decoder.decode(body)
    except UNDECODABLE:
        pass
    try:  # the type itself may be what is broken (invalid UTF-8, nested): the id may still be fine
        return Envelope(id=_request_id_decoder.decode(body).id)
    except UNDECODABLE:
        return Envelope()


def decode_request(body: bytes) -> Request:
    """The request in `body`; ProtocolError (bad_request) for whatever else it holds, NotUtf8
    for argument bytes that are not UTF-8 where a request wants text (os_bytes.py)."""
    try:
        return _decoder_for(body).decode(body)
    except msgspec.ValidationError as exc:
        with_os_bytes = _with_os_bytes(body) if "got `ext`" in str(exc) else None  # a typed decode takes none
        if with_os_bytes is not None:
            return with_os_bytes
        kind = peek_envelope(body).type
        if kind and kind not in REQUEST_TAGS:
            raise ProtocolError(f"unknown request type {kind!r}", type=kind) from exc
        raise ProtocolError(f"invalid request: {exc}") from exc
    except msgspec.DecodeError as exc:
        if "UTF-8" in str(exc):  # msgspec >= 0.23 says so itself, where older ones raised UnicodeDecodeError
            raise ProtocolError("invalid request: a string is not valid UTF-8") from exc
        raise ProtocolError(f"malformed message body: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise ProtocolError(f"invalid request: a string is not valid UTF-8 ({exc.reason})") from exc
    except RecursionError as exc:
        raise ProtocolError("invalid request: nested too deeply") from exc


def _with_os_bytes(body: bytes) -> Request | None:
    """The request in `body`, which holds OS bytes; ProtocolError if it is otherwise invalid; None
    if it cannot be read so (the caller says why it is not a request)."""
    if len(body) > OS_BYTES_BODY_MAX_BYTES:  # decoded unchecked below: bounded here
        return None
    try:
        raw = msgspec.msgpack.decode(body, ext_hook=os_bytes_ext)
    except (*UNDECODABLE, ValueError):
        return None
    if not isinstance(raw, dict):
        return None
    try:
        return msgspec.convert(taken_os_bytes(raw), Request)  # type: ignore[arg-type]
    except msgspec.ValidationError as exc:
        raise ProtocolError(f"invalid request: {exc}") from exc


def decode_server_message(body: bytes) -> Reply | Event:
    return decode_from_server(_server_message_decoder(), body)
