"""The event store: append table events, derive and keep results, verify the chain.

One ``Store`` per process (web worker, CLI run); it holds an engine and, per table, the
referee state after the last event it saw. An append, or a batch of a table's events
(``append_many``), runs in one write transaction: lock the table's head row, bring the
cached referee up to the head (another process may have appended), feed the events one
by one, and insert the accepted ones, their derived records and the new head together.
``(table_id, seq)`` is the primary key and the head update is conditional, so two writers
can never interleave or both take one sequence number; a rejected event gets an error
that says why, and is kept in ``rejected_events``. Snapshots of the referee are signed
(``signing``) and never unpickled unless their signature checks out.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from sqlalchemy import Engine, delete, func, insert, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError, OperationalError

from referee.events import EVENT_TYPES

from . import authority
from .db import WRITE, make_engine, upgrade
from .derive import DERIVED_TYPES, Derivation, Deriver, RefereeDerivation
from .hooks import TableRules
from .models import (
    DerivedRecord,
    Official,
    RejectedEvent,
    Snapshot,
    TableEvent,
    TableHead,
)
from .signing import as_key, key_for_url, snapshot_is_authentic, snapshot_mac

log = logging.getLogger(__name__)

GENESIS = "0" * 64
MAX_ID = 120
APPEND_RETRIES = 5
BATCH_SIZE = 500
"""Events per write transaction in ``append_many`` (one commit, one fsync, per batch)."""


class StoreError(Exception):
    """The store cannot do what was asked (inconsistent data, engine mismatch)."""


class EventRejected(StoreError, ValueError):
    """An event was refused; ``reason`` says why. Nothing was appended."""

    def __init__(self, table_id: str | None, reason: str):
        super().__init__(f"table {table_id}: {reason}" if table_id else reason)
        self.table_id = table_id
        self.reason = reason


class SequenceConflict(StoreError):
    """The table's head moved: another writer appended first."""


@dataclass(frozen=True)
class Appended:
    seq: int
    hash: str
    records: list[dict]
    duplicate: bool = False
    """True when the event's ``id`` was already stored with the same content (a resend)."""


@dataclass
class _State:
    seq: int
    hash: str
    deriver: Deriver


@dataclass
class _Batch:
    """What one write transaction has done to a table so far.

    Rows are collected and inserted together (``Store._flush``): before anything reads
    them back in the same transaction, and at the end.
    """

    table_id: str
    start_seq: int
    """The head when the transaction began (the head update is conditional on it)."""
    generation: int
    state: _State | None
    """The referee after the batch's last accepted event; None while a new table has none."""
    known: dict[str, tuple[int, str, str]]
    """Event id -> (seq, hash, body) of the batch's ids already stored or taken in it."""
    next_idx: int | None = None
    """Index of the next derived record of ``generation`` (looked up once, when needed)."""
    event_rows: list[dict] = field(default_factory=list)
    record_rows: list[dict] = field(default_factory=list)
    rejected: list[dict] = field(default_factory=list)


@dataclass
class VerifyReport:
    tables: int = 0
    events: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def canonical(obj: object) -> str:
    """The one JSON text of an object that is hashed and stored."""
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def chain_hash(prev: str, table_id: str, seq: int, body: str) -> str:
    """Hash of an event row: covers the previous hash, its place and its content."""
    digest = hashlib.sha256(f"{prev}\n{table_id}\n{seq}\n".encode())
    digest.update(body.encode())
    return digest.hexdigest()


