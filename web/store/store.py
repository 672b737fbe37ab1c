"""The event store: append table events, derive and keep results, verify everything.

One ``Store`` per process (web worker, CLI run) puts together the parts, each a module of
its own: ``opening`` (the engine and the key check), ``envelope`` (the checks an event
passes once), ``commit`` (write transactions, with ``admission``, ``chainrows`` and the
live ``referees``), ``group`` (group commit across callers), ``reads``, ``officials`` and
``verify``. Events come in through ``append`` (one), ``append_many`` (a file: each table's
events in one transaction, all or none) or ``submit`` (concurrent callers, group-committed
across tables). Everything stored is bound to the store's key (``chain``, ``seals``);
snapshots are plain JSON, handed to the referee only when their MAC checks out.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.engine import Connection

from . import anchors, authority, officials, reads, rejected, seals
from .admission import Admission
from .chainrows import ChainRows
from .commit import Committer
from .derive import Derivation, Deriver, RefereeDerivation
from .envelope import Item, prepare, refused_text
from .group import GroupCommitter
from .hooks import TableRules
from .models import TableHead
from .opening import key_refusal, open_engine
from .outcomes import Appended, EventRejected, SequenceConflict, StoreError
from .referees import Referees
from .signing import WrongKey, derived_key, resolve_key
from .verify import VerifyReport, verify

BATCH_SIZE = 2000
"""Events per write transaction in ``append_many`` (whole tables are never split)."""


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
    counted and summed up). ``clock`` and ``rejected_keep`` may be replaced later (a test's,
    a hall's); the other settings hold from the opening on.
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
        self.engine, made_store = open_engine(url, self._key, create, migrate)
        self.key_refusal: str | None = key_refusal(self.engine, self._key, url)
        """Why nothing may be written (the store was signed with another key), or None."""
        self.anchors = anchors.Anchors(self.engine, self._key, url)
        if made_store:  # a new store where an old one was (its data directory removed): its own anchor
            self.anchors.retire()
        seals.install(self.engine, self._key, lambda: self.key_refusal, self.anchors.mark)
        self._referees = Referees(self._key, self.derivation)
        self._committer = Committer(
            self.engine, self._key, self._referees,
            Admission(lambda: self.clock(), windows, table_rules, default_ruleset),
            ChainRows(self._key, snapshot_every),
            self.check_writable, self.anchors.note, rejected_keep)
        self._group = GroupCommitter(self._committer.commit_requests, max_wait=group_wait)

    @property
    def rejected_keep(self) -> int:
        """Refused bodies kept per table; a hall (or a test) may lower it while running."""
        return self._committer.rejected_keep

    @rejected_keep.setter
    def rejected_keep(self, keep: int) -> None:
        self._committer.rejected_keep = keep

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
        self._referees.clear()
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
            item = prepare(event, table_id)
        except EventRejected as exc:
            self._committer.set_aside([(exc.table_id, refused_text(event), exc.reason)])
            raise
        done = self._committer.commit({item.table_id: [item]}, expected_seq)[item.table_id][0]
        if isinstance(done, EventRejected):
            raise done
        return done

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
        items, outcomes, aside = self._prepare_all(list(events))
        tables: dict[str, list[int]] = {}
        for i, item in enumerate(items):
            if item is not None:
                tables.setdefault(item.table_id, []).append(i)
        group: dict[str, list[int]] = {}
        for tid, where in [*tables.items(), (None, [])]:
            if group and (tid is None or sum(map(len, group.values())) + len(where) > batch_size):
                self._commit_into(group, items, outcomes)
                group = {}
            if tid is not None:
                group[tid] = where
        if aside:
            self._committer.set_aside(aside)
        return outcomes

    @staticmethod
    def _prepare_all(events: list[object], table_id: str | None = None) -> tuple[list[Item | None], list, list]:
        """Each event prepared (None where refused), the outcomes so far (each refusal; None
        where prepared) and the refusals to set aside (``Committer.set_aside``)."""
        items: list[Item | None] = []
        outcomes: list = [None] * len(events)
        aside = []
        for i, raw in enumerate(events):
            try:
                items.append(prepare(raw, table_id))
            except EventRejected as exc:
                items.append(None)
                outcomes[i] = exc
                aside.append((exc.table_id, refused_text(raw), exc.reason))
        return items, outcomes, aside

    def _commit_into(self, group: dict[str, list[int]], items: list[Item | None], outcomes: list) -> None:
        try:
            done = self._committer.commit({tid: [items[i] for i in where] for tid, where in group.items()})
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
        items, outcomes, aside = self._prepare_all(list(events), table_id)
        if aside:
            self._committer.set_aside(aside)
        where = [i for i, item in enumerate(items) if item is not None]
        result: Future = Future()
        if not where:
            result.set_result(outcomes)
            return result

        def settle(done: Future) -> None:
            if done.exception() is not None:
                result.set_exception(done.exception())
                return
            for i, outcome in zip(where, done.result()):
                outcomes[i] = outcome
            result.set_result(outcomes)

        self._group.submit([items[i] for i in where]).add_done_callback(settle)
        return result

    # ------------------------------------------------------------------ reading

    def tables(self) -> list[dict]:
        with self.engine.connect() as conn:
            return reads.tables(conn)

    def events(self, table_id: str, after: int = 0, *, conn: Connection | None = None) -> list[dict]:
        """Accepted events of a table in order, each with its ``seq`` (read on ``conn`` if given)."""
        if conn is None:
            with self.engine.connect() as conn:
                return reads.events(conn, table_id, after)
        return reads.events(conn, table_id, after)

    def events_between(self, ranges: dict[str, tuple[int, int]], *, conn: Connection) -> dict[str, list[dict]]:
        """``events`` of several tables at once: ``table -> (lo, hi)`` -> ``table -> the events
        with lo < seq <= hi``. A live feed's batch reads every moved table's new events so,
        in one query rather than one per table."""
        return reads.events_between(conn, ranges)

    def records(self, table_id: str | None = None, types: Iterable[str] | None = None,
                generation: int | None = None) -> list[dict]:
        """Derived records (current generation unless named), each with its ``table``."""
        with self.engine.connect() as conn:
            return reads.records(conn, table_id, types, generation)

    def results(self, table_id: str | None = None) -> list[dict]:
        """All recorded deal and session results (current generation), in table order."""
        return self.records(table_id, types=("deal_end", "session_result"))

    def rejected(self, table_id: str | None = None) -> list[dict]:
        """The refused events kept (each table's latest ``rejected_keep``), oldest first."""
        with self.engine.connect() as conn:
            return reads.refused(conn, table_id)

    def rejected_tally(self, table_id: str | None) -> dict | None:
        """How many events a table (None: no table known) had refused, how many bodies are
        kept, and the dropped ones' reasons (``rejected.tally``); None if none was refused."""
        with self.engine.connect() as conn:
            return rejected.tally(conn, table_id)

    def referee(self, table_id: str) -> Deriver:
        """The live referee of a table after its last event (the store's own: read it, never
        feed it)."""
        with self.engine.connect() as conn:
            head = conn.execute(select(TableHead).where(TableHead.table_id == table_id)).first()
            if head is None:
                raise StoreError(f"no table {table_id!r}")
            return self._referees.at_head(conn, table_id, head).deriver

    def audit(self, table_id: str) -> list[dict]:
        """Corrections and penalties of a table, each correction beside the event it replaces."""
        return reads.audit(self.events(table_id))

    # ------------------------------------------------------------------ officials

    def add_official(self, name: str, role: str) -> None:
        officials.add_official(self.engine, name, role)

    # ------------------------------------------------------------------ verification

    def verify(self, rederive: bool = False, anchor: str | Path | None = None) -> VerifyReport:
        """Check everything the store keeps against its key (``verify.verify``), and the
        database against its anchor (``anchor``, default: this store's beside the key).

        ``rederive``: also replay each table through a fresh referee and compare the
        derived records with the stored ones.
        """
        return verify(self.engine, self._key, self.derivation, rederive,
                      Path(anchor) if anchor is not None else self.anchors.path)
