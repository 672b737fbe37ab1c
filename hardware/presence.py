"""Debounce and presence: a tag repeating while it lies on an antenna is one read.

Readers repeat a tag many times a second while it is in the field, and a tag at the edge of
the field drops out for a read or two. A tag counts as present from its first read until it
has been silent for ``quiet`` seconds; only the first read of a presence is reported.
"""

from __future__ import annotations

from hardware.reads import TagRead


class PresenceTracker:
    """Per-antenna presence of tags; time comes in on the reads and on :meth:`expire`."""

    def __init__(self, quiet: float = 1.0) -> None:
        if quiet <= 0:
            raise ValueError(f"quiet period must be positive, got {quiet!r} s")
        self.quiet = quiet
        self._last_seen: dict[tuple[int, str], float] = {}

    def feed(self, read: TagRead) -> TagRead | None:
        """The read if it starts a presence (an arrival), else None (a repeat)."""
        self.expire(read.t)
        key = (read.antenna, read.tag)
        arrived = key not in self._last_seen
        self._last_seen[key] = read.t
        return read if arrived else None

    def expire(self, now: float) -> list[tuple[int, str]]:
        """Forget tags silent for ``quiet`` seconds; returns the ``(antenna, tag)`` removed."""
        gone = [key for key, seen in self._last_seen.items() if now - seen >= self.quiet]
        for key in gone:
            del self._last_seen[key]
        return gone

    def present(self, antenna: int) -> set[str]:
        return {tag for ant, tag in self._last_seen if ant == antenna}
