"""One live feed per worker process: the table changes its open event streams send.

Each open ``/api/stream`` used to hold a subscription of its own, wake on every change
of any table, fetch that table's tile and write it alone: a hall of 200 tables at two
events a second with 500 open pages made 200,000 wake-ups, lock waits and socket writes
a second, and the worker had no time left for the agents. Here one thread per worker
holds the subscription, gathers the notices of a short window (``GATHER_S``), builds
each moved table's tile once (``Tiles``) and hands the batch to every stream at once;
a stream then writes one chunk per batch, whatever the number of tables in it.

A stream more than ``KEEP_BATCHES`` batches behind (a stalled client) is cut, as is
every stream when the subscription fails (Redis went away): the page reconnects and
resumes from its ``Last-Event-ID``, missing nothing.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field

from .broker import LISTEN_WAIT_S, RESUBSCRIBE_S, Broker, BrokerUnavailable
from .tiles import Tile, Tiles

log = logging.getLogger(__name__)

GATHER_S = 0.25
"""The longest gap between batches: a change on a quiet floor goes out at once, on a busy
one it waits at most this long for the next batch."""
GATHER_PER_STREAM_S = 0.0005
"""The gap between batches grows with the open streams, up to ``GATHER_S``: a stream's
wake-up costs about 0.1 ms of the worker's one interpreter, so waking every stream at most
once per 0.5 ms per stream keeps wake-ups under a fifth of it (500 streams woken ten times a
second took most of it), while a few open pages get each change within milliseconds."""
KEEP_BATCHES = 80
"""Batches kept for streams that are writing meanwhile (20 s at ``GATHER_S``)."""
IDLE_S = 60.0
"""The feed thread stops (and lets go of its subscription) after this long without streams."""


@dataclass(frozen=True)
class Batch:
    number: int
    moved: dict[str, Tile]
    """Tables that were noticed to change: sent to every stream."""
    recheck: dict[str, Tile]
    """Tables whose delayed public view may have moved without a notice: sent to the
    streams that have not seen their current seq."""
    changes: bytes = b""
    """What a stream that sent every table's previously published tile writes: each
    ``moved`` tile's change (or the whole tile, for a table published for the first
    time), joined and encoded once for all the streams."""
    seqs: dict[str, int] = field(default_factory=dict)
    """The seq of every ``moved`` tile."""
    bases: dict[str, int] = field(default_factory=dict)
    """The version each ``moved`` tile's change goes from (tables with one)."""
    versions: dict[str, int] = field(default_factory=dict)
    """The version of every ``moved`` tile."""
    _last_id: list = field(default_factory=list, compare=False, repr=False)

    def in_step(self, sent: dict[str, int]) -> bool:
        """Whether a stream that sent ``sent`` (table -> version) may write ``changes``."""
        return all(sent.get(table) == base for table, base in self.bases.items())

    def event_id(self, seen: dict[str, int]) -> str:
        """``seen`` as a stream's event id (compact JSON). The streams that are up to date
        hold equal maps after a batch: the first encodes it, the others compare and reuse."""
        memo = self._last_id
        if memo and memo[0] == seen:
            return memo[1]
        text = json.dumps(seen, separators=(",", ":"))
        memo[:] = [dict(seen), text]
        return text


