"""Byte-level framing rules of the supported readers: checksums and frame builders.

Pure functions, no I/O. The parsers in :mod:`hardware.protocols` use the checks; the simulator
and the tests use the builders, so every frame the simulator sends is one a parser accepts.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

STX, ETX = 0x02, 0x03

INVENTORY = 0x01
"""Chafon / UHFReader command and response code of a Gen2 tag inventory."""
STATUS_DONE = 0x01
STATUS_TIMEOUT = 0x02
STATUS_MORE = 0x03
STATUS_FULL = 0x04
INVENTORY_STATUSES = frozenset({STATUS_DONE, STATUS_TIMEOUT, STATUS_MORE, STATUS_FULL})
"""Statuses of an inventory answer that carry tags (0x03: more frames of this answer follow)."""


def crc16_mcrf4xx(data: bytes) -> int:
    """CRC-16/MCRF4XX (reflected poly 0x8408, init 0xFFFF, no final xor), as Chafon readers use.

    Check value: ``crc16_mcrf4xx(b"123456789") == 0x6F91``.
    """
    crc = 0xFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x8408 if crc & 1 else crc >> 1
    return crc


def em4100_checksum(data: bytes) -> int:
    """XOR of the 5 data bytes (version + 4-byte id) of an RDM6300 / ID-12LA frame."""
    value = 0
    for byte in data:
        value ^= byte
    return value


def em4100_frame(tag: str, trailer: bytes = b"") -> bytes:
    """The ASCII frame a 125 kHz reader sends for ``tag`` (10 hex digits).

    ``trailer`` is ``b"\\r\\n"`` for the ID-12LA / ID-20LA family, empty for the RDM6300.
    """
    data = bytes.fromhex(tag)
    if len(data) != 5:
        raise ValueError(f"a 125 kHz tag id is 10 hex digits, got {tag!r}")
    return bytes([STX]) + f"{data.hex().upper()}{em4100_checksum(data):02X}".encode() + trailer + bytes([ETX])


def chafon_frame(adr: int, cmd: int, payload: bytes) -> bytes:
    """``Len Adr Cmd Payload CRC-LSB CRC-MSB``; ``Len`` counts every byte after itself."""
    body = bytes([len(payload) + 4, adr, cmd]) + payload
    crc = crc16_mcrf4xx(body)
    return body + bytes([crc & 0xFF, crc >> 8])


def inventory_command(adr: int = 0xFF, antenna: int | None = None) -> bytes:
    """The host's inventory request: bare for UHFReader18, with the 288-style parameters
    (Q, session, no mask, target A, antenna ``0x80 + n``, scan time) when ``antenna`` is given."""
    if antenna is None:
        return chafon_frame(adr, INVENTORY, b"")
    params = bytes([0x04, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x80 + antenna, 0x0A])
    return chafon_frame(adr, INVENTORY, params)


def inventory_answer(
    tags: Sequence[str], adr: int = 0x00, antenna: int | None = None, per_frame: int = 4
) -> list[bytes]:
    """A reader's answer to one inventory: frames of at most ``per_frame`` EPCs (hex), all but
    the last with status 0x03 ("more frames follow"). With ``antenna`` (0-based) the frames use
    the 288 layout: an antenna bit-mask byte before the count and an RSSI byte after each EPC."""
    chunks = [list(tags[i : i + per_frame]) for i in range(0, len(tags), per_frame)] or [[]]
    frames = []
    for i, chunk in enumerate(chunks):
        status = STATUS_MORE if i < len(chunks) - 1 else STATUS_DONE
        body = bytearray([status])
        if antenna is not None:
            body.append(1 << antenna)
        body.append(len(chunk))
        for tag in chunk:
            epc = bytes.fromhex(tag)
            body += bytes([len(epc)]) + epc
            if antenna is not None:
                body.append(0x60)  # RSSI, unused here
        frames.append(chafon_frame(adr, INVENTORY, bytes(body)))
    return frames


def jsonl_line(reader: str, antenna: int, uid: str, seq: int) -> bytes:
    """One line of the reference firmware (``hardware/firmware``)."""
    return json.dumps({"reader": reader, "ant": antenna, "uid": uid, "seq": seq}).encode() + b"\n"

