"""The event store: append table events, derive and keep results, verify everything.

One ``Store`` per process (web worker, CLI run); it holds an engine and, per table, the
referee state after the last event it saw. Events come in through ``append`` (one),
``append_many`` (a file: each table's events in one transaction, all or none) or
``submit`` (concurrent callers, group-committed across tables). Every write transaction
locks the head rows of the tables it touches (in table order, so two writers never
deadlock), brings each cached referee up to its head (another process may have appended),
feeds the events one by one and inserts the accepted ones, their derived records and the
new heads together. ``(table_id, seq)`` is the primary key and the head update is
conditional, so two writers can never interleave a table or both take one sequence
number. A rejected event gets an error that says why and is kept in ``rejected_events``
(each table's latest; the older ones counted and summed up, ``rejected``).

Each event is validated once, by ``referee.events.parse_event``; the store adds only what
is its own: the table id, the size of the stored text, the id (content-derived when the
event has none, ``chain.content_id``), who may rule (``authority``). Everything stored is
bound to the store's key (``chain``, ``seals``); snapshots are plain JSON, handed to the
referee only when their MAC checks out.
"""

from __future__ import annotations

import functools
import json
import logging
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import Engine, TextClause, bindparam, delete, func, insert, inspect, select, text, update
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError

from referee import jsontext
from referee.jsontext import lone_surrogate
from referee.events import EventError, parse_event

from . import anchors, authority, rejected, seals
from .chain import (
    GENESIS,
    NotPlainJSON,
    canonical,
    canonical_normalized,
    content_id,
    event_link,
    head_mac,
    normalize,
    records_digest,
)
from .db import WRITE, make_engine, upgrade
from .derive import DERIVED_TYPES, Derivation, Deriver, RefereeDerivation
from .group import GroupCommitter
from .hooks import TableRules
from .models import (
    DerivedRecord,
    Official,
    RejectedEvent,
    Snapshot,
    TableEvent,
    TableHead,
)
from .signing import (
    KEY_ENV,
    KEY_FILE_ENV,
    WrongKey,
    derived_key,
    resolve_key,
    same,
    snapshot_is_authentic,
    snapshot_mac,
)
from .verify import VerifyReport, verify
from .verify import plain as _plain

log = logging.getLogger(__name__)

MAX_ID = 120
"""Longest table id or event id (characters)."""
MAX_EVENT_BYTES = jsontext.DEFAULT_LIMITS.max_bytes
"""Longest stored event text (canonical JSON, UTF-8): the limit of every door."""
TIME_LEAD_S = 3600.0
TIME_RATE = 16.0
"""A table's time may run ahead of its last event by ``TIME_LEAD_S`` (an hour: a whole
session imported at once, or an agent's clock ahead of the server's) plus ``TIME_RATE``
times the server's clock since that event was stored (a recording replayed at up to 16x)."""
FIRST_T_MAX = 3.2e8
"""A table's first time: table time counts from the table's start (a recording's, or a
camera's monotonic clock since its machine booted, under ten years); a Unix date is not."""
APPEND_RETRIES = 5
BATCH_SIZE = 2000
"""Events per write transaction in ``append_many`` (whole tables are never split)."""
IN_CHUNK = 500
"""Values per SQL ``IN`` or ``VALUES`` list (SQLite caps the parameters of one statement)."""
MAX_DEAL = 2 ** 31 - 1
EVENTS_AFTER = (select(TableEvent.seq, TableEvent.body)
                .where(TableEvent.table_id == bindparam("table_id"), TableEvent.seq > bindparam("after"))
                .order_by(TableEvent.seq))
"""Built once: every live page's refresh reads a table's new events, and building the
expression showed in the profile beside running it."""
LOCK_HEADS = (select(TableHead).where(TableHead.table_id.in_(bindparam("tids", expanding=True)))
              .order_by(TableHead.table_id).with_for_update())
MOVE_HEAD = (update(TableHead)
             .where(TableHead.table_id == bindparam("b_tid"), TableHead.head_seq == bindparam("b_start"))
             .values(head_seq=bindparam("head_seq"), head_hash=bindparam("head_hash"),
                     generation=bindparam("generation"), mac=bindparam("mac")))
"""Built once, as every group commit runs them: building them (and the cache key of each new
expression) for each commit was a large share of a small commit (bench/NOTES.md)."""


