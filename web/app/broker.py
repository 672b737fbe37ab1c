"""Live fan-out: "table T moved" reaches every open page's event stream within a second.

``Broker`` is the interface the API and the stream use: ``publish`` a table's change,
``listen`` for changes, and keep each table agent's last health report. With one process
``LocalBroker`` does it in memory; with several workers (or machines) ``RedisBroker``
carries the same messages over Redis pub/sub and keeps health in a Redis hash, so every
worker's streams see every worker's appends.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
from contextlib import contextmanager
from typing import Protocol

log = logging.getLogger(__name__)

NAMESPACE = "guandan"
LISTEN_WAIT_S = 1.0
"""How long a new stream waits for its worker's Redis subscription before a 503."""
RESUBSCRIBE_S = 0.2
LISTENER_IDLE_S = 60.0
"""A worker's listener stops after this long without open streams (and restarts with one)."""
REDIS_TIMEOUT_S = 2.0
"""Connect and read timeout of every Redis call: an unreachable Redis is a quick 503."""


class BrokerUnavailable(Exception):
    """The broker (Redis) cannot be reached: the request is answered 503, to be retried."""


class Subscription(Protocol):
    def get(self, timeout: float) -> str | None:
        """The next changed table id, or None after ``timeout`` seconds without one."""

    def close(self) -> None: ...


class Broker(Protocol):
    def publish(self, table_id: str) -> None:
        """Tell every worker's streams that ``table_id`` moved (never raises: a notice that
        cannot be sent is dropped, and the pages it would have reached resume from their ids)."""

    def subscribe(self) -> Subscription: ...

    def set_health(self, table_id: str, report: dict) -> None: ...

    def health(self) -> dict[str, dict]: ...


class _LocalSubscription:
    def __init__(self, broker: LocalBroker):
        self._broker = broker
        self._queue: queue.Queue[str | None] = queue.Queue(maxsize=10_000)
        self.gone: str | None = None
        """Why this subscription was cut (its stream then ends; the page resumes from its id)."""

    def get(self, timeout: float) -> str | None:
        try:
            item = self._queue.get(timeout=timeout) if timeout > 0 else self._queue.get_nowait()
        except queue.Empty:
            item = None
        if self.gone is not None:
            raise BrokerUnavailable(self.gone)
        return item

    def cut(self, reason: str) -> None:
        self.gone = reason
        try:
            self._queue.put_nowait(None)  # wake its reader
        except queue.Full:
            pass

    def close(self) -> None:
        self._broker._drop(self)


class LocalBroker:
    """In-process broker: one queue per subscriber (a thread serving an event stream)."""

    def __init__(self) -> None:
        self._subs: set[_LocalSubscription] = set()
        self._health: dict[str, dict] = {}
        self._lock = threading.Lock()

    def publish(self, table_id: str) -> None:
        with self._lock:
            subs = list(self._subs)
        for sub in subs:
            try:
                sub._queue.put_nowait(table_id)
            except queue.Full:  # a stalled client: cut it; it resumes from its Last-Event-ID
                self._drop(sub)
                sub.cut("the stream fell behind; reconnect")

    def subscribe(self) -> _LocalSubscription:
        sub = _LocalSubscription(self)
        with self._lock:
            self._subs.add(sub)
        return sub

    def subscribers(self) -> int:
        with self._lock:
            return len(self._subs)

    def cut_all(self, reason: str) -> None:
        """End every open subscription (their pages reconnect and resume)."""
        with self._lock:
            subs, self._subs = list(self._subs), set()
        for sub in subs:
            sub.cut(reason)

    def _drop(self, sub: _LocalSubscription) -> None:
        with self._lock:
            self._subs.discard(sub)

    def set_health(self, table_id: str, report: dict) -> None:
        with self._lock:
            self._health[table_id] = report

    def health(self) -> dict[str, dict]:
        with self._lock:
            return dict(self._health)


def _client(url: str, retries: int):
    """A Redis client that fails fast instead of redis-py's default backoff (seconds of
    retries). The listener's client never retries: a pub/sub connection that reconnected
    by itself would have missed the notices published meanwhile, unseen by the streams it
    serves; failing instead cuts them, and their pages resume from their Last-Event-ID."""
    import redis
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    return redis.Redis.from_url(url, retry=Retry(NoBackoff(), retries), socket_timeout=REDIS_TIMEOUT_S,
                                socket_connect_timeout=REDIS_TIMEOUT_S)


@contextmanager
def _reachable():
    """Redis errors (server restarted, unreachable) as ``BrokerUnavailable``."""
    import redis

    try:
        yield
    except redis.RedisError as exc:
        raise BrokerUnavailable(f"live updates unavailable (Redis: {exc})") from exc


