"""What perception got right: a simulated table's truth against what reached the server.

Per seat, the camera-visible truth (plays, passes, reports in order) is aligned with the
events the agent sent (:class:`difflib.SequenceMatcher` on type and cards): :func:`align`.
A true play read with other cards, or not seen, or a play seen where none was made, is a
misread. A misread is *caught* when the server rejected its event, the referee answered it
with a flag or a review item (an illegal or out-of-turn play, a card the seat does not
hold, a conflict between camera and RFID, a doubtful read), or a referee corrected it (a
correction replays the deal, and the flag the misread raised is gone from the record, so
the correction itself says it was caught); the rest went into the record as read. Deal
results and flags are compared with a referee fed the truth (:func:`score` for the flags
benchmark, ``bench/flags.py``).
"""

from __future__ import annotations

import difflib
import json
from collections import Counter
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field, fields
from itertools import zip_longest
from typing import Any

from referee.cards import card_name, parse_cards
from referee.engine import Referee
from referee.rulesets import Ruleset

from .sender import Answer

SEEN_TYPES = ("play", "pass", "report", "conflict")
DOUBT_REASONS = ("suspect_read", "low_confidence", "recognition_conflict")
"""Review reasons that ask a person whether a read is right: the prompts."""
MATCH_S = 3.0
"""How far (table seconds) a recorded flag may lie from the true breach it names: the agent
dates an event by the first frame that showed it, the truth by the plan's clock; clock
flags are compared by when the limit ran out (``due``), which ticks and the truth agree on."""


@dataclass
class Perception:
    plays: int = 0
    """True plays the camera could see."""
    misread: int = 0
    """True plays read with other cards, or missed, or plays seen where none was made."""
    caught: int = 0
    """Misreads the server rejected, the referee flagged, questioned or settled to the true
    cards, or a referee corrected."""
    settled: int = 0
    """Of the caught, those the deal's context settled to the true cards without asking
    anybody: the record is right, nothing waits on the console."""
    corrected: int = 0
    """Of the caught, those a referee has corrected."""
    rejected: int = 0
    """Of the caught, those the server refused: kept out of the record, nothing to correct."""
    uncaught: int = 0
    passes_missed: int = 0
    deals: int = 0
    deals_right: int = 0
    """Deals whose recorded result equals the truth's."""
    sessions: int = 0
    sessions_right: int = 0
    """Rounds whose recorded session result (levels, 28-point score) equals the truth's."""
    details: list[str] = field(default_factory=list)

    def add(self, other: Perception) -> None:
        _add(self, other)

    def counts(self) -> dict[str, int]:
        """The counts the floor page shows (``web.app.openapi.PERCEPTION_COUNTS``), in its language."""
        return {"plays": self.plays, "misread": self.misread, "caught": self.caught, "uncaught": self.uncaught,
                "deals": self.deals, "deals_right": self.deals_right}

    @property
    def waiting(self) -> int:
        """Caught misreads still in the record as read: their items wait on the flags console."""
        return self.caught - self.corrected - self.rejected - self.settled

    def summary(self) -> str:
        per_k = 1000 * self.misread / self.plays if self.plays else 0.0
        corrected = f", {self.corrected} of them corrected" if self.corrected else ""
        settled = f", {self.settled} settled to the true cards by the deal" if self.settled else ""
        waiting = f", {self.waiting} waiting on the flags console" if self.waiting else ""
        sessions = f", {self.sessions_right}/{self.sessions} round results" if self.sessions else ""
        return (f"{self.plays} plays, {self.misread} misread ({per_k:.1f} per 1,000): {self.caught} caught by the referee "
                f"(conflicts, illegal or impossible plays, doubtful reads){settled}{corrected}{waiting}, {self.uncaught} went "
                f"into the record unnoticed; "
                + (f"{self.deals_right}/{self.deals} deal results{sessions} equal the truth" if self.deals
                   else "no deal finished yet"))


