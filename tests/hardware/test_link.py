"""Real serial plumbing: ReaderThread over loop://, pseudo-terminals, unplug and replug."""

import functools
import os
import tty

import serial
import serial.threaded

from hardware.serial_frames import em4100_frame, inventory_answer, jsonl_line
from hardware.link import ReaderLink, port_opener
from hardware.protocols import ChafonProtocol, JsonLinesProtocol, Rdm6300Protocol
from hardware.reads import ReaderStats
from hardware.simulator import PtyPort
from tests.hardware.conftest import wait_until

TAG = "13005D1DA5"


def test_reader_thread_over_loop(sink):
    port = serial.serial_for_url("loop://", baudrate=9600)
    with serial.threaded.ReaderThread(port, functools.partial(Rdm6300Protocol, sink, sink.stats)):
        port.write(b"noise" + em4100_frame(TAG)[:5])
        port.write(em4100_frame(TAG)[5:] + em4100_frame("7C0055F8C4"))
        wait_until(lambda: len(sink.reads) == 2)
    assert sink.tags == [TAG, "7C0055F8C4"]
    assert sink.stats["garbage_bytes"] == 5


def test_polling_reader_over_loop_sees_its_own_command_as_noise(sink):
    # loop:// echoes the inventory command back: it must be skipped, and answers still read
    port = serial.serial_for_url("loop://", baudrate=57600)
    with serial.threaded.ReaderThread(port, functools.partial(ChafonProtocol, sink, sink.stats)):
        port.write(inventory_answer(["E2000017221101441890AB12"])[0])
        wait_until(lambda: sink.reads)
    assert sink.tags == ["E2000017221101441890AB12"]
    assert sink.stats["garbage_bytes"] >= 5


def test_link_over_a_real_pty():
    master, slave = os.openpty()
    tty.setraw(slave)
    link = ReaderLink(port_opener(os.ttyname(slave), 115200), lambda s, st: JsonLinesProtocol(s, st))
    link.start()
    try:
        assert link.connected.wait(5)
        os.write(master, jsonl_line("T01", 3, "04A1B2C3", 1)[:10])
        os.write(master, jsonl_line("T01", 3, "04A1B2C3", 1)[10:])
        read = next(r for r in link.reads() if r is not None)
        assert (read.tag, read.antenna, read.reader) == ("04A1B2C3", 3, "T01")
    finally:
        link.stop()
        os.close(master)
        os.close(slave)
    assert not link.is_alive()


def test_link_reconnects_after_unplug(tmp_path):
    pty = PtyPort(tmp_path / "ttyRFID")
    link = ReaderLink(port_opener(pty.path, 9600), lambda s, st: Rdm6300Protocol(s, st), retry=0.05)
    link.start()
    try:
        assert link.connected.wait(5)
        pty.write(em4100_frame(TAG) + em4100_frame(TAG)[:6])  # unplugged mid-frame
        assert next(r for r in link.reads() if r is not None).tag == TAG
        pty.unplug()
        wait_until(lambda: not link.connected.is_set())
        wait_until(lambda: link.stats["open_failures"] >= 1)  # the symlink points nowhere
        pty.plug()
        wait_until(lambda: link.stats["connections"] == 2)
        assert link.connected.wait(5)
        pty.write(em4100_frame("7C0055F8C4"))
        assert next(r for r in link.reads() if r is not None).tag == "7C0055F8C4"
    finally:
        link.stop()
        pty.close()
    assert link.stats["connection_errors"] == 1
    assert link.stats["reads"] == 2


def test_link_retries_a_port_that_raises():
    attempts = []

    def opener():
        attempts.append(1)
        if len(attempts) <= 3:
            raise serial.SerialException("could not open port /dev/ttyUSB0: No such device")
        return serial.serial_for_url("loop://", baudrate=9600)

    stats = ReaderStats()
    link = ReaderLink(opener, lambda s, st: Rdm6300Protocol(s, st), stats=stats, retry=0.01)
    link.start()
    try:
        assert link.connected.wait(5)
    finally:
        link.stop()
    assert stats["open_failures"] == 3 and stats["connections"] == 1


def test_link_survives_a_read_that_raises():
    loop_class = type(serial.serial_for_url("loop://"))
    opened = []

    class FlakyPort(loop_class):
        def read(self, size=1):
            if len(opened) == 1:
                raise serial.SerialException("read failed: [Errno 5] Input/output error")
            return super().read(size)

    def opener():
        opened.append(FlakyPort("loop://", baudrate=9600))
        return opened[-1]

    link = ReaderLink(opener, lambda s, st: Rdm6300Protocol(s, st), retry=0.01)
    link.start()
    try:
        wait_until(lambda: len(opened) == 2 and link.connected.is_set())
        opened[-1].write(em4100_frame(TAG))
        assert next(r for r in link.reads() if r is not None).tag == TAG
    finally:
        link.stop()
    assert link.stats["connection_errors"] == 1
