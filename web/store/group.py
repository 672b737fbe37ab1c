"""Group commit: many callers' events, from many tables, in one write transaction.

A hall sends one event per table at a time; committing each alone costs one fsync per
event. ``GroupCommitter`` lets concurrent callers (HTTP requests, agents, a feed) hand in
their events and get a future: one committer thread gathers what arrives within a bounded wait
(``max_wait``, or until as many requests came as the last group had, or ``max_events``)
and commits it in one transaction, then wakes each caller with its own outcomes. Order
within a table is arrival order; each table's sequence stays strict because the commit
function runs one group at a time.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field

MAX_WAIT_S = 0.005
"""Long enough to gather a hall's concurrent posts, short enough that no post waits long for
its group: a longer wait costs the posts more than the core it saves (bench/NOTES.md)."""
MAX_EVENTS = 5000


@dataclass
class _Request:
    items: list
    done: Future = field(default_factory=Future)


class GroupCommitter:
    """Runs ``commit(list_of_item_lists) -> list_of_outcome_lists`` for gathered requests.

    If a group's commit raises, each of its requests is committed alone, so that one
    caller's failure (say, a table that keeps losing races) is reported to that caller only.
    """

    def __init__(self, commit: Callable[[list[list]], list[list]], max_wait: float = MAX_WAIT_S,
                 max_events: int = MAX_EVENTS):
        self._commit = commit
        self.max_wait = max_wait
        self.max_events = max_events
        self._queue: list[_Request] = []
        self._cond = threading.Condition()
        self._closed = False
        self._last_group = 1
        self._thread: threading.Thread | None = None

    def submit(self, items: list) -> Future:
        """Queue ``items``; the future gives their outcomes once their group is committed."""
        request = _Request(list(items))
        with self._cond:
            if self._closed:
                raise RuntimeError("the store is closed")
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="store-group-commit", daemon=True)
                self._thread.start()
            self._queue.append(request)
            self._cond.notify_all()
        return request.done

    def close(self) -> None:
        """Commit what is queued, then stop the committer thread."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join()

    def _gather(self) -> list[_Request] | None:
        with self._cond:
            while not self._queue and not self._closed:
                self._cond.wait()
            if not self._queue:
                return None
            deadline = time.monotonic() + self.max_wait
            while not self._closed:
                queued = sum(len(r.items) for r in self._queue)
                left = deadline - time.monotonic()
                if len(self._queue) >= self._last_group or queued >= self.max_events or left <= 0:
                    break
                self._cond.wait(left)
            group, self._queue = self._queue, []
            self._last_group = max(1, len(group))
            return group

    def _run(self) -> None:
        while (group := self._gather()) is not None:
            self._settle(group)

    def _settle(self, group: list[_Request]) -> None:
        try:
            outcomes = self._commit([r.items for r in group])
        except BaseException as exc:  # noqa: BLE001 - handed to the callers
            if len(group) > 1:
                for request in group:
                    self._settle([request])
                return
            group[0].done.set_exception(exc)
            return
        for request, result in zip(group, outcomes):
            request.done.set_result(result)
