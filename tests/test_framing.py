import struct

import msgspec
import pytest

from muxd.config import MAX_FRAME_BYTES
from muxd.errors import FrameTooLarge, ProtocolError
from muxd.protocol.codec import decode_request, decode_server_message, encode, peek_envelope
from muxd.protocol.framing import FrameDecoder, frame
from muxd.protocol.messages import CapturePane, Captured, Error, NewSession, Spawn
from muxd.testing.hostile_msgpack import LyingHeader, Nested, RawStr, pack


def test_frames_round_trip_split_at_every_byte():
    stream = frame(b"hello") + frame(b"") + frame(b"x" * 1000)
    decoder = FrameDecoder()
    bodies = []
    for i in range(len(stream)):
        bodies += decoder.feed(stream[i:i + 1])
    assert bodies == [b"hello", b"", b"x" * 1000]
    assert decoder.buffered_bytes == 0


def test_oversized_frame_is_refused_from_its_header_alone():
    decoder = FrameDecoder()
    with pytest.raises(FrameTooLarge) as info:
        decoder.feed(struct.pack(">I", 4 * 1024**3 - 1))  # 4 GiB announced, no body sent
    assert info.value.detail["size"] == 4 * 1024**3 - 1


def test_encoder_refuses_to_build_a_frame_peers_would_reject():
    with pytest.raises(FrameTooLarge):
        frame(b"\0" * (MAX_FRAME_BYTES + 1))


def test_requests_round_trip_with_their_ids():
    sent = NewSession(id=7, name="api", columns=100, lines=30,
                      spawn=Spawn(command=["claude"], cwd="/tmp", env={"FOO": "1"}, tags=["w"]))
    body = FrameDecoder().feed(encode(sent))[0]
    assert decode_request(body) == sent


def test_replies_and_errors_decode_on_the_client_side():
    for message in (Captured(id=3, text="hi\n"), Error(id=4, code="not_found", message="x", detail={"a": 1})):
        assert decode_server_message(FrameDecoder().feed(encode(message))[0]) == message


def test_unknown_type_is_a_typed_protocol_error():
    with pytest.raises(ProtocolError, match="unknown request type 'teleport'"):
        decode_request(msgspec.msgpack.encode({"type": "teleport", "id": 1}))


def test_wrong_field_type_names_the_field():
    with pytest.raises(ProtocolError, match=r"\$\.start"):
        decode_request(msgspec.msgpack.encode({"type": "capture-pane", "id": 1, "start": "x"}))


def test_garbage_body_is_a_protocol_error():
    with pytest.raises(ProtocolError):
        decode_request(b"\xc1\xc1\xc1")


def test_defaults_fill_missing_fields():
    request = decode_request(msgspec.msgpack.encode({"type": "capture-pane", "id": 2}))
    assert request == CapturePane(id=2)


def test_frames_ahead_of_an_oversized_header_are_handed_back_first():
    decoder = FrameDecoder()
    assert decoder.feed(frame(b"one") + frame(b"two") + struct.pack(">I", MAX_FRAME_BYTES + 1)) == [b"one", b"two"]
    with pytest.raises(FrameTooLarge):
        decoder.feed(b"")  # the damage behind them comes next


def test_invalid_utf8_in_a_string_is_a_protocol_error_answered_by_id():
    for message in ({"type": RawStr(b"list-pa\xffnes"), "id": 5},
                    {"type": "list-panes", "id": 5, "target": RawStr(b"\xc3\x28")},
                    {"type": "send-keys", "id": 5, "keys": ["ok", RawStr(b"\xed\xa0\x80")]}):
        body = pack(message)
        with pytest.raises(ProtocolError, match="not valid UTF-8"):
            decode_request(body)
        assert peek_envelope(body).id == 5


def test_deep_nesting_is_a_protocol_error():
    for message in ({"type": "list-panes", "id": 6, "extra": Nested(100_000)},
                    {"type": "list-panes", "id": 6, "target": Nested(5_000)},
                    {"type": Nested(5_000), "id": 6}):
        with pytest.raises(ProtocolError):
            decode_request(pack(message))


def test_lying_lengths_are_protocol_errors():
    for value in (LyingHeader("array", 2**32 - 1, 2), LyingHeader("str", 2**31), LyingHeader("map", 2**16, 1)):
        with pytest.raises(ProtocolError, match="malformed|invalid"):
            decode_request(pack({"type": "send-keys", "id": 7, "keys": value}))


def test_the_client_side_maps_every_undecodable_reply_too():
    for body in (pack({"type": "ok", "id": RawStr(b"\xff")}), pack({"type": "error", "id": 1, "code": "x",
                                                                    "message": RawStr(b"\xff")}),
                 pack({"type": "error", "id": 1, "code": "x", "message": "m", "detail": {"d": Nested(100_000)}})):
        with pytest.raises(ProtocolError):
            decode_server_message(body)
