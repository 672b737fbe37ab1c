"""A floor referee who knows the truth: answers a simulated table's open items as a person
at the table would (``bench/flags.py --referee auto``).

A few table seconds after an item appears (:data:`DELAY_S`: walking over, looking at the
cards) the referee answers it from the simulation's truth:

* a doubt item (:data:`~.truth.DOUBT_REASONS`) about a read that was right: ``confirm_read``;
  about a read that was wrong: a ``correction`` with the true play, or with no event (struck)
  for a play seen where nobody played;
* a flag at a misread play: the same ``correction`` (the read, not the player, was wrong);
* an item that names earlier reads as possibly the wrong one: the ``correction`` of whichever
  of the named reads was wrong;
* a flag of a breach the bots really committed stays; any other flag is dismissed.

Its events go through the store like the console's, each dated at the table's latest stored
event and appended only if no other event came in meanwhile (else it is dated again): an
answer never makes the agent's next event look as if time went backwards.
"""

from __future__ import annotations

import threading
import uuid
from collections import Counter
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from web.store import EventRejected, SequenceConflict, Store

from .sender import Answer
from .truth import DOUBT_REASONS, Pair, align, match_flags, moments, same_read

DELAY_S = 5.0
"""Table seconds between an item and the referee's answer."""
SEEN_LAG_S = 2.0
"""How long (table seconds) an observation takes to reach the record: truth younger than
this is not yet compared."""


def _known(pair: Pair | None) -> bool:
    return pair is not None and pair.sent is not None and pair.true is not None and bool(pair.sent.get("id"))


def _phantom(pair: Pair | None) -> bool:
    """A play sent where the truth has none (a hand over the play area read as a play)."""
    return pair is not None and pair.sent is not None and pair.true is None and bool(pair.sent.get("id"))


def decide(item: dict[str, Any], pairs: list[Pair | None], true_breach: bool,
           corrected: Collection[str] = ()) -> dict[str, Any] | None:
    """The referee's answer to ``item`` (a flag or a review record) as an event without its
    ``t``, ``by`` and ids, or None where it stays as it is. ``pairs``: the plays the item
    names (:func:`.truth.moments`: its own first, then earlier reads it suspects), each its
    sent event with its truth; ``true_breach``: a flag matches a breach the bots committed;
    ``corrected``: the ids of the reads already corrected (not corrected twice)."""
    kind = item["type"]
    if kind == "review" and item.get("reason") not in DOUBT_REASONS:
        return None
    misread = next((p for p in pairs if (_known(p) and p.misread or _phantom(p)) and p.sent["id"] not in corrected),
                   None)
    if misread is not None and misread.true is None:
        return {"type": "correction", "of": misread.sent["id"], "event": None}  # nobody played there
    if misread is not None:  # the read the table shows wrong, whichever of the named ones it is
        true = {"type": misread.true["type"], "seat": misread.seat, "source": "manual"}
        if misread.true.get("cards"):
            true["cards"] = list(misread.true["cards"])
        return {"type": "correction", "of": misread.sent["id"], "event": true}
    pair = pairs[0] if pairs else None
    known = _known(pair)
    if kind == "flag":
        return None if true_breach else {"type": "dismiss", "rule": item["rule"], "seat": item.get("seat"),
                                         "at": item["at"], "reason": "not a breach: the table shows otherwise"}
    if known and pair.sent["type"] == "play" and same_read(pair.true, pair.sent):
        return {"type": "confirm_read", "of": pair.sent["id"]}
    return None


@dataclass
class TableView:
    """What the referee needs of one simulated table (:class:`.demo.SimulatedTable` has it)."""

    name: str
    truth: list[dict[str, Any]]
    breaches: list[dict[str, Any]]
    answers: list[Answer]
    """The agent's sender's answers (grows while the table runs)."""
    now: Callable[[], float]
    """The table time of the last frame played."""
    seq: int = 0
    last_t: float = 0.0
    done: set[tuple] = field(default_factory=set)
    claimed: set[int] = field(default_factory=set)
    """Breaches (their index) a flag already stands for."""
    corrected: set[str] = field(default_factory=set)


