"""Reader protocols: bytes in (``data_received``), tag reads out (``handle_packet`` -> sink).

Each class follows pyserial's ``serial.threaded`` pattern: the port belongs to a
``ReaderThread`` (or :class:`hardware.link.ReaderLink`) created outside, which calls
``connection_made``/``data_received``/``connection_lost``. Framing follows each protocol's
own rules; garbage, split frames and bad checksums are counted in :class:`ReaderStats`,
logged at debug level and skipped. A protocol never raises out of ``data_received`` for bad
input, and ``connection_lost`` never re-raises: the link decides whether to reconnect.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Sequence
from typing import ClassVar

import serial
import serial.threaded

from hardware.serial_frames import (
    ETX,
    INVENTORY,
    INVENTORY_STATUSES,
    STATUS_MORE,
    STX,
    crc16_mcrf4xx,
    em4100_checksum,
    inventory_command,
)
from hardware.reads import ReaderStats, ReadSink, TagRead, log

Clock = Callable[[], float]
_HEX = re.compile(rb"[0-9A-Fa-f]+")


class ReaderProtocol(serial.threaded.Protocol):
    """Common plumbing: the sink that receives reads, the shared counters, the clock.

    ``clock`` stamps each read (time comes from outside, so tests and replays control it);
    ``name`` identifies the reader in the evidence when the protocol carries no id itself.
    """

    NAME: ClassVar[str]
    BAUDRATE: ClassVar[int]
    TAG_BYTES: ClassVar[int]
    """The size of the reader family's tag ids (MIFARE UIDs, EM4100 ids, Gen2 EPCs)."""
    MULTI_ANTENNA: ClassVar[bool] = False

    def __init__(
        self,
        sink: ReadSink,
        stats: ReaderStats | None = None,
        clock: Clock = time.monotonic,
        name: str = "",
    ) -> None:
        self.sink = sink
        self.stats = stats if stats is not None else ReaderStats()
        self.clock = clock
        self.name = name or self.NAME
        self.transport: serial.threaded.ReaderThread | None = None

    def connection_made(self, transport: serial.threaded.ReaderThread) -> None:
        self.transport = transport

    def connection_lost(self, exc: BaseException | None) -> None:
        """Forget the port and any half-received frame; report, never raise."""
        self.transport = None
        self.reset()
        if exc is not None:
            self.stats.count("connection_errors")
            log.warning("%s reader %s: connection lost: %s", self.NAME, self.name, exc)

    def reset(self) -> None:
        """Drop partial input (a frame cut by an unplug must not join the next one)."""

    def keepalive(self) -> None:
        """Called a few times a second by the link; polling readers send requests here."""

    def emit(self, tag: str, antenna: int = 0, reader: str | None = None, seq: int | None = None) -> None:
        self.stats.count("reads")
        self.sink(TagRead(tag.upper(), antenna, self.clock(), reader or self.name, seq))

    def skip(self, what: str, n: int, detail: object) -> None:
        self.stats.count(what, n)
        log.debug("%s reader %s: skipped %s: %r", self.NAME, self.name, what, detail)