def _add(into: Any, other: Any) -> None:
    """Field by field, ``into += other`` (counts add up, lists of details join)."""
    for f in fields(into):
        setattr(into, f.name, getattr(into, f.name) + getattr(other, f.name))


@dataclass(frozen=True)
class Pair:
    """One true camera event and the event sent for it, as :func:`align` paired them."""

    seat: str
    true: dict[str, Any] | None
    """The true event (None: a play seen where none was made)."""
    sent: dict[str, Any] | None
    """The event the agent sent (None: the true play was not seen)."""
    result: dict[str, Any] | None
    """The server's answer to ``sent``."""
    misread: bool

    @property
    def at(self) -> float:
        """Where the record would name it: the sent event's time, else the true one's."""
        return (self.sent or self.true or {}).get("t", 0.0)


@dataclass
class Alignment:
    pairs: list[Pair] = field(default_factory=list)
    passes_missed: int = 0

    @property
    def misreads(self) -> list[Pair]:
        return [p for p in self.pairs if p.misread]

    def by_sent(self) -> dict[tuple[str, float], Pair]:
        """The pairs by their sent event's (seat, t): how a record names the play it is about."""
        return {(p.seat, p.sent["t"]): p for p in self.pairs if p.sent is not None}


def _key(event: dict[str, Any]) -> tuple:
    cards = tuple(sorted(card_name(c) for c in parse_cards(event["cards"]))) if event.get("cards") else ()
    return event["type"], cards


