"""The state of a table: a session (a round between two pairs) and the deal in progress.

Plain mutable records owned by one :class:`referee.engine.Referee`; they are always the
replay of the accepted events, so a snapshot (:mod:`referee.snapshot`) holds those events,
not these records.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from enum import StrEnum

from .cards import Card, Rank
from .combos import Reading
from .events import PenaltyLevel
from .rulesets import Ruleset
from .seats import SEATS, Seat, Side, next_seat


class DealPhase(StrEnum):
    """Where a deal stands; a string enum, so views and records carry its value."""

    TRIBUTE = "tribute"
    """Tributes and returns are owed (T1-T6); nobody plays yet."""
    PLAY = "play"
    OVER = "over"
    """Ended (P7, a foul, or the session's end); the next deal_start begins another."""


@dataclass
class Clock:
    """A running time limit (K1-K3): who owes an action since when; flagged once (K4)."""

    seat: Seat | None
    start: float
    limit: float
    rule: str
    what: str
    flagged: bool = False


@dataclass
class Standing:
    """A flagged or doubted play the table may still take back (P4/P5: "cards go back").

    The referee follows the table: the play stands as laid, so later actions are judged
    against the table as it is, until the table shows otherwise. ``before`` is the deal as
    it was without the play; it comes back if the cards are seen taken back, if the same
    seat plays again, or if the seat that was due before (``due_before``) acts next."""

    seat: Seat
    before: DealState
    due_before: Seat | None


@dataclass(frozen=True)
class CameraRead:
    """A camera read laid in this deal that no referee has confirmed: a face it shows may be
    its mistake, and a later read that shows the face a third time names it."""

    seat: Seat
    t: float
    of: str | None
    """The read event's id."""
    cards: tuple[Card, ...]
    raised: bool
    """An item was raised about it: its cards do not count as gone from the seat's hand."""


@dataclass
class DealState:
    number: int
    level: Rank
    started_at: float
    hands: dict[Seat, list[Card]] | None
    counts: dict[Seat, int] = field(default_factory=lambda: {s: 27 for s in SEATS})
    phase: DealPhase = DealPhase.PLAY
    # tribute and return (T1-T6)
    payers: tuple[Seat, ...] = ()
    winner: Seat | None = None  # the previous deal's 上游
    paid: dict[Seat, tuple[Seat, Card]] = field(default_factory=dict)  # payer -> (receiver, card)
    returned: set[Seat] = field(default_factory=set)  # receivers who returned
    # play (P1-P7)
    turn: Seat | None = None  # None before an unknown first leader has played
    table: Reading | None = None
    table_cards: tuple[Card, ...] = ()
    table_seat: Seat | None = None
    passes: int = 0
    round: int = 1
    out: list[Seat] = field(default_factory=list)
    played_faces: dict[Card, int] = field(default_factory=dict)
    standing: Standing | None = None  # a flagged play the table carried on from (it may still go back)
    read_by_camera: set[Seat] = field(default_factory=set)  # seats whose counts rest on doubtful camera reads
    doubted: set[Seat] = field(default_factory=set)  # seats a doubt item was raised about in this deal
    doubted_faces: dict[Card, int] = field(default_factory=dict)  # cards laid by reads in question
    camera_reads: list[CameraRead] = field(default_factory=list)  # unconfirmed camera reads laid, in order
    table_doubt: str | None = None  # the table's cards as a doubtful read: "read" (nothing raised) or "raised"
    over_by_count_at: float | None = None  # when the counts said the deal was over, while it waits on a doubt
    # reporting (R1-R2)
    report_due: Seat | None = None
    reported: set[Seat] = field(default_factory=set)
    crossed: set[Seat] = field(default_factory=set)
    # clock and penalties
    clocks: dict[str, Clock] = field(default_factory=dict)
    forbidden: Seat | None = None  # X2: the violator's next play is forbidden

    @property
    def leading(self) -> bool:
        """Nobody has laid cards in this round yet (a table read as no combination still has a seat)."""
        return self.table_seat is None

    def doubt(self, cards) -> None:
        """Count ``cards`` as laid by a read in question: they do not count towards two of each."""
        for card in cards:
            self.doubted_faces[card] = self.doubted_faces.get(card, 0) + 1

    def raise_table_read(self) -> None:
        """An item now questions the read on the table (laid with nothing raised): its faces
        stop counting towards two of each, and its cards stop counting as gone from its
        seat's hand, so the seat laying them again is not a second item about one misread."""
        self.doubt(self.table_cards)
        if self.camera_reads and self.camera_reads[-1].seat == self.table_seat:
            self.camera_reads[-1] = dataclasses.replace(self.camera_reads[-1], raised=True)

    def active(self, seat: Seat) -> bool:
        return seat not in self.out

    def next_active(self, seat: Seat) -> Seat:
        nxt = next_seat(seat)
        while nxt in self.out:
            nxt = next_seat(nxt)
        return nxt


@dataclass
class SessionState:
    ruleset: Ruleset
    """The rules this session plays: their one home while it lasts (``Phase.ruleset``)."""
    teams: dict[Side, str]
    started_at: float
    levels: dict[Side, int] = field(default_factory=lambda: {"NS": 0, "EW": 0})
    level_side: Side | None = None
    a_failures: dict[Side, int] = field(default_factory=lambda: {"NS": 0, "EW": 0})
    deals_played: int = 0
    last_order: tuple[Seat, ...] | None = None
    no_tribute: bool = False  # X3: no tribute in the deal after a foul
    next_leader: Seat | None = None  # X3/T5: who leads the next deal when there is no tribute
    penalties: dict[Side, dict[PenaltyLevel, int]] = field(
        default_factory=lambda: {s: {level: 0 for level in PenaltyLevel if level.escalated()} for s in ("NS", "EW")}
    )
    """Each side's penalties of each level short of a loss, since two of one last made the next (X1)."""
    deciding_deal: bool = False  # W1: time is up at equal levels, one more deal decides
    over: bool = False
    deal: DealState | None = None
