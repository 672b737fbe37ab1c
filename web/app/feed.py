"""One live feed per worker process: the table changes its open event streams send.

Were each open ``/api/stream`` to hold a subscription of its own, wake on every change of
any table, fetch that table's tile and write it alone, a hall of 200 tables at two events
a second with 500 open pages would make 200,000 wake-ups, lock waits and socket writes a
second, and leave the worker no time for the agents. Instead one thread per worker
holds the subscription, gathers the notices of a short window (``GATHER_S``), builds
each moved table's tile once (``Tiles``) and hands the batch to every stream at once;
a stream then writes one chunk per batch, whatever the number of tables in it. In a
gevent worker the feed writes that chunk to the streams it holds itself (``hold``), one
socket after another, rather than waking each stream to write it.

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
from typing import Any

from .broker import LISTEN_WAIT_S, RESUBSCRIBE_S, Broker, BrokerUnavailable
from .gunicorn_server import chunk
from .tiles import Tile, Tiles
from .turns import Turns

log = logging.getLogger(__name__)

GATHER_S = 0.25
"""The longest gap between batches: a change on a quiet floor goes out at once, on a busy
one it waits at most this long for the next batch."""
GATHER_PER_STREAM_S = 0.0002
"""The gap between batches grows with the open streams, up to ``GATHER_S``, so that writing
to every stream stays a small part of the worker's one interpreter, while a few open pages
get each change within milliseconds. The gap runs from when the last batch began to be
built: its tiles and writes take their turns with the requests (``Turns``), and counted
from their end, a batch's wait for those turns would be added to the next one's gap. The
figures that chose the value: bench/NOTES.md."""
KEEP_BATCHES = 80
"""Batches kept for streams that are writing meanwhile (8 to 20 s, by the number of streams)."""
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
    spectators: Batch | None = None
    """The batch of the tiles as spectators receive them (``Tile.seen_by``), if not this one."""
    _last_id: list = field(default_factory=list, compare=False, repr=False)
    _after: dict = field(default_factory=dict, compare=False, repr=False)
    """Event id -> the maps ``after`` gave for it first (the id is the whole seen map)."""

    @classmethod
    def of(cls, number: int, moved: dict[str, Tile], recheck: dict[str, Tile], spectator: bool = False) -> Batch:
        """The batch of ``moved`` and ``recheck`` tiles as an official, or a spectator, receives
        them; an official's holds the spectators' batch, unless every tile is theirs as well."""
        spectators = None
        if spectator:
            moved = {name: t.seen_by(True) for name, t in moved.items()}
            recheck = {name: t.seen_by(True) for name, t in recheck.items()}
        elif any(t.spectators is not None for t in (*moved.values(), *recheck.values())):
            spectators = cls.of(number, moved, recheck, spectator=True)
        return cls(number, moved, recheck,
                   b"".join(tile.sent_as(tile.base) for tile in moved.values()),  # the change, if any
                   {t: tile.seq for t, tile in moved.items()},
                   {t: tile.base for t, tile in moved.items() if tile.base is not None},
                   {t: tile.version for t, tile in moved.items()}, spectators)

    def seen_by(self, spectator: bool) -> Batch:
        """This batch as a spectator (``spectator``) or an official receives it."""
        return (self.spectators or self) if spectator else self

    def in_step(self, sent: dict[str, int]) -> bool:
        """Whether a stream that sent ``sent`` (table -> version) may write ``changes``."""
        return self.bases.items() <= sent.items()

    def event_id(self, seen: dict[str, int]) -> str:
        """``seen`` as a stream's event id (compact JSON). The streams that are up to date
        hold equal maps after a batch: the first encodes it, the others compare and reuse."""
        memo = self._last_id
        if memo and memo[0] == seen:
            return memo[1]
        text = json.dumps(seen, separators=(",", ":"))
        memo[:] = [dict(seen), text]
        return text

    def after(self, seen: dict[str, int], sent: dict[str, int]) -> tuple[dict, dict, str] | None:
        """What a stream that sent ``seen`` and ``sent`` holds once it has written ``changes``
        (its new maps and event id), None if it is not in step. Streams that end up with equal
        maps get the same objects, which is why nothing may change a stream's maps in place."""
        if not self.in_step(sent):
            return None
        seen, sent = {**seen, **self.seqs}, {**sent, **self.versions}
        event_id = self.event_id(seen)
        known = self._after.setdefault(event_id, (seen, sent, event_id))
        return known if known[1] == sent else (seen, sent, event_id)


