"""The sender thread: outbox -> server, oldest first, with backoff while the server is away.

Evidence an event cites is uploaded before the event, so the server never holds an event
whose frame it cannot show. An event leaves the outbox only on the server's answer for it:
``accepted`` or ``duplicate`` (it was stored by an earlier try) or ``rejected`` (the
referee will never take it; it is kept in :attr:`Sender.rejected` and logged, not resent).
While the server is unreachable the thread waits 0.5 s, 1 s, 2 s ... up to ``max_backoff``
(or the server's ``Retry-After``) and the agent keeps filling the outbox meanwhile.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .outbox import Outbox
from .poster import Poster, ServerRefused, ServerUnavailable

log = logging.getLogger("web.app.agent")


def evidence_shas(event: dict[str, Any]) -> list[str]:
    """The JPEG ids an event's evidence cites (``evidence.frames``)."""
    evidence = event.get("evidence")
    frames = evidence.get("frames") if isinstance(evidence, dict) else None
    return [f for f in frames if isinstance(f, str)] if isinstance(frames, list) else []


@dataclass(frozen=True)
class Answer:
    """The server's answer for one event, and when (``time.monotonic()``) it came."""

    event: dict[str, Any]
    result: dict[str, Any]
    at: float


class Sender(threading.Thread):
    """Posts ``outbox`` through ``poster`` until :meth:`stop`; ``health()`` gives the health
    body posted every ``health_every`` seconds."""

    def __init__(
        self,
        outbox: Outbox,
        poster: Poster,
        health: Callable[[], dict[str, Any]] | None = None,
        batch: int = 50,
        max_backoff: float = 8.0,
        health_every: float = 2.0,
    ) -> None:
        super().__init__(name="agent-sender", daemon=True)
        self.outbox = outbox
        self.poster = poster
        self.health = health
        self.batch = batch
        self.max_backoff = max_backoff
        self.health_every = health_every
        self.reachable: bool | None = None
        self.problem: str | None = None
        self.sent = 0
        self.rejected: list[tuple[dict[str, Any], str]] = []
        self.answers: list[Answer] = []
        """Every event the server answered, with its answer (the demo compares them with the truth)."""
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._last_health = 0.0

    def wake(self) -> None:
        """New events are in the outbox."""
        self._wake.set()

    def stop(self, drain_s: float = 0.0) -> None:
        """Stop after trying for up to ``drain_s`` seconds to empty the outbox."""
        deadline = time.monotonic() + drain_s
        while drain_s > 0 and self.outbox.depth() and time.monotonic() < deadline and self.is_alive():
            self.wake()
            time.sleep(0.05)
        self._stopping.set()
        self._wake.set()
        self.join(timeout=10)

    def run(self) -> None:
        delay = 0.0
        while not self._stopping.is_set():
            if delay:
                self._wake.wait(delay)  # woken early only to stop
                if self._stopping.is_set():
                    return
            try:
                self._post_health()
                more = self.send_once()
                delay = 0.0
                self.reachable, self.problem = True, None
                if not more:
                    self._wake.wait(min(0.5, self.health_every))
                    self._wake.clear()
            except ServerUnavailable as exc:
                self.reachable, self.problem = False, str(exc)
                delay = exc.retry_after or min(self.max_backoff, max(0.5, delay * 2))
            except ServerRefused as exc:
                self.reachable, self.problem = True, str(exc)
                log.error("the server refuses this agent's events: %s", exc)
                delay = self.max_backoff

    def send_once(self) -> bool:
        """Post one batch; whether more events wait."""
        events = self.outbox.pending(self.batch)
        if not events:
            return False
        for event in events:
            for sha in evidence_shas(event):
                jpeg = self.outbox.evidence(sha)
                if jpeg is not None:
                    self.poster.evidence(jpeg)
                    self.outbox.evidence_uploaded(sha)
        results = self.poster.events(events)
        now = time.monotonic()
        for event, result in zip(events, results):
            if result.get("status") == "rejected":
                self.rejected.append((event, str(result.get("reason"))))
                log.warning("the server rejected event %s (%s): %s", event["id"], event["type"], result.get("reason"))
            self.answers.append(Answer(event, result, now))
        self.outbox.ack([e["id"] for e in events])
        self.sent += len(events)
        return len(events) == self.batch

    def _post_health(self) -> None:
        now = time.monotonic()
        if self.health is not None and now - self._last_health >= self.health_every:
            self._last_health = now
            try:
                self.poster.health(self.health())
            except ServerRefused as exc:  # health is a courtesy; events must still flow
                log.warning("health not taken: %s", exc)
