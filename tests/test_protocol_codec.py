"""Requests decode alike whichever decoder reads them (muxd/protocol/codec.py): the decoder of the
one type a body names, which a cold start's first requests get, or the union's, built later."""

from __future__ import annotations

from typing import Any

from muxd.errors import BadRequest
from muxd.protocol.codec import decode_request, peek_envelope, request_decoder
from muxd.protocol.messages import REQUEST_TAGS
from muxd.testing.protocol_fuzz import FrameFuzzer

FRAMES = 1500


def _outcome(body: bytes) -> tuple[str, Any]:
    try:
        return "request", decode_request(body)
    except BadRequest as exc:
        return type(exc).__name__, (exc.code, exc.message)


def test_a_request_decodes_alike_before_and_after_the_union_decoder_is_built() -> None:
    fuzzer = FrameFuzzer(7, "%0", "fuzz")
    bodies = [frame.data[4:] for frame in (fuzzer.frame() for _ in range(FRAMES)) if not frame.ends_connection]
    named = [body for body in bodies if peek_envelope(body).type in REQUEST_TAGS]
    assert len(named) > FRAMES // 2
    before = []
    for body in named:
        request_decoder.cache_clear()
        before.append(_outcome(body))
        assert request_decoder.cache_info().currsize == 0, "a body naming its type needs no union"
    request_decoder()  # as the daemon's deferred start builds it
    after = [_outcome(body) for body in named]
    assert before == after
    kinds = {kind for kind, _ in after}
    assert {"request", "ProtocolError"} <= kinds, kinds  # both valid and refused bodies were compared
