"""What every reader protocol produces: tag reads, plus counters of what it had to skip."""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

log = logging.getLogger("hardware")


@dataclass(frozen=True)
class TagRead:
    """One raw read: ``tag`` (upper-case hex) seen on ``antenna`` at ``t`` seconds.

    ``antenna`` is a 0-based index within the reader (the seat mapping keys on it);
    ``reader`` names the device (firmware id, bus address, or port) for the evidence trail.
    """

    tag: str
    antenna: int
    t: float
    reader: str = ""
    seq: int | None = None


ReadSink = Callable[[TagRead], None]


class ReaderStats:
    """Thread-safe counters: frames accepted, garbage bytes, bad checksums, reconnects...

    Shared by every protocol instance a reconnecting link creates, so the counts survive an
    unplugged reader.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: Counter[str] = Counter()

    def count(self, what: str, n: int = 1) -> None:
        with self._lock:
            self._counts[what] += n

    def __getitem__(self, what: str) -> int:
        with self._lock:
            return self._counts[what]

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return dict(self._counts)
