"""What every phase shares: the state it works on, the rejection, handler registration,
how a flag and its claim window (X5) are made, and the inner API: every method one phase's
rules call on another's, declared on :class:`Phase` with its contract."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable

from .. import events as ev
from ..cards import Card, cards_name
from ..rulesets import Ruleset
from ..seats import Seat, Side, side_of
from ..state import DealPhase, DealState, SessionState
from ..verdicts import ClaimWindow, Flag, SessionEnding, Verdict


class Rejected(ev.EventError):
    """An event that is well-formed but impossible now (no deal, time going backwards...)."""


HANDLERS: dict[type, Callable[..., list[Verdict]]] = {}
"""Event class -> the phase method that applies it (filled by :func:`handles`)."""


def handles(kind: type) -> Callable:
    """Register a handler for one event type (a plain dict: cheaper than singledispatch)."""

    def register(handler: Callable) -> Callable:
        HANDLERS[kind] = handler
        return handler

    return register


def flag(rule: str, severity: ev.PenaltyLevel, seat: Seat | None, message: str, at: float, claim_until: ClaimWindow,
         side: Side | None = None, due: float | None = None, detail: dict | None = None) -> Flag:
    return Flag(rule, severity, seat, side or (side_of(seat) if seat else None), message, at, claim_until, due,
                detail)


def claim_round(deal: DealState) -> ClaimWindow:
    """X5: a breach within a round (一圈) is claimable until that round ends."""
    return ClaimWindow(deal=deal.number, round=deal.round)


def claim_deal(deal: DealState) -> ClaimWindow:
    """X5: deal-level breaches (tribute, deck) are claimable until the deal ends."""
    return ClaimWindow(deal=deal.number)


class Phase(ABC):
    """The state every phase reads and moves (the machine owns it), and the inner API.

    Each phase of :mod:`referee.phases` is one mix-in of :class:`referee.machine.Machine`.
    A phase calls another's methods only through the abstract methods below: each says
    what its caller may rely on (which state it moves, what it returns), and the phase
    named in its docstring implements it. Everything else a phase defines is its own."""

    table_ruleset: Ruleset
    """The table's ruleset (the referee's): what a session plays unless its session_start
    names another (:func:`referee.rulesets.session_ruleset`)."""
    session: SessionState | None
    last_t: float | None
    confirmed: frozenset[str]
    """Ids of camera reads a referee confirmed as read (``confirm_read``): taken as read."""

    @property
    def ruleset(self) -> Ruleset:
        """The rules in force: the session's (``SessionState.ruleset``, their one home),
        else the table's. Every phase reads them here."""
        return self.session.ruleset if self.session is not None else self.table_ruleset

    def _session(self, event: ev.Event) -> SessionState:
        if self.session is None:
            raise Rejected(f"no session started: a session_start must come before {type(event).__name__}")
        if self.session.over:
            raise Rejected("the session is over")
        return self.session

    def _deal(self, event: ev.Event) -> DealState:
        deal = self._session(event).deal
        if deal is None or deal.phase == DealPhase.OVER:
            raise Rejected("no deal in progress (the deal ended or has not started)")
        return deal

    @staticmethod
    def _holds(deal: DealState, seat: Seat, cards) -> None:
        """With known hands, a card the seat does not hold is impossible: reject it."""
        if deal.hands is None:
            return
        hand = list(deal.hands[seat])
        missing = []
        for card in cards:
            if card in hand:
                hand.remove(card)
            else:
                missing.append(card)
        if missing:
            raise Rejected(f"{seat} does not hold {cards_name(missing)}")

    @staticmethod
    def _transfer(deal: DealState, giver: Seat, taker: Seat, card: Card) -> None:
        deal.counts[giver] -= 1
        deal.counts[taker] += 1
        if deal.hands is not None:
            deal.hands[giver].remove(card)
            deal.hands[taker].append(card)

    # The inner API: what one phase's rules call on another's (implemented by the phase named).

    @abstractmethod
    def apply(self, event: ev.Event) -> list[Verdict]:
        """The machine: apply ``event`` through its handler. A handler that has just moved
        the deal to another phase hands the same event on to be judged there."""

    @abstractmethod
    def _start_clock(self, deal: DealState, key: str, limit: str, seat: Seat | None, t: float) -> None:
        """:mod:`.clock`: start (or restart) the running clock ``key`` of kind ``limit``
        (``"tribute"``, ``"return"``, ``"lead"`` or ``"follow"``) for ``seat`` from ``t``,
        at the limit the ruleset gives that kind."""

    @abstractmethod
    def _start_turn_clock(self, deal: DealState, seat: Seat | None, t: float, first_lead: bool = False) -> None:
        """:mod:`.clock`: the turn clock (key ``"turn"``) for ``seat`` from ``t``: K2 for a
        deal's first lead, K3 otherwise; it replaces the previous turn's."""

    @abstractmethod
    def _clock_flags(self, t: float) -> list[Verdict]:
        """:mod:`.clock`: K1-K4, one warning for each running clock of the deal in progress
        whose limit and countdown passed before ``t``, each clock flagged once; none
        without a deal in progress. A handler calls it before judging an action at ``t``,
        so lateness comes before what the action itself raises."""

    @abstractmethod
    def _check_deck(self, deal: DealState, t: float) -> list[Verdict]:
        """:mod:`.deck`: D3 on a new deal's hands (27 each, two of each face); nothing
        without the hands. Changes no state."""

    @abstractmethod
    def _impossible_play(self, deal: DealState, seat: Seat, cards: tuple[Card, ...], t: float) -> Flag | None:
        """:mod:`.deck`: the D3 flag when ``cards`` would show a face in this deal more often
        than two decks hold, else ``None``. Changes no state: the caller lays the play."""

    @staticmethod
    @abstractmethod
    def _count_played(deal: DealState, cards: tuple[Card, ...]) -> None:
        """:mod:`.deck`: count ``cards`` as laid in this deal, towards two of each face."""

    @abstractmethod
    def _begin_play_after_tribute(self, deal: DealState, leader: Seat, t: float,
                                  anti: bool = False) -> list[Verdict]:
        """:mod:`.tribute`: end the tribute phase: the deal is in play, the tribute and
        return clocks stop, and ``leader`` owes the first lead (K2 from ``t``). With
        ``anti`` (T4) it returns the review that says so, else nothing."""

    @abstractmethod
    def _advance(self, deal: DealState, seat: Seat, t: float) -> list[Verdict]:
        """:mod:`.play`: give the turn to ``seat`` and start its clock; a seat whose play
        is forbidden (X2) passes at once, which may end the round. Returns what those
        automatic passes raise."""

    @abstractmethod
    def _missing_report(self, deal: DealState, t: float) -> list[Verdict]:
        """:mod:`.reporting`: R1 for a report that was due and not made before this play or
        pass (none when the count rests on a read in question); the report is no longer due."""

    @abstractmethod
    def _check_deal_end(self, t: float) -> list[Verdict]:
        """:mod:`.results`: P7 after a seat went out: end the deal (:meth:`_end_deal`) once
        three seats, or both of a side, are out, unless a count rests on a read in question
        and another deal would follow (:meth:`_end_waits`). The deal is over afterwards
        exactly when something was returned."""

    @staticmethod
    @abstractmethod
    def _end_waits(deal: DealState) -> bool:
        """:mod:`.results`: the deal is over by the counts, but one of them rests on a read
        in question, so it waits for the table to show it (the last play swept, a new deal)."""

    @staticmethod
    @abstractmethod
    def _last_play_went_out(deal: DealState) -> bool:
        """:mod:`.results`: nobody followed the last play, whose seat a read in question left
        holding cards, and with it out the deal would be over: it went out."""

    @abstractmethod
    def _end_as_the_table_shows(self, t: float) -> list[Verdict]:
        """:mod:`.results`: end the deal in progress, which the table shows is over, in the
        order the counts give (those out, then the rest by cards left)."""

    @abstractmethod
    def _end_deal(self, order: tuple[Seat, ...], t: float, foul_side: Side | None = None) -> list[Verdict]:
        """:mod:`.results`: end the deal in progress in finishing ``order`` (``foul_side``:
        lost by that side's foul, X3): the deal is over, its clocks stop, the levels move
        (U1-U3), and the session ends too where W1 says so. Returns the ``DealEnd`` and
        what follows it."""

    @abstractmethod
    def _session_result(self, winner: Side | None, reason: SessionEnding, t: float,
                        score: dict | None = None) -> list[Verdict]:
        """:mod:`.results`: end the session (and any deal in progress) with ``winner``
        (``None``: a draw) for ``reason``; the ``SessionResult`` is scored by S1 unless
        ``score`` gives the points."""
