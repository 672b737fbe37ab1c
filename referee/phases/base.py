"""What every phase shares: the state it works on, the rejection, handler registration,
and how a flag and its claim window (X5) are made."""

from __future__ import annotations

from collections.abc import Callable

from .. import events as ev
from ..cards import Card, cards_name
from ..rulesets import Ruleset
from ..seats import Seat, Side, side_of
from ..state import DealState, SessionState
from ..verdicts import ClaimWindow, Flag, Verdict


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


def flag(rule: str, severity: str, seat: Seat | None, message: str, at: float, claim_until: ClaimWindow,
         side: Side | None = None, due: float | None = None, detail: dict | None = None) -> Flag:
    return Flag(rule, severity, seat, side or (side_of(seat) if seat else None), message, at, claim_until, due,
                detail)


def claim_round(deal: DealState) -> ClaimWindow:
    """X5: a breach within a round (一圈) is claimable until that round ends."""
    return ClaimWindow(deal=deal.number, round=deal.round)


def claim_deal(deal: DealState) -> ClaimWindow:
    """X5: deal-level breaches (tribute, deck) are claimable until the deal ends."""
    return ClaimWindow(deal=deal.number)


class Phase:
    """The state every phase reads and moves; the machine owns it."""

    ruleset: Ruleset
    session: SessionState | None
    last_t: float | None
    confirmed: frozenset[str]
    """Ids of camera reads a referee confirmed as read (``confirm_read``): taken as read."""

    def _session(self, event: ev.Event) -> SessionState:
        if self.session is None:
            raise Rejected(f"no session started: a session_start must come before {type(event).__name__}")
        if self.session.over:
            raise Rejected("the session is over")
        return self.session

    def _deal(self, event: ev.Event) -> DealState:
        deal = self._session(event).deal
        if deal is None or deal.phase == "over":
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
