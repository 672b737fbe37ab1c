"""Parsers fed directly through ``data_received``: vectors, garbage, split writes, polling."""


import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hardware.serial_frames import chafon_frame, em4100_frame, inventory_answer, inventory_command, jsonl_line
from hardware.protocols import (
    PROTOCOLS,
    Chafon288Protocol,
    ChafonProtocol,
    Id12laProtocol,
    JsonLinesProtocol,
    Rdm6300Protocol,
    protocol_class,
)
from tests.hardware.conftest import Collector


def make(cls, sink, **kwargs):
    protocol = cls(sink, sink.stats, clock=lambda: 1.5, **kwargs)
    protocol.connection_made(sink)  # the collector doubles as the transport
    return protocol


def frames_for(name: str, tag: str) -> bytes:
    """One read of ``tag`` as protocol ``name`` sends it (antenna 0 / ANT1)."""
    if name == "jsonl":
        return jsonl_line("T01", 0, tag[:8], 1)
    if name in ("rdm6300", "id12la"):
        return em4100_frame(tag[:10], b"\r\n" if name == "id12la" else b"")
    return b"".join(inventory_answer([tag], antenna=0 if name == "chafon288" else None))


def expected(name: str, tag: str) -> str:
    return tag[: {"jsonl": 8, "rdm6300": 10, "id12la": 10}.get(name, 24)].upper()


def test_rdm6300_test_vector(sink):
    make(Rdm6300Protocol, sink).data_received(b"\x02" + b"13005D1DA5" + b"F6" + b"\x03")
    assert sink.tags == ["13005D1DA5"]
    assert (sink.reads[0].antenna, sink.reads[0].t) == (0, 1.5)


def test_id12la_test_vector(sink):
    make(Id12laProtocol, sink).data_received(b"\x027C0055F8C415\r\n\x03")
    assert sink.tags == ["7C0055F8C4"]


def test_each_ascii_family_rejects_the_others_framing(sink):
    make(Rdm6300Protocol, sink).data_received(b"\x027C0055F8C415\r\n\x03")
    make(Id12laProtocol, sink).data_received(b"\x0213005D1DA5F6\x03")
    assert sink.tags == []
    assert sink.stats["garbage_bytes"] == 16  # too long for an RDM6300 frame
    assert sink.stats["bad_frames"] == 1  # an ID-12LA frame without its CR LF


def test_bad_ascii_checksum_is_counted_and_skipped(sink):
    protocol = make(Rdm6300Protocol, sink)
    protocol.data_received(b"\x0213005D1DA5F7\x03" + b"\x02" + b"13005D1DA5" + b"F6" + b"\x03")
    assert sink.tags == ["13005D1DA5"]
    assert sink.stats["bad_checksums"] == 1


def test_non_hex_ascii_frame_is_a_bad_frame(sink):
    make(Rdm6300Protocol, sink).data_received(b"\x021300 D1DA5F6\x03\x02ZZ005D1DA5F6\x03")
    assert sink.tags == [] and sink.stats["bad_frames"] == 2


def test_jsonl_reads_and_sequence_tracking(sink):
    protocol = make(JsonLinesProtocol, sink)
    protocol.data_received(
        b"ets Jun  8 2016 boot message\r\n"
        + jsonl_line("T01", 2, "04a1b2c3", 5)
        + jsonl_line("T01", 1, "04A1B2C4", 9)  # lines 6..8 lost
        + jsonl_line("T01", 1, "04A1B2C5", 1)  # the board restarted
        + b'{"reader": "T01", "ant": 99, "uid": "04A1B2C3", "seq": 2}\n'
        + b'{"reader": "T01", "ant": 1, "uid": "not hex!", "seq": 3}\n'
        + b'{"reader": "T01", "ant": true, "uid": "04A1B2C3", "seq": 4}\n'
    )
    assert sink.tags == ["04A1B2C3", "04A1B2C4", "04A1B2C5"]
    assert [(r.antenna, r.reader, r.seq) for r in sink.reads] == [(2, "T01", 5), (1, "T01", 9), (1, "T01", 1)]
    assert sink.stats["lost_lines"] == 3
    assert sink.stats["reader_restarts"] == 1
    assert sink.stats["bad_lines"] == 4


def test_jsonl_overlong_line_is_dropped(sink):
    protocol = make(JsonLinesProtocol, sink)
    protocol.data_received(b"x" * 1000)
    protocol.data_received(b"\n" + jsonl_line("T01", 0, "04A1B2C3", 1))
    assert sink.tags == ["04A1B2C3"]
    assert sink.stats["garbage_bytes"] >= 1000


def test_chafon288_captured_answers(sink):
    protocol = make(Chafon288Protocol, sink)
    protocol.data_received(bytes.fromhex(
        "2300010301020c0000000000000000000003136b0c0000000000000000000003146c70f2"
        "1500010304010c49440000000000000a0003346425c0"
    ))
    assert sink.tags == ["000000000000000000000313", "000000000000000000000314", "49440000000000000A000334"]
    assert [r.antenna for r in sink.reads] == [0, 0, 2]


