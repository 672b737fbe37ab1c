"""What the referee derives from the events: typed verdicts, each with its JSON record.

The JSON Lines output of ``guandan-ref replay`` and the store's derived rows are the
``to_json()`` of these values, key for key and in the same order, so that readers of the
records (screens, the store, appeal files) keep one contract while the engine works with
typed values:

* :class:`Flag`: a candidate breach for a human (``rule`` of RULES.md, ``severity``,
  ``seat``, ``side``, ``message``, ``at`` = the ``t`` of the event that revealed it,
  ``claim_until`` = the X5 window; clock flags add ``due``; ``detail`` holds the
  message's facts as data, for screens to word in their reader's language);
* :class:`DealEnd` and :class:`SessionResult`: results (P7, U1-U3, W1, S1), the latter with
  a :class:`SessionEnding` saying how the round ended;
* :class:`Ruling`: a referee's penalty as counted, with escalation (X1-X4);
* :class:`Review`: something the engine will not guess (:class:`ReviewReason`);
* :class:`Settled`: a doubtful read the deal's context settled without asking anybody;
* :class:`Confirmed`: a referee confirmed a doubted read as read (``confirm_read``);
* :class:`Withdrawn`: a flag that only a misread raised, taken back after a correction;
* :class:`Dismissed`: a flag a referee dismissed (a ``dismiss`` event);
* :class:`Rederived`: a correction replaced an event and everything after it was judged afresh;
* :class:`Rejection`: the record a caller writes for an event the referee refused (the
  engine itself raises :class:`referee.events.EventError`; it never returns errors).

A flag is identified by its :class:`FlagKey` ``(rule, seat, at)``, wherever it is named:
the typed verdicts' ``key``, a record's ``FlagKey.of``, a ``dismiss`` event's fields.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from collections.abc import Mapping
from typing import Any, NamedTuple

from .seats import Seat, Side


class FlagKey(NamedTuple):
    """How a flag is named by ``withdrawn``, ``dismissed`` and ``dismiss``, and by every screen
    that says how it was closed: its rule, its seat and the ``t`` of the event that revealed
    it. A review of a read has no rule: it and the ``confirmed`` record that answers it share
    ``(None, seat, at)``."""

    rule: str | None
    seat: Seat | None
    at: float

    @classmethod
    def of(cls, record: Mapping[str, Any]) -> FlagKey:
        """The key of a verdict's JSON record (a flag, a review, or a record that closes one)."""
        return cls(record.get("rule"), record.get("seat"), record.get("at"))


@dataclass(frozen=True)
class ClaimWindow:
    """X5: the round or deal (or the whole session, K5) after which a breach is no longer penalised."""

    deal: int | None = None
    round: int | None = None
    session: bool = False

    def to_json(self) -> dict:
        if self.session:
            return {"session": True}
        out: dict[str, Any] = {"deal": self.deal}
        if self.round is not None:
            out["round"] = self.round
        return out


@dataclass(frozen=True)
class Flag:
    rule: str
    severity: str
    seat: Seat | None
    side: Side | None
    message: str
    at: float
    claim_until: ClaimWindow
    due: float | None = None
    """Clock flags (K1-K4): when the limit plus the countdown ran out."""
    detail: dict[str, Any] | None = None
    """What ``message`` says, as data: ``what`` names the message, the rest are its values
    (seats, counts, card names). Screens word it in the reader's language from these; the
    English ``message`` stays for the command line and the records."""

    @property
    def key(self) -> FlagKey:
        return FlagKey(self.rule, self.seat, self.at)

    def to_json(self) -> dict:
        out = {"type": "flag", "rule": self.rule, "severity": self.severity, "seat": self.seat, "side": self.side,
               "message": self.message, "at": self.at, "claim_until": self.claim_until.to_json()}
        if self.due is not None:
            out["due"] = self.due
        if self.detail is not None:
            out["detail"] = self.detail
        return out


@dataclass(frozen=True)
class DealEnd:
    deal: int
    order: tuple[Seat, ...]
    upgrade: dict[Side, int]
    levels: dict[Side, str]
    double_down: bool
    at: float
    foul: Side | None = None
    """X3: the side whose foul ended the deal."""

    def to_json(self) -> dict:
        out = {"type": "deal_end", "deal": self.deal, "order": list(self.order), "upgrade": dict(self.upgrade),
               "levels": dict(self.levels), "double_down": self.double_down, "at": self.at}
        if self.foul:
            out["foul"] = self.foul
        return out


class SessionEnding(enum.Enum):
    """How a round (session) ended; the ``reason`` of its record."""

    PASSED_A = "passed_a"  # W1: a side passed A
    DECIDING_DEAL = "deciding_deal"  # W1: the extra deal at equal levels was played
    DEALS = "deals"  # W1: the deal limit was reached
    TIME = "time"  # W1/W2: the round's time ran out
    SESSION_END = "session_end"  # a session_end event
    FORFEIT = "forfeit"  # K5/X4: a side forfeited (17:0)
    LOSS = "loss"  # X4: a side's second foul


@dataclass(frozen=True)
class SessionResult:
    winner: Side | None
    ending: SessionEnding
    levels: dict[Side, str]
    level_difference: int
    score: dict[Side, int]
    teams: dict[Side, str]
    at: float

    def to_json(self) -> dict:
        return {"type": "session_result", "winner": self.winner, "reason": self.ending.value,
                "levels": dict(self.levels), "level_difference": self.level_difference, "score": dict(self.score),
                "teams": dict(self.teams), "at": self.at}