class RedisBroker:
    """The same messages over Redis pub/sub; health reports in one Redis hash.

    Each worker process holds one Redis subscription, read by one listener thread that
    hands each notice to the process's open streams (a ``LocalBroker``): Redis sends a
    notice once per worker, not once per open page. If Redis goes away the listener cuts
    every open stream (their pages reconnect and resume from their ``Last-Event-ID``),
    new streams are refused with 503, and it subscribes again by itself. ``namespace``
    prefixes the channel and the hash, so that two halls (or two test runs) can share
    one Redis server.
    """

    def __init__(self, url: str, namespace: str = NAMESPACE):
        self._client = _client(url, retries=1)  # one retry: a pooled connection from before a restart
        self._listener_client = _client(url, retries=0)
        self._channel, self._health_key = f"{namespace}:tables", f"{namespace}:health"
        self._local = LocalBroker()
        self._listening = threading.Event()
        self._listener: threading.Thread | None = None
        self._outgoing: queue.SimpleQueue[str] = queue.SimpleQueue()
        self._publisher: threading.Thread | None = None
        self._guard = threading.Lock()

    def publish(self, table_id: str) -> None:
        """Queue the notice for this process's publisher: it sends the tables queued while it
        sent the last message in one message: one per request would cost a Redis round trip
        per post (bench/NOTES.md)."""
        self._outgoing.put(table_id)
        with self._guard:
            if self._publisher is None or not self._publisher.is_alive():
                self._publisher = threading.Thread(target=self._publish_queued, name="guandan-redis-publisher",
                                                   daemon=True)
                self._publisher.start()

    def _publish_queued(self) -> None:
        """Send the queued notices, as one message (a JSON list) per wake-up; stop when idle
        (``publish`` starts it again). A notice Redis refused is dropped, as one published
        while no page listened: the open streams were cut, and resume from their ids."""
        import redis

        while True:
            try:
                tables = {self._outgoing.get(timeout=LISTENER_IDLE_S)}
            except queue.Empty:
                return
            while True:
                try:
                    tables.add(self._outgoing.get_nowait())
                except queue.Empty:
                    break
            try:
                self._client.publish(self._channel, json.dumps(sorted(tables), ensure_ascii=False))
            except redis.RedisError as exc:
                log.warning("live updates unavailable (Redis: %s); %d table notices dropped", exc, len(tables))

    def subscribe(self) -> _LocalSubscription:
        for _ in range(2):  # a listener that was just stopping for idleness is started again
            with self._guard:  # started lazily: in the worker, after gunicorn forked
                if self._listener is None or not self._listener.is_alive():
                    self._listener = threading.Thread(target=self._listen, name="guandan-redis-listener",
                                                      daemon=True)
                    self._listener.start()
            if self._listening.wait(timeout=LISTEN_WAIT_S):
                return self._local.subscribe()
            if self._listener.is_alive():  # alive but not subscribed: Redis is down
                break
        raise BrokerUnavailable("live updates unavailable (Redis: not subscribed)")

    def _listen(self) -> None:
        """Relay notices while anyone listens in this process; re-subscribe after a failure."""
        import redis

        idle_since = time.monotonic()
        while time.monotonic() - idle_since < LISTENER_IDLE_S:
            pubsub = self._listener_client.pubsub(ignore_subscribe_messages=True)
            try:
                pubsub.subscribe(self._channel)
                self._listening.set()
                while time.monotonic() - idle_since < LISTENER_IDLE_S:
                    message = pubsub.get_message(timeout=1.0)
                    if message is not None and message.get("type") == "message":
                        data = message["data"]
                        for table_id in json.loads(data):
                            self._local.publish(table_id)
                    if self._local.subscribers():
                        idle_since = time.monotonic()
            except redis.RedisError as exc:
                self._listening.clear()
                self._local.cut_all(f"live updates unavailable (Redis: {exc})")
                time.sleep(RESUBSCRIBE_S)
            finally:
                self._listening.clear()
                pubsub.close()

    def set_health(self, table_id: str, report: dict) -> None:
        with _reachable():
            self._client.hset(self._health_key, table_id, json.dumps(report, sort_keys=True))

    def health(self) -> dict[str, dict]:
        with _reachable():
            stored = self._client.hgetall(self._health_key)
        return {k.decode(): json.loads(v) for k, v in stored.items()}


def check_reachable(url: str) -> None:
    """Fail at start-up, with the address, when Redis cannot be reached (a wrong URL).

    Called once by the serving master, never by a worker: gunicorn stops the whole server
    when a worker fails to boot, so a worker restarted during a Redis outage must come up
    (and answer 503 for live updates) rather than take the hall down with it."""
    import redis

    try:
        _client(url, retries=0).ping()
    except redis.RedisError as exc:
        raise ValueError(f"cannot reach Redis at {url}: {exc}") from exc


def make_broker(redis_url: str | None, namespace: str = NAMESPACE) -> Broker:
    """Redis when a URL is configured (several workers), else in-process."""
    return RedisBroker(redis_url, namespace) if redis_url else LocalBroker()
