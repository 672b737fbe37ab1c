"""Play (RULES.md P1-P7): turns, combinations that beat the table, rounds and 接风, and
X2's forbidden play (a violator's next turn is an automatic pass)."""

from __future__ import annotations

from .. import events as ev
from ..cards import card_name, cards_name
from ..combos import Reading, default_reading
from ..seats import SEATS, Seat, partner
from ..state import DealState
from ..verdicts import ClaimWindow, Flag, Review, ReviewReason, Verdict
from .base import Phase, Rejected, claim_deal, claim_round, flag, handles


def _p1(seat: Seat, t: float, window: ClaimWindow) -> Flag:
    return flag("P1", "warning", seat, f"{seat} must lead a combination and cannot pass", t, window)


def _p4(severity: str, seat: Seat, message: str, t: float, window: ClaimWindow) -> Flag:
    """Out of turn: a play is a violation, a pass or statement a warning."""
    return flag("P4", severity, seat, message, t, window)


def _p5(seat: Seat, message: str, t: float, window: ClaimWindow) -> Flag:
    return flag("P5", "violation", seat, message, t, window)


class PlayRules(Phase):
    @handles(ev.Play)
    def _on_play(self, event: ev.Play) -> list[Verdict]:
        deal = self._deal(event)
        seat = event.seat
        if not deal.active(seat):
            raise Rejected(f"{seat} has gone out and holds no cards")
        if deal.phase == "tribute":
            if deal.hands is None and not deal.paid and seat == deal.winner:
                records = self._begin_play_after_tribute(deal, seat, event.t)
                records.append(Review(ReviewReason.ANTI_TRIBUTE, event.t, deal=deal.number,
                                      message=f"{seat} led without a tribute: anti-tribute (T4) assumed, "
                                              "not checkable without the hands"))
                return records + self.apply(event)
            return self._clock_flags(event.t) + [_p4(
                "violation", seat, f"{seat} played before the tribute and return were finished", event.t,
                claim_deal(deal))]
        if deal.hands is not None:
            self._holds(deal, seat, event.cards)
        records = self._clock_flags(event.t)
        if deal.turn is not None and seat != deal.turn:
            return records + [_p4("violation", seat,
                                  f"{seat} played {cards_name(event.cards)} out of turn ({deal.turn} to play)",
                                  event.t, claim_round(deal))]
        impossible = self._impossible_play(deal, seat, event.cards, event.t)
        if impossible is not None:
            return records + [impossible]
        if len(event.cards) > deal.counts[seat]:
            return records + [_p5(seat, f"{seat} laid {len(event.cards)} cards but holds only {deal.counts[seat]}",
                                  event.t, claim_round(deal))]
        reading = default_reading(event.cards, deal.level, deal.table, event.declared)
        if reading is None:
            return records + [_p5(seat, self._illegal_message(deal, event), event.t, claim_round(deal))]
        records += self._missing_report(deal, event.t)
        if event.confidence is not None and event.confidence < self.ruleset.min_confidence:
            records.append(Review(ReviewReason.LOW_CONFIDENCE, event.t, seat=seat, deal=deal.number,
                                  cards=tuple(card_name(c) for c in event.cards),
                                  message=f"read with confidence {event.confidence:.2f}: please confirm"))
        return records + self._lay(deal, seat, event, reading)

    @staticmethod
    def _illegal_message(deal: DealState, event: ev.Play) -> str:
        laid = cards_name(event.cards)
        if default_reading(event.cards, deal.level, None, event.declared) is None:
            declared = f" as a {event.declared.value}" if event.declared else ""
            return f"{event.seat} laid {laid}{declared}: not a combination (C4)"
        return f"{event.seat} laid {laid}, which does not beat {cards_name(deal.table_cards)} ({deal.table})"

    def _lay(self, deal: DealState, seat: Seat, event: ev.Play, reading: Reading) -> list[Verdict]:
        records: list[Verdict] = []
        self._count_played(deal, event.cards)
        if deal.hands is not None:
            for card in event.cards:
                deal.hands[seat].remove(card)
        deal.counts[seat] -= len(event.cards)
        deal.table, deal.table_cards, deal.table_seat, deal.passes = reading, event.cards, seat, 0
        left = deal.counts[seat]
        if left == 0:
            deal.out.append(seat)
            records += self._check_deal_end(event.t)
            if deal.phase == "over":
                return records
        elif left <= self.ruleset.report_threshold and seat not in deal.crossed:
            deal.crossed.add(seat)
            deal.report_due = seat
        records += self._advance(deal, deal.next_active(seat), event.t)
        return records

    def _advance(self, deal: DealState, seat: Seat, t: float) -> list[Verdict]:
        """Give the turn to ``seat``, applying X2 (a forbidden play is an automatic pass)."""
        if deal.forbidden == seat:
            deal.forbidden = None
            if deal.table is None:  # the violator should lead: the next player (other side) leads
                return self._advance(deal, deal.next_active(seat), t)
            return self._pass_turn(deal, seat, t)
        deal.turn = seat
        self._start_turn_clock(deal, seat, t)
        return []

    @handles(ev.Pass)
    def _on_pass(self, event: ev.Pass) -> list[Verdict]:
        deal = self._deal(event)
        seat = event.seat
        if not deal.active(seat):
            raise Rejected(f"{seat} has gone out and cannot pass")
        records = self._clock_flags(event.t)
        if deal.phase == "tribute" or (deal.turn is not None and seat != deal.turn):
            return records + [_p4("warning", seat, f"{seat} passed out of turn ({deal.turn or 'tribute'} due)",
                                  event.t, claim_round(deal))]
        if deal.table is None:
            return records + [_p1(seat, event.t, claim_round(deal))]
        records += self._missing_report(deal, event.t)
        return records + self._pass_turn(deal, seat, event.t)

    def _pass_turn(self, deal: DealState, seat: Seat, t: float) -> list[Verdict]:
        """P2-P3: a pass; when everyone else has passed the round ends (接风 if needed)."""
        deal.passes += 1
        others = sum(1 for s in SEATS if deal.active(s) and s != deal.table_seat)
        if deal.passes < others:
            return self._advance(deal, deal.next_active(seat), t)
        last = deal.table_seat
        if deal.active(last):
            leader = last
        elif deal.active(partner(last)):
            leader = partner(last)
        else:
            leader = deal.next_active(last)
        deal.table, deal.table_cards, deal.table_seat, deal.passes = None, (), None, 0
        deal.round += 1
        return self._advance(deal, leader, t)
