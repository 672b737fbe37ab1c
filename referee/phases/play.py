"""Play (RULES.md P1-P7): turns, combinations that beat the table, rounds and 接风, and
X2's forbidden play (a violator's next turn is an automatic pass)."""

from __future__ import annotations

import copy
import dataclasses

from .. import events as ev
from ..events import PenaltyLevel
from ..cards import Card, card_name, cards_name, rank_name
from ..combos import CombType, Reading, default_reading
from ..doubt import SeenAgain, Weighing, is_doubtful, seen_again, weigh
from ..seats import SEATS, Seat, partner
from ..state import CameraRead, DealPhase, DealState, Standing
from ..verdicts import ClaimWindow, Flag, Review, ReviewReason, Settled, Verdict
from .base import Phase, Rejected, claim_deal, claim_round, flag, handles


def _p1(seat: Seat, t: float, window: ClaimWindow) -> Flag:
    return flag("P1", PenaltyLevel.WARNING, seat, f"{seat} must lead a combination and cannot pass", t, window,
                detail={"what": "must_lead"})


def _p4(severity: PenaltyLevel, seat: Seat, message: str, t: float, window: ClaimWindow, detail: dict) -> Flag:
    """Out of turn: a play is a violation, a pass or statement a warning."""
    return flag("P4", severity, seat, message, t, window, detail=detail)


def _p5(seat: Seat, message: str, t: float, window: ClaimWindow, detail: dict) -> Flag:
    return flag("P5", PenaltyLevel.VIOLATION, seat, message, t, window, detail=detail)


def _names(cards) -> list[str]:
    return [card_name(c) for c in cards]


def reading_detail(reading: Reading) -> dict:
    """A combination as data (its type, key rank and size), for a message's detail."""
    return {"type": reading.type.value, "rank": rank_name(reading.rank), "size": reading.size}


def _suspect_read(deal: DealState, event: ev.Play, readings: dict[str, list[str]], why: str,
                  detail: dict) -> Review:
    """One item about a camera read the deal makes impossible: the read is suspected, not the player."""
    return Review(ReviewReason.SUSPECT_READ, event.t, seat=event.seat, deal=deal.number,
                  cards=tuple(card_name(c) for c in event.cards), readings=readings, of=event.id,
                  message=f"{event.seat}'s cards read as {cards_name(event.cards)}: {why}: please confirm",
                  detail=detail)


def _seen_again(deal: DealState, event: ev.Play, weighing: Weighing, again: SeenAgain) -> Review:
    """One item naming every read that laid a face the read shows again: one of them is wrong."""
    earlier = "; ".join(f"{r.seat}: {cards_name(r.cards)}" for r in again.earlier)
    read = f"{event.seat}'s cards read as {cards_name(event.cards)}"
    named = [{"seat": r.seat, "at": r.t, "of": r.of, "cards": _names(r.cards)} for r in again.earlier]
    if again.faces:
        seen = {card_name(f): deal.played_faces.get(f, 0) + event.cards.count(f) for f in again.faces}
        shown = ", ".join(f"{face} {n} times" for face, n in seen.items())
        message = f"{read} would show {shown} in this deal"
        detail = {"what": "seen_again", "seen": seen, "earlier": named}
    else:
        message = f"{read} include {cards_name(again.laid)}, which {event.seat}'s earlier reads laid already"
        detail = {"what": "laid_again", "laid": _names(again.laid), "earlier": named}
    return Review(ReviewReason.SUSPECT_READ, event.t, seat=event.seat, deal=deal.number,
                  cards=tuple(_names(event.cards)), readings=weighing.readings(), of=event.id,
                  message=f"{message}: this read or an earlier one ({earlier}) is wrong; please confirm",
                  detail=detail)