def same_read(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Same kind and the same cards in any order."""
    return _key(a) == _key(b)


def align(seen: list[dict[str, Any]], answered: list[Answer]) -> Alignment:
    """Pair the camera-visible truth with the events sent, seat by seat (see the module)."""
    out = Alignment()
    sent = [(a.event, a.result) for a in answered if a.event["type"] in SEEN_TYPES]
    for seat in "NESW":
        want = [e for e in seen if e["seat"] == seat]
        got = [(e, r) for e, r in sent if e.get("seat") == seat]
        matcher = difflib.SequenceMatcher(a=[_key(e) for e in want], b=[_key(e) for e, _ in got], autojunk=False)
        for op, i1, i2, j1, j2 in matcher.get_opcodes():
            if op == "equal":
                out.pairs += [Pair(seat, t, e, r, False) for t, (e, r) in zip(want[i1:i2], got[j1:j2])]
                continue
            if op == "delete":
                out.passes_missed += sum(1 for e in want[i1:i2] if e["type"] == "pass")
            true_plays = [e for e in want[i1:i2] if e["type"] == "play"]
            wrong = [(e, r) for e, r in got[j1:j2] if e["type"] in ("play", "conflict")]
            for true, read in zip_longest(true_plays, wrong):
                event, result = read or (None, None)
                out.pairs.append(Pair(seat, true, event, result, True))
    return out


def moments(record: dict[str, Any], earlier: bool = True) -> list[tuple[str | None, float | None]]:
    """The plays (seat, at) an item is about: its own, and (``earlier``) the earlier reads it
    names as possibly the wrong one (a face read a third time in a deal)."""
    own = [(record.get("seat"), record.get("at"))]
    named = ((record.get("detail") or {}).get("earlier") or ()) if earlier else ()
    return own + [(r.get("seat"), r.get("at")) for r in named]


def remarked(records: Iterable[dict[str, Any]], earlier: bool = True) -> Counter:
    """(seat, at) -> how many flags and review items name that moment (``earlier``: also as
    an earlier read they suspect)."""
    return Counter(m for r in records if r["type"] in ("flag", "review") for m in moments(r, earlier))


def is_caught(pair: Pair, remarks: Collection, corrected: Collection[str]) -> bool:
    """A misread the server rejected, the referee remarked on, or a referee corrected."""
    event, result = pair.sent, pair.result or {}
    if event is None:
        return False
    return (result.get("status") == "rejected" or event["type"] == "conflict"
            or (pair.seat, event["t"]) in remarks or event.get("id") in corrected)


def settled_right(misreads: Iterable[Pair], records: Iterable[dict[str, Any]]) -> list[Pair]:
    """The ``misreads`` a ``settled`` record among ``records`` took, at their own play, as the
    true cards: the deal's context put them right without asking anybody."""
    settled = {(r["seat"], r["at"]): tuple(sorted(r["cards"])) for r in records if r["type"] == "settled"}
    return [p for p in misreads if p.sent is not None and p.true is not None
            and settled.get((p.seat, p.sent["t"])) == _key(p.true)[1]]


def truth_records(truth: list[dict[str, Any]], ruleset: Ruleset | None = None) -> list[dict[str, Any]]:
    """What a referee makes of the true events (its JSON records), under ``ruleset`` (the
    table's: a tournament table's round ends at its deal limit)."""
    referee = Referee(ruleset)
    for event in truth:
        referee.feed(event)
    return referee.records()


def settled_reads(events: list[dict[str, Any]], ruleset: Ruleset | None = None) -> list[dict[str, Any]]:
    """The ``settled`` records of a table's stored ``events`` (its reads the deal's context
    settled without asking): the store keeps flags and reviews, not these, so the events are
    judged again."""
    return [r for r in truth_records([{k: v for k, v in e.items() if k != "seq"} for e in events], ruleset)
            if r["type"] == "settled"]


def deal_results(records: list[dict[str, Any]]) -> list[tuple]:
    return [(r.get("deal"), tuple(r.get("order", ())), json.dumps(r.get("upgrade"), sort_keys=True),
             json.dumps(r.get("levels"), sort_keys=True))
            for r in records if r["type"] == "deal_end"]


def session_results(records: list[dict[str, Any]]) -> list[tuple]:
    return [(r.get("winner"), r.get("reason"), json.dumps(r.get("levels"), sort_keys=True),
             json.dumps(r.get("score"), sort_keys=True)) for r in records if r["type"] == "session_result"]


def compare(
    seen: list[dict[str, Any]],
    answered: list[Answer],
    records: list[dict[str, Any]],
    truth_deals: list[tuple],
    corrected: Collection[str] = (),
    truth_sessions: list[tuple] = (),
) -> Perception:
    """``seen``: the camera-visible truth; ``answered``: the server's answers to the agent;
    ``records``: the referee's records from the store, with the ``settled`` ones
    (:func:`settled_reads`); ``truth_deals``: :func:`deal_results` of the truth;
    ``corrected``: the ids of the events a ``correction`` replaced; ``truth_sessions``:
    :func:`session_results` of the truth."""
    out = Perception()
    alignment = align(seen, answered)
    remarks = remarked(records)
    settled = settled_right(alignment.misreads, records)
    out.plays = sum(1 for e in seen if e["type"] == "play")
    out.passes_missed = alignment.passes_missed
    for pair in alignment.misreads:
        out.misread += 1
        if is_caught(pair, remarks, corrected) or pair in settled:
            out.caught += 1
            rejected = (pair.result or {}).get("status") == "rejected"
            out.rejected += rejected
            out.corrected += pair.sent.get("id") in corrected
            out.settled += not rejected and pair.sent.get("id") not in corrected and pair in settled
        else:
            out.uncaught += 1
        read = [_key(pair.sent)[1]] if pair.sent else []
        out.details.append(f"{pair.seat}: true {[_key(pair.true)[1]] if pair.true else []} read {read}")
    recorded = deal_results(records)
    out.deals = len(truth_deals)
    out.deals_right = sum(1 for d in truth_deals if d in recorded)
    out.sessions = len(truth_sessions)
    out.sessions_right = sum(1 for r in truth_sessions if r in session_results(records))
    return out


def match_flags(breaches: list[dict[str, Any]], flags: list[dict[str, Any]]) -> dict[int, int]:
    """Pair true breaches with raised flags (index -> index), each at most once: the same
    rule and seat, nearest in time first, within :data:`MATCH_S`."""
    near = sorted((_distance(b, f), i, j) for i, b in enumerate(breaches) for j, f in enumerate(flags)
                  if b["rule"] == f["rule"] and b.get("seat") == f.get("seat") and _distance(b, f) <= MATCH_S)
    pairs: dict[int, int] = {}
    for _, i, j in near:
        if i not in pairs and j not in pairs.values():
            pairs[i] = j
    return pairs


def _distance(a: dict[str, Any], b: dict[str, Any]) -> float:
    if a.get("due") is not None and b.get("due") is not None:
        return abs(a["due"] - b["due"])
    return abs(a["at"] - b["at"])


def unique(records: Iterable[dict[str, Any]], kind: str, reasons: Collection[str] = ()) -> list[dict[str, Any]]:
    """The distinct flags (``kind="flag"``, by rule, seat and at) or reviews of ``reasons``
    (by reason, seat and at) among ``records``: a correction re-derives the table, and what it
    derives again is the same item, not a new one."""
    found: dict[tuple, dict[str, Any]] = {}
    for r in records:
        if r["type"] == kind and (kind == "flag" or r.get("reason") in reasons):
            found.setdefault((r.get("rule") or r.get("reason"), r.get("seat"), r.get("at")), r)
    return list(found.values())


@dataclass
class FlagScore:
    """A simulated table's flags and prompts against the truth (``bench/flags.py``; see :func:`score`)."""

    plays: int = 0
    misreads: int = 0
    misreads_caught: int = 0
    """Misreads with a flag or a prompt at that play (seat and t) or naming it, corrected, or
    settled by the deal's context to the true cards."""
    misreads_settled: int = 0
    """Of the caught, those the deal's context settled to the true cards without asking
    anybody (a ``settled`` record at that play): the record is right, no prompt was needed."""
    misreads_caught_later: int = 0
    """Of the caught, those no item at their own play asked about: an item at a later play
    named them (the same face read a third time), or a referee corrected them from there."""
    misreads_corrected: int = 0
    misreads_rejected: int = 0
    """Misreads the server refused: kept out of the record, and nobody was asked."""
    breaches: int = 0
    """Breaches the bots committed: the flags of a referee fed the truth (and, with RFID, the
    cards of another deck slipped in)."""
    breaches_flagged: int = 0
    flags: int = 0
    false_flags: int = 0
    """Flags raised that match no true breach; the three kinds follow."""
    flags_at_misreads: int = 0
    knock_on: int = 0
    """False flags at no misread play but after a misread of the same deal: raised only
    because the referee followed a misread."""
    other_false_flags: int = 0
    prompts: int = 0
    """Review items asking whether a read is right (:data:`DOUBT_REASONS`)."""
    prompts_on_misreads: int = 0
    """Prompts at a misread play or naming one as the earlier read in question."""
    prompt_reasons: Counter = field(default_factory=Counter)
    """The prompts by review reason."""
    deals: int = 0
    deal_results_right: int = 0
    table_seconds: float = 0.0
    details: list[str] = field(default_factory=list)
    """One line per breach not flagged, false flag and misread left unnoticed."""

    def add(self, other: FlagScore) -> None:
        _add(self, other)

    def figures(self) -> dict[str, Any]:
        """The counts with table hours and the rates the goals are stated in."""
        out: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("table_seconds", "details")}
        out["prompt_reasons"] = dict(self.prompt_reasons)
        hours = self.table_seconds / 3600
        out["table_hours"] = round(hours, 4)
        out["prompts_per_table_hour"] = round(self.prompts / hours, 1) if hours else None
        out["breaches_flagged_share"] = _share(self.breaches_flagged, self.breaches)
        out["misreads_caught_share"] = _share(self.misreads_caught, self.misreads)
        out["deal_results_right_share"] = _share(self.deal_results_right, self.deals)
        return out


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def score(
    truth: list[dict[str, Any]],
    breaches: list[dict[str, Any]],
    answered: list[Answer],
    raised: list[dict[str, Any]],
    records: list[dict[str, Any]],
    corrected: Collection[str] = (),
    ruleset: Ruleset | None = None,
) -> FlagScore:
    """``truth``: every simulated event on the plan's clock; ``breaches``: the true breaches
    (flag-like records); ``answered``: the server's answers to the agent; ``raised``: every
    record the table ever had (all generations: a correction withdraws the flags it makes
    moot, which were raised all the same); ``records``: the current ones; ``corrected``:
    the ids of the events a correction replaced; ``ruleset``: the table's."""
    seen = [e for e in truth if e["type"] in ("play", "pass", "report")]
    alignment = align(seen, answered)
    flags = unique(raised, "flag")
    prompts = unique(raised, "review", DOUBT_REASONS)
    remarks = remarked(flags + prompts)
    at_own_play = remarked(flags + prompts, earlier=False)
    misreads = alignment.misreads
    settled = settled_right(misreads, raised)

    def caught(p: Pair, remarks: Collection) -> bool:
        return p not in rejected and (p in settled or is_caught(p, remarks, corrected))

    rejected = [p for p in misreads if (p.result or {}).get("status") == "rejected"]
    at_misread = {(p.seat, p.sent["t"]) for p in misreads if p.sent is not None}
    on_misreads = [r for r in prompts if at_misread.intersection(moments(r))]
    starts = sorted(e["t"] for e in truth if e["type"] == "deal_start")

    def deal_of(t: float) -> int:
        return sum(1 for s in starts if s <= t)

    matched = match_flags(breaches, flags)
    false = [f for j, f in enumerate(flags) if j not in matched.values()]
    on_misread = [f for f in false if (f.get("seat"), f["at"]) in at_misread]
    knock_on = [f for f in false if f not in on_misread
                and any(p.at <= f["at"] and deal_of(p.at) == deal_of(f["at"]) for p in misreads)]
    truth_deals = deal_results(truth_records(truth, ruleset))
    recorded = deal_results(records)
    return FlagScore(
        plays=sum(1 for e in seen if e["type"] == "play"),
        misreads=len(misreads),
        misreads_caught=sum(1 for p in misreads if caught(p, remarks)),
        misreads_settled=len(settled),
        misreads_caught_later=sum(1 for p in misreads if caught(p, remarks) and p not in settled
                                  and not is_caught(p, at_own_play, ())),
        misreads_corrected=sum(1 for p in misreads if p.sent is not None and p.sent.get("id") in corrected),
        misreads_rejected=len(rejected),
        breaches=len(breaches),
        breaches_flagged=len(matched),
        flags=len(flags),
        false_flags=len(false),
        flags_at_misreads=len(on_misread),
        knock_on=len(knock_on),
        other_false_flags=len(false) - len(on_misread) - len(knock_on),
        prompts=len(prompts),
        prompts_on_misreads=len(on_misreads),
        prompt_reasons=Counter(r["reason"] for r in prompts),
        deals=len(truth_deals),
        deal_results_right=sum(1 for d in truth_deals if d in recorded),
        table_seconds=max((e["t"] for e in truth), default=0.0),
        details=[f"breach not flagged: {_named(b)}" for i, b in enumerate(breaches) if i not in matched]
        + [f"{'at a misread' if f in on_misread else 'knock-on' if f in knock_on else 'false'}: {_named(f)}"
           for f in false]
        + [f"misread unnoticed: {p.seat} at {p.at:g} true {_key(p.true)[1] if p.true else '-'} read "
           f"{_key(p.sent)[1] if p.sent else '-'}" for p in misreads if not caught(p, remarks)]
        + [f"prompt: {r['reason']} {r.get('seat') or '-'} at {r['at']:g}"
           f"{' (a misread)' if r in on_misreads else ''}" for r in prompts],
    )


def _named(flag: dict[str, Any]) -> str:
    return f"{flag['rule']} {flag.get('seat') or '-'} at {flag['at']:g}"