def green_threads() -> bool:
    """Whether this process runs on gevent's green threads (a ``serve`` worker)."""
    try:
        from gevent import monkey
    except ImportError:
        return False
    return monkey.is_module_patched("socket") and monkey.is_module_patched("threading")


def with_id(text: bytes, event_id: str) -> bytes:
    """``text`` (server-sent events) with ``event_id`` on its last event."""
    return b"".join((text[:-1], b"id: ", event_id.encode(), b"\n\n"))


def frame(text: bytes, event_id: str) -> bytes:
    """``with_id`` as one HTTP/1.1 chunk: what gunicorn writes for a chunk the stream
    yields, written here by the feed."""
    return chunk(with_id(text, event_id))


@dataclass(eq=False)
class Subscriber:
    """An open stream: where it is in the feed and what it has sent. Its own green thread
    writes what the feed cannot (its first tiles, keep-alives, batches out of step); while
    it is held (``Feed.hold``), the feed writes its batches to ``sock`` itself."""

    seen: dict[str, int]
    """Table -> the public seq this stream sent last (its event id)."""
    place: tuple[int, int]
    """(the last batch it has sent, the feed's cut count when it joined)."""
    sent: dict[str, int] = field(default_factory=dict)
    """Table -> the version of the tile it sent last: a change goes from that one only."""
    sock: Any = None
    """The connection's socket (``gunicorn_server.connection_socket``), for the feed's writes
    while the stream is held."""
    last_write: float = 0.0
    """When something was last written to it (``time.monotonic``): keep-alives go after a pause."""
    rest: bytes = b""
    """The part of a chunk the feed began and the client's buffer could not take: the stream
    writes it before anything else."""
    waiter: Any = None
    spectator: bool = False
    """Whether the stream's reader is a spectator (``public.is_spectator``): it is sent the
    tiles' spectator versions (``Tile.seen_by``)."""

    def take(self, text: bytes, seqs: dict[str, int], versions: dict[str, int], batch: Batch | None = None) -> bytes:
        """``text`` (events of tiles whose seqs are ``seqs``), now sent: the id on its last event."""
        if not text:
            return b""
        self.seen = {**self.seen, **seqs}  # copies: the feed shares maps among streams (Batch.after)
        self.sent = {**self.sent, **versions}
        return with_id(text, batch.event_id(self.seen) if batch else json.dumps(self.seen, separators=(",", ":")))


