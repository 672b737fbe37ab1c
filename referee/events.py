"""The event contract: table events (DESIGN.md) as frozen dataclasses, and their one parser.

``parse_event`` is the one door every input comes through (camera, RFID, agent, operator,
file): it checks the shape and the notation and raises :class:`EventError` (a
``ValueError``) whose message is the reason, naming the field, so the engine behind it only
ever sees well-formed events. Whether an event makes sense *now* (whose turn, which phase)
is the engine's business; it raises the same exception. ``Event.to_json()`` is the one way
to serialise an event: ``parse_event(e.to_json()) == e``, so producers (the table agent,
the RFID deck checks) build typed events and write them out one way.

Common optional fields of every event: ``table``, ``id``, ``source`` (``camera``, ``rfid``,
``fused`` or ``manual``), ``confidence`` (0..1) and ``evidence`` (free-form JSON, kept as
it is and never compared).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from enum import Enum, StrEnum
from typing import Any, ClassVar

from .cards import Card, CardError, card_name, parse_card, parse_cards
from .combos import CombType, ComboError, parse_comb_type
from .seats import Seat, SeatError, Side, parse_seat, parse_side



class PenaltyLevel(StrEnum):
    """How grave a breach is (X1-X4), least first: a penalty's level and a flag's severity.
    Two of one level make the next (X1); a string enum, so it is written as its value."""

    WARNING = "warning"
    VIOLATION = "violation"
    FOUL = "foul"
    LOSS = "loss"

    def escalated(self) -> PenaltyLevel | None:
        """The level two of these make (X1), or ``None`` for a loss."""
        order = tuple(PenaltyLevel)
        rank = order.index(self)
        return order[rank + 1] if rank + 1 < len(order) else None


PENALTY_LEVELS = tuple(level.value for level in PenaltyLevel)
SOURCES = ("camera", "rfid", "fused", "manual")
FAULT_SOURCES = ("camera", "rfid")


class EventError(ValueError):
    """A rejected table event: malformed, or impossible now. The message is the reason."""

    @property
    def reason(self) -> str:
        return str(self)


def _json_value(value: Any) -> Any:
    """A field's JSON form: card lists by name, enums by value, events by their JSON."""
    if isinstance(value, Event):
        return value.to_json()
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, dict):
        return {k: _json_value(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return [_json_value(v) for v in value]
    return value


@dataclass(frozen=True, kw_only=True)
class Event:
    """What every event carries. Events are keyword-only and a field the parser requires has
    no default, so an event that :func:`parse_event` would refuse cannot be built either."""

    kind: ClassVar[str] = ""
    CARD_FIELDS: ClassVar[tuple[str, ...]] = ()
    """Fields holding card codes, written by name."""

    t: float
    table: str | None = None
    id: str | None = None
    source: str | None = None
    confidence: float | None = None
    evidence: Any = field(default=None, compare=False)

    def to_json(self) -> dict:
        """The canonical JSON object of this event (what :func:`parse_event` accepts)."""
        out: dict[str, Any] = {"type": self.kind, "t": self.t}
        for f in fields(self):
            if f.name in ("t", "table", "id", "source", "confidence", "evidence", "alternatives"):
                continue
            value = getattr(self, f.name)
            if value is None:
                continue
            if f.name in self.CARD_FIELDS:
                value = card_name(value) if isinstance(value, int) else [card_name(c) for c in value]
            elif f.name == "hands":
                value = {seat: [card_name(c) for c in cards] for seat, cards in value.items()}
            out[f.name] = _json_value(value)
        for name in ("table", "id", "source", "confidence", "evidence"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        return out


@dataclass(frozen=True, kw_only=True)
class SessionStart(Event):
    kind: ClassVar[str] = "session_start"
    teams: dict[str, str] = field(default_factory=dict)
    ruleset: str | None = None


@dataclass(frozen=True, kw_only=True)
class DealStart(Event):
    kind: ClassVar[str] = "deal_start"
    deal: int = 0
    hands: dict[Seat, tuple[Card, ...]] | None = None
    first_leader: Seat | None = None


@dataclass(frozen=True, kw_only=True)
class Tribute(Event):
    kind: ClassVar[str] = "tribute"
    CARD_FIELDS: ClassVar[tuple[str, ...]] = ("card",)
    seat: Seat
    to: Seat
    card: Card


@dataclass(frozen=True, kw_only=True)
class Return(Tribute):
    """The card handed back for a tribute: the same shape, the other direction (T2)."""

    kind: ClassVar[str] = "return"


@dataclass(frozen=True, kw_only=True)
class Play(Event):
    kind: ClassVar[str] = "play"
    CARD_FIELDS: ClassVar[tuple[str, ...]] = ("cards",)
    seat: Seat
    cards: tuple[Card, ...]
    declared: CombType | None = None
    alternatives: tuple[Alternative, ...] | None = None
    """Other readings of the same cards the reader found plausible, most likely first, each
    with its probability (the read itself has ``confidence``): what the referee weighs
    against the deal's context before it asks a person (:mod:`referee.doubt`)."""
    min_cards: int | None = None
    """The fewest cards the camera saw laid by their paper, sent when more than it read: a
    reading with fewer cards is not what was laid (an index hidden under another)."""

    def to_json(self) -> dict:
        out = super().to_json()
        if self.alternatives is not None:
            out["alternatives"] = [{"cards": [card_name(c) for c in alt.cards], "p": alt.p}
                                   for alt in self.alternatives]
        return out


@dataclass(frozen=True)
class Alternative:
    """One other reading of a play's cards and its probability (0..1)."""

    cards: tuple[Card, ...]
    p: float


@dataclass(frozen=True, kw_only=True)
class ConfirmRead(Event):
    """A referee says a doubted read is right as read: the play ``of`` (its event id) stands."""

    kind: ClassVar[str] = "confirm_read"
    of: str
    by: str


@dataclass(frozen=True, kw_only=True)
class TakeBack(Event):
    """The cards of ``seat``'s last play left its play area with no new play (the watcher saw
    them taken back): a play that stood only as a flagged candidate goes back to the hand."""

    kind: ClassVar[str] = "take_back"
    seat: Seat


@dataclass(frozen=True, kw_only=True)
class Pass(Event):
    kind: ClassVar[str] = "pass"
    seat: Seat


@dataclass(frozen=True, kw_only=True)
class Report(Event):
    kind: ClassVar[str] = "report"
    seat: Seat
    count: int | None = None


@dataclass(frozen=True, kw_only=True)
class AskCount(Event):
    kind: ClassVar[str] = "ask_count"
    seat: Seat
    of: Seat


@dataclass(frozen=True, kw_only=True)
class Correction(Event):
    """A referee's replacement of an accepted event (``of``). The replacement keeps the
    original's time unless it names its own (``timed``): a tick or a read stamped far ahead
    of the table would otherwise hold every later true event back.

    ``event`` ``None`` (JSON ``null``) strikes the event: a play or pass a reader saw where
    nobody acted (a hand over the play area read as a play). Replacing it with a pass would
    not do: the seat's real action, seen afterwards, would then be out of turn."""

    kind: ClassVar[str] = "correction"
    of: str
    event: Event | None
    by: str | None = None
    timed: bool = False
    """Whether the replacement names its own ``t`` (else its JSON has none)."""

    def replacement_t(self, original_t: float) -> float:
        """The replacement's time: its own if it names one, else the corrected event's."""
        return self.event.t if self.timed and self.event is not None else original_t

    def to_json(self) -> dict:
        out = super().to_json()
        del out["timed"]
        if self.event is None:
            out["event"] = None
        elif not self.timed:
            del out["event"]["t"]
        return out


@dataclass(frozen=True, kw_only=True)
class Penalty(Event):
    kind: ClassVar[str] = "penalty"
    side: Side
    level: PenaltyLevel
    rule: str
    by: str | None = None
    seat: Seat | None = None


@dataclass(frozen=True, kw_only=True)
class Arrival(Event):
    kind: ClassVar[str] = "arrival"
    side: Side
    minutes_late: float


@dataclass(frozen=True, kw_only=True)
class Tick(Event):
    kind: ClassVar[str] = "tick"


@dataclass(frozen=True, kw_only=True)
class SessionEnd(Event):
    kind: ClassVar[str] = "session_end"


@dataclass(frozen=True, kw_only=True)
class Conflict(Event):
    """Two sources read one play area differently (camera vs RFID): a human decides."""

    kind: ClassVar[str] = "conflict"
    seat: Seat
    readings: dict[str, list[str]]


@dataclass(frozen=True, kw_only=True)
class Fault(Event):
    """A camera or reader fault (black or frozen frames, lost calibration, reader gone):
    what that source reports cannot be trusted until a human looks. Changes no game state."""

    kind: ClassVar[str] = "fault"
    message: str
    seat: Seat | None = None


@dataclass(frozen=True, kw_only=True)
class DeckAnomaly(Event):
    """An RFID deck check (D3): a tag played twice in a deal, a tag of another deck, a
    109th card. ``tags`` are the tag ids involved."""

    kind: ClassVar[str] = "deck_anomaly"
    seat: Seat
    tags: tuple[str, ...]
    message: str


@dataclass(frozen=True, kw_only=True)
class Dismiss(Event):
    """A referee dismisses a flag, named by ``(rule, seat, at)``; the game state is unchanged."""

    kind: ClassVar[str] = "dismiss"
    rule: str
    at: float
    reason: str
    by: str
    seat: Seat | None = None


def _get(obj: dict, key: str, kind: str, required: bool = True) -> Any:
    if key not in obj or obj[key] is None:
        if required:
            raise EventError(f"{kind} event needs field {key!r}")
        return None
    return obj[key]


def _seat(obj: dict, key: str, kind: str, required: bool = True) -> Seat | None:
    value = _get(obj, key, kind, required)
    if value is None:
        return None
    try:
        return parse_seat(value)
    except SeatError as exc:
        raise EventError(f"{kind}.{key}: {exc}") from None


def _card(obj: dict, key: str, kind: str) -> Card:
    try:
        return parse_card(_get(obj, key, kind))
    except CardError as exc:
        raise EventError(f"{kind}.{key}: {exc}") from None


def _cards(obj: dict, key: str, kind: str) -> tuple[Card, ...]:
    value = _get(obj, key, kind)
    if not isinstance(value, (list, str)):
        raise EventError(f"{kind}.{key}: expected a list of cards, got {value!r}")
    try:
        return tuple(parse_cards(value))
    except CardError as exc:
        raise EventError(f"{kind}.{key}: {exc}") from None


def _number(obj: dict, key: str, kind: str, required: bool = True) -> float | None:
    value = _get(obj, key, kind, required)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise EventError(f"{kind}.{key}: expected a number, got {value!r}")
    return float(value)


def _parse_session_start(obj: dict, common: dict) -> Event:
    teams = obj.get("teams") or {}
    if not isinstance(teams, dict) or not all(isinstance(v, str) for v in teams.values()):
        raise EventError(f"session_start.teams: expected {{'NS': name, 'EW': name}}, got {teams!r}")
    try:
        teams = {parse_side(k): v for k, v in teams.items()}
    except SeatError as exc:
        raise EventError(f"session_start.teams: {exc}") from None
    ruleset = obj.get("ruleset")
    if ruleset is not None and not isinstance(ruleset, str):
        raise EventError(f"session_start.ruleset: expected a name, got {ruleset!r}")
    return SessionStart(teams=teams, ruleset=ruleset, **common)


def _parse_deal_start(obj: dict, common: dict) -> Event:
    deal = obj.get("deal", 0)
    if isinstance(deal, bool) or not isinstance(deal, int) or deal < 0:
        raise EventError(f"deal_start.deal: expected a deal number, got {deal!r}")
    hands = obj.get("hands")
    parsed = None
    if hands is not None:
        if not isinstance(hands, dict):
            raise EventError(f"deal_start.hands: expected {{seat: [cards]}}, got {hands!r}")
        parsed = {}
        for seat, cards in hands.items():
            try:
                parsed[parse_seat(seat)] = tuple(parse_cards(cards))
            except (SeatError, CardError, AttributeError, TypeError) as exc:
                raise EventError(f"deal_start.hands[{seat!r}]: {exc}") from None
    return DealStart(deal=deal, hands=parsed, first_leader=_seat(obj, "first_leader", "deal_start", False), **common)


def _parse_transfer(cls):
    def parse(obj: dict, common: dict) -> Event:
        kind = obj["type"]
        return cls(seat=_seat(obj, "seat", kind), to=_seat(obj, "to", kind), card=_card(obj, "card", kind), **common)

    return parse


def _parse_play(obj: dict, common: dict) -> Event:
    cards = _cards(obj, "cards", "play")
    if not 1 <= len(cards) <= 27:
        raise EventError(f"play.cards: a play has at least one card, got {len(cards)}")
    declared = obj.get("declared")
    if declared is not None:
        try:
            declared = parse_comb_type(declared)
        except ComboError as exc:
            raise EventError(f"play.declared: {exc}") from None
    min_cards = obj.get("min_cards")
    if min_cards is not None and (isinstance(min_cards, bool) or not isinstance(min_cards, int)
                                  or not 1 <= min_cards <= 27):
        raise EventError(f"play.min_cards: expected a number of cards from 1 to 27, got {min_cards!r}")
    return Play(seat=_seat(obj, "seat", "play"), cards=cards, declared=declared,
                alternatives=_alternatives(obj), min_cards=min_cards, **common)


MAX_ALTERNATIVES = 8


def _alternatives(obj: dict) -> tuple[Alternative, ...] | None:
    """``play.alternatives``: at most eight ``{"cards": [...], "p": 0..1}``."""
    value = obj.get("alternatives")
    if value is None:
        return None
    if not isinstance(value, list) or len(value) > MAX_ALTERNATIVES:
        raise EventError(f"play.alternatives: expected a list of at most {MAX_ALTERNATIVES} "
                         f"{{'cards': [...], 'p': 0..1}}, got {value!r}")
    out = []
    for i, alt in enumerate(value):
        if not isinstance(alt, dict):
            raise EventError(f"play.alternatives[{i}]: expected {{'cards': [...], 'p': 0..1}}, got {alt!r}")
        cards = _cards(alt, "cards", f"play.alternatives[{i}]")
        p = _number(alt, "p", f"play.alternatives[{i}]")
        if not cards or not 0 <= p <= 1:
            raise EventError(f"play.alternatives[{i}]: needs at least one card and p in 0..1, got {alt!r}")
        out.append(Alternative(cards, p))
    return tuple(out)


def _parse_confirm_read(obj: dict, common: dict) -> Event:
    of = _get(obj, "of", "confirm_read")
    if not isinstance(of, (str, int)) or isinstance(of, bool):
        raise EventError(f"confirm_read.of: expected the play's event id, got {of!r}")
    by = _text(obj, "by", "confirm_read")
    if not by.strip():
        raise EventError("confirm_read.by: must name the referee who confirmed the read")
    return ConfirmRead(of=str(of), by=by, **common)


def _parse_report(obj: dict, common: dict) -> Event:
    count = obj.get("count")
    if count is not None and (isinstance(count, bool) or not isinstance(count, int) or not 0 <= count <= 27):
        raise EventError(f"report.count: expected 0..27, got {count!r}")
    return Report(seat=_seat(obj, "seat", "report"), count=count, **common)


def _parse_correction(obj: dict, common: dict) -> Event:
    of = _get(obj, "of", "correction")
    if "event" in obj and obj["event"] is None:  # struck: nothing happened there
        return Correction(of=str(of), event=None, by=obj.get("by"), **common)
    replacement = _get(obj, "event", "correction")
    if not isinstance(replacement, dict):
        raise EventError(f"correction.event: expected the replacement event object (or null: "
                         f"no event happened there), got {replacement!r}")
    replacement = dict(replacement)
    timed = "t" in replacement
    replacement.setdefault("t", common["t"])
    replacement.setdefault("id", str(of))
    inner = parse_event(replacement)
    if isinstance(inner, (Correction, SessionStart)):
        raise EventError(f"correction.event: a {replacement['type']} cannot replace a table event")
    return Correction(of=str(of), event=inner, by=obj.get("by"), timed=timed, **common)


def _parse_penalty(obj: dict, common: dict) -> Event:
    level = _get(obj, "level", "penalty")
    if level not in PENALTY_LEVELS:
        raise EventError(f"penalty.level: expected one of {', '.join(PENALTY_LEVELS)}, got {level!r}")
    rule = _get(obj, "rule", "penalty")
    if not isinstance(rule, str):
        raise EventError(f"penalty.rule: expected a rule ID such as 'P4', got {rule!r}")
    try:
        side = parse_side(_get(obj, "side", "penalty"))
    except SeatError as exc:
        raise EventError(f"penalty.side: {exc}") from None
    return Penalty(side=side, level=PenaltyLevel(level), rule=rule, by=obj.get("by"), seat=_seat(obj, "seat", "penalty", False), **common)


def _parse_arrival(obj: dict, common: dict) -> Event:
    try:
        side = parse_side(_get(obj, "side", "arrival"))
    except SeatError as exc:
        raise EventError(f"arrival.side: {exc}") from None
    minutes = _number(obj, "minutes_late", "arrival")
    if minutes < 0:
        raise EventError(f"arrival.minutes_late: must not be negative, got {minutes!r}")
    return Arrival(side=side, minutes_late=minutes, **common)


def _parse_conflict(obj: dict, common: dict) -> Event:
    readings = _get(obj, "readings", "conflict")
    if not isinstance(readings, dict):
        raise EventError(f"conflict.readings: expected {{source: [cards]}}, got {readings!r}")
    try:
        named = {str(k): [card_name(c) for c in parse_cards(v)] for k, v in readings.items()}
    except (CardError, AttributeError, TypeError) as exc:
        raise EventError(f"conflict.readings: {exc}") from None
    return Conflict(seat=_seat(obj, "seat", "conflict"), readings=named, **common)


def _text(obj: dict, key: str, kind: str, required: bool = True) -> str | None:
    value = _get(obj, key, kind, required)
    if value is not None and not isinstance(value, str):
        raise EventError(f"{kind}.{key}: expected text, got {value!r}")
    return value


def _parse_fault(obj: dict, common: dict) -> Event:
    if common["source"] not in FAULT_SOURCES:
        raise EventError(f"fault.source: expected one of {', '.join(FAULT_SOURCES)}, got {obj.get('source')!r}")
    return Fault(message=_text(obj, "message", "fault"), seat=_seat(obj, "seat", "fault", False), **common)


def _parse_deck_anomaly(obj: dict, common: dict) -> Event:
    tags = _get(obj, "tags", "deck_anomaly")
    if not isinstance(tags, list) or not all(isinstance(tag, str) for tag in tags):
        raise EventError(f"deck_anomaly.tags: expected a list of tag ids, got {tags!r}")
    return DeckAnomaly(seat=_seat(obj, "seat", "deck_anomaly"), tags=tuple(tags),
                       message=_text(obj, "message", "deck_anomaly"), **common)


def _parse_dismiss(obj: dict, common: dict) -> Event:
    rule = _text(obj, "rule", "dismiss")
    by = _text(obj, "by", "dismiss")
    if not by.strip():
        raise EventError("dismiss.by: must name the referee who dismissed the flag")
    return Dismiss(rule=rule, at=_number(obj, "at", "dismiss"), reason=_text(obj, "reason", "dismiss"), by=by,
                   seat=_seat(obj, "seat", "dismiss", False), **common)


_PARSERS = {
    "session_start": _parse_session_start,
    "deal_start": _parse_deal_start,
    "tribute": _parse_transfer(Tribute),
    "return": _parse_transfer(Return),
    "play": _parse_play,
    "pass": lambda obj, common: Pass(seat=_seat(obj, "seat", "pass"), **common),
    "report": _parse_report,
    "ask_count": lambda obj, common: AskCount(seat=_seat(obj, "seat", "ask_count"), of=_seat(obj, "of", "ask_count"), **common),
    "correction": _parse_correction,
    "penalty": _parse_penalty,
    "arrival": _parse_arrival,
    "tick": lambda obj, common: Tick(**common),
    "session_end": lambda obj, common: SessionEnd(**common),
    "conflict": _parse_conflict,
    "fault": _parse_fault,
    "deck_anomaly": _parse_deck_anomaly,
    "dismiss": _parse_dismiss,
    "confirm_read": _parse_confirm_read,
    "take_back": lambda obj, common: TakeBack(seat=_seat(obj, "seat", "take_back"), **common),
}
EVENT_TYPES = tuple(_PARSERS)


def parse_event(obj: Any) -> Event:
    """Validate one table-event object; raises :class:`EventError` naming what was wrong."""
    if not isinstance(obj, dict):
        raise EventError(f"an event is a JSON object, got {type(obj).__name__}")
    kind = obj.get("type")
    parser = _PARSERS.get(kind) if isinstance(kind, str) else None
    if parser is None:
        raise EventError(f"unknown event type {kind!r} (known: {', '.join(EVENT_TYPES)})")
    t = _number(obj, "t", kind)
    event_id = obj.get("id")
    if event_id is not None and not isinstance(event_id, (str, int)):
        raise EventError(f"{kind}.id: expected a string, got {event_id!r}")
    table = obj.get("table")
    source = obj.get("source")
    if source is not None and source not in SOURCES:
        raise EventError(f"{kind}.source: expected one of {', '.join(SOURCES)}, got {source!r}")
    confidence = _number(obj, "confidence", kind, False)
    if confidence is not None and not 0 <= confidence <= 1:
        raise EventError(f"{kind}.confidence: expected 0..1, got {obj['confidence']!r}")
    common = {"t": t, "table": None if table is None else str(table), "id": None if event_id is None else str(event_id),
              "source": source, "confidence": confidence, "evidence": obj.get("evidence")}
    return parser(obj, common)