class JsonLinesProtocol(ReaderProtocol):
    """The reference firmware (``hardware/firmware``): one JSON object per line,
    ``{"reader": "T01", "ant": 0, "uid": "04A1B2C3", "seq": 17}``.

    ``seq`` counts lines per reader: a gap means lines were lost, a step back means the
    board restarted; both are counted, neither stops the reads.
    """

    NAME = "jsonl"
    BAUDRATE = 115200
    TAG_BYTES = 4
    MULTI_ANTENNA = True
    MAX_LINE = 256

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.buffer = bytearray()
        self.last_seq: dict[str, int] = {}

    def reset(self) -> None:
        self.buffer.clear()

    def data_received(self, data: bytes) -> None:
        self.buffer.extend(data)
        while (end := self.buffer.find(b"\n")) >= 0:
            line = bytes(self.buffer[:end])
            del self.buffer[: end + 1]
            self.handle_packet(line)
        if len(self.buffer) > self.MAX_LINE:
            self.skip("garbage_bytes", len(self.buffer), bytes(self.buffer[:32]))
            self.buffer.clear()

    def handle_packet(self, packet: bytes) -> None:
        line = packet.strip()
        if not line:
            return
        if len(line) > self.MAX_LINE:
            self.skip("bad_lines", 1, line[:32])
            return
        try:
            obj = json.loads(line)
            reader, antenna, uid, seq = obj["reader"], obj["ant"], obj["uid"], obj["seq"]
        except (ValueError, KeyError, TypeError):
            self.skip("bad_lines", 1, line)
            return
        if not (
            isinstance(reader, str)
            and _is_int(antenna)
            and 0 <= antenna < 16
            and isinstance(uid, str)
            and 8 <= len(uid) <= 20
            and _HEX.fullmatch(uid.encode())
            and _is_int(seq)
        ):
            self.skip("bad_lines", 1, line)
            return
        last = self.last_seq.get(reader)
        if last is not None and seq > last + 1:
            self.stats.count("lost_lines", seq - last - 1)
        elif last is not None and seq <= last:
            self.stats.count("reader_restarts")
        self.last_seq[reader] = seq
        self.emit(uid, antenna, reader, seq)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class Rdm6300Protocol(ReaderProtocol):
    """125 kHz ASCII frames: STX, 10 hex digits (version + tag), 2 hex digits of XOR
    checksum over the 5 data bytes, ETX. 9600 baud; the reader repeats the frame while a
    tag lies on the antenna. A new STX inside a frame starts over (the old bytes were noise).
    """

    NAME = "rdm6300"
    BAUDRATE = 9600
    TAG_BYTES = 5
    TRAILER: ClassVar[bytes] = b""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.packet = bytearray()
        self.in_packet = False

    def reset(self) -> None:
        self.packet.clear()
        self.in_packet = False

    def data_received(self, data: bytes) -> None:
        limit = 12 + len(self.TRAILER)
        for byte in data:
            if byte == STX:
                if self.in_packet:
                    self.skip("garbage_bytes", len(self.packet) + 1, bytes(self.packet))
                self.packet.clear()
                self.in_packet = True
            elif not self.in_packet:
                self.skip("garbage_bytes", 1, byte)
            elif byte == ETX:
                self.in_packet = False
                self.handle_packet(bytes(self.packet))
                self.packet.clear()
            else:
                self.packet.append(byte)
                if len(self.packet) > limit:
                    self.skip("garbage_bytes", len(self.packet) + 1, bytes(self.packet))
                    self.reset()

    def handle_packet(self, packet: bytes) -> None:
        body, trailer = packet[:12], packet[12:]
        if len(body) != 12 or trailer != self.TRAILER or not _HEX.fullmatch(body):
            self.skip("bad_frames", 1, packet)
            return
        data = bytes.fromhex(body[:10].decode())
        if em4100_checksum(data) != int(body[10:], 16):
            self.skip("bad_checksums", 1, packet)
            return
        self.emit(data.hex(), 0)


class Id12laProtocol(Rdm6300Protocol):
    """ID-12LA / ID-20LA ASCII output: the RDM6300 frame with CR LF before ETX."""

    NAME = "id12la"
    TRAILER = b"\r\n"


