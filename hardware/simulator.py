"""A simulated reader on a pseudo-terminal, playing a scripted deal as the real one would.

``guandan-ref rfid simulate`` and the tests use it: the listening side opens the pty's path
like any serial port and runs the real parsers. Push readers (jsonl, rdm6300, id12la) repeat
the frames of every tag in their field every ``interval`` seconds; Chafon readers answer the
host's inventory commands with the tags in the field of the asked antenna.
"""

from __future__ import annotations

import os
import random
import select
import termios
import threading
import time
import tty
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from hardware.antennas import DEFAULT_ANTENNAS
from hardware.serial_frames import INVENTORY, crc16_mcrf4xx, em4100_frame, inventory_answer, jsonl_line
from hardware.protocols import ChafonProtocol, JsonLinesProtocol, protocol_class
from hardware.registry import TagRegistry, enrolment_order
from referee.cards import parse_card
from referee.seats import Seat

SCRIPT: tuple[tuple[Seat, str], ...] = (
    ("S", "3S 3D"),
    ("E", "6H 6C"),
    ("N", "TS TD"),
    ("W", "KS KC"),
    ("S", "4D 5S 6D 7C 8H"),
    ("E", "9C TH JD QS KD"),
    ("W", "7S 7H 7D 7C"),
    ("W", "2C"),
    ("S", "AH"),
    ("E", "SJ"),
)
"""Plays of a short stretch of a deal, in play order (passes leave no trace on RFID)."""

_IDLE_SPEED = termios.B50
"""The simulator leaves the pty at 50 baud; a listener opening it sets its own speed,
which is how the simulator knows someone is listening."""


def demo_registry(protocol: str, seed: int = 7, deck: str = "demo") -> TagRegistry:
    """A deterministic deck of tags the size ``protocol``'s readers use."""
    rng = random.Random(seed)
    registry = TagRegistry(deck)
    size = protocol_class(protocol).TAG_BYTES
    for physical in enrolment_order():
        while True:
            tag = rng.randbytes(size).hex()
            if tag.upper() not in registry:
                break
        registry.add(tag, physical.face, physical.copy)
    return registry


@dataclass(frozen=True)
class Lay:
    """A tag lying on ``antenna`` from ``start`` to ``end`` seconds."""

    tag: str
    antenna: int
    start: float
    end: float


def timeline(
    registry: TagRegistry,
    script: Sequence[tuple[Seat, str]] = SCRIPT,
    seats: Sequence[Seat] | None = None,
    gap: float = 1.5,
    hold: float = 1.0,
    stagger: float = 0.05,
) -> list[Lay]:
    """When each scripted card lies on which antenna. Each play uses copies not played yet.

    ``seats`` restricts the script to those seats (a single-antenna reader serves one seat
    and reports it as antenna 0)."""
    seat_antenna = {s: a for a, s in DEFAULT_ANTENNAS.items()}
    used: set[str] = set()
    lays = []
    plays = [(s, c) for s, c in script if seats is None or s in seats]
    for i, (seat, cards) in enumerate(plays):
        start = i * gap
        antenna = 0 if seats is not None else seat_antenna[seat]
        for k, card in enumerate(cards.split()):
            tag = next(t for t in registry.tags_of(parse_card(card)) if t not in used)
            used.add(tag)
            lays.append(Lay(tag, antenna, start + k * stagger, start + hold))
    return lays


class PtyPort:
    """The device end of a pseudo-terminal; ``link`` (optional) is a stable symlink to it,
    re-pointed on :meth:`replug` like a udev ``/dev/serial/by-id`` name."""

    def __init__(self, link: str | Path | None = None) -> None:
        self.link = Path(link) if link else None
        self.master = self.slave = -1
        self.plug()

    def plug(self) -> None:
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        attrs = termios.tcgetattr(self.slave)
        attrs[4] = attrs[5] = _IDLE_SPEED
        termios.tcsetattr(self.slave, termios.TCSANOW, attrs)
        os.set_blocking(self.master, False)
        self.device = os.ttyname(self.slave)
        if self.link:
            tmp = self.link.with_name(self.link.name + ".new")
            tmp.unlink(missing_ok=True)
            tmp.symlink_to(self.device)
            os.replace(tmp, self.link)

    @property
    def path(self) -> str:
        return str(self.link or self.device)

    def listened(self) -> bool:
        return termios.tcgetattr(self.slave)[4] != _IDLE_SPEED

    def wait_for_listener(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not self.listened():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.02)
        return True

    def write(self, data: bytes) -> None:
        """Like a UART with nobody reading: bytes that do not fit are lost, never blocking."""
        try:
            os.write(self.master, data)
        except (BlockingIOError, OSError):
            pass

    def read(self, timeout: float) -> bytes:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return b""
        try:
            return os.read(self.master, 1024)
        except (BlockingIOError, OSError):
            return b""

    def unplug(self) -> None:
        for fd in (self.master, self.slave):
            os.close(fd)
        self.master = self.slave = -1

    def replug(self) -> None:
        self.unplug()
        self.plug()

    def close(self) -> None:
        if self.master >= 0:
            self.unplug()
        if self.link:
            self.link.unlink(missing_ok=True)


class Simulator:
    """Plays ``lays`` on ``port`` as a ``protocol`` reader would, in real time."""

    def __init__(self, protocol: str, port: PtyPort, lays: Sequence[Lay], interval: float = 0.1) -> None:
        self.reader = protocol_class(protocol)
        self.port = port
        self.lays = list(lays)
        self.interval = interval
        self.stopped = threading.Event()
        self._seq = 0
        self._commands = bytearray()

    def in_field(self, t: float, antenna: int | None = None) -> list[Lay]:
        return [x for x in self.lays if x.start <= t < x.end and antenna in (None, x.antenna)]

    @property
    def duration(self) -> float:
        return max((x.end for x in self.lays), default=0.0)

    def run(self) -> None:
        """Play the whole timeline (plus one quiet interval), then return."""
        t0 = time.monotonic()
        while not self.stopped.is_set():
            t = time.monotonic() - t0
            if t > self.duration + self.interval:
                return
            if issubclass(self.reader, ChafonProtocol):
                data = self.port.read(self.interval)
                self.answer(data, time.monotonic() - t0)
            else:
                self.port.write(b"".join(self.frame(x) for x in self.in_field(t)))
                self.stopped.wait(self.interval)

    def frame(self, lay: Lay) -> bytes:
        if self.reader is JsonLinesProtocol:
            self._seq += 1
            return jsonl_line("SIM", lay.antenna, lay.tag, self._seq)
        return em4100_frame(lay.tag, self.reader.TRAILER)

    def answer(self, data: bytes, t: float) -> None:
        """Answer every complete inventory command in ``data`` (others are ignored)."""
        buf = self._commands
        buf.extend(data)
        while buf and len(buf) >= buf[0] + 1:
            command = bytes(buf[: buf[0] + 1])
            if buf[0] < 4 or crc16_mcrf4xx(command[:-2]) != command[-2] | command[-1] << 8:
                del buf[0]
                continue
            del buf[: len(command)]
            if command[2] != INVENTORY:
                continue
            multi = self.reader.MULTI_ANTENNA
            antenna = command[10] - 0x80 if multi and len(command) == 14 else 0
            tags = [x.tag for x in self.in_field(t, antenna)]
            for frame in inventory_answer(tags, antenna=antenna if multi else None):
                self.port.write(frame)