class PlayRules(Phase):
    @handles(ev.Play)
    def _on_play(self, event: ev.Play) -> list[Verdict]:
        deal = self._deal(event)
        seat = event.seat
        doubtful = is_doubtful(event, self.confirmed)
        if not deal.active(seat):
            if not (doubtful and seat in deal.doubted):
                raise Rejected(f"{seat} has gone out and holds no cards")
            self._back_in(deal, seat, len(event.cards))
        if deal.phase == DealPhase.TRIBUTE:
            if deal.hands is None and not deal.paid and seat == deal.winner:
                records = self._begin_play_after_tribute(deal, seat, event.t)
                records.append(Review(ReviewReason.ANTI_TRIBUTE, event.t, deal=deal.number,
                                      message=f"{seat} led without a tribute: anti-tribute (T4) assumed, "
                                              "not checkable without the hands",
                                      detail={"what": "led_without_tribute", "leader": seat}))
                return records + self.apply(event)
            return self._clock_flags(event.t) + [_p4(
                PenaltyLevel.VIOLATION, seat, f"{seat} played before the tribute and return were finished", event.t,
                claim_deal(deal), {"what": "played_in_tribute"})]
        if deal.hands is not None and not doubtful:
            self._holds(deal, seat, event.cards)
        deal = self._follow_table(deal, seat)
        records = self._clock_flags(event.t)
        if doubtful:
            deal.read_by_camera.add(seat)
            return records + self._doubtful_play(deal, event)
        if deal.turn is not None and seat != deal.turn:
            return records + self._out_of_turn(deal, event, event.cards)
        impossible = self._impossible_play(deal, seat, event.cards, event.t)
        if impossible is not None:
            return records + [impossible] + self._stand(deal, seat, event.cards, event.t)
        if len(event.cards) > deal.counts[seat]:
            return records + [_p5(seat, f"{seat} laid {len(event.cards)} cards but holds only {deal.counts[seat]}",
                                  event.t, claim_round(deal),
                                  {"what": "more_than_held", "laid": len(event.cards), "holds": deal.counts[seat]})]
        reading = default_reading(event.cards, deal.level, deal.table, event.declared)
        if reading is None:
            message, detail = self._illegal(deal, event)
            return records + [_p5(seat, message, event.t, claim_round(deal), detail)] + \
                self._stand(deal, seat, event.cards, event.t, event.declared)
        records += self._missing_report(deal, event.t)
        if event.confidence is not None and event.confidence < self.ruleset.min_confidence and \
                event.id not in self.confirmed:
            records.append(Review(ReviewReason.LOW_CONFIDENCE, event.t, seat=seat, deal=deal.number,
                                  cards=tuple(card_name(c) for c in event.cards),
                                  message=f"read with confidence {event.confidence:.2f}: please confirm",
                                  detail={"what": "low_confidence", "confidence": event.confidence}))
        return records + self._lay(deal, seat, event.cards, reading, event.t)

    def _doubtful_play(self, deal: DealState, event: ev.Play) -> list[Verdict]:
        """A camera read the evidence alone does not back: weigh it against the deal first.

        An impossible read with a possible reading nearby is one ``suspect_read`` review
        (the read is suspected, not the player) and the deal goes on with the likeliest
        possible reading; a possible read below the confidence floor is settled silently
        when the context rules its alternatives out, and asked about only when it cannot.
        One misread raises at most one item: a read that fails only to beat a table that was
        itself read doubtfully suspects the two reads once, and not at all when the table's
        read is already in question. An impossible read with no possible reading nearby stands
        as a flagged play would (the next seat to act tells whether its cards went back) when
        the rules of play rule it out, since a breach looks just like that; when only what
        could be laid at all rules it out (a card the seat does not hold), cards were laid that
        the camera misread, so the play is laid as read, with no combination to beat, and
        whoever acts next is judged as after any play."""
        seat = event.seat
        records: list[Verdict] = []
        if deal.turn is not None and seat != deal.turn:
            unseen = self._passed_unseen(deal, seat, event.t)
            if unseen is None:
                return self._out_of_turn(deal, event, event.cards, doubt="raised")
            records.append(Settled(seat, deal.number, event.t, tuple(card_name(c) for c in event.cards),
                                   event.confidence if event.confidence is not None else 1.0,
                                   (f"{', '.join(unseen)} passed unseen: the table played on to {seat}",), event.id))
        weighing = weigh(deal, event, deal.table)
        read = weighing.read
        if read.possible:
            records += self._missing_report(deal, event.t)
            doubt = "read"
            if event.confidence is not None and event.confidence < self.ruleset.min_confidence:
                records.append(self._weighed(deal, event, weighing))
                doubt = "raised" if isinstance(records[-1], Review) else "read"
            return records + self._lay(deal, seat, event.cards, read.reading, event.t, doubt, event.id)
        if read.fails_to_beat and deal.table_doubt == "raised":  # the item about the table's read covers it
            return records + self._missing_report(deal, event.t) + \
                self._lay(deal, seat, event.cards, read.reading, event.t, "raised", event.id)
        again = seen_again(deal, seat, event, deal.table)
        if again is not None:
            records.append(_seen_again(deal, event, weighing, again))
            return records + self._missing_report(deal, event.t) + \
                self._lay(deal, seat, event.cards, again.judged.reading, event.t, "raised", event.id)
        settled = weighing.settled(self.ruleset.min_confidence)
        if settled is not None:
            taken, confidence, why = settled
            records.append(Settled(seat, deal.number, event.t, tuple(_names(taken.candidate.cards)), round(confidence, 4),
                                   (f"{cards_name(event.cards)} as read: {read.excluded_by}", *weighing.ruled_out(),
                                    f"taken as {cards_name(taken.candidate.cards)}: {why}"), event.id))
            return records + self._missing_report(deal, event.t) + \
                self._lay(deal, seat, taken.candidate.cards, taken.reading, event.t, "read", event.id)
        best = weighing.best()
        if best is None and read.fails_to_beat and deal.table_doubt == "read":
            deal.doubted.update((seat, deal.table_seat))
            deal.raise_table_read()  # the table's read is now in question too
            records.append(_suspect_read(
                deal, event, {"read": [card_name(c) for c in event.cards],
                              "table": [card_name(c) for c in deal.table_cards]},
                f"do not beat {cards_name(deal.table_cards)} as read from {deal.table_seat}: "
                "one of the two reads is suspect",
                {"what": "two_reads", "table": _names(deal.table_cards), "from": deal.table_seat}))
            return records + self._missing_report(deal, event.t) + \
                self._lay(deal, seat, event.cards, read.reading, event.t, "raised", event.id)
        taken = f"taken as {cards_name(best.candidate.cards)} ({best.candidate.label})" if best else \
            "no reading nearby is possible: taken as read"
        deal.doubted.add(seat)
        records.append(_suspect_read(deal, event, weighing.readings(), f"{read.excluded_by}; {taken}",
                                     {"what": "impossible_read",
                                      "taken": _names(best.candidate.cards) if best else None}))
        if best is None and not read.unlayable:  # a breach looks like this: the cards may go back
            return records + self._stand(deal, seat, event.cards, event.t, event.declared, "raised", event.id)
        laid = best or read  # what nobody could have laid is the camera's mistake: the cards stay laid
        return records + self._missing_report(deal, event.t) + \
            self._lay(deal, seat, laid.candidate.cards, laid.reading, event.t, "raised", event.id)

    @staticmethod
    def _back_in(deal: DealState, seat: Seat, cards: int) -> None:
        """A seat that a read in question took out plays or passes again: it was not out. It
        holds at least the cards it lays now (one, if it passes); it goes out again in its
        place if those are its last.
        The turns since went round it (or passed the lead to its partner) only because it
        was out, so the table's order is followed: it was its turn."""
        deal.out.remove(seat)
        deal.over_by_count_at = None
        deal.counts[seat] = max(deal.counts[seat], cards)
        deal.turn = seat

    def _passed_unseen(self, deal: DealState, seat: Seat, t: float) -> list[Seat] | None:
        """A camera play out of turn while others follow: the seats between the one due and
        ``seat`` passed where the camera saw no pass (a missed token), if they could have;
        their passes are applied and returned. ``None`` when they could not (the leader
        cannot pass; a round that would have ended)."""
        if deal.leading:
            return None
        skipped = []
        nxt = deal.turn
        while nxt != seat:
            if nxt == deal.table_seat or len(skipped) > 3:
                return None
            skipped.append(nxt)
            nxt = deal.next_active(nxt)
        for skipped_seat in skipped:
            self._pass_turn(deal, skipped_seat, t)
        return skipped if deal.turn == seat else None

    def _weighed(self, deal: DealState, event: ev.Play, weighing: Weighing) -> Verdict:
        """A possible read below the floor: settled by the context, or asked about.

        With the reader's alternatives listed (even none), its doubt about the faces is
        weighed apart from its doubt about how many cards it saw: the faces are settled when
        the read stays above the floor among the listed readings the deal leaves possible, or
        when every one of those plays exactly as the read does; a card missed or read too
        many changes the seat's count, which its reports and its going out check later.
        Without alternatives the unlisted mass counts against the read."""
        cards = tuple(card_name(c) for c in event.cards)
        if event.alternatives is None:
            after = round(weighing.posterior(weighing.read), 4)
            settled_by = weighing.ruled_out()
        else:
            after = round(weighing.face_posterior(), 4)
            alike = weighing.alike()
            settled_by = weighing.ruled_out() + self._alike(alike, weighing.read.reading) + (
                () if len(weighing.judged) > 1 and any(j.candidate.p is not None for j in weighing.judged[1:])
                else ("the reader saw no other face for these cards",))
            if alike:
                after = max(after, self.ruleset.min_confidence)
                for judged in alike:  # a face the read may have wrong does not count towards two of each
                    deal.doubt(set(event.cards) - set(judged.candidate.cards))
        if after >= self.ruleset.min_confidence:
            return Settled(event.seat, deal.number, event.t, cards, after, settled_by, event.id)
        shown = f"read with confidence {event.confidence:.2f}"
        if after != event.confidence:
            shown += f" ({after:.2f} once the deal rules out {len(weighing.ruled_out())} reading(s))"
        return Review(ReviewReason.LOW_CONFIDENCE, event.t, seat=event.seat, deal=deal.number, cards=cards,
                      readings=weighing.readings() if len(weighing.judged) > 1 else None, of=event.id,
                      message=f"{shown}: please confirm",
                      detail={"what": "low_confidence", "confidence": event.confidence,
                              **({"after": after, "ruled_out": len(weighing.ruled_out())}
                                 if after != event.confidence else {})})

    @staticmethod
    def _alike(alike: tuple, reading: Reading | None) -> tuple[str, ...]:
        if not alike or reading is None:
            return ()
        others = ", ".join(cards_name(j.candidate.cards) for j in alike)
        return (f"{others} would play alike ({reading.type.value}): the game does not tell them apart",)

    def _out_of_turn(self, deal: DealState, event: ev.Play, cards: tuple[Card, ...],
                     doubt: str | None = None) -> list[Verdict]:
        """P4: one flag; the play stands as laid until the table shows the cards went back."""
        flagged = _p4(PenaltyLevel.VIOLATION, event.seat,
                      f"{event.seat} played {cards_name(cards)} out of turn ({deal.turn} to play)",
                      event.t, claim_round(deal), {"what": "played_out_of_turn", "cards": _names(cards), "turn": deal.turn})
        if doubt:
            deal.doubted.add(event.seat)
        return [flagged] + self._stand(deal, event.seat, cards, event.t, event.declared, doubt, event.id)

    def _stand(self, deal: DealState, seat: Seat, cards: tuple[Card, ...], t: float,
               declared: CombType | None = None, doubt: str | None = None, of: str | None = None) -> list[Verdict]:
        """Lay a flagged play as the table shows it, keeping the deal without it in case the
        cards go back (:meth:`_follow_table`)."""
        before = copy.deepcopy(dataclasses.replace(deal, standing=None))
        due_before = deal.turn
        records = self._lay(deal, seat, cards, default_reading(cards, deal.level, None, declared), t, doubt, of)
        if deal.phase != DealPhase.OVER:
            deal.standing = Standing(seat, before, due_before)
        return records

    def _follow_table(self, deal: DealState, seat: Seat) -> DealState:
        """Settle a standing play by who acts next: the same seat again, or the seat that was
        due before it (and is not due after it), means the cards went back; anyone else, the
        play stood."""
        standing = deal.standing
        if standing is None:
            return deal
        if seat == standing.seat or (seat == standing.due_before and seat != deal.turn):
            self.session.deal = standing.before
            return standing.before
        deal.standing = None
        return deal

    @handles(ev.TakeBack)
    def _on_take_back(self, event: ev.TakeBack) -> list[Verdict]:
        """The watcher saw a seat's cards leave its area with no new play: a standing play
        goes back to the hand. A play that was not flagged stays played (P6: laid cards
        are played); the referee's records are not changed by a player tidying the area,
        nor by the cards of a deal's (or the session's) last play swept once it is over.
        A deal over by the counts that waits on a read in question is over when its last
        play is swept: had the count been wrong, the next seat would have acted. So is one
        whose last play's seat a read in question left holding cards, when that seat sweeps
        it with nobody acting and its going out would end the deal (:meth:`_last_play_went_out`)."""
        session = self.session
        deal = None if session is None or session.over else session.deal
        if deal is None or deal.phase == DealPhase.OVER:
            return []
        standing = deal.standing
        if standing is not None and standing.seat == event.seat:
            self.session.deal = standing.before
            return self._clock_flags(event.t)
        records = self._clock_flags(event.t)
        if self._end_waits(deal) or (event.seat == deal.table_seat and self._last_play_went_out(deal)):
            return records + self._end_as_the_table_shows(event.t)  # the last play swept with nobody acting
        return records

    @staticmethod
    def _illegal(deal: DealState, event: ev.Play) -> tuple[str, dict]:
        """Why a play as laid is illegal (P5), in words and as data."""
        laid, names = cards_name(event.cards), _names(event.cards)
        if default_reading(event.cards, deal.level, None, event.declared) is None:
            declared = f" as a {event.declared.value}" if event.declared else ""
            return (f"{event.seat} laid {laid}{declared}: not a combination (C4)",
                    {"what": "not_a_combination", "cards": names,
                     "declared": event.declared.value if event.declared else None})
        return (f"{event.seat} laid {laid}, which does not beat {cards_name(deal.table_cards)} ({deal.table})",
                {"what": "does_not_beat", "cards": names, "table": _names(deal.table_cards),
                 "reading": reading_detail(deal.table)})

    def _lay(self, deal: DealState, seat: Seat, cards: tuple[Card, ...], reading: Reading | None,
             t: float, doubt: str | None = None, of: str | None = None) -> list[Verdict]:
        """Put ``cards`` on the table as ``reading`` (``None``: no combination as read, so
        the next play is not judged against it) and give the turn on. ``doubt``: the cards
        are a camera read (the event ``of``), one nothing was raised about (``"read"``) or
        one in question (``"raised"``)."""
        records: list[Verdict] = []
        self._count_played(deal, cards)
        if deal.hands is not None:
            for card in cards:
                if card in deal.hands[seat]:
                    deal.hands[seat].remove(card)
        deal.counts[seat] = max(0, deal.counts[seat] - len(cards))
        deal.table, deal.table_cards, deal.table_seat, deal.passes = reading, cards, seat, 0
        deal.table_doubt = doubt
        if doubt is not None:
            deal.camera_reads.append(CameraRead(seat, t, of, cards, doubt == "raised"))
        if doubt == "raised":
            deal.doubt(cards)
        left = deal.counts[seat]
        if left == 0:
            deal.out.append(seat)
            records += self._check_deal_end(t)
            if deal.phase == DealPhase.OVER:
                return records
        elif left <= self.ruleset.report_threshold and seat not in deal.crossed:
            deal.crossed.add(seat)
            deal.report_due = seat
        records += self._advance(deal, deal.next_active(seat), t)
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
            if seat not in deal.doubted:
                raise Rejected(f"{seat} has gone out and cannot pass")
            leader = deal.turn
            self._back_in(deal, seat, 1)  # a seat that passes holds cards: a read in question took it out
            if deal.leading:  # the trick was taken as over without it: its pass was the trick's last
                deal.turn = leader
                return self._clock_flags(event.t)
        if deal.phase != DealPhase.TRIBUTE:
            deal = self._follow_table(deal, seat)
        records = self._clock_flags(event.t)
        if deal.phase == DealPhase.TRIBUTE or (deal.turn is not None and seat != deal.turn):
            return records + [_p4(PenaltyLevel.WARNING, seat, f"{seat} passed out of turn ({deal.turn or 'tribute'} due)",
                                  event.t, claim_round(deal), {"what": "passed_out_of_turn", "turn": deal.turn})]
        if deal.leading:
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
        deal.table_doubt = None
        deal.round += 1
        return self._advance(deal, leader, t)
