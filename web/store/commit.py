"""Write transactions: each table's events taken or refused in order, all stored or none.

Every write transaction locks the head rows of the tables it touches (in table order, so
two writers never deadlock), brings each table's referee up to its head (another process
may have appended), takes each event through the table's checks (``admission``) and its
referee (``derive.judge``), and stores the accepted ones, their derived records and the
new heads together (``chainrows``). ``(table_id, seq)`` is the primary key and the head
update is conditional, so a writer that lost a race finds out and tries again against the
new heads. A refused event gets an error that says why and is kept in
``rejected_events`` (``rejected``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field

from sqlalchemy import Engine
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError, OperationalError

from . import rejected
from .admission import READS_THE_TABLE, Admission
from .chain import head_mac
from .chainrows import Batch, ChainRows, Pending, StaleHead
from .db import WRITE
from .derive import judge
from .envelope import Item, rejection_row
from .models import TableHead
from .outcomes import Appended, EventRejected, SequenceConflict
from .queries import known_ids, lock_heads
from .referees import Referees
from .signing import same

APPEND_RETRIES = 5
Outcome = Appended | EventRejected


@dataclass
class Committer:
    """Commits events for one store: its ``engine`` and ``key``, live ``referees``,
    ``admission`` checks and ``rows``; ``writable`` raises when the store may not be written,
    ``committed`` is told after each commit (the anchors); refused bodies are kept up to
    ``rejected_keep`` per table."""

    engine: Engine
    key: bytes
    referees: Referees
    admission: Admission
    rows: ChainRows
    writable: Callable[[], None]
    committed: Callable[[], None]
    rejected_keep: int
    _locks: dict[str, threading.Lock] = field(default_factory=dict, init=False)
    """One lock per table: this process's writers of a table queue here, not on the database."""
    _locks_guard: threading.Lock = field(default_factory=threading.Lock, init=False)

    def commit(self, groups: dict[str, list[Item]], expected_seq: int | None = None) -> dict[str, list[Outcome]]:
        """Each table's items in one transaction, retried against the new heads when another
        writer won a race (``SequenceConflict`` when it keeps losing, or at once when the
        caller named the head it ``expected_seq``)."""
        self.writable()
        with ExitStack() as locks:
            for tid in sorted(groups):
                locks.enter_context(self._lock(tid))
            for attempt in range(APPEND_RETRIES):
                try:
                    done = self._commit_once(groups, expected_seq)
                    self.committed()
                    return done
                except (IntegrityError, StaleHead, OperationalError) as exc:
                    if isinstance(exc, OperationalError) and not _is_busy(exc):
                        raise
                    if expected_seq is not None or attempt == APPEND_RETRIES - 1:
                        names = ", ".join(sorted(groups)[:5])
                        raise SequenceConflict(
                            f"table {names}: another writer appended at the same time; reload and retry"
                        ) from exc
        raise AssertionError("unreachable")

    def commit_requests(self, requests: list[list[Item]]) -> list[list[Outcome]]:
        """One group commit (``group.GroupCommitter``): every request's items, each table's in
        arrival order; the outcomes handed back per request."""
        groups: dict[str, list[Item]] = {}
        for items in requests:
            for item in items:
                groups.setdefault(item.table_id, []).append(item)
        done = self.commit(groups)
        taken = {tid: iter(outcomes) for tid, outcomes in done.items()}
        return [[next(taken[item.table_id]) for item in items] for items in requests]

    def set_aside(self, refusals: list[tuple[str | None, str, str]]) -> None:
        """Keep events refused before they reached a table (bad envelope): (table, text, reason)."""
        now = self.admission.clock()
        with self.engine.connect().execution_options(**WRITE) as conn, conn.begin():
            rejected.keep(conn, [rejection_row(tid, text, reason, now) for tid, text, reason in refusals],
                          self.rejected_keep)

    def _lock(self, tid: str) -> threading.Lock:
        with self._locks_guard:
            return self._locks.setdefault(tid, threading.Lock())

    def _commit_once(self, groups: dict[str, list[Item]], expected_seq: int | None) -> dict[str, list[Outcome]]:
        """One write transaction: lock the heads, take or refuse each event, move the heads."""
        tids = sorted(groups)
        outcomes: dict[str, list] = {tid: [] for tid in tids}
        batches: dict[str, Batch] = {}
        pending = Pending()
        try:
            with self.engine.connect().execution_options(**WRITE) as conn, conn.begin():
                heads = lock_heads(conn, tids)
                if expected_seq is not None:
                    (tid,) = tids
                    start = heads[tid].head_seq if tid in heads else 0
                    if start != expected_seq:
                        raise SequenceConflict(
                            f"table {tid}: expected head seq {expected_seq}, store has {start}; reload and retry")
                pending.known = known_ids(conn, [(i.table_id, i.event_id) for tid in tids
                                                 if tid in heads for i in groups[tid]])
                for tid in tids:
                    head = heads.get(tid)
                    if head is not None and (refusal := self._head_refusal(head)):
                        outcomes[tid] = [EventRejected(tid, refusal)] * len(groups[tid])
                        continue
                    batch = batches[tid] = (Batch.of_new_table(tid) if head is None else
                                            Batch.at_head(head, self.referees.at_head(conn, tid, head)))
                    for item in groups[tid]:
                        try:
                            outcomes[tid].append(self._take(conn, batch, item, pending))
                        except EventRejected as exc:
                            outcomes[tid].append(exc)
                            pending.rejected.append(rejection_row(tid, item.body, exc.reason,
                                                                  self.admission.clock()))
                self.rows.finish(conn, pending, batches, self.rejected_keep)
        except BaseException:
            for tid in tids:  # the referees may have seen events that were not stored
                self.referees.forget(tid)
            raise
        for tid, batch in batches.items():
            if batch.referee is not None:
                batch.referee.next_idx = batch.next_idx
                self.referees.keep(tid, batch.referee)
        return outcomes

    def _head_refusal(self, head: TableHead) -> str | None:
        """Why nothing may be appended to a table whose head this key did not sign (another
        key's chain, or a head edited outside the store): extending it would sign a history
        this key never vouched for."""
        if same(head.mac, head_mac(self.key, head.table_id, head.ruleset, head.head_seq, head.head_hash,
                                   head.generation, head.created_at)):
            return None
        return ("its head is not signed by this store's key (another key, or edited outside the store): "
                "nothing is appended; guandan-ref verify names what is wrong")

    def _take(self, conn: Connection, batch: Batch, item: Item, pending: Pending) -> Appended:
        """Judge one event against the table as the batch left it, and keep its rows
        (a resend of a stored id is a duplicate; the same id with other content is refused)."""
        tid = batch.table_id
        known = pending.known.get((tid, item.event_id))
        if known is not None:
            seq, digest, stored = known
            if stored != item.body:
                raise EventRejected(tid, f"id {item.event_id!r} is already used by seq {seq} with other content")
            return Appended(seq, digest, [], duplicate=True)
        if isinstance(item.event, READS_THE_TABLE):
            self.rows.flush(conn, pending)
        self.admission.check(conn, item, batch.referee.last if batch.referee is not None else None)
        if batch.referee is None:  # a new table: the ruleset comes with its first accepted event
            batch.ruleset = self.admission.ruleset_for(conn, tid, item.event)
            referee = self.referees.fresh(batch.ruleset)
            records = judge(referee.deriver, tid, item.event)
            self.rows.open_table(conn, batch, referee, self.admission.clock(), pending)
        else:
            records = judge(batch.referee.deriver, tid, item.event)
        return self.rows.add_event(conn, batch, item, records, self.admission.clock(), pending)


def _is_busy(exc: OperationalError) -> bool:
    text = str(exc.orig).lower()
    return "locked" in text or "busy" in text or "could not serialize" in text

