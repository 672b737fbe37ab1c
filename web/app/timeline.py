"""A table's events step by step: what the referee made of each and the state after it, for every page.

The store keeps each table's live referee; pages need more than its last state: the
plays of the current round with where each read came from, the state after any step of
a deal (appeal review, X7), which flags were confirmed or dismissed, and a view that lags
behind by the broadcast delay. A ``Timeline`` holds a table's accepted events (read
through the store) as steps, and takes each step's verdicts and public view from that one
live referee as it judges the event (``Journal``, following ``Referee.follow``): a worker
judges each table once, not once for the store and again for its pages. Only what the live
referee cannot tell step by step is replayed (``replayed``): the steps before this worker
followed the table, and, after a correction or a confirmed read, the log with those folded
in (``referee.engine.fold_corrections``) as the referee re-judged it; the live referee's
own steps go on from there.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from sqlalchemy import bindparam, select
from sqlalchemy.engine import Connection

from referee.engine import Referee, fold_corrections
from referee.events import Event, EventError
from referee.rulesets import Ruleset
from referee.verdicts import FlagKey, Verdict
from referee.view import view_for
from web.store import Store
from web.store.models import TableHead

ACTIONS = ("play", "pass", "tribute", "return", "report", "conflict")
"""Event types that are a seat's action at the table (the play history lists them)."""
CLOSING_RECORDS = {"dismissed": "dismissed", "withdrawn": "withdrawn", "confirmed": "read_confirmed"}
"""Records that close an item named by its ``FlagKey``, and what the item then is: a flag
``(rule, seat, at)`` dismissed or withdrawn, or a review of a read ``(None, seat, at)``
whose read a referee confirmed (a ``confirm_read``)."""
REJUDGING = ("correction", "confirm_read")
"""Events after which a timeline is replayed from the start: the referee judged the deal
afresh from an earlier event (``referee.engine.fold_corrections``)."""
NOTED_RECORDS = ("flag", "review", "deal_end", "session_result")
"""Records a table's summary counts or shows: kept aside as they are derived, so that a
summary reads them, not every step of a session that may run to thousands."""
HEAD_COLUMNS = select(TableHead.table_id, TableHead.ruleset, TableHead.head_seq, TableHead.generation)
HEAD_OF = HEAD_COLUMNS.where(TableHead.table_id == bindparam("table_id"))
"""Built once: read before every view of a table."""
HEADS_OF = HEAD_COLUMNS.where(TableHead.table_id.in_(bindparam("tables", expanding=True)))
READ_AHEAD_MOST = 100
"""A table further than this behind its cached timeline is read on its own, not in a batch's
read-ahead (``Timelines.reading``): that reads the events between, which a table seen first
(or long unread) may have thousands of."""


@dataclass
class Step:
    """One accepted event (as folded with corrections) and what the referee made of it."""

    seq: int
    event: dict
    deal: int | None
    round: int | None
    """The deal and round the event happened in (before it could end them)."""
    records: list[dict]
    state_view: dict
    """Plain data of the table after this step (``referee.view.view_for``); no hands."""
    corrected: dict | None = None
    """For a corrected event: the correction's ``by``, ``seq`` and the original event."""


@dataclass
class Timeline:
    table: str
    ruleset: str
    generation: int
    head_seq: int = 0
    raw: list[dict] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    struck: list[dict] = field(default_factory=list)
    """``{"by", "seq", "original"}`` of each read a referee struck (nobody acted there), in log
    order (``Folded.struck``): no step, as the referee judges none, yet a ruling to list."""
    closed: dict[FlagKey, dict] = field(default_factory=dict)
    """Flag key -> how it was closed: a confirming penalty, a dismissal, a withdrawal, a
    read confirmed (then keyed ``(None, seat, at)``, as its review)."""
    noted: list[tuple[int, dict]] = field(default_factory=list)
    """(step index, record) of each record of ``NOTED_RECORDS``, in order."""
    referee: Referee | None = None
    """The live referee whose judgements the steps are (its ruleset is the table's)."""
    views: dict = field(default_factory=dict)
    """Views computed from this timeline as it stands (``public_table`` by delay); cleared
    whenever a step is added, so every open page's stream computes a table once per change."""

    def records(self) -> list[dict]:
        """Every record derived at this table, in order (flags, reviews, results...)."""
        return [r for s in self.steps for r in s.records]


def _head_row(row) -> dict:
    return dict(table=row.table_id, ruleset=row.ruleset, head_seq=row.head_seq, generation=row.generation)


@dataclass(frozen=True)
class ReadAhead:
    """What ``Timelines.reading`` read at once for the tables it was named."""

    tables: set[str]
    heads: dict[str, dict]
    """Head rows of those of ``tables`` that have events."""
    events: dict[str, list[dict]]
    """Table -> the events its cached timeline lacked, up to its head in ``heads``."""

    def after(self, table_id: str, seq: int) -> list[dict] | None:
        """The events of ``table_id`` after ``seq`` up to its read head, if read from there."""
        events = self.events.get(table_id)
        return events if events and events[0]["seq"] == seq + 1 else None