class FloorReferee:
    """Answers the items of ``tables`` (see the module) through ``store`` as ``by``."""

    def __init__(self, store: Store, tables: list[TableView], by: str, delay_s: float = DELAY_S,
                 notify: Callable[[str], None] | None = None) -> None:
        self.store, self.tables, self.by, self.delay_s = store, tables, by, delay_s
        self.notify = notify
        """Told the table after each answer appended (the dashboard's pages follow it live)."""
        self.given: Counter = Counter()
        """Answers appended, by event type."""
        self.refused: list[str] = []
        """Answers the store refused, with the reason."""

    def run(self, stop: threading.Event, every_s: float = 0.5) -> None:
        """Answer what is due every ``every_s`` wall seconds until ``stop``."""
        while not stop.wait(every_s):
            for table in self.tables:
                self.step(table, table.now())

    def finish(self, rounds: int = 5) -> None:
        """The tables are done: answer everything still open (an answer may raise new items)."""
        for _ in range(rounds):
            if not sum(self.step(table, float("inf")) for table in self.tables):
                return

    def step(self, table: TableView, now: float) -> int:
        """Answer ``table``'s items due by table time ``now``; returns how many were answered."""
        records = self.store.records(table.name)
        due = [r for r in records if r["type"] in ("flag", "review") and r["at"] + self.delay_s <= now
               and _key(r) not in table.done]
        if not due:
            return 0
        until = now - SEEN_LAG_S
        seen = [e for e in table.truth if e["type"] in ("play", "pass", "report") and e["t"] <= until]
        by_sent = align(seen, [a for a in list(table.answers) if a.event["t"] <= until]).by_sent()
        answered = 0
        for item in due:
            pairs = [by_sent.get(moment) for moment in moments(item)]
            if item["type"] == "flag":  # a flag is answered once (its breach claimed once)
                table.done.add(_key(item))
            breach = item["type"] == "flag" and not (pairs[0] is not None and pairs[0].misread) and \
                self._claim(table, item)
            answer = decide(item, pairs, breach, table.corrected)
            appended = answer is not None and self._append(table, answer)
            answered += appended
            if appended and answer["type"] == "correction":  # asked again while it names another read wrong
                table.corrected.add(answer["of"])
            else:
                table.done.add(_key(item))
        return answered

    def _claim(self, table: TableView, flag: dict[str, Any]) -> bool:
        """Whether ``flag`` stands for a true breach no other flag stands for (and claim it)."""
        free = [(i, b) for i, b in enumerate(table.breaches) if i not in table.claimed]
        match = match_flags([b for _, b in free], [flag])
        if not match:
            return False
        table.claimed.add(free[next(iter(match))][0])
        return True

    def _append(self, table: TableView, answer: dict[str, Any]) -> bool:
        event = {**answer, "table": table.name, "id": f"floor-{uuid.uuid4().hex}", "by": self.by, "source": "manual"}
        while True:
            for stored in self.store.events(table.name, after=table.seq):
                table.seq, table.last_t = stored["seq"], max(table.last_t, stored["t"])
            try:
                done = self.store.append({**event, "t": table.last_t}, expected_seq=table.seq)
            except SequenceConflict:
                continue  # the agent posted meanwhile: date it again
            except EventRejected as exc:
                self.refused.append(f"{answer['type']}: {exc.reason}")
                return False
            table.seq = done.seq
            self.given[answer["type"]] += 1
            if self.notify is not None:
                self.notify(table.name)
            return True


def _key(record: dict[str, Any]) -> tuple:
    return record["type"], record.get("rule") or record.get("reason"), record.get("seat"), record["at"]


def history(store: Store, table: str) -> list[dict[str, Any]]:
    """Every record the table ever had: a correction starts a new generation of records
    (the re-derived ones), and what it withdrew was raised all the same."""
    generations = sum(1 for e in store.events(table) if e["type"] == "correction")
    return [r for g in range(generations + 1) for r in store.records(table, generation=g)]