@dataclass(frozen=True)
class Ruling:
    side: Side
    seat: Seat | None
    rule: str
    given: str
    level: str
    escalated_by: tuple[str, ...]
    by: str | None
    at: float
    counts: dict[str, int]

    def to_json(self) -> dict:
        return {"type": "ruling", "side": self.side, "seat": self.seat, "rule": self.rule, "given": self.given,
                "level": self.level, "escalated_by": list(self.escalated_by), "by": self.by, "at": self.at,
                "counts": dict(self.counts)}


class ReviewReason(enum.Enum):
    ANTI_TRIBUTE = "anti_tribute"  # T4 assumed or found
    UNCHECKED = "unchecked"  # a rule that needs the hands, which are unknown
    LOW_CONFIDENCE = "low_confidence"  # a read below the ruleset's confidence floor
    RECOGNITION_CONFLICT = "recognition_conflict"  # camera and RFID disagree
    DECIDING_DEAL = "deciding_deal"  # W1: time is up at equal levels
    FAULT = "fault"  # a camera or reader fault: what it saw cannot be trusted
    SUSPECT_READ = "suspect_read"  # an impossible read with a possible reading nearby: the read, not the player


@dataclass(frozen=True)
class Review:
    reason: ReviewReason
    at: float
    message: str
    seat: Seat | None = None
    deal: int | None = None
    cards: tuple[str, ...] | None = None
    readings: dict[str, list[str]] | None = None
    source: str | None = None
    of: str | None = None
    """The id of the read event in doubt, where a referee can confirm it (``confirm_read``)."""
    detail: dict[str, Any] | None = None
    """What ``message`` says, as data (as :attr:`Flag.detail`)."""

    def to_json(self) -> dict:
        out: dict[str, Any] = {"type": "review", "reason": self.reason.value}
        if self.seat is not None:
            out["seat"] = self.seat
        out["at"] = self.at
        for name in ("deal", "source", "of"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        if self.cards is not None:
            out["cards"] = list(self.cards)
        if self.readings is not None:
            out["readings"] = {k: list(v) for k, v in self.readings.items()}
        out["message"] = self.message
        if self.detail is not None:
            out["detail"] = self.detail
        return out


@dataclass(frozen=True)
class Settled:
    """A doubtful read that the deal's context settled without asking anybody: the play of
    ``seat`` at ``at`` is taken as ``cards`` with the ``confidence`` the context leaves it,
    and ``settled_by`` says which facts ruled the other readings out."""

    seat: Seat
    deal: int
    at: float
    cards: tuple[str, ...]
    confidence: float
    settled_by: tuple[str, ...]
    of: str | None = None

    def to_json(self) -> dict:
        out: dict[str, Any] = {"type": "settled", "seat": self.seat, "deal": self.deal, "at": self.at,
                               "cards": list(self.cards), "confidence": self.confidence,
                               "settled_by": list(self.settled_by)}
        if self.of is not None:
            out["of"] = self.of
        return out


@dataclass(frozen=True)
class Confirmed:
    """A referee confirmed a doubted read as read (a ``confirm_read``): its review is closed."""

    of: str
    seat: Seat | None
    at: float
    """The ``t`` of the confirmed play (its review's ``at``)."""
    by: str
    t: float

    def to_json(self) -> dict:
        return {"type": "confirmed", "of": self.of, "seat": self.seat, "at": self.at, "by": self.by, "t": self.t}


@dataclass(frozen=True)
class Withdrawn:
    """A flag that only a misread raised: the corrected log does not raise it."""

    rule: str
    seat: Seat | None
    at: float
    reason: str

    @property
    def key(self) -> FlagKey:
        """The flag withdrawn."""
        return FlagKey(self.rule, self.seat, self.at)

    def to_json(self) -> dict:
        return {"type": "withdrawn", "rule": self.rule, "seat": self.seat, "at": self.at, "reason": self.reason}


@dataclass(frozen=True)
class Dismissed:
    """A flag a referee dismissed; the game state is unchanged."""

    rule: str
    seat: Seat | None
    at: float
    reason: str
    by: str
    t: float
    """When it was dismissed (``at`` names the flag)."""

    @property
    def key(self) -> FlagKey:
        """The flag dismissed."""
        return FlagKey(self.rule, self.seat, self.at)

    def to_json(self) -> dict:
        return {"type": "dismissed", "rule": self.rule, "seat": self.seat, "at": self.at, "reason": self.reason,
                "by": self.by, "t": self.t}


@dataclass(frozen=True)
class Rederived:
    """A correction replaced event ``of``; the records from there on were judged afresh."""

    of: str
    by: str | None
    at: float

    def to_json(self) -> dict:
        return {"type": "rederived", "of": self.of, "by": self.by, "at": self.at}


@dataclass(frozen=True)
class Rejection:
    """An event the referee refused, as a caller records it (``error`` in the JSON Lines)."""

    message: str
    event: Any = field(default=None)
    line: int | None = None

    def to_json(self) -> dict:
        out: dict[str, Any] = {"type": "error", "message": self.message}
        if isinstance(self.event, dict):
            out["event"] = self.event
        if self.line is not None:
            out["line"] = self.line
        return out


Verdict = Flag | DealEnd | SessionResult | Ruling | Review | Settled | Confirmed | Withdrawn | Dismissed | Rederived
"""What ``Referee.feed`` returns (a rejected event raises instead)."""