class Timelines:
    """Per-process cache of timelines, refreshed from the store's head on each read."""

    def __init__(self, store: Store):
        self.store = store
        self._journals: dict[str, Journal] = {}
        self._cache: dict[str, Timeline] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()
        self._shared = threading.local()

    @contextmanager
    def reading(self, tables: Iterable[str] = ()) -> Iterator[None]:
        """Reads of tables in this thread share one connection meanwhile: a live feed reads
        a batch of up to hundreds of tables, and on PostgreSQL each connection checked out
        is pinged first (a round trip; two for each table before). For one thread that
        reads much (the feed), never for each page: hundreds of pages each holding a
        connection while waiting for a tile another builds would empty the pool.

        The heads of ``tables``, and the events their cached timelines lack, are read at
        once on entering (``ReadAhead``): a batch's reads are two queries, not two per table
        (and the live referees' journals give their steps; a table this worker never read,
        or whose referee the store made anew, is asked of the store, on a connection of its
        own). The timelines of ``tables`` are then as of that moment, or later.

        The shared connection is forgotten whatever happens, a failed read-ahead included: a
        connection the database cut mid-read, kept here, failed every later batch of this
        thread (the live feed's, for as long as the worker lived)."""
        if getattr(self._shared, "conn", None) is not None:
            yield
            return
        with self.store.engine.connect() as conn:
            self._shared.conn = conn
            try:
                self._shared.ahead = self._read_ahead(conn, set(tables)) if tables else None
                yield
            finally:
                self._shared.conn = self._shared.ahead = None

    def _read_ahead(self, conn: Connection, tables: set[str]) -> ReadAhead:
        heads = {r.table_id: _head_row(r) for r in conn.execute(HEADS_OF, {"tables": sorted(tables)})}
        ranges = {}
        for table, head in heads.items():
            cached = self._cache.get(table)
            if (cached is not None and cached.generation == head["generation"]
                    and 0 < head["head_seq"] - cached.head_seq <= READ_AHEAD_MOST):
                ranges[table] = (cached.head_seq, head["head_seq"])
        return ReadAhead(tables, heads, self.store.events_between(ranges, conn=conn) if ranges else {})

    @contextmanager
    def _connection(self) -> Iterator[Connection]:
        shared = getattr(self._shared, "conn", None)
        if shared is not None:
            yield shared
            return
        with self.store.engine.connect() as conn:
            yield conn

    def get(self, table_id: str) -> Timeline | None:
        """The timeline of ``table_id`` up to the store's head; None for a table without events."""
        with self._connection() as conn:
            return self._get(conn, table_id)

    def _get(self, conn: Connection, table_id: str) -> Timeline | None:
        ahead = getattr(self._shared, "ahead", None)
        read_ahead = ahead is not None and table_id in ahead.tables
        head = ahead.heads.get(table_id) if read_ahead else self._head(conn, table_id)
        if head is None:
            return None
        with self._guard:
            lock = self._locks.setdefault(table_id, threading.Lock())
        with lock:
            cached = self._cache.get(table_id)
            if read_ahead and cached is not None and cached.generation == head["generation"] \
                    and cached.head_seq >= head["head_seq"]:
                return cached  # already read (by another thread, past the read-ahead meanwhile)
            if cached is not None and (cached.generation != head["generation"] or cached.head_seq > head["head_seq"]):
                cached = None
            if cached is None:
                cached = self._build(conn, table_id, head, [])
            elif cached.head_seq < head["head_seq"]:
                fresh = (ahead.after(table_id, cached.head_seq) if read_ahead else None) \
                    or self.store.events(table_id, after=cached.head_seq, conn=conn)
                if any(e["type"] in REJUDGING for e in fresh) or not self._follow(cached, fresh):
                    cached = self._build(conn, table_id, head, cached.raw + fresh)
            cached.generation = head["generation"]
            self._cache[table_id] = cached
            return cached

    def head(self, table_id: str) -> dict | None:
        """The store's head row of one table (not every table's: a hall has hundreds)."""
        with self._connection() as conn:
            return self._head(conn, table_id)

    @staticmethod
    def _head(conn: Connection, table_id: str) -> dict | None:
        row = conn.execute(HEAD_OF, {"table_id": table_id}).first()
        return None if row is None else _head_row(row)

    def _live(self, table_id: str) -> tuple[Referee, Journal]:
        """The store's live referee of ``table_id``, brought to the store's head, and the
        journal of what it judges from now on (one per referee: the store makes a new one
        when its own cannot go on, after a failed write, say)."""
        live = self.store.referee(table_id)
        journal = self._journals.get(table_id)
        if journal is None or journal.referee is not live:
            journal = self._journals[table_id] = Journal(live)
        return live, journal

    def _build(self, conn: Connection, table_id: str, head: dict, raw: list[dict]) -> Timeline:
        """The timeline up to where the live referee stands, replayed (``replayed``); the
        journal of that referee takes it on from there."""
        live, journal = self._live(table_id)
        upto = live.accepted
        journal.skip(upto)
        if len(raw) < upto:
            raw = raw + self.store.events(table_id, after=len(raw), conn=conn)
        timeline = replayed(table_id, head["ruleset"], head["generation"], live.ruleset, raw[:upto])
        timeline.referee = live
        return timeline

    def _follow(self, timeline: Timeline, fresh: list[dict]) -> bool:
        """Add ``fresh`` events as the live referee judged them; False when its journal cannot
        tell them (another referee than the timeline's: it is to be built again)."""
        journal = self._journals.get(timeline.table)
        if journal is None or journal.referee is not timeline.referee:
            return False
        if journal.last() < fresh[-1]["seq"]:  # another worker appended: the store's referee catches up
            live, journal = self._live(timeline.table)
            if live is not timeline.referee:
                return False
        judged = journal.take(fresh[-1]["seq"])
        if [j.number for j in judged] != [e["seq"] for e in fresh] or any(
                j.event_id != (None if e.get("id") is None else str(e["id"])) for j, e in zip(judged, fresh)):
            return False
        timeline.raw += fresh
        for event, j in zip(fresh, judged):
            add_step(timeline, event, j.records, j.view)
        return True


