"""Floor tiles shared by every open live stream of a worker process.

Each open ``/api/stream`` gets a notice per change of any table. Without sharing, a
hall of 200 tables and hundreds of open pages would rebuild the same tile once per page
per change; here the first stream to ask after a notice builds it and the others reuse
it. A cached tile is reused only if it was *started* after the asking stream received
its notice: the change was committed before the notice was published, so any read
begun later sees it. No tile is ever older than the notice that asked for it.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import NamedTuple


class Tile(NamedTuple):
    data: dict
    text: str
    """``data`` as compact JSON, serialised once for every stream."""


class Tiles:
    """Per-process cache: table id -> (monotonic time its build started, tile)."""

    def __init__(self, build: Callable[[str], dict]):
        self._build = build
        self._cache: dict[str, tuple[float, Tile]] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def get(self, table_id: str, fresh_after: float) -> Tile:
        """The tile of ``table_id`` as read no earlier than ``fresh_after`` (``time.monotonic``)."""
        with self._guard:
            lock = self._locks.setdefault(table_id, threading.Lock())
        with lock:  # streams woken by one notice wait for one build
            cached = self._cache.get(table_id)
            if cached is not None and cached[0] >= fresh_after:
                return cached[1]
            started = time.monotonic()
            data = self._build(table_id)
            tile = Tile(data, json.dumps(data, ensure_ascii=False, separators=(",", ":")))
            self._cache[table_id] = (started, tile)
            return tile
