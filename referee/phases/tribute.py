"""Tribute and return (RULES.md T1-T6), and the first lead after them (T4, T5)."""

from __future__ import annotations

from collections.abc import Callable

from .. import events as ev
from ..events import PenaltyLevel
from ..cards import ACE, card_name, rank_of, wildcard
from ..combos import order_value
from ..seats import Seat, partner, previous_seat, side_of
from ..state import DealPhase, DealState
from ..verdicts import Review, ReviewReason, Verdict
from .base import Phase, Rejected, claim_deal, flag, handles


Problem = tuple[str, tuple[str, dict]]
"""What is wrong with a tribute or return: the English words, and the same as data (a key
naming the problem and its values) for a flag's detail."""


class TributeRules(Phase):
    def _begin_play_after_tribute(self, deal: DealState, leader: Seat, t: float, anti: bool = False) -> list[Verdict]:
        deal.phase = DealPhase.PLAY
        deal.turn = leader
        for key in [k for k in deal.clocks if k != "turn"]:
            del deal.clocks[key]
        self._start_turn_clock(deal, leader, t, first_lead=True)
        if anti:
            return [Review(ReviewReason.ANTI_TRIBUTE, t, deal=deal.number,
                           message=f"anti-tribute (T4): the paying side holds both big jokers; {leader} leads",
                           detail={"what": "anti_tribute", "leader": leader})]
        return []

    def _hand_over(self, event: ev.Tribute, what: str,
                   problem_of: Callable[[DealState, ev.Tribute], Problem | None]) -> tuple[DealState, list[Verdict], bool]:
        """What a tribute and a return share: checks, the clock, then the card moves (T6).

        Returns the deal, the records so far and whether the card was handed over."""
        deal = self._deal(event)
        if deal.phase != DealPhase.TRIBUTE:
            raise Rejected(f"no {what} is due now (deal {deal.number} is in play)")
        self._holds(deal, event.seat, [event.card])
        problem = problem_of(deal, event)
        records = self._clock_flags(event.t)
        if problem:
            text, (key, values) = problem
            records.append(flag("T6", PenaltyLevel.WARNING, event.seat, text + ": take it back and redo", event.t,
                                 claim_deal(deal), detail={"what": "redo", "handover": what, "problem": key,
                                                           "card": card_name(event.card), "to": event.to, **values}))
            return deal, records, False
        self._transfer(deal, event.seat, event.to, event.card)
        deal.clocks.pop(f"{what}:{event.seat}", None)
        return deal, records, True

    @handles(ev.Tribute)
    def _on_tribute(self, event: ev.Tribute) -> list[Verdict]:
        deal, records, moved = self._hand_over(event, "tribute", self._tribute_problem)
        if not moved:
            return records
        deal.paid[event.seat] = (event.to, event.card)
        if deal.hands is None:
            records.append(Review(ReviewReason.UNCHECKED, event.t, seat=event.seat, deal=deal.number,
                                  message=f"T1 not checked: without the hands nobody can tell "
                                          f"whether {card_name(event.card)} is {event.seat}'s highest card",
                                  detail={"what": "t1_unchecked", "card": card_name(event.card)}))
        self._start_clock(deal, f"return:{event.to}", "return", event.to, event.t)
        if len(deal.paid) == len(deal.payers) and len(deal.payers) == 2:
            records += self._check_double_down(deal, event.t)
        return records

    def _tribute_problem(self, deal: DealState, event: ev.Tribute) -> Problem | None:
        if event.seat not in deal.payers:
            return f"{event.seat} owes no tribute (payers: {', '.join(deal.payers)})", (
                "owes_none", {"payers": list(deal.payers)})
        if event.seat in deal.paid:
            return f"{event.seat} already paid the tribute", ("paid_already", {})
        if event.card == wildcard(deal.level):
            return f"{card_name(event.card)} is a heart level card, never a tribute (T1)", ("wildcard", {})
        if len(deal.payers) == 1 and event.to != deal.winner:
            return f"the tribute goes to the 上游 {deal.winner}, not {event.to}", ("to_first", {"due": deal.winner})
        if len(deal.payers) == 2 and side_of(event.to) == side_of(event.seat):
            return f"the tribute goes to the winning side, not to {event.to}", ("to_winners", {})
        if deal.hands is not None:
            candidates = [c for c in deal.hands[event.seat] if c != wildcard(deal.level)]
            best = max(order_value(rank_of(c), deal.level) for c in candidates)
            if order_value(rank_of(event.card), deal.level) < best:
                highest = next(card_name(c) for c in sorted(candidates, reverse=True)
                               if order_value(rank_of(c), deal.level) == best)
                return f"{card_name(event.card)} is not {event.seat}'s highest card ({highest}) (T1)", (
                    "not_highest", {"highest": highest})
        return None

    def _check_double_down(self, deal: DealState, t: float) -> list[Verdict]:
        """T3: higher tribute to the 上游, lower to the partner; equal: each pays its 上家."""
        (p1, (_, c1)), (p2, (_, c2)) = deal.paid.items()
        v1, v2 = order_value(rank_of(c1), deal.level), order_value(rank_of(c2), deal.level)
        if v1 == v2:
            expected = {p1: previous_seat(p1), p2: previous_seat(p2)}
        else:
            high, low = (p1, p2) if v1 > v2 else (p2, p1)
            expected = {high: deal.winner, low: partner(deal.winner)}
        out = []
        for payer, (to, _card) in deal.paid.items():
            if to != expected[payer]:
                out.append(flag("T3", PenaltyLevel.WARNING, payer,
                                 f"{payer}'s tribute should have gone to {expected[payer]}, not {to}",
                                 t, claim_deal(deal), detail={"what": "tribute_to", "due": expected[payer], "to": to}))
        return out

    @handles(ev.Return)
    def _on_return(self, event: ev.Return) -> list[Verdict]:
        deal, records, moved = self._hand_over(event, "return", self._return_problem)
        if not moved:
            return records
        deal.returned.add(event.seat)
        if len(deal.returned) == len(deal.payers) == len(deal.paid):
            # T5: whoever paid the 上游 leads (equal double-down tributes may skip the 上游)
            leader = next((p for p, (to, _c) in deal.paid.items() if to == deal.winner), deal.winner)
            records += self._begin_play_after_tribute(deal, leader, event.t)
        return records

    def _return_problem(self, deal: DealState, event: ev.Return) -> Problem | None:
        received = {to: payer for payer, (to, _c) in deal.paid.items()}
        if event.seat not in received:
            return f"{event.seat} received no tribute, so returns nothing", ("received_none", {})
        if event.seat in deal.returned:
            return f"{event.seat} already returned a card", ("returned_already", {})
        if event.to != received[event.seat]:
            return f"{event.seat} returns to {received[event.seat]}, who paid it, not to {event.to}", (
                "return_to", {"due": received[event.seat]})
        rank = rank_of(event.card)
        if rank > ACE:
            return "a joker is never returned (T2)", ("joker", {})
        allowed = rank <= 8 and rank != deal.level
        if allowed:
            return None
        if deal.hands is not None:
            hand = deal.hands[event.seat]
            if any(rank_of(c) <= 8 and rank_of(c) != deal.level for c in hand):
                return f"{card_name(event.card)} is not a 2-10 non-level card, and {event.seat} holds some (T2)", (
                    "not_low", {"holds_low": True})
            lowest = min(order_value(rank_of(c), deal.level) for c in hand)
            if order_value(rank, deal.level) == lowest:
                return None
            return f"{card_name(event.card)} is not {event.seat}'s lowest card (T2)", ("not_lowest", {})
        return f"{card_name(event.card)} is not a 2-10 non-level card (T2; hands unknown, so no exception checked)", (
            "not_low", {"holds_low": None})