@functools.lru_cache(maxsize=IN_CHUNK)
def known_ids_query(pairs: int) -> TextClause:
    """Which of ``pairs`` (table, event id) pairs are stored: a join of the unique (table,
    event id) index with the pairs as a ``VALUES`` list (parameters ``t0, e0, t1, e1, ...``).

    Asked in every write transaction. Not a row-value ``IN``: SQLite answers that by
    scanning the whole events table (its query plan says ``SCAN``), so every commit slowed
    as the hall's record grew; nor two ``IN`` lists, which it searches for every
    combination (200 tables of a group commit: 40,000 searches). The join searches once
    per pair, in both engines. One statement per size, built once."""
    return text(f"WITH asked (table_id, event_id) AS (VALUES {values_list(pairs, 'te')}) "
                "SELECT e.table_id, e.event_id, e.seq, e.hash, e.body FROM asked "
                "JOIN table_events e ON e.table_id = asked.table_id AND e.event_id = asked.event_id")


@functools.lru_cache(maxsize=IN_CHUNK)
def events_between_query(tables: int) -> TextClause:
    """The events with ``lo < seq <= hi`` of each of ``tables`` tables (parameters ``t0, l0,
    h0, t1, ...``): the ranges as a ``VALUES`` list joined with the events' key, as in
    ``known_ids_query``, so that both engines search each table's range once."""
    return text(f"WITH asked (table_id, lo, hi) AS (VALUES {values_list(tables, 'tlh')}) "
                "SELECT e.table_id, e.seq, e.body FROM asked JOIN table_events e "
                "ON e.table_id = asked.table_id AND e.seq > asked.lo AND e.seq <= asked.hi "
                "ORDER BY e.table_id, e.seq")


def values_list(rows: int, names: str) -> str:
    """``(:a0, :b0), (:a1, :b1), ...``: ``rows`` rows of the one-letter parameters ``names``."""
    return ", ".join("(" + ", ".join(f":{name}{i}" for name in names) + ")" for i in range(rows))


def values_params(rows: list[tuple], names: str) -> dict:
    """The parameters of ``values_list(len(rows), names)`` for ``rows``."""
    return {f"{name}{n}": value for n, row in enumerate(rows) for name, value in zip(names, row)}


class StoreError(ValueError):
    """The store cannot do what was asked (not a store, inconsistent data, a lost race)."""


class NotAStore(StoreError):
    """The path or URL holds no store, or something that is not one."""


class EventRejected(StoreError):
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


@dataclass(frozen=True)
class _Item:
    """An event that passed the envelope: its table, canonical dict and text, and id."""

    table_id: str
    event: dict
    body: str
    event_id: str


@dataclass
class _State:
    seq: int
    hash: str
    deriver: Deriver
    next_idx: int | None = None
    """Index of the table's next derived record in its current generation, once known."""
    last: tuple[float, float] | None = None
    """``t`` and the server's clock (``recorded_at``) of the table's last event, once known."""


@dataclass
class _Batch:
    """What one write transaction has done to one table so far."""

    table_id: str
    start_seq: int
    """The head when the transaction began (the head update is conditional on it)."""
    generation: int
    ruleset: str | None
    created_at: float | None
    state: _State | None
    """The referee after the batch's last accepted event; None while a new table has none."""
    next_idx: int | None = None
    """Index of the next derived record of ``generation`` (looked up once, when needed)."""


@dataclass
class _Pending:
    """Rows of one write transaction, inserted together (before any read-back, and at the end)."""

    events: list[dict] = field(default_factory=list)
    records: list[dict] = field(default_factory=list)
    snapshots: list[dict] = field(default_factory=list)
    rejected: list[dict] = field(default_factory=list)
    new_tables: list[str] = field(default_factory=list)
    known: dict[tuple[str, str], tuple[int, str, str]] = field(default_factory=dict)
    """(table, event id) -> (seq, link, body) of ids already stored or taken in this transaction."""


def prepare(event: object, table_id: str | None = None) -> _Item:
    """Check an event once (``parse_event``) plus what the store adds; raise ``EventRejected``."""
    if not isinstance(event, dict):
        raise EventRejected(table_id, f"an event must be a JSON object, not {type(event).__name__}")
    tid = event.get("table", table_id)
    if table_id is not None and tid != table_id:
        raise EventRejected(table_id, f"event names table {tid!r}, not {table_id!r}")
    if not isinstance(tid, str) or not tid.strip() or len(tid) > MAX_ID or not tid.isprintable():
        raise EventRejected(None, f"missing or bad 'table': {_short(tid)}")
    try:
        stored = normalize({**event, "table": tid})  # the limits every door applies, before parsing
        parse_event(event)
        eid = stored.get("id")
        if eid is None:
            eid = stored["id"] = content_id(canonical_normalized(stored))
        elif isinstance(eid, bool):
            raise EventError(f"{event['type']}.id: expected a string, got {eid!r}")
        elif isinstance(eid, int):
            eid = str(eid)
        if len(eid) > MAX_ID or not eid.isprintable():
            raise EventError(f"'id' must be printable and at most {MAX_ID} characters: {_short(eid)}")
        body = canonical_normalized(stored)
        if len(body) > MAX_EVENT_BYTES // 4 and len(body.encode()) > MAX_EVENT_BYTES:
            raise EventError(f"{len(body.encode())} bytes as stored (limit {MAX_EVENT_BYTES})")
    except (EventError, NotPlainJSON) as exc:
        raise EventRejected(tid, str(exc)) from None
    except (TypeError, ValueError, ArithmeticError, RecursionError) as exc:
        raise EventRejected(tid, f"not representable as JSON: {str(exc)[:120]}") from None
    return _Item(tid, stored, body, eid)