class ChafonProtocol(ReaderProtocol):
    """UHF Gen2 readers in answer mode (Chafon CF-RU5102 / UHFReader18): the host polls with
    an inventory command; the reader answers ``Len Adr 0x01 Status Num (EpcLen Epc)* CRC``,
    status 0x03 meaning more frames of the same answer follow. ``Len`` counts the bytes after
    itself; CRC-16/MCRF4XX, low byte first. A frame whose CRC fails is resynchronised one
    byte later, so noise costs at most the frames it overlaps.
    """

    NAME = "chafon"
    BAUDRATE = 57600
    TAG_BYTES = 12
    POLL_INTERVAL = 0.1
    ANSWER_TIMEOUT = 1.0
    MIN_LEN = 5

    def __init__(self, *args, antennas: Sequence[int] = (0,), **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if not antennas:
            raise ValueError("a polling reader needs at least one antenna to ask")
        self.buffer = bytearray()
        self.antennas = tuple(antennas)
        self._next_antenna = 0
        self._asked_at: float | None = None
        self._due = 0.0

    def reset(self) -> None:
        self.buffer.clear()
        self._asked_at = None
        self._next_antenna = 0

    def connection_made(self, transport: serial.threaded.ReaderThread) -> None:
        super().connection_made(transport)
        self.poll()

    def keepalive(self) -> None:
        now = self.clock()
        if self._asked_at is None:
            if now >= self._due:
                self.poll()
        elif now - self._asked_at > self.ANSWER_TIMEOUT:
            self.stats.count("poll_timeouts")
            self.poll()

    def command(self, antenna: int) -> bytes:
        return inventory_command()

    def poll(self) -> None:
        """Ask for the next inventory (the answer's last frame schedules the one after)."""
        if self.transport is None:
            return
        self._asked_at = self.clock()
        antenna = self.antennas[self._next_antenna]
        self._next_antenna = (self._next_antenna + 1) % len(self.antennas)
        try:
            self.transport.write(self.command(antenna))
        except (serial.SerialException, OSError) as exc:  # unplugged: the link reconnects
            self.skip("write_errors", 1, exc)

    def data_received(self, data: bytes) -> None:
        buf = self.buffer
        buf.extend(data)
        while buf:
            n = buf[0]
            if n < self.MIN_LEN:
                self.skip("garbage_bytes", 1, n)
                del buf[0]
                continue
            if len(buf) < n + 1:
                # Noise may claim a long frame; a complete valid frame further on wins.
                start = self._later_frame()
                if start is None:
                    break
                self.skip("garbage_bytes", start, bytes(buf[:start]))
                del buf[:start]
                continue
            frame = bytes(buf[: n + 1])
            if not _crc_ok(frame):
                self.skip("bad_checksums", 1, frame)
                self.stats.count("garbage_bytes")
                del buf[0]
                continue
            del buf[: n + 1]
            self.handle_packet(frame)

    def _later_frame(self) -> int | None:
        """Where a complete frame with a good CRC starts after the first byte, if anywhere."""
        buf = self.buffer
        for i in range(1, len(buf) - self.MIN_LEN):
            n = buf[i]
            if n >= self.MIN_LEN and i + n + 1 <= len(buf) and _crc_ok(buf[i : i + n + 1]):
                return i
        return None

    def handle_packet(self, packet: bytes) -> None:
        adr, cmd, status, payload = packet[1], packet[2], packet[3], packet[4:-2]
        if cmd != INVENTORY or status not in INVENTORY_STATUSES:
            self.skip("other_frames", 1, packet)
            if cmd == INVENTORY:  # e.g. 0xFB "no tag": the inventory is over
                self.answered()
            return
        parsed = self.parse_inventory(payload)
        if parsed is None:
            self.skip("bad_frames", 1, packet)
        else:
            antenna, tags = parsed
            for tag in tags:
                self.emit(tag, antenna, f"{self.name}@{adr}")
        if status != STATUS_MORE:
            self.answered()

    def answered(self) -> None:
        """An answer is complete: ask the next antenna now, or rest after a full round."""
        self._asked_at = None
        if self._next_antenna:
            self.poll()
        else:
            self._due = self.clock() + self.POLL_INTERVAL

    RSSI_BYTES: ClassVar[int] = 0

    def split_antenna(self, payload: bytes) -> tuple[int, bytes] | None:
        return 0, payload

    def parse_inventory(self, payload: bytes) -> tuple[int, list[str]] | None:
        """``(antenna, [epc hex...])``, or None when the counts do not add up."""
        split = self.split_antenna(payload)
        if split is None or not split[1]:
            return None
        antenna, rest = split
        count, i, tags = rest[0], 1, []
        for _ in range(count):
            if i >= len(rest):
                return None
            size = rest[i]
            epc = rest[i + 1 : i + 1 + size]
            if size == 0 or len(epc) != size:
                return None
            tags.append(epc.hex())
            i += 1 + size + self.RSSI_BYTES
        if i != len(rest):
            return None
        return antenna, tags


def _crc_ok(frame: bytes | bytearray) -> bool:
    return crc16_mcrf4xx(frame[:-2]) == frame[-2] | frame[-1] << 8


class Chafon288Protocol(ChafonProtocol):
    """Multi-antenna UHFReader288-style answers: an antenna bit-mask byte (0x01 = ANT1 ...)
    before the tag count and an RSSI byte after each EPC. Antenna indexes are 0-based
    (ANT1 = 0). The host polls each antenna in turn with the 288 inventory parameters."""

    NAME = "chafon288"
    MULTI_ANTENNA = True
    RSSI_BYTES = 1

    def __init__(self, *args, antennas: Sequence[int] = (0, 1, 2, 3), **kwargs) -> None:
        super().__init__(*args, antennas=antennas, **kwargs)

    def command(self, antenna: int) -> bytes:
        return inventory_command(antenna=antenna)

    def split_antenna(self, payload: bytes) -> tuple[int, bytes] | None:
        if not payload:
            return None
        mask = payload[0]
        if mask == 0 or mask & (mask - 1):
            return None
        return mask.bit_length() - 1, payload[1:]


PROTOCOLS: dict[str, type[ReaderProtocol]] = {
    cls.NAME: cls
    for cls in (JsonLinesProtocol, Rdm6300Protocol, Id12laProtocol, ChafonProtocol, Chafon288Protocol)
}
"""The one list of reader protocols, by name: the names are a contract (``--protocol``)."""


def protocol_class(name: str) -> type[ReaderProtocol]:
    try:
        return PROTOCOLS[name]
    except KeyError:
        raise ValueError(f"unknown reader protocol {name!r} (expected one of {', '.join(PROTOCOLS)})") from None
