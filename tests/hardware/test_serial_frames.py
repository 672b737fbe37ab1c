from hardware.serial_frames import (
    STATUS_DONE,
    STATUS_MORE,
    chafon_frame,
    crc16_mcrf4xx,
    em4100_checksum,
    em4100_frame,
    inventory_answer,
    inventory_command,
)


def test_crc_check_value():
    assert crc16_mcrf4xx(b"123456789") == 0x6F91


def test_crc_of_captured_reader_answers():
    # UHFReader288 answers captured from a reader: one tag on ANT1 and ANT3, and an empty answer.
    for hexframe in (
        "1500010301010c0000000000000000000003136bb1a5",
        "1500010304010c49440000000000000a0003346425c0",
        "0700010101001e4b",
    ):
        frame = bytes.fromhex(hexframe)
        assert crc16_mcrf4xx(frame[:-2]) == frame[-2] | frame[-1] << 8


def test_em4100_vectors():
    assert em4100_frame("13005D1DA5") == b"\x02" + b"13005D1DA5" + b"F6" + b"\x03"
    assert em4100_checksum(bytes.fromhex("7C0055F8C4")) == 0x15
    assert em4100_frame("7C0055F8C4", b"\r\n") == b"\x027C0055F8C415\r\n\x03"


def test_inventory_command_is_the_documented_one():
    assert inventory_command() == bytes.fromhex("04FF011BB4")
    command = inventory_command(antenna=2)
    assert command[0] == len(command) - 1 and command[10] == 0x82


def test_inventory_answer_splits_into_more_frames():
    tags = [f"{i:024X}" for i in range(10)]
    frames = inventory_answer(tags, per_frame=4)
    assert [f[3] for f in frames] == [STATUS_MORE, STATUS_MORE, STATUS_DONE]
    assert [f[4] for f in frames] == [4, 4, 2]
    assert all(crc16_mcrf4xx(f[:-2]) == f[-2] | f[-1] << 8 for f in frames)
    assert chafon_frame(0, 1, b"")[0] == 4