def check_event(event: object, table_id: str | None = None) -> tuple[str, dict]:
    """Validate what the store itself relies on; return ``(table_id, event)``.

    The referee engine checks the game; this checks the envelope: a JSON object with a
    known ``type``, a finite time ``t``, a table id, an optional ``id``, and for referee
    actions the ``by`` who made them.
    """
    if not isinstance(event, dict):
        raise EventRejected(table_id, f"an event must be a JSON object, not {type(event).__name__}")
    tid = event.get("table", table_id)
    if table_id is not None and tid != table_id:
        raise EventRejected(table_id, f"event names table {tid!r}, not {table_id!r}")
    if not isinstance(tid, str) or not tid.strip() or len(tid) > MAX_ID:
        raise EventRejected(None, f"missing or bad 'table': {tid!r}")
    kind = event.get("type")
    if kind not in EVENT_TYPES:
        raise EventRejected(tid, f"unknown event type {kind!r}")
    t = event.get("t")
    if isinstance(t, bool) or not isinstance(t, int | float) or not math.isfinite(t):
        raise EventRejected(tid, f"{kind}: 't' must be a finite number of seconds, not {t!r}")
    eid = event.get("id")
    if eid is not None and (isinstance(eid, bool) or not isinstance(eid, str | int) or len(str(eid)) > MAX_ID):
        raise EventRejected(tid, f"{kind}: bad 'id' {eid!r}")
    if kind in ("correction", "penalty"):
        by = event.get("by")
        if not isinstance(by, str) or not by.strip():
            raise EventRejected(tid, f"{kind}: 'by' must name the official who made it")
    if kind == "correction" and ("of" not in event or not isinstance(event.get("event"), dict)):
        raise EventRejected(tid, "correction: needs 'of' (the corrected event's id) and 'event' (the replacement)")
    return tid, event


def _envelope(event: object, table_id: str | None = None) -> tuple[str, dict, str]:
    """``check_event`` plus the canonical text that is hashed and stored."""
    tid, event = check_event(event, table_id)
    try:
        return tid, event, canonical(event)
    except (TypeError, ValueError) as exc:
        raise EventRejected(tid, f"{event['type']}: not representable as JSON ({exc})") from None


def _rejection(tid: str | None, event: object, reason: str, at: float) -> dict:
    """A ``rejected_events`` row."""
    try:
        text = canonical(event)
    except (TypeError, ValueError):
        text = repr(event)
    return dict(table_id=tid if isinstance(tid, str) else None, body=text[:100_000], reason=reason,
                received_at=at)


