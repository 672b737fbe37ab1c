"""A reader that stays connected: open the port, run a ReaderThread, reopen after an unplug.

pyserial's ``ReaderThread`` ends when the port fails (``connection_lost(exc)``); a USB reader
pulled out and plugged back should not need a restart of the table agent, so
:class:`ReaderLink` supervises one ``ReaderThread`` after another on the same port address.
Reads go into a queue that :meth:`ReaderLink.reads` drains.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator

import serial
import serial.threaded

from hardware.protocols import ReaderProtocol
from hardware.reads import ReaderStats, TagRead, log

PortOpener = Callable[[], serial.SerialBase]


def port_opener(url: str, baudrate: int) -> PortOpener:
    """Opens ``url`` (a device path, ``loop://`` or any pyserial URL) when called."""
    return lambda: serial.serial_for_url(url, baudrate=baudrate)


class GuardedReaderThread(serial.threaded.ReaderThread):
    """pyserial's read loop asks ``in_waiting`` outside its ``try``: the ``OSError`` of a
    hung-up pty or a pulled USB adapter would end the thread without ``connection_lost``.
    Report it like any other lost connection."""

    def run(self) -> None:
        try:
            super().run()
        except OSError as exc:
            self.alive = False
            protocol, self.protocol = self.protocol, None
            if protocol is not None:
                protocol.connection_lost(exc)


class ReaderLink(threading.Thread):
    """Keeps one reader connected and its reads flowing into a queue.

    ``protocol_factory(sink, stats)`` builds a fresh protocol for each connection (a frame
    cut by an unplug must not survive it); ``stats`` is shared across connections.
    """

    def __init__(
        self,
        open_port: PortOpener,
        protocol_factory: Callable[[Callable[[TagRead], None], ReaderStats], ReaderProtocol],
        stats: ReaderStats | None = None,
        retry: float = 0.5,
        tick: float = 0.05,
    ) -> None:
        super().__init__(daemon=True, name="reader-link")
        self.open_port = open_port
        self.protocol_factory = protocol_factory
        self.stats = stats if stats is not None else ReaderStats()
        self.retry = retry
        self.tick = tick
        self.queue: queue.Queue[TagRead] = queue.Queue()
        self.connected = threading.Event()
        self._stopping = threading.Event()

    def run(self) -> None:
        outage = False
        while not self._stopping.is_set():
            try:
                port = self.open_port()
            except (serial.SerialException, OSError, ValueError) as exc:
                self.stats.count("open_failures")
                if not outage:
                    log.warning("reader port cannot be opened (will retry): %s", exc)
                outage = True
                self._stopping.wait(self.retry)
                continue
            outage = False
            self._serve(port)
            if not self._stopping.is_set():
                self._stopping.wait(self.retry)

    def _serve(self, port: serial.SerialBase) -> None:
        thread = GuardedReaderThread(port, lambda: self.protocol_factory(self.queue.put, self.stats))
        thread.start()
        try:
            thread.connect()
        except RuntimeError:
            thread.join()
        else:
            self.stats.count("connections")
            self.connected.set()
            log.info("reader connected on %s", port.name or port.portstr)
            while thread.alive and not self._stopping.is_set():
                protocol = thread.protocol
                if protocol is not None:
                    protocol.keepalive()
                self._stopping.wait(self.tick)
        self.connected.clear()
        if self._stopping.is_set():
            thread.close()
        else:
            thread.join()
            _close_quietly(port)

    def reads(self, timeout: float = 0.1) -> Iterator[TagRead | None]:
        """Reads as they come; ``None`` after ``timeout`` seconds without one, so the caller
        can let time pass (presence expiry) while the table is quiet. Ends after :meth:`stop`."""
        while not self._stopping.is_set() or not self.queue.empty():
            try:
                yield self.queue.get(timeout=timeout)
            except queue.Empty:
                yield None

    def stop(self) -> None:
        self._stopping.set()
        if self.is_alive() and threading.current_thread() is not self:
            self.join(5)


def _close_quietly(port: serial.SerialBase) -> None:
    try:
        port.close()
    except (serial.SerialException, OSError) as exc:
        log.debug("closing a lost port failed: %s", exc)
