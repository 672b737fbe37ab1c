"""The deck (RULES.md D3): 27 cards each, 108 in all, each face twice (also among the cards
played in a deal); RFID deck checks."""

from __future__ import annotations

from .. import events as ev
from ..events import PenaltyLevel
from ..cards import COPIES, DECK_SIZE, Card, card_name, over_copies
from ..seats import SEATS, Seat, Side
from ..state import DealState
from ..verdicts import ClaimWindow, Flag, Verdict
from .base import Phase, claim_deal, flag, handles


def _d3(severity: PenaltyLevel, seat: Seat | None, message: str, t: float, window: ClaimWindow,
        side: Side | None = None, detail: dict | None = None) -> Flag:
    return flag("D3", severity, seat, message, t, window, side=side, detail=detail)


class DeckRules(Phase):
    def _check_deck(self, deal: DealState, t: float) -> list[Verdict]:
        """D3: 27 cards each (a wrong hand is a foul), and a 108-card deck (each face twice)."""
        if deal.hands is None:
            return []
        out = []
        for seat in SEATS:
            if len(deal.hands[seat]) != 27:
                out.append(_d3(PenaltyLevel.FOUL, seat, f"{seat} holds {len(deal.hands[seat])} cards after drawing, not 27",
                               t, claim_deal(deal), detail={"what": "hand_size", "count": len(deal.hands[seat])}))
        cards = [c for hand in deal.hands.values() for c in hand]
        extra = sorted(card_name(c) for c in over_copies(cards))
        total = len(cards)
        if extra or total != DECK_SIZE:
            detail = f"{total} cards" + (f"; more than two of {', '.join(extra)}" if extra else "")
            out.append(_d3(PenaltyLevel.WARNING, None, f"the deck is wrong ({detail}): replace it", t, claim_deal(deal),
                           detail={"what": "deck_wrong", "total": total, "extra": extra}))
        return out

    def _impossible_play(self, deal: DealState, seat: Seat, cards: tuple[Card, ...], t: float) -> Flag | None:
        """D3: a play that would show a face more often in this deal than two decks hold.

        Such a read is a misread or a card from another deck, never a bomb: the play is not
        judged; it stands as laid while the table plays on (:meth:`PlayRules._stand`)."""
        seen: dict[Card, int] = {}
        for card in cards:  # a plain loop: this runs on every play
            seen[card] = seen.get(card, deal.played_faces.get(card, 0)) + 1
        over = sorted(card for card, n in seen.items() if n > COPIES)
        if not over:
            return None
        shown = ", ".join(f"{card_name(c)} {seen[c]} times" for c in over)
        return _d3(PenaltyLevel.WARNING, seat, f"{seat}'s play would show {shown} in this deal; two decks hold two of each "
                                    "(a misread, or a card from another deck): not judged", t, claim_deal(deal),
                   detail={"what": "too_many_copies", "seen": {card_name(c): seen[c] for c in over}})

    @staticmethod
    def _count_played(deal: DealState, cards: tuple[Card, ...]) -> None:
        for card in cards:
            deal.played_faces[card] = deal.played_faces.get(card, 0) + 1

    @handles(ev.DeckAnomaly)
    def _on_deck_anomaly(self, event: ev.DeckAnomaly) -> list[Verdict]:
        """D3 from an RFID deck check (a duplicate tag, a stranger's card, a 109th card)."""
        session = self._session(event)
        deal = session.deal
        window = claim_deal(deal) if deal is not None else ClaimWindow(session=True)
        return self._clock_flags(event.t) + [_d3(PenaltyLevel.WARNING, event.seat, event.message, event.t, window,
                                                 detail={"what": "deck_anomaly", "tags": list(event.tags)})]