class Feed:
    """The worker's one subscription, turned into numbered batches of fresh tiles.

    ``health`` reads every table agent's last report (once per batch, not once per
    tile); ``lagging`` names, among the given tables, those whose public view still lags
    their head (a broadcast delay), to be built again in the next batches; ``reading()``
    is a context in which a batch's reads share what they can (one connection).
    """

    def __init__(self, broker: Broker, tiles: Tiles, health: Callable[[], dict[str, dict]],
                 lagging: Callable[[set[str]], set[str]] | None = None, run: Callable = lambda f: f(),
                 gather_s: float = GATHER_S, reading: Callable[[], AbstractContextManager] = nullcontext):
        self._broker = broker
        self._tiles = tiles
        self._reading = reading
        self._health = health
        self._lagging = lagging
        self._run_in = run
        self.gather_s = gather_s
        self._guard = threading.Lock()
        """Guards the stream count and the waiters (the batches are appended by the feed alone)."""
        self._batches: deque[Batch] = deque(maxlen=KEEP_BATCHES)
        self._number = 0
        self._published_at = 0.0
        """When the last batch was handed to the streams (``time.monotonic``)."""
        self._cut = 0
        """How many times the subscription failed: a stream that joined before a cut ends."""
        self._cut_reason = ""
        self._subscribed = threading.Event()
        self._since = 0.0
        """When the current subscription began (``time.monotonic``)."""
        self._streams = 0
        self._waiters: list[threading.Lock] = []
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ streams

    def join(self) -> tuple[int, int]:
        """A new stream's place in the feed, ``(batch number, cut count)``; raises
        ``BrokerUnavailable`` while the worker holds no subscription (Redis is down)."""
        with self._guard:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run_in, args=(self._loop,), name="guandan-feed",
                                                daemon=True)
                self._thread.start()
            self._streams += 1
        if not self._subscribed.wait(timeout=LISTEN_WAIT_S):
            self.leave()
            raise BrokerUnavailable(self._cut_reason or "live updates unavailable (not subscribed)")
        with self._guard:
            return self._number, self._cut

    @property
    def since(self) -> float:
        """When the current subscription began: a cached tile built since then is fresh
        enough for a stream joining now. Any change it misses was noticed later, so the
        feed builds that table again for a batch this stream will receive (the feed
        rebuilds every table it is noticed to move, so 500 pages opening at once reuse
        the tiles instead of each building every table again)."""
        return self._since

    @property
    def streams(self) -> int:
        """How many open streams have joined and not left."""
        with self._guard:
            return self._streams

    def leave(self) -> None:
        with self._guard:
            self._streams -= 1

    def wait(self, place: tuple[int, int], timeout: float) -> list[Batch]:
        """The batches after ``place`` (``[]`` after ``timeout`` s without one); raises
        ``BrokerUnavailable`` if the subscription failed since, or the stream fell behind.

        Each waiting stream sleeps on a lock of its own that the next batch releases:
        hundreds of streams woken by one shared condition would queue for its lock.
        """
        number, cut = place
        if self._number == number and self._cut == cut:
            waiter = threading.Lock()
            waiter.acquire()
            with self._guard:
                self._waiters.append(waiter)
                fresh = self._number != number or self._cut != cut
            if not fresh:
                waiter.acquire(timeout=timeout)
        if self._cut != cut:
            raise BrokerUnavailable(self._cut_reason)
        if self._number == number:
            return []
        batches = list(self._batches)  # one atomic copy; the feed only appends
        if not batches or batches[0].number > number + 1:
            raise BrokerUnavailable("the stream fell behind; reconnect")
        return [b for b in batches if b.number > number]

    def _wake(self) -> None:
        with self._guard:
            waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            waiter.release()

    # ------------------------------------------------------------------ the thread

    def _loop(self) -> None:
        """Subscribe, gather, build, publish; subscribe again after a failure; stop when idle."""
        idle_since = time.monotonic()
        lagging: set[str] = set()
        while time.monotonic() - idle_since < IDLE_S:
            try:
                subscription = self._broker.subscribe()
            except BrokerUnavailable as exc:
                self._cut_reason = str(exc)
                time.sleep(RESUBSCRIBE_S)
                continue
            self._since = time.monotonic()
            self._subscribed.set()
            try:
                while time.monotonic() - idle_since < IDLE_S:
                    moved = self._gather(subscription)
                    if moved or lagging:
                        lagging = self._publish(moved, lagging - moved, time.monotonic())
                    if self._streams:
                        idle_since = time.monotonic()
            except BrokerUnavailable as exc:
                self._fail(str(exc))
            except Exception as exc:  # noqa: BLE001 - the store failed (a tile could not be read):
                log.warning("live feed: %s", exc)  # the streams end and resume once it is back
                self._fail("the event store is unavailable; reconnect")
            finally:
                self._subscribed.clear()
                subscription.close()

    def _gather(self, subscription) -> set[str]:
        """The tables noticed to move: the first notice (within a second), then those until
        the gap after the last batch is over, then those already queued."""
        changed = subscription.get(timeout=1.0)
        if changed is None:
            return set()
        moved = {changed}
        gap = min(self.gather_s, self._streams * GATHER_PER_STREAM_S)
        while (left := self._published_at + gap - time.monotonic()) > 0:
            if (changed := subscription.get(timeout=left)) is not None:
                moved.add(changed)
        while (changed := subscription.get(timeout=0)) is not None:
            moved.add(changed)
        return moved

    def _publish(self, moved: set[str], recheck: set[str], noticed: float) -> set[str]:
        """Build the batch of ``moved`` (and of the lagging tables ``recheck``), hand it to
        every stream; the tables still lagging. ``noticed``: taken after the last notice of
        the batch, so every tile is read after every change it was noticed for."""
        health = self._health()  # read after the notices: as fresh as the tiles
        tiles = {}
        with self._reading():
            for table in sorted(moved | recheck):
                tiles[table] = self._tiles.get(table, noticed, health)
                time.sleep(0)  # let requests in between tiles: a batch of 200 tables is tens of ms
        shown = {t: tiles[t] for t in sorted(moved)}
        batch = Batch(self._number + 1, shown, {t: tiles[t] for t in sorted(recheck)},
                      b"".join(tile.change if tile.base is not None else tile.message for tile in shown.values()),
                      {t: tile.seq for t, tile in shown.items()},
                      {t: tile.base for t, tile in shown.items() if tile.base is not None},
                      {t: tile.version for t, tile in shown.items()})
        self._batches.append(batch)
        self._number = batch.number
        self._wake()
        self._published_at = time.monotonic()
        if self._lagging is None:
            return set()
        with self._reading():
            return self._lagging(moved | recheck)

    def _fail(self, reason: str) -> None:
        self._cut_reason = reason
        self._subscribed.clear()
        self._cut += 1
        self._wake()
        time.sleep(RESUBSCRIBE_S)