class Judged:
    """What the live referee made of one accepted event: its verdicts and the view after it."""

    __slots__ = ("number", "event_id", "records", "view")

    def __init__(self, number: int, event: Event, verdicts: list[Verdict], view: dict) -> None:
        self.number = number
        self.event_id = event.id
        self.records = [v.to_json() for v in verdicts]
        self.view = view


class Journal:
    """Follows one live referee (``Referee.follow``): each event it accepts, judged, until a
    timeline takes it. Written in the thread that feeds the referee (the store's), read under
    the timeline's lock; a deque is safe for one of each."""

    def __init__(self, referee: Referee) -> None:
        self.referee = referee
        self._judged: deque[Judged] = deque()
        referee.follow(self._note)

    def _note(self, number: int, event: Event, verdicts: list[Verdict]) -> None:
        self._judged.append(Judged(number, event, verdicts, view_for(self.referee.state)))

    def last(self) -> int:
        """The number of the last event noted and not taken (0: none)."""
        return self._judged[-1].number if self._judged else 0

    def skip(self, upto: int) -> None:
        """Forget what was noted up to event ``upto`` (a replay shows those)."""
        while self._judged and self._judged[0].number <= upto:
            self._judged.popleft()

    def take(self, upto: int) -> list[Judged]:
        """What was noted up to event ``upto``, taken out."""
        out = []
        while self._judged and self._judged[0].number <= upto:
            out.append(self._judged.popleft())
        return out


def replayed(table_id: str, spec: str, generation: int, ruleset: Ruleset, raw: list[dict]) -> Timeline:
    """The timeline of ``raw`` judged afresh by a referee of its own, with corrections and
    confirmations folded in (``fold_corrections``): what a live referee's journal cannot
    give (the steps before it was followed, or a log a correction re-judged)."""
    timeline = Timeline(table_id, spec, generation, raw=list(raw))
    referee = Referee(ruleset)
    folded = fold_corrections(raw)
    timeline.struck = list(folded.struck)
    for event, corrected in folded.judged:
        body = {k: v for k, v in event.items() if k != "seq"}
        try:
            records = [v.to_json() for v in referee.feed(body)]
        except EventError:  # an event the re-judged log makes impossible: a step of nothing
            records = []
        add_step(timeline, event, records, view_for(referee.state), corrected)
    timeline.head_seq = raw[-1]["seq"] if raw else 0
    return timeline


def add_step(timeline: Timeline, event: dict, records: list[dict], view: dict, corrected: dict | None = None) -> None:
    """One more step: ``event`` (with its ``seq``), what the referee derived from it and the
    public view after it; notes the records a summary reads and the flags it closes."""
    before = (timeline.steps[-1].state_view if timeline.steps else {}).get("deal")
    deal = before if before is not None and before["phase"] != "over" else view.get("deal")  # a deal_start opens its deal
    where = (deal["number"], deal["round"]) if deal is not None else (None, None)
    body = {k: v for k, v in event.items() if k != "seq"}
    timeline.steps.append(Step(event["seq"], body, where[0], where[1], records, view, corrected))
    timeline.noted += [(len(timeline.steps) - 1, r) for r in records if r.get("type") in NOTED_RECORDS]
    timeline.views.clear()
    timeline.head_seq = max(timeline.head_seq, event["seq"])
    evidence = event.get("evidence")
    flag = evidence.get("flag") if isinstance(evidence, dict) else None
    if event["type"] == "penalty" and isinstance(flag, dict):  # a confirmed flag (web.app.flags)
        timeline.closed[FlagKey.of(flag)] = {"how": "confirmed", "by": event.get("by"), "seq": event["seq"],
                                             "level": event.get("level")}
    for r in records:
        if r.get("type") in CLOSING_RECORDS:
            timeline.closed[FlagKey.of(r)] = {"how": CLOSING_RECORDS[r["type"]],
                                              "by": r.get("by") or event.get("by"),
                                              "seq": event["seq"], "reason": r.get("reason")}
