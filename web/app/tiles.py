"""Floor tiles shared by every open live stream of a worker process.

A change of a table is sent to every open ``/api/stream``. Without sharing, a hall of
200 tables and hundreds of open pages would rebuild the same tile once per page per
change; here the first to ask after a notice (the worker's feed, or a stream sending
its first tiles) builds it and the others reuse it. A cached tile is reused only if it
was *started* after the asker received its notice: the change was committed before the
notice was published, so any read begun later sees it. No tile is ever older than the
notice that asked for it. A stream's first tiles ask for those started since the feed
subscribed (``Feed.since``): a change they miss was noticed later and comes in a batch.

A spectator (no login, or a viewer) receives a table's tile without what only officials
read (``public.spectator_tile``): built with the tile, once per change, and the very same
tile for a table with nothing to leave out.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cached_property

from .public import spectator_tile


def _event(name: str, data: dict) -> bytes:
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return f"event: {name}\ndata: {text}\n\n".encode()


@dataclass(frozen=True)
class Tile:
    data: dict
    version: int = 0
    """Unique to this build in the process: what a stream remembers having sent of a table."""
    base: int | None = None
    """The version ``change`` goes from (the table's tile built before this one), if any."""
    change: bytes = b""
    """A ``change`` event: the table, the seq and only the fields that differ from ``base``'s."""
    spectators: Tile | None = None
    """What a spectator receives of the table (its own version, its change from the spectators'
    tile before), if not this very tile."""

    @cached_property
    def message(self) -> bytes:
        """``data`` as one server-sent ``table`` event (compact JSON, UTF-8), made once for
        every stream, and only if one needs the whole tile (its first, or one out of step):
        the others write ``change`` (bench/NOTES.md)."""
        return _event("table", self.data)

    @property
    def seq(self) -> int:
        return self.data["seq"]

    def seen_by(self, spectator: bool) -> Tile:
        """This tile as a spectator (``spectator``) or an official receives it."""
        return (self.spectators or self) if spectator else self

    def since(self, before: Tile) -> Tile:
        """This tile with its change from ``before``: a move usually touches a few fields
        (the turn, a count, the clock), and every page receiving every table's every whole
        tile is many times the bytes for the server to write and the hall's network to carry."""
        old, new = before.data, self.data
        change = {"table": new["table"], "seq": new["seq"]}
        change.update((key, value) for key, value in new.items() if key not in old or old[key] != value)
        change.update((key, None) for key in old if key not in new)
        return replace(self, base=before.version, change=_event("change", change))

    def sent_as(self, sent_version: int | None) -> bytes:
        """What a stream that last sent ``sent_version`` of this table sends: the change, if
        it goes from that very tile, else the whole tile."""
        return self.change if self.base is not None and self.base == sent_version else self.message


class Tiles:
    """Per-process cache: table id -> (monotonic time its build started, tile).

    ``build(table_id, health)`` makes a tile's data; ``health`` is every table agent's last
    report, read once by the caller for all the tiles it asks for. ``spectator(data)`` is
    that data as a spectator receives it: ``data`` itself when there is nothing to leave out.
    """

    def __init__(self, build: Callable[[str, dict[str, dict]], dict],
                 spectator: Callable[[dict], dict] = spectator_tile):
        self._build = build
        self._spectator = spectator
        self._cache: dict[str, tuple[float, Tile]] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()
        self._versions = itertools.count(1)

    def get(self, table_id: str, fresh_after: float, health: dict[str, dict], began: float | None = None) -> Tile:
        """The tile of ``table_id`` as read no earlier than ``fresh_after`` (``time.monotonic``);
        ``health`` must have been read after ``fresh_after`` too. ``began``: when the reads a
        build would use began, if before it does (a feed's batch reads its tables at once
        first): what it builds is as fresh as that, not as the build."""
        cached = self._cache.get(table_id)
        if cached is not None and cached[0] >= fresh_after:
            return cached[1]
        with self._guard:
            lock = self._locks.setdefault(table_id, threading.Lock())
        with lock:  # those asking at once wait for one build
            cached = self._cache.get(table_id)
            if cached is not None and cached[0] >= fresh_after:
                return cached[1]
            started = time.monotonic() if began is None else began
            data = self._build(table_id, health)
            tile = Tile(data, next(self._versions))
            before = cached[1] if cached is not None else None  # what the streams were sent last
            if before is not None:  # (in a batch, or first)
                tile = tile.since(before)
            shown = self._spectator(data)
            if shown is not data:  # a spectator's change goes from the spectators' last tile
                spectators = Tile(shown, next(self._versions))
                if before is not None:
                    spectators = spectators.since(before.seen_by(True))
                tile = replace(tile, spectators=spectators)
            self._cache[table_id] = (started, tile)
            return tile