class Store:
    """Event store over one database URL (``sqlite:///...`` or ``postgresql+psycopg://...``).

    ``derivation`` makes referees (default: the real engine); ``snapshot_every`` events a
    snapshot of the referee state is kept so that opening a long table replays only the
    tail; ``secret_key`` signs those snapshots (default: the key file beside a SQLite
    database; other databases need one given); ``windows`` are the S4 correction windows;
    ``clock`` gives wall time for bookkeeping columns only (rules use the events' own ``t``);
    ``table_rules`` lets tournaments (``web.tournament.tables``) choose a table's ruleset
    and refuse events their draw does not allow.
    """

    def __init__(self, url: str, *, derivation: Derivation | None = None,
                 snapshot_every: int = 200, default_ruleset: str = "competition",
                 secret_key: str | bytes | None = None,
                 windows: authority.Windows = authority.Windows(),
                 clock: Callable[[], float] = time.time, migrate: bool = True,
                 table_rules: TableRules | None = None):
        self.url = url
        self._key = key_for_url(url) if secret_key is None else as_key(secret_key)
        self.engine: Engine = make_engine(url)
        self.derivation = derivation or RefereeDerivation()
        self.snapshot_every = snapshot_every
        self.default_ruleset = default_ruleset
        self.windows = windows
        self.clock = clock
        self.table_rules = table_rules
        self._states: dict[str, _State] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._locks_guard = threading.Lock()
        if migrate:
            upgrade(self.engine)

    def close(self) -> None:
        self._states.clear()
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ appending

    def append(self, event: object, *, table_id: str | None = None,
               expected_seq: int | None = None) -> Appended:
        """Append one event to its table, derive records, store both atomically.

        ``expected_seq``: the head the caller last saw; if another writer appended since,
        ``SequenceConflict`` is raised instead of appending. Without it, a lost race is
        retried against the new head (the event is re-validated there).
        """
        try:
            tid, event, body = _envelope(event, table_id)
        except EventRejected as exc:
            self._reject_aside([(exc.table_id, event, exc.reason)])
            raise
        (done,) = self._append_batch(tid, [(event, body)], expected_seq)
        if isinstance(done, EventRejected):
            raise done
        return done

    def append_many(self, events: Iterable[object], *,
                    batch_size: int = BATCH_SIZE) -> list[Appended | StoreError]:
        """Append events in order, one write transaction per batch (what ``import`` uses).

        Every event is validated exactly as by ``append``. The result has one entry per
        event, in order: its ``Appended``, or the error saying why it was not stored:
        ``EventRejected`` (refused; kept in ``rejected_events`` too) or, for every event
        of a batch that kept losing races to other writers, ``SequenceConflict``. Neither
        stops the rest. A batch is a run of at most ``batch_size`` consecutive events of
        one table. When this returns, every ``Appended`` is committed; a writer killed
        part-way leaves each batch wholly stored or not at all, never in part.
        """
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, not {batch_size}")
        events = list(events)
        outcomes: list = [None] * len(events)
        batches: list[tuple[str, list[int], list[tuple[dict, str]]]] = []
        aside: list[tuple[str | None, object, str]] = []
        for i, raw in enumerate(events):
            try:
                tid, event, body = _envelope(raw)
            except EventRejected as exc:
                outcomes[i] = exc
                aside.append((exc.table_id, raw, exc.reason))
                continue
            if not batches or batches[-1][0] != tid or len(batches[-1][1]) == batch_size:
                batches.append((tid, [], []))
            batches[-1][1].append(i)
            batches[-1][2].append((event, body))
        for tid, where, items in batches:
            try:
                done = self._append_batch(tid, items)
            except SequenceConflict as exc:
                done = [exc] * len(items)
            for i, outcome in zip(where, done):
                outcomes[i] = outcome
        if aside:
            self._reject_aside(aside)
        return outcomes

    def _append_batch(self, tid: str, items: list[tuple[dict, str]],
                      expected_seq: int | None = None) -> list[Appended | EventRejected]:
        """``_append_once``, retried against the new head when another writer won a race."""
        with self._lock(tid):
            for attempt in range(APPEND_RETRIES):
                try:
                    return self._append_once(tid, items, expected_seq)
                except (IntegrityError, _StaleHead, OperationalError) as exc:
                    if isinstance(exc, OperationalError) and not _is_busy(exc):
                        raise
                    if expected_seq is not None or attempt == APPEND_RETRIES - 1:
                        raise SequenceConflict(
                            f"table {tid}: another writer appended at the same time; reload and retry"
                        ) from exc
        raise AssertionError("unreachable")

    def _append_once(self, tid: str, items: list[tuple[dict, str]],
                     expected_seq: int | None) -> list[Appended | EventRejected]:
        """One write transaction: lock the head, take or refuse each event, move the head."""
        outcomes: list[Appended | EventRejected] = []
        try:
            with self.engine.connect().execution_options(**WRITE) as conn, conn.begin():
                head = conn.execute(
                    select(TableHead).where(TableHead.table_id == tid).with_for_update()).first()
                start = 0 if head is None else head.head_seq
                if expected_seq is not None and start != expected_seq:
                    raise SequenceConflict(
                        f"table {tid}: expected head seq {expected_seq}, store has {start}; reload and retry")
                batch = _Batch(tid, start, 0 if head is None else head.generation,
                               None if head is None else self._state(conn, tid, head),
                               self._known_ids(conn, tid, items) if head is not None else {})
                for event, body in items:
                    try:
                        outcomes.append(self._append_event(conn, batch, event, body))
                    except EventRejected as exc:
                        outcomes.append(exc)
                        batch.rejected.append(_rejection(tid, event, exc.reason, self.clock()))
                self._finish(conn, batch)
        except BaseException:
            self._states.pop(tid, None)  # the referee may have seen events that were not stored
            raise
        if batch.state is not None:
            self._states[tid] = batch.state
        return outcomes

    def _append_event(self, conn: Connection, batch: _Batch, event: dict, body: str) -> Appended:
        """Validate one event against the table as the batch left it, and store it."""
        tid = batch.table_id
        eid = None if event.get("id") is None else str(event["id"])
        if eid in batch.known:
            seq, digest, stored = batch.known[eid]
            if stored != body:
                raise EventRejected(tid, f"id {eid!r} is already used by seq {seq} with other content")
            return Appended(seq, digest, [], duplicate=True)
        if event["type"] == "correction":
            self._flush(conn, batch)  # its check reads this table's events
        self._check_authority(conn, tid, event)
        self._check_tournament(conn, tid, event)
        if batch.state is None:  # a new table: the ruleset comes with its first accepted event
            ruleset = self._ruleset_for(conn, tid, event)
            deriver = self.derivation.new(ruleset)
        else:
            deriver = batch.state.deriver
        records = deriver.feed(event)
        errors = [r for r in records if r.get("type") == "error"]
        if errors:
            raise EventRejected(tid, "; ".join(str(e.get("message", e)) for e in errors))
        if batch.state is None:
            conn.execute(insert(TableHead).values(
                table_id=tid, ruleset=ruleset, head_seq=0, head_hash=GENESIS, generation=0,
                created_at=self.clock()))
            batch.state = _State(0, GENESIS, deriver)
        state = batch.state
        seq = state.seq + 1
        digest = chain_hash(state.hash, tid, seq, body)
        batch.event_rows.append(dict(
            table_id=tid, seq=seq, event_id=eid, type=event["type"], t=float(event["t"]),
            body=body, prev_hash=state.hash, hash=digest, recorded_at=self.clock(),
        ))
        if eid is not None:
            batch.known[eid] = (seq, digest, body)
        self._store_records(conn, batch, seq, records)
        if self.snapshot_every and seq % self.snapshot_every == 0:
            blob = deriver.snapshot()
            conn.execute(insert(Snapshot).values(
                table_id=tid, seq=seq, event_hash=digest, blob=blob,
                mac=snapshot_mac(self._key, tid, seq, digest, blob)))
        state.seq, state.hash = seq, digest
        return Appended(seq, digest, [r for r in records if r.get("type") != "rederived"])

    @staticmethod
    def _known_ids(conn: Connection, tid: str, items: list[tuple[dict, str]]) -> dict[str, tuple[int, str, str]]:
        """Which of the batch's event ids the table already holds (one query, not one each)."""
        ids = sorted({str(e["id"]) for e, _ in items if e.get("id") is not None})
        known = {}
        for i in range(0, len(ids), BATCH_SIZE):  # bounded IN lists (SQLite caps parameters)
            rows = conn.execute(
                select(TableEvent.event_id, TableEvent.seq, TableEvent.hash, TableEvent.body)
                .where(TableEvent.table_id == tid, TableEvent.event_id.in_(ids[i:i + BATCH_SIZE]))
            )
            known.update({r.event_id: (r.seq, r.hash, r.body) for r in rows})
        return known

    @staticmethod
    def _store_records(conn: Connection, batch: _Batch, seq: int, records: list[dict]) -> None:
        """Keep derived records for insertion; a ``rederived`` record starts a new generation."""
        tid = batch.table_id
        if any(r.get("type") == "rederived" for r in records):
            batch.generation += 1
            batch.next_idx = 0
            records = batch.state.deriver.records()
        elif batch.next_idx is None:  # nothing of this generation is pending yet
            batch.next_idx = conn.execute(
                select(func.count()).select_from(DerivedRecord)
                .where(DerivedRecord.table_id == tid, DerivedRecord.generation == batch.generation)
            ).scalar_one()
        for r in records:
            if r.get("type") in DERIVED_TYPES:
                batch.record_rows.append(dict(
                    table_id=tid, generation=batch.generation, idx=batch.next_idx, source_seq=seq,
                    type=r["type"], deal=r.get("deal") if isinstance(r.get("deal"), int) else None,
                    body=canonical(r)))
                batch.next_idx += 1

    @staticmethod
    def _flush(conn: Connection, batch: _Batch) -> None:
        """Insert the batch's pending event and derived-record rows."""
        if batch.event_rows:
            conn.execute(insert(TableEvent), batch.event_rows)
            batch.event_rows = []
        if batch.record_rows:
            conn.execute(insert(DerivedRecord), batch.record_rows)
            batch.record_rows = []

    def _finish(self, conn: Connection, batch: _Batch) -> None:
        """Store what is pending and move the head over it (only if no one else moved it)."""
        self._flush(conn, batch)
        state = batch.state
        if state is not None and state.seq != batch.start_seq:
            moved = conn.execute(
                update(TableHead)
                .where(TableHead.table_id == batch.table_id, TableHead.head_seq == batch.start_seq)
                .values(head_seq=state.seq, head_hash=state.hash, generation=batch.generation)
            ).rowcount
            if moved != 1:
                raise _StaleHead(batch.table_id)
        if batch.rejected:
            conn.execute(insert(RejectedEvent), batch.rejected)

    def _ruleset_for(self, conn: Connection, tid: str, event: dict) -> str:
        """The ruleset ``table_rules`` gives the table (a tournament's); else the one its
        first event names, else the default."""
        given = self.table_rules.ruleset(conn, tid) if self.table_rules else None
        if given:
            return given
        named = event.get("ruleset") if event.get("type") == "session_start" else None
        return named if isinstance(named, str) and named else self.default_ruleset

    def _state(self, conn: Connection, tid: str, head: TableHead) -> _State:
        """The referee after the head event, from cache, snapshot + tail, or full replay."""
        state = self._states.get(tid)
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
            select(TableEvent.seq, TableEvent.hash, TableEvent.body)
            .where(TableEvent.table_id == tid, TableEvent.seq > state.seq).order_by(TableEvent.seq)
        ).all()
        for row in tail:
            errors = [r for r in state.deriver.feed(json.loads(row.body)) if r.get("type") == "error"]
            if errors:
                self._states.pop(tid, None)
                raise StoreError(f"table {tid}: replay rejects accepted seq {row.seq}: {errors[0]}")
            state.seq, state.hash = row.seq, row.hash
        self._states[tid] = state
        return state

    def _restore(self, conn: Connection, tid: str, head: TableHead) -> _State:
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
            elif at == snap.event_hash:
                try:
                    return _State(snap.seq, snap.event_hash, self.derivation.restore(snap.blob))
                except Exception as exc:  # an older engine's blob: the log is the truth
                    log.warning("table %s: snapshot at seq %d unusable (%s); replaying", tid, snap.seq, exc)
        return _State(0, GENESIS, self.derivation.new(head.ruleset))

    def _check_authority(self, conn: Connection, tid: str, event: dict) -> None:
        kind = event["type"]
        if kind not in ("correction", "penalty"):
            return
        by = event["by"]
        role = conn.execute(select(Official.role).where(Official.name == by)).scalar_one_or_none()
        try:
            if kind == "penalty":
                authority.check_penalty(by, role, event.get("level"))
                return
            original = conn.execute(
                select(TableEvent.seq).where(TableEvent.table_id == tid, TableEvent.event_id == str(event["of"]))
            ).scalar_one_or_none()
            if original is None:
                raise authority.NotAuthorized(f"correction of {event['of']!r}: no event with that id at this table")
            end_t = conn.execute(
                select(func.min(TableEvent.t)).where(
                    TableEvent.table_id == tid, TableEvent.type == "session_end", TableEvent.seq > original)
            ).scalar_one_or_none()
            authority.check_correction(by, role, float(event["t"]), end_t, self.windows)
        except authority.NotAuthorized as exc:
            raise EventRejected(tid, str(exc)) from None

    def _check_tournament(self, conn: Connection, tid: str, event: dict) -> None:
        """Refuse what ``table_rules`` does not admit (a session the draw did not make)."""
        refusal = self.table_rules.refusal(conn, tid, event) if self.table_rules else None
        if refusal:
            raise EventRejected(tid, refusal)

    def _reject_aside(self, rejections: list[tuple[str | None, object, str]]) -> None:
        """Keep events refused before they reached a table (bad envelope) with the reason."""
        now = self.clock()
        with self.engine.connect().execution_options(**WRITE) as conn, conn.begin():
            conn.execute(insert(RejectedEvent), [_rejection(tid, event, reason, now)
                                                 for tid, event, reason in rejections])

    def _lock(self, tid: str) -> threading.Lock:
        with self._locks_guard:
            return self._locks.setdefault(tid, threading.Lock())

    # ------------------------------------------------------------------ reading

    def tables(self) -> list[dict]:
        with self.engine.connect() as conn:
            rows = conn.execute(select(TableHead).order_by(TableHead.table_id)).all()
        return [dict(table=r.table_id, ruleset=r.ruleset, head_seq=r.head_seq,
                     generation=r.generation) for r in rows]

    def events(self, table_id: str, after: int = 0) -> list[dict]:
        """Accepted events of a table in order, each with its ``seq``."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(TableEvent.seq, TableEvent.body)
                .where(TableEvent.table_id == table_id, TableEvent.seq > after).order_by(TableEvent.seq)
            ).all()
        return [{"seq": r.seq, **json.loads(r.body)} for r in rows]

    def records(self, table_id: str | None = None, types: Iterable[str] | None = None,
                generation: int | None = None) -> list[dict]:
        """Derived records (current generation unless named), each with its ``table``."""
        with self.engine.connect() as conn:
            return _records(conn, table_id, types, generation)

    def results(self, table_id: str | None = None) -> list[dict]:
        """All recorded deal and session results (current generation), in table order."""
        return self.records(table_id, types=("deal_end", "session_result"))

    def rejected(self, table_id: str | None = None) -> list[dict]:
        query = select(RejectedEvent).order_by(RejectedEvent.id)
        if table_id is not None:
            query = query.where(RejectedEvent.table_id == table_id)
        with self.engine.connect() as conn:
            return [dict(table=r.table_id, body=r.body, reason=r.reason) for r in conn.execute(query)]

    def referee(self, table_id: str) -> Deriver:
        """The referee state of a table after its last event (a fresh copy to read)."""
        with self.engine.connect() as conn:
            head = conn.execute(select(TableHead).where(TableHead.table_id == table_id)).first()
            if head is None:
                raise StoreError(f"no table {table_id!r}")
            return self._state(conn, table_id, head).deriver

    def audit(self, table_id: str) -> list[dict]:
        """Corrections and penalties of a table, each correction beside the event it replaces."""
        events = self.events(table_id)
        by_id = {str(e["id"]): e for e in events if e.get("id") is not None}
        trail = []
        for e in events:
            if e["type"] == "correction":
                trail.append({"seq": e["seq"], "type": "correction", "by": e["by"], "t": e["t"],
                              "original": by_id.get(str(e["of"])), "replacement": e["event"]})
            elif e["type"] == "penalty":
                trail.append({"seq": e["seq"], "type": "penalty", "by": e["by"], "t": e["t"],
                              "side": e.get("side"), "level": e.get("level"), "rule": e.get("rule")})
        return trail

    # ------------------------------------------------------------------ officials

    def add_official(self, name: str, role: str) -> None:
        if role not in authority.ROLES:
            raise ValueError(f"role {role!r}: expected one of {', '.join(authority.ROLES)}")
        if not name.strip():
            raise ValueError("an official needs a name")
        with self.engine.connect().execution_options(**WRITE) as conn, conn.begin():
            conn.execute(delete(Official).where(Official.name == name))
            conn.execute(insert(Official).values(name=name, role=role))

    # ------------------------------------------------------------------ verification

    def verify(self, rederive: bool = False) -> VerifyReport:
        """Check every table's hash chain and head; name the first broken link of each.

        ``rederive``: also replay each table through a fresh referee and compare the
        derived records with the stored ones.
        """
        report = VerifyReport()
        with self.engine.connect() as conn:
            heads = conn.execute(select(TableHead).order_by(TableHead.table_id)).all()
            for head in heads:
                report.tables += 1
                problem = self._verify_table(conn, head, report, rederive)
                if problem:
                    report.problems.append(f"table {head.table_id}: {problem}")
        return report

    def _verify_table(self, conn: Connection, head: TableHead, report: VerifyReport,
                      rederive: bool) -> str | None:
        prev, seq = GENESIS, 0
        deriver = self.derivation.new(head.ruleset) if rederive else None
        rows = conn.execute(
            select(TableEvent).where(TableEvent.table_id == head.table_id).order_by(TableEvent.seq)
        )
        for row in rows:
            report.events += 1
            seq += 1
            if row.seq != seq:
                return f"seq {seq} is missing (next stored is {row.seq})"
            if row.prev_hash != prev:
                return f"seq {seq}: link to the previous event is broken (prev_hash differs)"
            if chain_hash(prev, head.table_id, seq, row.body) != row.hash:
                return f"seq {seq}: content does not match its hash (edited after it was stored)"
            prev = row.hash
            if deriver is not None:
                deriver.feed(json.loads(row.body))
        if seq != head.head_seq or prev != head.head_hash:
            return f"head says seq {head.head_seq} but the chain ends at seq {seq} (events removed?)"
        for snap in conn.execute(select(Snapshot).where(Snapshot.table_id == head.table_id).order_by(Snapshot.seq)):
            if not snapshot_is_authentic(self._key, snap.mac, head.table_id, snap.seq, snap.event_hash, snap.blob):
                return f"snapshot after seq {snap.seq} is not signed by this store's key (forged or another key)"
        if deriver is not None:
            stored = [json.loads(b) for b in conn.execute(
                select(DerivedRecord.body).where(
                    DerivedRecord.table_id == head.table_id, DerivedRecord.generation == head.generation)
                .order_by(DerivedRecord.idx)).scalars()]
            fresh = [r for r in deriver.records() if r.get("type") in DERIVED_TYPES]
            if [canonical(r) for r in fresh] != [canonical(r) for r in stored]:
                first = next((i for i, (a, b) in enumerate(zip(fresh, stored)) if a != b),
                             min(len(fresh), len(stored)))
                return f"derived record {first} differs from a fresh replay of the events"
        return None


class _StaleHead(Exception):
    """The head row changed under us (a conditional update matched no row)."""


def _is_busy(exc: OperationalError) -> bool:
    text = str(exc.orig).lower()
    return "locked" in text or "busy" in text or "could not serialize" in text


def _records(conn: Connection, table_id: str | None, types: Iterable[str] | None,
             generation: int | None) -> list[dict]:
    query = (
        select(DerivedRecord.table_id, DerivedRecord.body)
        .join(TableHead, TableHead.table_id == DerivedRecord.table_id)
        .order_by(DerivedRecord.table_id, DerivedRecord.idx)
    )
    if generation is None:
        query = query.where(DerivedRecord.generation == TableHead.generation)
    else:
        query = query.where(DerivedRecord.generation == generation)
    if table_id is not None:
        query = query.where(DerivedRecord.table_id == table_id)
    if types is not None:
        query = query.where(DerivedRecord.type.in_(list(types)))
    return [{**json.loads(r.body), "table": r.table_id} for r in conn.execute(query)]