def test_chafon_frame_with_bad_crc_resyncs(sink):
    good = inventory_answer(["E2000017221101441890AB12"])[0]
    bad = bytearray(good)
    bad[6] ^= 0xFF
    make(ChafonProtocol, sink).data_received(bytes(bad) + good)
    assert sink.tags == ["E2000017221101441890AB12"]
    assert sink.stats["bad_checksums"] >= 1


def test_chafon_counts_that_do_not_add_up_are_bad_frames(sink):
    # claims two tags, carries one
    payload = bytes([0x01, 0x02, 0x04]) + bytes.fromhex("E2000017")
    make(ChafonProtocol, sink).data_received(chafon_frame(0, 0x01, payload))
    assert sink.tags == [] and sink.stats["bad_frames"] == 1


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_chafon288_polls_each_antenna_then_rests(sink):
    clock = FakeClock()
    protocol = Chafon288Protocol(sink, sink.stats, clock=clock, antennas=(0, 1))
    protocol.connection_made(sink)
    assert sink.written == [inventory_command(antenna=0)]
    more, last = inventory_answer([f"{i:024X}" for i in range(6)], antenna=0, per_frame=4)
    protocol.data_received(more)
    assert len(sink.written) == 1  # status 0x03: the answer is not over
    protocol.data_received(last)
    assert sink.written[-1] == inventory_command(antenna=1)  # next antenna at once
    protocol.data_received(inventory_answer([], antenna=1)[0])
    protocol.keepalive()
    assert len(sink.written) == 2  # a full round done: rest for the poll interval
    clock.now += protocol.POLL_INTERVAL
    protocol.keepalive()
    assert sink.written[-1] == inventory_command(antenna=0)
    clock.now += protocol.ANSWER_TIMEOUT + 0.1  # the reader never answers
    protocol.keepalive()
    assert sink.written[-1] == inventory_command(antenna=1)
    assert sink.stats["poll_timeouts"] == 1
    assert len(sink.reads) == 6


def test_reader_status_without_tags_ends_the_answer(sink):
    clock = FakeClock()
    protocol = ChafonProtocol(sink, sink.stats, clock=clock)
    protocol.connection_made(sink)
    protocol.data_received(chafon_frame(0, 0x01, bytes([0xFB])))  # "no tag operable"
    clock.now += protocol.POLL_INTERVAL
    protocol.keepalive()
    assert len(sink.written) == 2 and sink.stats["other_frames"] == 1


def test_connection_lost_drops_partial_frame_and_never_raises(sink):
    protocol = make(Rdm6300Protocol, sink)
    protocol.data_received(b"\x0213005D")
    protocol.connection_lost(OSError("unplugged"))
    protocol.data_received(b"1DA5F6\x03")
    assert sink.tags == []
    assert sink.stats["connection_errors"] == 1


def test_protocol_names_are_the_contract():
    import argparse

    from hardware import cli

    assert tuple(PROTOCOLS) == ("jsonl", "rdm6300", "id12la", "chafon", "chafon288")
    parser = argparse.ArgumentParser()
    cli.register(parser.add_subparsers())
    for command in (["listen", "--port", "loop://"], ["simulate"]):
        with pytest.raises(SystemExit):
            parser.parse_args(["rfid", *command, "--protocol", "em"])
        assert parser.parse_args(["rfid", *command, "--protocol", "chafon288"]).protocol == "chafon288"
    with pytest.raises(ValueError, match="unknown reader protocol 'em'"):
        protocol_class("em")


TAGS = st.binary(min_size=12, max_size=12).map(lambda b: b.hex().upper())


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(list(PROTOCOLS)), tags=st.lists(TAGS, min_size=1, max_size=5), cuts=st.lists(st.integers(0, 400)))
def test_split_writes_give_the_same_reads(name, tags, cuts):
    stream = b"".join(frames_for(name, t) for t in tags)
    whole, pieces = Collector(), Collector()
    make(PROTOCOLS[name], whole).data_received(stream)
    protocol = make(PROTOCOLS[name], pieces)
    bounds = sorted({0, len(stream), *(c % (len(stream) + 1) for c in cuts)})
    for a, b in zip(bounds, bounds[1:]):
        protocol.data_received(stream[a:b])
    assert pieces.tags == whole.tags == [expected(name, t) for t in tags]


@settings(max_examples=80, deadline=None)
@given(name=st.sampled_from(list(PROTOCOLS)), garbage=st.binary(max_size=300), tag=TAGS)
def test_garbage_is_skipped_and_the_next_frames_still_read(name, garbage, tag):
    sink = Collector()
    protocol = make(PROTOCOLS[name], sink)
    protocol.data_received(garbage)
    # a line end closes a garbage line; readers repeat a tag while it lies on the antenna
    protocol.data_received(b"\n" + frames_for(name, tag) * 20)
    assert set(sink.tags) <= {expected(name, tag)} | _tags_inside(name, garbage)
    assert sink.tags.count(expected(name, tag)) >= 19


def _tags_inside(name: str, garbage: bytes) -> set[str]:
    """Tags that random bytes happen to encode validly (possible, never seen in practice)."""
    probe = Collector()
    make(PROTOCOLS[name], probe).data_received(garbage)
    return set(probe.tags)

