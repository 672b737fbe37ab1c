"""Live fan-out: "table T moved" reaches every open page's event stream within a second.

``Broker`` is the interface the API and the stream use: ``publish`` a table's change,
``listen`` for changes, and keep each table agent's last health report. With one process
``LocalBroker`` does it in memory; with several workers (or machines) ``RedisBroker``
carries the same messages over Redis pub/sub and keeps health in a Redis hash, so every
worker's streams see every worker's appends.
"""

from __future__ import annotations

import json
import queue
import threading
from contextlib import contextmanager
from typing import Protocol

NAMESPACE = "guandan"


class BrokerUnavailable(Exception):
    """The broker (Redis) cannot be reached: the request is answered 503, to be retried."""


class Subscription(Protocol):
    def get(self, timeout: float) -> str | None:
        """The next changed table id, or None after ``timeout`` seconds without one."""

    def close(self) -> None: ...


class Broker(Protocol):
    def publish(self, table_id: str) -> None: ...

    def subscribe(self) -> Subscription: ...

    def set_health(self, table_id: str, report: dict) -> None: ...

    def health(self) -> dict[str, dict]: ...


class _LocalSubscription:
    def __init__(self, broker: LocalBroker):
        self._broker = broker
        self._queue: queue.Queue[str] = queue.Queue(maxsize=10_000)

    def get(self, timeout: float) -> str | None:
        try:
            return self._queue.get(timeout=timeout)
        except queue.Empty:
            return None

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
            except queue.Full:  # a stalled client: it resynchronises from its Last-Event-ID
                pass

    def subscribe(self) -> _LocalSubscription:
        sub = _LocalSubscription(self)
        with self._lock:
            self._subs.add(sub)
        return sub

    def _drop(self, sub: _LocalSubscription) -> None:
        with self._lock:
            self._subs.discard(sub)

    def set_health(self, table_id: str, report: dict) -> None:
        with self._lock:
            self._health[table_id] = report

    def health(self) -> dict[str, dict]:
        with self._lock:
            return dict(self._health)


@contextmanager
def _reachable():
    """Redis errors (server restarted, unreachable) as ``BrokerUnavailable``."""
    import redis

    try:
        yield
    except redis.RedisError as exc:
        raise BrokerUnavailable(f"live updates unavailable (Redis: {exc})") from exc


class _RedisSubscription:
    def __init__(self, client, channel: str):
        self._pubsub = client.pubsub(ignore_subscribe_messages=True)
        with _reachable():
            self._pubsub.subscribe(channel)

    def get(self, timeout: float) -> str | None:
        with _reachable():
            message = self._pubsub.get_message(timeout=timeout)
        if message is None or message.get("type") != "message":
            return None
        data = message["data"]
        return data.decode() if isinstance(data, bytes) else data

    def close(self) -> None:
        self._pubsub.close()


class RedisBroker:
    """The same messages over Redis pub/sub; health reports in one Redis hash.

    ``namespace`` prefixes the channel and the hash, so that two halls (or two test
    runs) can share one Redis server.
    """

    def __init__(self, url: str, namespace: str = NAMESPACE):
        import redis

        self._client = redis.Redis.from_url(url)
        self._client.ping()  # fail at start-up, not at the first event
        self._channel, self._health_key = f"{namespace}:tables", f"{namespace}:health"

    def publish(self, table_id: str) -> None:
        with _reachable():
            self._client.publish(self._channel, table_id)

    def subscribe(self) -> _RedisSubscription:
        return _RedisSubscription(self._client, self._channel)

    def set_health(self, table_id: str, report: dict) -> None:
        with _reachable():
            self._client.hset(self._health_key, table_id, json.dumps(report, sort_keys=True))

    def health(self) -> dict[str, dict]:
        with _reachable():
            stored = self._client.hgetall(self._health_key)
        return {k.decode(): json.loads(v) for k, v in stored.items()}


def make_broker(redis_url: str | None, namespace: str = NAMESPACE) -> Broker:
    """Redis when a URL is configured (several workers), else in-process."""
    return RedisBroker(redis_url, namespace) if redis_url else LocalBroker()