def _short(value: object, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _rejection(tid: str | None, event: object, reason: str, at: float) -> dict:
    """A ``rejected_events`` row."""
    try:
        text = canonical(event)
    except (TypeError, ValueError, RecursionError):
        text = _short(event, 1000)
    return dict(table_id=tid if isinstance(tid, str) and len(tid) <= MAX_ID and tid.isprintable()
                and lone_surrogate(tid) is None else None,
                body=_storable(text[:100_000]), reason=_storable(reason[:10_000]), received_at=at)


def _storable(text: str) -> str:
    """``text`` as a database takes it: a lone surrogate (in a refused event) escaped."""
    return text if lone_surrogate(text) is None else text.encode("utf-8", "backslashreplace").decode()


class Store:
    """Event store over one database URL (``sqlite:///...`` or ``postgresql+psycopg://...``).

    ``derivation`` makes referees (default: the real engine); every ``snapshot_every``
    events a snapshot of the referee state is kept so that opening a long table replays
    only the tail; ``secret_key`` signs everything (default: ``signing.resolve_key``);
    ``create``: make the store when the URL holds none (else ``NotAStore``); ``windows``
    are the S4 correction windows; ``clock`` gives wall time for bookkeeping columns only
    (rules use the events' own ``t``); ``group_wait``: the longest a submitted event waits
    for others to share its commit; ``table_rules`` lets tournaments
    (``web.tournament.tables``) choose a table's ruleset and refuse events their draw does
    not allow; ``rejected_keep``: refused bodies kept per table (``rejected``: the rest are
    counted and summed up).
    """

    def __init__(self, url: str, *, derivation: Derivation | None = None,
                 snapshot_every: int = 200, default_ruleset: str = "competition",
                 secret_key: str | bytes | None = None, create: bool = True,
                 windows: authority.Windows = authority.Windows(),
                 clock: Callable[[], float] = time.time, migrate: bool = True,
                 group_wait: float = 0.005, table_rules: TableRules | None = None,
                 rejected_keep: int = rejected.KEEP):
        self.url = url
        self._key = resolve_key(secret_key)
        self.derivation = derivation or RefereeDerivation()
        self.snapshot_every = snapshot_every
        self.default_ruleset = default_ruleset
        self.windows = windows
        self.clock = clock
        self.table_rules = table_rules
        self.rejected_keep = rejected_keep
        self._states: dict[str, _State] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._locks_guard = threading.Lock()
        self._new = False
        self.engine: Engine = self._open(url, create, migrate)
        self.key_refusal: str | None = self._check_key()
        """Why nothing may be written (the store was signed with another key), or None."""
        self.anchors = anchors.Anchors(self.engine, self._key, url)
        if self._new:  # a new store where an old one was (its data directory removed): its own anchor
            self.anchors.retire()
        seals.install(self.engine, self._key, lambda: self.key_refusal, self.anchors.mark)
        self._group = GroupCommitter(self._commit_requests, max_wait=group_wait)

    def _open(self, url: str, create: bool, migrate: bool) -> Engine:
        """The engine of an existing store, or of a new one when ``create``; the schema upgraded."""
        parsed = make_url(url)
        where = parsed.database if parsed.get_backend_name() == "sqlite" else parsed.render_as_string()
        if parsed.get_backend_name() == "sqlite" and not create and parsed.database not in (None, "", ":memory:"):
            if not Path(parsed.database).is_file():
                raise NotAStore(f"no store at {where}")
        engine = make_engine(url)
        try:
            with engine.connect() as conn:
                names = set(inspect(conn).get_table_names())
            if not create and "table_heads" not in names:
                raise NotAStore(f"no store at {where}")
            if migrate:
                with engine.connect() as conn:
                    before = seals.seal_names(conn)
                upgrade(engine)
                with engine.connect() as conn:
                    made = seals.seal_names(conn) - before  # by this upgrade (0003 refuses old stores with data)
                self._new = seals.MANIFEST in made
                if made:
                    with engine.connect().execution_options(**WRITE) as conn, conn.begin():
                        if seals.MANIFEST in made or seals.signed_with(conn, self._key):
                            seals.seal_new(conn, self._key, made)
        except DBAPIError as exc:
            engine.dispose()
            raise NotAStore(f"{where} is not a store: {str(exc.orig).splitlines()[0]}") from None
        except NotAStore:
            engine.dispose()
            raise
        except ValueError as exc:
            engine.dispose()
            raise NotAStore(f"{where}: {exc}") from None
        return engine

    def _check_key(self) -> str | None:
        """Whether this store was signed with ``self._key`` (its manifest says): if not, why
        it must not be written. Appending with another key than the chain's would leave a
        history that no one key verifies."""
        with self.engine.connect() as conn:
            if "seals" not in inspect(conn).get_table_names() or seals.signed_with(conn, self._key):
                return None
        parsed = make_url(self.url)
        where = parsed.database if parsed.get_backend_name() == "sqlite" else parsed.render_as_string()
        return (f"the store at {where} is signed with another key than {self._key.source} (or its manifest "
                f"was edited: guandan-ref verify): nothing is written; open it with its own key "
                f"(--key-file, {KEY_FILE_ENV} or {KEY_ENV})")

    def sealed_rows(self, table: str, conn: Connection | None = None) -> dict[str, dict]:
        """Primary key -> row of a sealed ``table`` (``seals.SEALED``), for the rows its signed
        seal vouches for: what a server may trust of logins and tokens (``seals.sealed_rows``)."""
        if conn is None:
            with self.engine.connect() as conn:
                return seals.sealed_rows(conn, self._key, table)
        return seals.sealed_rows(conn, self._key, table)

    def check_writable(self) -> None:
        """Raise ``WrongKey`` (one line) if this store may not be written with its key."""
        if self.key_refusal is not None:
            raise WrongKey(self.key_refusal)

    def derived_key(self, purpose: bytes) -> bytes:
        """A key for ``purpose`` (``signing.COOKIES``) made from this store's key (never it)."""
        return derived_key(self._key, purpose)

    def close(self) -> None:
        self._group.close()
        if self.key_refusal is None:
            self.anchors.write()
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
        item = self._prepare_or_keep(event, table_id)
        done = self._commit({item.table_id: [item]}, expected_seq)[item.table_id][0]
        if isinstance(done, EventRejected):
            raise done
        return done

    def _prepare_or_keep(self, event: object, table_id: str | None) -> _Item:
        try:
            return prepare(event, table_id)
        except EventRejected as exc:
            self._reject_aside([(exc.table_id, event, exc.reason)])
            raise

    def append_many(self, events: Iterable[object], *,
                    batch_size: int = BATCH_SIZE) -> list[Appended | StoreError]:
        """Append events, each table's in order and in one write transaction (what ``import`` uses).

        Every event is validated exactly as by ``append``. The result has one entry per
        event, in order: its ``Appended``, or the error saying why it was not stored:
        ``EventRejected`` (refused; kept in ``rejected_events`` too) or, for every event of
        a transaction that kept losing races to other writers, ``SequenceConflict``.
        Neither stops the rest. Small tables share a transaction up to ``batch_size``
        events; a table is never split, so a writer killed part-way leaves each table with
        all of its events from this call or none.
        """
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, not {batch_size}")
        events = list(events)
        outcomes: list = [None] * len(events)
        tables: dict[str, list[int]] = {}
        items: list[_Item | None] = []
        aside = []
        for i, raw in enumerate(events):
            try:
                item = prepare(raw)
            except EventRejected as exc:
                outcomes[i] = exc
                aside.append((exc.table_id, raw, exc.reason))
                item = None
            else:
                tables.setdefault(item.table_id, []).append(i)
            items.append(item)
        group: dict[str, list[int]] = {}
        for tid, where in [*tables.items(), (None, [])]:
            if group and (tid is None or sum(map(len, group.values())) + len(where) > batch_size):
                self._commit_into(group, items, outcomes)
                group = {}
            if tid is not None:
                group[tid] = where
        if aside:
            self._reject_aside(aside)
        return outcomes

    def _commit_into(self, group: dict[str, list[int]], items: list, outcomes: list) -> None:
        try:
            done = self._commit({tid: [items[i] for i in where] for tid, where in group.items()})
        except SequenceConflict as exc:
            done = {tid: [exc] * len(where) for tid, where in group.items()}
        for tid, where in group.items():
            for i, outcome in zip(where, done[tid]):
                outcomes[i] = outcome

    def submit(self, events: Iterable[object], *, table_id: str | None = None) -> list[Appended | StoreError]:
        """Append from any thread: the events share a group commit with other callers'.

        For concurrent requests (the HTTP API): each call waits until its events are
        committed, together with whatever other threads submitted within the group wait
        (at most ``group_wait`` seconds), in one transaction across tables. The result has
        one entry per event, as in ``append_many``; a resend of a stored id is a duplicate.
        """
        return self.submit_async(events, table_id=table_id).result()

    def submit_async(self, events: Iterable[object], *, table_id: str | None = None) -> Future:
        """``submit`` without waiting: a future of the outcomes (for a feed that keeps sending)."""
        events = list(events)
        outcomes: list = [None] * len(events)
        items, where, aside = [], [], []
        for i, raw in enumerate(events):
            try:
                items.append(prepare(raw, table_id))
                where.append(i)
            except EventRejected as exc:
                outcomes[i] = exc
                aside.append((exc.table_id, raw, exc.reason))
        if aside:
            self._reject_aside(aside)
        result: Future = Future()
        if not items:
            result.set_result(outcomes)
            return result

        def settle(done: Future) -> None:
            if done.exception() is not None:
                result.set_exception(done.exception())
                return
            for i, outcome in zip(where, done.result()):
                outcomes[i] = outcome
            result.set_result(outcomes)

        self._group.submit(items).add_done_callback(settle)
        return result

    def _commit_requests(self, requests: list[list[_Item]]) -> list[list]:
        """One group commit: every request's items, each table's in arrival order."""
        groups: dict[str, list[_Item]] = {}
        for items in requests:
            for item in items:
                groups.setdefault(item.table_id, []).append(item)
        done = self._commit(groups)
        taken = {tid: iter(outcomes) for tid, outcomes in done.items()}
        return [[next(taken[item.table_id]) for item in items] for items in requests]

    def _commit(self, groups: dict[str, list[_Item]],
                expected_seq: int | None = None) -> dict[str, list[Appended | EventRejected]]:
        """``_commit_once``, retried against the new heads when another writer won a race."""
        self.check_writable()
        with ExitStack() as locks:
            for tid in sorted(groups):
                locks.enter_context(self._lock(tid))
            for attempt in range(APPEND_RETRIES):
                try:
                    done = self._commit_once(groups, expected_seq)
                    self.anchors.note()
                    return done
                except (IntegrityError, _StaleHead, OperationalError) as exc:
                    if isinstance(exc, OperationalError) and not _is_busy(exc):
                        raise
                    if expected_seq is not None or attempt == APPEND_RETRIES - 1:
                        names = ", ".join(sorted(groups)[:5])
                        raise SequenceConflict(
                            f"table {names}: another writer appended at the same time; reload and retry"
                        ) from exc
        raise AssertionError("unreachable")

    def _commit_once(self, groups: dict[str, list[_Item]],
                     expected_seq: int | None) -> dict[str, list[Appended | EventRejected]]:
        """One write transaction: lock the heads, take or refuse each event, move the heads."""
        tids = sorted(groups)
        outcomes: dict[str, list] = {tid: [] for tid in tids}
        batches: dict[str, _Batch] = {}
        pending = _Pending()
        try:
            with self.engine.connect().execution_options(**WRITE) as conn, conn.begin():
                heads = self._lock_heads(conn, tids)
                if expected_seq is not None:
                    (tid,) = tids
                    start = heads[tid].head_seq if tid in heads else 0
                    if start != expected_seq:
                        raise SequenceConflict(
                            f"table {tid}: expected head seq {expected_seq}, store has {start}; reload and retry")
                pending.known = self._known_ids(conn, [(i.table_id, i.event_id) for tid in tids
                                                       if tid in heads for i in groups[tid]])
                for tid in tids:
                    head = heads.get(tid)
                    if head is not None and (refusal := self._head_refusal(head)):
                        outcomes[tid] = [EventRejected(tid, refusal)] * len(groups[tid])
                        continue
                    batch = batches[tid] = (
                        _Batch(tid, 0, 0, None, None, None, 0) if head is None else
                        self._batch(conn, head))
                    for item in groups[tid]:
                        try:
                            outcomes[tid].append(self._append_event(conn, batch, item, pending))
                        except EventRejected as exc:
                            outcomes[tid].append(exc)
                            pending.rejected.append(_rejection(tid, item.event, exc.reason, self.clock()))
                self._finish(conn, pending, batches)
        except BaseException:
            for tid in tids:  # the referees may have seen events that were not stored
                self._states.pop(tid, None)
            raise
        for tid, batch in batches.items():
            if batch.state is not None:
                batch.state.next_idx = batch.next_idx
                self._states[tid] = batch.state
        return outcomes

    def _head_refusal(self, head: TableHead) -> str | None:
        """Why nothing may be appended to a table whose head this key did not sign (another
        key's chain, or a head edited outside the store): extending it would sign a history
        this key never vouched for."""
        if same(head.mac, head_mac(self._key, head.table_id, head.ruleset, head.head_seq, head.head_hash,
                                   head.generation, head.created_at)):
            return None
        return ("its head is not signed by this store's key (another key, or edited outside the store): "
                "nothing is appended; guandan-ref verify names what is wrong")

    def _batch(self, conn: Connection, head: TableHead) -> _Batch:
        state = self._state(conn, head.table_id, head)
        return _Batch(head.table_id, head.head_seq, head.generation, head.ruleset, head.created_at, state,
                      state.next_idx)

    @staticmethod
    def _lock_heads(conn: Connection, tids: list[str]) -> dict[str, TableHead]:
        """The head rows of ``tids``, locked in table order (PostgreSQL: no deadlock between writers)."""
        heads = {}
        for i in range(0, len(tids), IN_CHUNK):
            rows = conn.execute(LOCK_HEADS, {"tids": tids[i:i + IN_CHUNK]})
            heads.update({r.table_id: r for r in rows})
        return heads

    @staticmethod
    def _known_ids(conn: Connection, keys: list[tuple[str, str]]) -> dict[tuple[str, str], tuple[int, str, str]]:
        """Which (table, event id) pairs are already stored (one query per chunk, not one each)."""
        asked = sorted(set(keys))
        known = {}
        for i in range(0, len(asked), IN_CHUNK):
            chunk = asked[i:i + IN_CHUNK]
            rows = conn.execute(known_ids_query(len(chunk)), values_params(chunk, "te"))
            known.update({(r.table_id, r.event_id): (r.seq, r.hash, r.body) for r in rows})
        return known

    def _append_event(self, conn: Connection, batch: _Batch, item: _Item, pending: _Pending) -> Appended:
        """Validate one event against the table as the batch left it, and keep its rows."""
        tid, event = batch.table_id, item.event
        known = pending.known.get((tid, item.event_id))
        if known is not None:
            seq, digest, stored = known
            if stored != item.body:
                raise EventRejected(tid, f"id {item.event_id!r} is already used by seq {seq} with other content")
            return Appended(seq, digest, [], duplicate=True)
        self._check_time(tid, batch.state.last if batch.state is not None else None, float(event["t"]))
        if event["type"] in ("correction", "session_start"):
            self._flush(conn, pending)  # their checks read this table's events (and a tournament's, its results)
        self._check_authority(conn, tid, event)
        self._check_tournament(conn, tid, event)
        if batch.state is None:  # a new table: the ruleset comes with its first accepted event
            batch.ruleset = self._ruleset_for(conn, tid, event)
            deriver = self.derivation.new(batch.ruleset)
        else:
            deriver = batch.state.deriver
        records = _feed(deriver, tid, event)
        if batch.state is None:
            batch.created_at = self.clock()
            conn.execute(insert(TableHead).values(
                table_id=tid, ruleset=batch.ruleset, head_seq=0, head_hash=GENESIS, generation=0,
                created_at=batch.created_at,
                mac=head_mac(self._key, tid, batch.ruleset, 0, GENESIS, 0, batch.created_at)))
            pending.new_tables.append(tid)
            batch.state = _State(0, GENESIS, deriver)
        state = batch.state
        seq = state.seq + 1
        rows = self._record_rows(conn, batch, seq, records)
        blob = deriver.snapshot() if self.snapshot_every and seq % self.snapshot_every == 0 else None
        if blob is not None and not _plain(blob):
            blob = None  # only plain data is kept: a snapshot must never be code
        recorded_at, t = self.clock(), float(event["t"])
        link = event_link(self._key, state.hash, tid, seq, item.event_id, event["type"], t, item.body,
                          recorded_at, records_digest([(r["generation"], r["idx"], r["type"], r["deal"], r["body"])
                                                       for r in rows]), blob is not None)
        pending.events.append(dict(
            table_id=tid, seq=seq, event_id=item.event_id, type=event["type"], t=t,
            body=item.body, prev_hash=state.hash, hash=link, recorded_at=recorded_at))
        pending.records.extend(rows)
        if blob is not None:
            pending.snapshots.append(dict(table_id=tid, seq=seq, event_hash=link, blob=bytes(blob),
                                          mac=snapshot_mac(self._key, tid, seq, link, bytes(blob))))
        pending.known[(tid, item.event_id)] = (seq, link, item.body)
        state.seq, state.hash, state.last = seq, link, (t, recorded_at)
        return Appended(seq, link, [r for r in records if r.get("type") != "rederived"])

    @staticmethod
    def _record_rows(conn: Connection, batch: _Batch, seq: int, records: list[dict]) -> list[dict]:
        """Derived-record rows of one event; a ``rederived`` record starts a new generation."""
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
    def _flush(conn: Connection, pending: _Pending) -> None:
        """Insert the pending event, derived-record and snapshot rows."""
        for model, rows in ((TableEvent, pending.events), (DerivedRecord, pending.records),
                            (Snapshot, pending.snapshots)):
            if rows:
                conn.execute(insert(model), rows)
                rows.clear()

    def _finish(self, conn: Connection, pending: _Pending, batches: dict[str, _Batch]) -> None:
        """Store what is pending and move the heads over it (only if no one else moved them)."""
        self._flush(conn, pending)
        moves = [dict(b_tid=b.table_id, b_start=b.start_seq, head_seq=b.state.seq, head_hash=b.state.hash,
                      generation=b.generation,
                      mac=head_mac(self._key, b.table_id, b.ruleset, b.state.seq, b.state.hash, b.generation,
                                   b.created_at))
                 for b in batches.values() if b.state is not None and b.state.seq != b.start_seq]
        if moves:
            moved = conn.execute(MOVE_HEAD, moves).rowcount
            if moved != len(moves):
                raise _StaleHead(", ".join(m["b_tid"] for m in moves))
        if pending.new_tables:
            seals.add_tables(conn, self._key, pending.new_tables)
        if pending.rejected:
            rejected.keep(conn, pending.rejected, self.rejected_keep)

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
            select(TableEvent.seq, TableEvent.hash, TableEvent.body, TableEvent.t.label("time"),
                   TableEvent.recorded_at)
            .where(TableEvent.table_id == tid, TableEvent.seq > state.seq).order_by(TableEvent.seq)
        ).all()
        if tail:
            state.next_idx = None  # another writer stored records meanwhile
        for row in tail:
            try:
                _feed(state.deriver, tid, json.loads(row.body))
            except EventRejected as exc:
                self._states.pop(tid, None)
                raise StoreError(f"table {tid}: replay rejects accepted seq {row.seq}: {exc.reason}") from None
            state.seq, state.hash, state.last = row.seq, row.hash, (row.time, row.recorded_at)
        if state.last is None and state.seq > 0:  # restored from a snapshot at the head
            state.last = tuple(conn.execute(select(TableEvent.t, TableEvent.recorded_at).where(
                TableEvent.table_id == tid, TableEvent.seq == state.seq)).one())
        self._states[tid] = state
        return state

    def _restore(self, conn: Connection, tid: str, head: TableHead) -> _State:
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
            elif not _plain(snap.blob):
                log.warning("table %s: snapshot at seq %d is not plain JSON data; not loading it, "
                            "replaying the events", tid, snap.seq)
            else:
                try:
                    return _State(snap.seq, snap.event_hash, self.derivation.restore(snap.blob))
                except Exception as exc:  # an older engine's blob: the log is the truth
                    log.warning("table %s: snapshot at seq %d unusable (%s); replaying", tid, snap.seq, exc)
        return _State(0, GENESIS, self.derivation.new(head.ruleset))

    def _check_time(self, tid: str, last: tuple[float, float] | None, t: float) -> None:
        """Refuse a time past the table's bound: ``TIME_LEAD_S`` of table time after its last
        event, plus ``TIME_RATE`` times the server's clock since that event was stored.
        Table time only goes forward (the referee refuses a step back), so one far-future
        time would leave the table no time for any true event after it."""
        if last is None:
            if t > FIRST_T_MAX:
                raise EventRejected(tid, f"t={t:g} is past the bound of a table's first time, t<={FIRST_T_MAX:g} "
                                         "(table time counts from the table's own start, not a calendar date)")
            return
        last_t, last_at = last
        waited = max(0.0, self.clock() - last_at)
        bound = last_t + TIME_LEAD_S + TIME_RATE * waited
        if t > bound:
            raise EventRejected(tid, f"t={t:g} is past this table's time bound t<={bound:g} (its last event's "
                                     f"t={last_t:g}, + {TIME_LEAD_S:g} s, + {TIME_RATE:g}x the {waited:.0f} s of "
                                     "the server's clock since that event was stored)")

    def _check_authority(self, conn: Connection, tid: str, event: dict) -> None:
        kind = event["type"]
        if kind not in ("correction", "penalty"):
            return
        by = event.get("by")
        if not isinstance(by, str) or not by.strip():
            raise EventRejected(tid, f"{kind}: 'by' must name the official who made it")
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
            rejected.keep(conn, [_rejection(tid, event, reason, now) for tid, event, reason in rejections],
                          self.rejected_keep)

    def _lock(self, tid: str) -> threading.Lock:
        with self._locks_guard:
            return self._locks.setdefault(tid, threading.Lock())

    # ------------------------------------------------------------------ reading

    def tables(self) -> list[dict]:
        with self.engine.connect() as conn:
            rows = conn.execute(select(TableHead).order_by(TableHead.table_id)).all()
        return [dict(table=r.table_id, ruleset=r.ruleset, head_seq=r.head_seq,
                     generation=r.generation) for r in rows]

    def events(self, table_id: str, after: int = 0, *, conn: Connection | None = None) -> list[dict]:
        """Accepted events of a table in order, each with its ``seq`` (read on ``conn`` if given)."""
        if conn is None:
            with self.engine.connect() as conn:
                return self.events(table_id, after, conn=conn)
        rows = conn.execute(EVENTS_AFTER, {"table_id": table_id, "after": after}).all()
        return [{"seq": r.seq, **json.loads(r.body)} for r in rows]

    def events_between(self, ranges: dict[str, tuple[int, int]], *, conn: Connection) -> dict[str, list[dict]]:
        """``events`` of several tables at once: ``table -> (lo, hi)`` -> ``table -> the events
        with lo < seq <= hi``. A live feed's batch reads every moved table's new events so,
        in one query rather than one per table."""
        found: dict[str, list[dict]] = {table: [] for table in ranges}
        asked = [(table, lo, hi) for table, (lo, hi) in ranges.items()]
        for start in range(0, len(asked), IN_CHUNK):
            chunk = asked[start:start + IN_CHUNK]
            for r in conn.execute(events_between_query(len(chunk)), values_params(chunk, "tlh")):
                found[r.table_id].append({"seq": r.seq, **json.loads(r.body)})
        return found

    def records(self, table_id: str | None = None, types: Iterable[str] | None = None,
                generation: int | None = None) -> list[dict]:
        """Derived records (current generation unless named), each with its ``table``."""
        with self.engine.connect() as conn:
            return _records(conn, table_id, types, generation)

    def results(self, table_id: str | None = None) -> list[dict]:
        """All recorded deal and session results (current generation), in table order."""
        return self.records(table_id, types=("deal_end", "session_result"))

    def rejected(self, table_id: str | None = None) -> list[dict]:
        """The refused events kept (each table's latest ``rejected_keep``), oldest first."""
        query = select(RejectedEvent).order_by(RejectedEvent.id)
        if table_id is not None:
            query = query.where(RejectedEvent.table_id == table_id)
        with self.engine.connect() as conn:
            return [dict(table=r.table_id, body=r.body, reason=r.reason) for r in conn.execute(query)]

    def rejected_tally(self, table_id: str | None) -> dict | None:
        """How many events a table (None: no table known) had refused, how many bodies are
        kept, and the dropped ones' reasons (``rejected.tally``); None if none was refused."""
        with self.engine.connect() as conn:
            return rejected.tally(conn, table_id)

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

    def verify(self, rederive: bool = False, anchor: str | Path | None = None) -> VerifyReport:
        """Check everything the store keeps against its key (``verify.verify``), and the
        database against its anchor (``anchor``, default: this store's beside the key).

        ``rederive``: also replay each table through a fresh referee and compare the
        derived records with the stored ones.
        """
        return verify(self.engine, self._key, self.derivation, rederive,
                      Path(anchor) if anchor is not None else self.anchors.path)


def _feed(deriver: Deriver, tid: str, event: dict) -> list[dict]:
    """The records ``deriver`` derives from ``event``; its refusal (an ``error`` record or a
    ``ValueError``) becomes ``EventRejected``."""
    try:
        records = deriver.feed(event)
    except ValueError as exc:
        raise EventRejected(tid, str(exc)) from None
    errors = [r for r in records if r.get("type") == "error"]
    if errors:
        raise EventRejected(tid, "; ".join(str(e.get("message", e)) for e in errors))
    return records


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