class Feed:
    """The worker's one subscription, turned into numbered batches of fresh tiles.

    ``health`` reads every table agent's last report (once per batch, not once per
    tile); ``lagging`` names, among the given tables, those whose public view still lags
    their head (a broadcast delay), to be built again in the next batches; ``reading(tables)``
    is a context in which a batch's reads share what they can (one connection, and what
    can be read for all ``tables`` at once on entering).
    """

    def __init__(self, broker: Broker, tiles: Tiles, health: Callable[[], dict[str, dict]],
                 lagging: Callable[[set[str]], set[str]] | None = None, run: Callable = lambda f: f(),
                 gather_s: float = GATHER_S, reading: Callable[..., AbstractContextManager] = nullcontext):
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
        """When the last batch began to be built (``time.monotonic``)."""
        self._cut = 0
        """How many times the subscription failed: a stream that joined before a cut ends."""
        self._cut_reason = ""
        self._subscribed = threading.Event()
        self._since = 0.0
        """When the current subscription began (``time.monotonic``)."""
        self._streams = 0
        self._waiters: list[threading.Lock] = []
        self._held: set[Subscriber] = set()
        """Streams the feed writes to itself (``hold``)."""
        self.writes_to_sockets = green_threads()
        """Whether streams may be held (``hold``): only on green threads."""
        self._turns = Turns(self.writes_to_sockets)
        """A batch's tiles and writes take turns with the worker's requests."""
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
            if not fresh and timeout > 0:
                waiter.acquire(timeout=timeout)
        if self._cut != cut:
            raise BrokerUnavailable(self._cut_reason)
        if self._number == number:
            return []
        batches = list(self._batches)  # one atomic copy; the feed only appends
        if not batches or batches[0].number > number + 1:
            raise BrokerUnavailable("the stream fell behind; reconnect")
        return [b for b in batches if b.number > number]

    def hold(self, sub: Subscriber, timeout: float) -> bytes:
        """Write ``sub``'s batches from the feed while its stream waits, up to ``timeout`` s;
        what the stream must write first when it is handed back (``Subscriber.rest``).

        Only in a gevent worker (streams and feed are green threads of one OS thread, so
        nothing runs between the feed's checks and its writes) and for a stream that has sent
        every batch so far. Waking 500 streams to write one chunk each queued the agents'
        requests behind 500 switches through the WSGI stack per batch; the feed writes the
        same chunk to each socket in one loop, without waiting on any: a client whose buffer
        is full, a batch out of step or a cut hands the stream back to its own thread."""
        number, cut = sub.place
        if number == self._number and cut == self._cut:
            sub.waiter = threading.Lock()
            sub.waiter.acquire()
            self._held.add(sub)
            try:
                sub.waiter.acquire(timeout=timeout)
            finally:
                self._held.discard(sub)
        rest, sub.rest = sub.rest, b""
        return rest

    def _hand_back(self, sub: Subscriber) -> None:
        self._held.discard(sub)
        sub.waiter.release()

    def _deliver(self, batch: Batch) -> None:
        """Write ``batch`` to every held stream in step with it (one chunk, built once per
        distinct event id and view of the batch, ``Batch.seen_by``); hand back the others."""
        frames: dict[tuple[int, str], bytes] = {}
        # (id of the stream's view of the batch, id of seen, id of sent) -> (what its ``after``
        # makes of those maps, the maps, kept so that no id is reused meanwhile): streams in
        # step share their maps, so the merge, the check and the id are made once per batch,
        # not once per stream (bench/NOTES.md)
        steps: dict[tuple[int, int, int], tuple] = {}
        for sub in list(self._held):
            self._turns.take()
            if sub not in self._held:  # it left meanwhile
                continue
            if sub.place != (batch.number - 1, self._cut) or batch.recheck:
                self._hand_back(sub)
                continue
            view = batch.seen_by(sub.spectator)
            key = (id(view), id(sub.seen), id(sub.sent))
            if key not in steps:
                steps[key] = (view.after(sub.seen, sub.sent), sub.seen, sub.sent)
            after = steps[key][0]
            if after is None:  # another tile of a table was sent: the stream writes it itself
                self._hand_back(sub)
                continue
            seen, sent, event_id = after
            chunk = frames.get((id(view), event_id)) or frames.setdefault(
                (id(view), event_id), frame(view.changes, event_id))
            try:
                written = sub.sock.send(chunk, 0, 0.0)  # gevent's send: never wait
            except OSError:  # a full buffer (nothing written) or a closed connection: the
                self._hand_back(sub)  # stream writes the batch itself, or ends
                continue
            sub.seen, sub.sent, sub.place, sub.last_write = seen, sent, (batch.number, self._cut), time.monotonic()
            if written < len(chunk):
                sub.rest = chunk[written:]
                self._hand_back(sub)

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
        began = time.monotonic()
        self._turns.begin()
        with self._reading(moved | recheck):
            for table in sorted(moved | recheck):
                self._turns.take()  # a batch of 200 tables is tens of ms
                tiles[table] = self._tiles.get(table, noticed, health, began)
        batch = Batch.of(self._number + 1, {t: tiles[t] for t in sorted(moved)},
                         {t: tiles[t] for t in sorted(recheck)})
        self._batches.append(batch)
        self._number = batch.number
        self._deliver(batch)
        self._wake()
        self._published_at = began
        if self._lagging is None:
            return set()
        with self._reading():
            return self._lagging(moved | recheck)

    def _fail(self, reason: str) -> None:
        self._cut_reason = reason
        self._subscribed.clear()
        self._cut += 1
        for sub in list(self._held):
            self._hand_back(sub)
        self._wake()
        time.sleep(RESUBSCRIBE_S)
