"""Turns: how background work shares a gevent worker's one loop with the requests.

A worker's requests, its group commit and its live feed are green threads of one OS
thread: whatever runs holds every other one. The feed's work comes in bursts (a batch's
tiles, then one write to each of hundreds of open pages, tens of milliseconds in all) while
a table agent's post waits on the same loop, twice: for its request to be read and for its
commit's answer. Yielding with ``sleep(0)`` only lets the green threads already woken run
first; the posts whose bytes arrived meanwhile wait for the burst to end. ``Turns`` has the
burst run for at most ``TURN_S`` at a time, then wait until the loop is idle (every
request that is ready has been served), or ``WAIT_S`` at most, so that a saturated worker
still publishes. The posts' slowest times fall for a little more CPU per event
(bench/NOTES.md).
"""

from __future__ import annotations

import time

TURN_S = 0.003
"""The longest the work runs before it lets the ready requests in."""
WAIT_S = 0.01
"""The longest it waits for the loop to be idle: a worker with no idle moment (saturated)
still gets its batches out, one turn per ``WAIT_S`` at least. In one instrumented run (200
tables, 500 pages) a batch waited up to 4 times building its tiles and up to 10 times
writing them, so this bounds what the turns add to its push latency."""


class Turns:
    """Call ``begin`` when a burst starts and ``take`` between its steps (each one short)."""

    def __init__(self, green: bool, turn_s: float = TURN_S, wait_s: float = WAIT_S):
        self.green = green
        """On gevent's green threads; else (threads) ``take`` only yields the interpreter."""
        self.turn_s = turn_s
        self.wait_s = wait_s
        self._began = time.perf_counter()

    def begin(self) -> None:
        self._began = time.perf_counter()

    def take(self) -> None:
        """Let the ready requests in if this turn has run ``turn_s`` or more."""
        if time.perf_counter() - self._began < self.turn_s:
            return
        if self.green:
            import gevent

            with gevent.Timeout(self.wait_s, False):
                gevent.idle()
        else:
            time.sleep(0)
        self._began = time.perf_counter()
