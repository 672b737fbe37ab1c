"""A simulated table's RFID reader on a real pseudo terminal (``guandan-ref demo --rfid-sim``).

The plan's tag reads (:mod:`.simtable`) become what the reference firmware
(``hardware/firmware``) sends: one JSON line per tag in an antenna's field, repeated while
the card lies there. They are written to the device end of a pty
(:class:`hardware.simulator.PtyPort`); the agent's side opens the pty by its path like any
serial port, through :class:`hardware.link.ReaderLink` and the jsonl protocol's parser, and
:class:`.loop.ReaderWatch` hands the reads to the agent, as ``guandan-ref agent --rfid``
does with the hardware. The reader's clock is the table's (the time of the frame on show),
since the demo may run faster than real time; a line takes the wire about a millisecond,
and the demo waits that long for the parser, so a read is dated by the frame it was
written for however loaded the machine is.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from hardware.link import ReaderLink, port_opener
from hardware.protocols import protocol_class
from hardware.reads import TagRead
from hardware.simulator import Lay, PtyPort, Simulator

PROTOCOL = "jsonl"
"""The reference firmware's protocol: a push reader with an antenna per seat."""
HOLD_S = 1.0
"""How long a laid card's tag stays in its antenna's field (the reader sees it that long)."""
REPEAT_S = 0.2
"""How often (table time) the reader repeats the tags in its field."""


class SimulatedReader:
    """Plays ``reads`` on a pty as the firmware would; :attr:`link` is the agent's side."""

    def __init__(self, reads: Sequence[TagRead], hold_s: float = HOLD_S, repeat_s: float = REPEAT_S) -> None:
        self.port = PtyPort()
        self.simulator = Simulator(PROTOCOL, self.port, [Lay(r.tag, r.antenna, r.t, r.t + hold_s) for r in reads])
        self.repeat_s = repeat_s
        self.now = 0.0
        cls = protocol_class(PROTOCOL)
        self.link = ReaderLink(port_opener(self.port.path, cls.BAUDRATE),
                               lambda sink, stats: cls(sink, stats, clock=lambda: self.now, name="simulated"))
        self._next = 0.0
        self._written = 0

    def start(self, timeout: float = 10.0) -> None:
        """Open the agent's side of the pty; raises if it cannot be opened in ``timeout`` s."""
        self.link.start()
        if not self.link.connected.wait(timeout):
            self.close()
            raise RuntimeError(f"the simulated reader's pty {self.port.path} could not be opened")

    def show(self, t: float, parse_wait_s: float = 1.0) -> None:
        """Table time ``t``: the tags in the field go out (every ``repeat_s``); returns once
        the parser has read them (or after ``parse_wait_s``)."""
        self.now = t
        if t < self._next:
            return
        self._next = t + self.repeat_s
        lays = self.simulator.in_field(t)
        if not lays:
            return
        self.port.write(b"".join(self.simulator.frame(lay) for lay in lays))
        self._written += len(lays)
        deadline = time.monotonic() + parse_wait_s
        while self.link.stats["reads"] < self._written and time.monotonic() < deadline:
            time.sleep(0.001)
        self._written = min(self._written, self.link.stats["reads"])  # a line lost stays lost

    def close(self) -> None:
        self.link.stop()
        self.port.close()
