"""Each table's live referee, kept between writes: from cache, snapshot + tail, or replay.

A process keeps, per table, the referee after the last event it saw. Another process may
have appended since, so every use names the head it must reach: a cached referee behind
it takes the missing tail (if it still sits on the stored chain), else the table's latest
snapshot is loaded (only when its MAC checks out, it is pinned to the stored chain and it
is plain JSON data: a snapshot is never code) and the events after it are replayed; else
every event is.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.engine import Connection

from referee.events import EventError, parse_event

from .chain import GENESIS
from .derive import Derivation, Deriver
from .models import Snapshot, TableEvent, TableHead
from .outcomes import StoreError
from .signing import snapshot_is_authentic
from .verify import plain

log = logging.getLogger(__name__)


@dataclass
class TableReferee:
    """A table's referee after its event ``seq`` (chain link ``hash``)."""

    seq: int
    hash: str
    deriver: Deriver
    next_idx: int | None = None
    """Index of the table's next derived record in its current generation, once known."""
    last: tuple[float, float] | None = None
    """``t`` and the server's clock (``recorded_at``) of the table's last event, once known."""


class Referees:
    """The live referees of one store (``derivation`` makes them; ``key`` checks snapshots)."""

    def __init__(self, key: bytes, derivation: Derivation):
        self._key = key
        self.derivation = derivation
        self._cached: dict[str, TableReferee] = {}

    def fresh(self, ruleset: str) -> TableReferee:
        """A new table's referee, before its first event."""
        return TableReferee(0, GENESIS, self.derivation.new(ruleset))

    def keep(self, tid: str, referee: TableReferee) -> None:
        self._cached[tid] = referee

    def forget(self, tid: str) -> None:
        """Drop a table's referee (it may have seen events that were not stored)."""
        self._cached.pop(tid, None)

    def clear(self) -> None:
        self._cached.clear()

    def at_head(self, conn: Connection, tid: str, head: TableHead) -> TableReferee:
        """The referee after the head event, from cache, snapshot + tail, or full replay."""
        state = self._cached.get(tid)
        if state is not None and (state.seq, state.hash) == (head.head_seq, head.head_hash):
            return state
        if state is not None and state.seq < head.head_seq:
            at = GENESIS if state.seq == 0 else conn.execute(
                select(TableEvent.hash).where(TableEvent.table_id == tid, TableEvent.seq == state.seq)
            ).scalar_one_or_none()
            if at != state.hash:
                state = None
        else:
            state = None
        if state is None:
            state = self._restore(conn, tid, head)
        tail = conn.execute(
            select(TableEvent.seq, TableEvent.hash, TableEvent.body, TableEvent.t.label("time"),
                   TableEvent.recorded_at)
            .where(TableEvent.table_id == tid, TableEvent.seq > state.seq).order_by(TableEvent.seq)
        ).all()
        if tail:
            state.next_idx = None  # another writer stored records meanwhile
        for row in tail:
            try:
                state.deriver.feed(parse_event(json.loads(row.body)))
            except EventError as exc:
                self.forget(tid)
                raise StoreError(f"table {tid}: replay rejects accepted seq {row.seq}: {exc.reason}") from None
            state.seq, state.hash, state.last = row.seq, row.hash, (row.time, row.recorded_at)
        if state.last is None and state.seq > 0:  # restored from a snapshot at the head
            state.last = tuple(conn.execute(select(TableEvent.t, TableEvent.recorded_at).where(
                TableEvent.table_id == tid, TableEvent.seq == state.seq)).one())
        self._cached[tid] = state
        return state

    def _restore(self, conn: Connection, tid: str, head: TableHead) -> TableReferee:
        """The referee from the table's latest snapshot, if it is signed, pinned to the stored
        chain and plain data; else a fresh one (the events are then replayed)."""
        snap = conn.execute(
            select(Snapshot).where(Snapshot.table_id == tid, Snapshot.seq <= head.head_seq)
            .order_by(Snapshot.seq.desc()).limit(1)
        ).first()
        if snap is not None:
            at = conn.execute(select(TableEvent.hash).where(
                TableEvent.table_id == tid, TableEvent.seq == snap.seq)).scalar_one_or_none()
            if not snapshot_is_authentic(self._key, snap.mac, tid, snap.seq, snap.event_hash, snap.blob):
                log.warning("table %s: snapshot at seq %d fails its signature check (forged, or made "
                            "with another secret key); not loading it, replaying the events", tid, snap.seq)
            elif at != snap.event_hash:
                log.warning("table %s: snapshot at seq %d is pinned to another chain; replaying", tid, snap.seq)
            elif not plain(snap.blob):
                log.warning("table %s: snapshot at seq %d is not plain JSON data; not loading it, "
                            "replaying the events", tid, snap.seq)
            else:
                try:
                    return TableReferee(snap.seq, snap.event_hash, self.derivation.restore(snap.blob))
                except Exception as exc:  # an older engine's blob: the log is the truth
                    log.warning("table %s: snapshot at seq %d unusable (%s); replaying", tid, snap.seq, exc)
        return self.fresh(head.ruleset)
