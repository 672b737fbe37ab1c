"""The rows one write transaction adds to the chains: each accepted event with its link,
its derived records and any snapshot, new tables' heads, and the heads moved at the end.

Rows are held back (``Pending``) and inserted together, before any read that must see
them and at the end; the heads move only from where the transaction found them, so two
writers can never interleave a table or both take one sequence number.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import func, insert, select
from sqlalchemy.engine import Connection

from . import rejected, seals
from .chain import GENESIS, canonical, event_link, head_mac, records_digest
from .derive import DERIVED_TYPES, REDERIVED
from .envelope import Item
from .models import DerivedRecord, Snapshot, TableEvent, TableHead
from .outcomes import Appended
from .queries import MOVE_HEAD
from .referees import TableReferee
from .signing import snapshot_mac
from .verify import plain

MAX_DEAL = 2 ** 31 - 1


class StaleHead(Exception):
    """The head row changed under us (a conditional update matched no row)."""


@dataclass
class Batch:
    """What one write transaction has done to one table so far."""

    table_id: str
    start_seq: int
    """The head when the transaction began (the head update is conditional on it)."""
    generation: int
    ruleset: str | None
    created_at: float | None
    referee: TableReferee | None
    """The referee after the batch's last accepted event; None while a new table has none."""
    next_idx: int | None = None
    """Index of the next derived record of ``generation`` (looked up once, when needed)."""

    @classmethod
    def of_new_table(cls, tid: str) -> Batch:
        return cls(tid, 0, 0, None, None, None, 0)

    @classmethod
    def at_head(cls, head: TableHead, referee: TableReferee) -> Batch:
        return cls(head.table_id, head.head_seq, head.generation, head.ruleset, head.created_at, referee,
                   referee.next_idx)


@dataclass
class Pending:
    """Rows of one write transaction, inserted together (before any read-back, and at the end)."""

    events: list[dict] = field(default_factory=list)
    records: list[dict] = field(default_factory=list)
    snapshots: list[dict] = field(default_factory=list)
    rejected: list[dict] = field(default_factory=list)
    new_tables: list[str] = field(default_factory=list)
    known: dict[tuple[str, str], tuple[int, str, str]] = field(default_factory=dict)
    """(table, event id) -> (seq, link, body) of ids already stored or taken in this transaction."""


@dataclass(frozen=True)
class ChainRows:
    """Makes the rows under the store's ``key``; a snapshot every ``snapshot_every`` events."""

    key: bytes
    snapshot_every: int

    def open_table(self, conn: Connection, batch: Batch, referee: TableReferee, now: float,
                   pending: Pending) -> None:
        """Insert a new table's head (at the genesis link) before its first event."""
        tid = batch.table_id
        batch.created_at, batch.referee = now, referee
        conn.execute(insert(TableHead).values(
            table_id=tid, ruleset=batch.ruleset, head_seq=0, head_hash=GENESIS, generation=0,
            created_at=now, mac=head_mac(self.key, tid, batch.ruleset, 0, GENESIS, 0, now)))
        pending.new_tables.append(tid)

    def add_event(self, conn: Connection, batch: Batch, item: Item, records: list[dict], recorded_at: float,
                  pending: Pending) -> Appended:
        """Chain an accepted event (with what its referee derived) onto the batch's table."""
        tid, state = batch.table_id, batch.referee
        seq = state.seq + 1
        rows = self._record_rows(conn, batch, seq, records)
        blob = state.deriver.snapshot() if self.snapshot_every and seq % self.snapshot_every == 0 else None
        if blob is not None and not plain(blob):
            blob = None  # only plain data is kept: a snapshot must never be code
        t, kind = item.event.t, item.event.kind
        link = event_link(self.key, state.hash, tid, seq, item.event_id, kind, t, item.body, recorded_at,
                          records_digest([(r["generation"], r["idx"], r["type"], r["deal"], r["body"])
                                          for r in rows]), blob is not None)
        pending.events.append(dict(
            table_id=tid, seq=seq, event_id=item.event_id, type=kind, t=t,
            body=item.body, prev_hash=state.hash, hash=link, recorded_at=recorded_at))
        pending.records.extend(rows)
        if blob is not None:
            pending.snapshots.append(dict(table_id=tid, seq=seq, event_hash=link, blob=bytes(blob),
                                          mac=snapshot_mac(self.key, tid, seq, link, bytes(blob))))
        pending.known[(tid, item.event_id)] = (seq, link, item.body)
        state.seq, state.hash, state.last = seq, link, (t, recorded_at)
        return Appended(seq, link, [r for r in records if r.get("type") != REDERIVED])

    @staticmethod
    def _record_rows(conn: Connection, batch: Batch, seq: int, records: list[dict]) -> list[dict]:
        """Derived-record rows of one event; a ``rederived`` record starts a new generation."""
        tid = batch.table_id
        if any(r.get("type") == REDERIVED for r in records):
            batch.generation += 1
            batch.next_idx = 0
            records = batch.referee.deriver.records()
        elif batch.next_idx is None:  # nothing of this generation is pending yet
            batch.next_idx = conn.execute(
                select(func.count()).select_from(DerivedRecord)
                .where(DerivedRecord.table_id == tid, DerivedRecord.generation == batch.generation)
            ).scalar_one()
        rows = []
        for r in records:
            if r.get("type") in DERIVED_TYPES:
                deal = r.get("deal")
                rows.append(dict(
                    table_id=tid, generation=batch.generation, idx=batch.next_idx, source_seq=seq,
                    type=r["type"], deal=deal if isinstance(deal, int) and 0 <= deal <= MAX_DEAL else None,
                    body=canonical(r)))
                batch.next_idx += 1
        return rows

    @staticmethod
    def flush(conn: Connection, pending: Pending) -> None:
        """Insert the pending event, derived-record and snapshot rows."""
        for model, rows in ((TableEvent, pending.events), (DerivedRecord, pending.records),
                            (Snapshot, pending.snapshots)):
            if rows:
                conn.execute(insert(model), rows)
                rows.clear()

    def finish(self, conn: Connection, pending: Pending, batches: dict[str, Batch], rejected_keep: int) -> None:
        """Store what is pending and move the heads over it (only if no one else moved them:
        else ``StaleHead``)."""
        self.flush(conn, pending)
        moves = [dict(b_tid=b.table_id, b_start=b.start_seq, head_seq=b.referee.seq, head_hash=b.referee.hash,
                      generation=b.generation,
                      mac=head_mac(self.key, b.table_id, b.ruleset, b.referee.seq, b.referee.hash, b.generation,
                                   b.created_at))
                 for b in batches.values() if b.referee is not None and b.referee.seq != b.start_seq]
        if moves:
            moved = conn.execute(MOVE_HEAD, moves).rowcount
            if moved != len(moves):
                raise StaleHead(", ".join(m["b_tid"] for m in moves))
        if pending.new_tables:
            seals.add_tables(conn, self.key, pending.new_tables)
        if pending.rejected:
            rejected.keep(conn, pending.rejected, rejected_keep)
