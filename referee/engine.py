"""The referee: a deterministic state machine over table events.

``Referee.feed(event) -> verdicts`` (:mod:`referee.verdicts`: flags, deal ends, session
results, rulings, reviews); ``records()`` gives them as the JSON Lines contract of
``guandan-ref replay``. A malformed or impossible event raises :class:`Rejected` (an
``EventError``): it is not accepted and changes nothing.

Each handler validates first (raising :class:`Rejected`) and mutates after, so a rejected
event never changes the state. Time arrives on the events; nothing here reads a clock.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable
from typing import Any

from . import events as ev
from . import snapshot
from .cards import ACE, BJ, Card, card_name, cards_name, rank_of, wildcard
from .combos import Reading, default_reading, order_value
from .rulesets import Ruleset, RulesetError, load_ruleset
from .scoring import deal_level, deal_outcome, level_name, table_score
from .seats import SEATS, Seat, Side, next_seat, other_side, partner, previous_seat, seats_of, side_of
from .state import Clock, DealState, SessionState
from .verdicts import (ClaimWindow, DealEnd, Dismissed, Flag, Rederived, Review, ReviewReason, Ruling,
                       SessionEnding, SessionResult, Verdict, Withdrawn)


class Rejected(ev.EventError):
    """An event that is well-formed but impossible now (no deal, time going backwards...)."""


def _flag(rule: str, severity: str, seat: Seat | None, message: str, at: float, claim_until: ClaimWindow,
          side: Side | None = None, due: float | None = None) -> Flag:
    return Flag(rule, severity, seat, side or (side_of(seat) if seat else None), message, at, claim_until, due)


_HANDLERS: dict[type, Callable[..., list[Verdict]]] = {}


def _handles(kind: type) -> Callable:
    """Register a handler for one event type (a plain dict: cheaper than singledispatch)."""

    def register(handler: Callable) -> Callable:
        _HANDLERS[kind] = handler
        return handler

    return register


class _Machine:
    """Session and deal state plus the handlers that move it."""

    def __init__(self, ruleset: Ruleset) -> None:
        self.ruleset = ruleset
        self.session: SessionState | None = None
        self.last_t: float | None = None

    # ----------------------------------------------------------------- helpers
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
    def _claim_round(deal: DealState) -> ClaimWindow:
        return ClaimWindow(deal=deal.number, round=deal.round)

    @staticmethod
    def _claim_deal(deal: DealState) -> ClaimWindow:
        return ClaimWindow(deal=deal.number)

    def _clock_flags(self, t: float) -> list[Verdict]:
        """K1-K4: a limit plus the referee's countdown passed: one warning per clock."""
        deal = self.session.deal if self.session else None
        if deal is None or deal.phase == "over":
            return []
        out = []
        grace = self.ruleset.countdown_seconds
        for clock in deal.clocks.values():
            if not clock.flagged and t > clock.start + clock.limit + grace:
                clock.flagged = True
                who = clock.seat or "the leader"
                out.append(_flag(
                    clock.rule, "warning", clock.seat,
                    f"{who} took over {clock.limit:g} s (+{grace:g} s countdown) to {clock.what}",
                    t, self._claim_round(deal), due=clock.start + clock.limit + grace))
        return out

    def _start_turn_clock(self, deal: DealState, seat: Seat | None, t: float, first_lead: bool = False) -> None:
        deal.clocks.pop("turn", None)
        if first_lead:
            deal.clocks["turn"] = Clock(seat, t, self.ruleset.lead_seconds, "K2", "lead the deal")
        else:
            deal.clocks["turn"] = Clock(seat, t, self.ruleset.follow_seconds, "K3", "play or pass")

    def _missing_report(self, deal: DealState, t: float) -> list[Verdict]:
        """R1: the next play or pass came before the due report."""
        seat = deal.report_due
        if seat is None:
            return []
        deal.report_due = None
        return [_flag("R1", "warning", seat,
                      f"{seat} did not report the remaining {deal.counts[seat]} cards after the play",
                      t, self._claim_round(deal))]

    # ----------------------------------------------------------------- dispatch
    def apply(self, event: ev.Event) -> list[Verdict]:
        """Apply one parsed event: the single place where events change the state."""
        return _HANDLERS[type(event)](self, event)

    @_handles(ev.Tick)
    def _on_tick(self, event: ev.Tick) -> list[Verdict]:
        return self._clock_flags(event.t)

    @_handles(ev.SessionStart)
    def _on_session_start(self, event: ev.SessionStart) -> list[Verdict]:
        if self.session is not None and not self.session.over:
            raise Rejected("a session is already in progress at this table (session_end first)")
        ruleset = self.ruleset
        if event.ruleset and event.ruleset != ruleset.name:
            try:
                ruleset = load_ruleset(event.ruleset)
            except RulesetError as exc:
                raise Rejected(f"session_start.ruleset: {exc}") from None
            self.ruleset = ruleset
        self.session = SessionState(ruleset=ruleset, teams=dict(event.teams), started_at=event.t)
        return []

    @_handles(ev.Arrival)
    def _on_arrival(self, event: ev.Arrival) -> list[Verdict]:
        session = self._session(event)
        minutes = event.minutes_late
        if minutes <= 0:
            return []
        if minutes > 10:
            severity, what = "loss", "forfeits the round"
        elif minutes > 5:
            severity = "foul"
            what = ("gives the opponents deal 1 with +3" if session.ruleset.lateness == "friendly"
                    else "is a foul")
        else:
            severity, what = "warning", "is a warning"
        return [_flag("K5", severity, None, f"{event.side} arrived {minutes:g} min late: {what}",
                      event.t, ClaimWindow(session=True), side=event.side)]

    @_handles(ev.DealStart)
    def _on_deal_start(self, event: ev.DealStart) -> list[Verdict]:
        session = self._session(event)
        if session.deal is not None and session.deal.phase != "over":
            raise Rejected(f"deal {session.deal.number} is still in progress")
        number = session.deals_played + 1
        if event.deal and event.deal != number:
            raise Rejected(f"deal_start says deal {event.deal}, but the next deal is {number}")
        if event.hands is not None and set(event.hands) != set(SEATS):
            raise Rejected(f"deal_start.hands must give all four seats, got {sorted(event.hands)}")
        level = deal_level(session.levels, session.level_side)
        hands = {s: list(c) for s, c in event.hands.items()} if event.hands is not None else None
        deal = DealState(number=number, level=level, started_at=event.t, hands=hands)
        if hands is not None:
            deal.counts = {s: len(c) for s, c in hands.items()}
        session.deal = deal
        records = self._check_deck(deal, event.t)
        last = session.last_order
        if number == 1 or last is None or session.no_tribute:
            named = None if number == 1 or last is None else session.next_leader
            leader = named or event.first_leader  # T5/X3: the violator's 下家, else as announced
            session.no_tribute = False
            deal.turn = leader
            self._start_turn_clock(deal, leader, event.t, first_lead=True)
            return records
        deal.winner = last[0]
        double_down = side_of(last[0]) == side_of(last[1])
        deal.payers = (last[2], last[3]) if double_down else (last[3],)
        if hands is not None and sum(hands[p].count(BJ) for p in deal.payers) >= 2:
            return records + self._begin_play_after_tribute(deal, last[0], event.t, anti=True)
        deal.phase = "tribute"
        for payer in deal.payers:
            deal.clocks[f"tribute:{payer}"] = Clock(payer, event.t, self.ruleset.tribute_seconds, "K1", "pay the tribute")
        return records

    def _check_deck(self, deal: DealState, t: float) -> list[Verdict]:
        """D3: 27 cards each, and a 108-card deck (each face twice)."""
        if deal.hands is None:
            return []
        out = []
        for seat in SEATS:
            if len(deal.hands[seat]) != 27:
                out.append(_flag("D3", "foul", seat, f"{seat} holds {len(deal.hands[seat])} cards after drawing, not 27",
                                 t, self._claim_deal(deal)))
        faces = Counter(c for hand in deal.hands.values() for c in hand)
        extra = sorted(card_name(c) for c, n in faces.items() if n > 2)
        total = sum(faces.values())
        if extra or total != 108:
            detail = f"{total} cards" + (f"; more than two of {', '.join(extra)}" if extra else "")
            out.append(_flag("D3", "warning", None, f"the deck is wrong ({detail}): replace it", t,
                             self._claim_deal(deal), side=None))
        return out

    def _begin_play_after_tribute(self, deal: DealState, leader: Seat, t: float, anti: bool = False) -> list[Verdict]:
        deal.phase = "play"
        deal.turn = leader
        for key in [k for k in deal.clocks if k != "turn"]:
            del deal.clocks[key]
        self._start_turn_clock(deal, leader, t, first_lead=True)
        if anti:
            return [Review(ReviewReason.ANTI_TRIBUTE, t, deal=deal.number,
                           message=f"anti-tribute (T4): the paying side holds both big jokers; {leader} leads")]
        return []

    # ----------------------------------------------------------------- tribute
    def _hand_over(self, event: ev.Tribute, what: str, problem_of: Callable[[DealState, ev.Tribute], str | None]) -> tuple[DealState, list[Verdict], bool]:
        """What a tribute and a return share: checks, the clock, then the card moves (T6).

        Returns the deal, the records so far and whether the card was handed over."""
        deal = self._deal(event)
        if deal.phase != "tribute":
            raise Rejected(f"no {what} is due now (deal {deal.number} is in play)")
        self._holds(deal, event.seat, [event.card])
        problem = problem_of(deal, event)
        records = self._clock_flags(event.t)
        if problem:
            records.append(_flag("T6", "warning", event.seat, problem + ": take it back and redo", event.t,
                                 self._claim_deal(deal)))
            return deal, records, False
        self._transfer(deal, event.seat, event.to, event.card)
        deal.clocks.pop(f"{what}:{event.seat}", None)
        return deal, records, True

    @_handles(ev.Tribute)
    def _on_tribute(self, event: ev.Tribute) -> list[Verdict]:
        deal, records, moved = self._hand_over(event, "tribute", self._tribute_problem)
        if not moved:
            return records
        deal.paid[event.seat] = (event.to, event.card)
        if deal.hands is None:
            records.append(Review(ReviewReason.UNCHECKED, event.t, seat=event.seat, deal=deal.number,
                                  message=f"T1 not checked: without the hands nobody can tell "
                                          f"whether {card_name(event.card)} is {event.seat}'s highest card"))
        deal.clocks[f"return:{event.to}"] = Clock(event.to, event.t, self.ruleset.return_seconds, "K1", "return a card")
        if len(deal.paid) == len(deal.payers) and len(deal.payers) == 2:
            records += self._check_double_down(deal, event.t)
        return records

    def _tribute_problem(self, deal: DealState, event: ev.Tribute) -> str | None:
        if event.seat not in deal.payers:
            return f"{event.seat} owes no tribute (payers: {', '.join(deal.payers)})"
        if event.seat in deal.paid:
            return f"{event.seat} already paid the tribute"
        if event.card == wildcard(deal.level):
            return f"{card_name(event.card)} is a heart level card, never a tribute (T1)"
        if len(deal.payers) == 1 and event.to != deal.winner:
            return f"the tribute goes to the 上游 {deal.winner}, not {event.to}"
        if len(deal.payers) == 2 and side_of(event.to) == side_of(event.seat):
            return f"the tribute goes to the winning side, not to {event.to}"
        if deal.hands is not None:
            candidates = [c for c in deal.hands[event.seat] if c != wildcard(deal.level)]
            best = max(order_value(rank_of(c), deal.level) for c in candidates)
            if order_value(rank_of(event.card), deal.level) < best:
                highest = next(card_name(c) for c in sorted(candidates, reverse=True)
                               if order_value(rank_of(c), deal.level) == best)
                return f"{card_name(event.card)} is not {event.seat}'s highest card ({highest}) (T1)"
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
                out.append(_flag("T3", "warning", payer,
                                 f"{payer}'s tribute should have gone to {expected[payer]}, not {to}",
                                 t, self._claim_deal(deal)))
        return out

    @_handles(ev.Return)
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

    def _return_problem(self, deal: DealState, event: ev.Return) -> str | None:
        received = {to: payer for payer, (to, _c) in deal.paid.items()}
        if event.seat not in received:
            return f"{event.seat} received no tribute, so returns nothing"
        if event.seat in deal.returned:
            return f"{event.seat} already returned a card"
        if event.to != received[event.seat]:
            return f"{event.seat} returns to {received[event.seat]}, who paid it, not to {event.to}"
        rank = rank_of(event.card)
        if rank > ACE:
            return "a joker is never returned (T2)"
        allowed = rank <= 8 and rank != deal.level
        if allowed:
            return None
        if deal.hands is not None:
            hand = deal.hands[event.seat]
            if any(rank_of(c) <= 8 and rank_of(c) != deal.level for c in hand):
                return f"{card_name(event.card)} is not a 2-10 non-level card, and {event.seat} holds some (T2)"
            lowest = min(order_value(rank_of(c), deal.level) for c in hand)
            if order_value(rank, deal.level) == lowest:
                return None
            return f"{card_name(event.card)} is not {event.seat}'s lowest card (T2)"
        return f"{card_name(event.card)} is not a 2-10 non-level card (T2; hands unknown, so no exception checked)"

    def _holds(self, deal: DealState, seat: Seat, cards) -> None:
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

    # ----------------------------------------------------------------- play
    @_handles(ev.Play)
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
            return self._clock_flags(event.t) + [_flag(
                "P4", "violation", seat, f"{seat} played before the tribute and return were finished",
                event.t, self._claim_deal(deal))]
        if deal.hands is not None:
            self._holds(deal, seat, event.cards)
        records = self._clock_flags(event.t)
        if deal.turn is not None and seat != deal.turn:
            return records + [_flag("P4", "violation", seat,
                                    f"{seat} played {cards_name(event.cards)} out of turn ({deal.turn} to play)",
                                    event.t, self._claim_round(deal))]
        if len(event.cards) > deal.counts[seat]:
            return records + [_flag("P5", "violation", seat,
                                    f"{seat} laid {len(event.cards)} cards but holds only {deal.counts[seat]}",
                                    event.t, self._claim_round(deal))]
        reading = default_reading(event.cards, deal.level, deal.table, event.declared)
        if reading is None:
            return records + [_flag("P5", "violation", seat, self._illegal_message(deal, event), event.t,
                                    self._claim_round(deal))]
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
        records = []
        for card in event.cards:
            deal.played_faces[card] = deal.played_faces.get(card, 0) + 1
            if deal.played_faces[card] == 3:
                records.append(_flag("D3", "warning", seat,
                                     f"{card_name(card)} was played a third time in this deal (two decks hold two)",
                                     event.t, self._claim_deal(deal)))
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

    @_handles(ev.Pass)
    def _on_pass(self, event: ev.Pass) -> list[Verdict]:
        deal = self._deal(event)
        seat = event.seat
        if not deal.active(seat):
            raise Rejected(f"{seat} has gone out and cannot pass")
        records = self._clock_flags(event.t)
        if deal.phase == "tribute" or (deal.turn is not None and seat != deal.turn):
            return records + [_flag("P4", "warning", seat, f"{seat} passed out of turn ({deal.turn or 'tribute'} due)",
                                    event.t, self._claim_round(deal))]
        if deal.table is None:
            return records + [_flag("P1", "warning", seat, f"{seat} must lead a combination and cannot pass",
                                    event.t, self._claim_round(deal))]
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

    # ----------------------------------------------------------------- reporting
    @_handles(ev.Report)
    def _on_report(self, event: ev.Report) -> list[Verdict]:
        deal = self._deal(event)
        seat = event.seat
        records = self._clock_flags(event.t)
        if seat in deal.reported:
            return records + [_flag("R2", "warning", seat, f"{seat} reported the remaining cards again",
                                    event.t, self._claim_round(deal))]
        if deal.report_due == seat:
            deal.report_due = None
        deal.reported.add(seat)
        if event.count is not None and event.count != deal.counts[seat]:
            records.append(_flag("R1", "warning", seat,
                                 f"{seat} reported {event.count} cards but holds {deal.counts[seat]}",
                                 event.t, self._claim_round(deal)))
        return records

    @_handles(ev.AskCount)
    def _on_ask_count(self, event: ev.AskCount) -> list[Verdict]:
        deal = self._deal(event)
        records = self._clock_flags(event.t)
        if event.of in deal.reported:
            records.append(_flag("R2", "warning", event.seat,
                                 f"{event.seat} asked for {event.of}'s count after it was reported",
                                 event.t, self._claim_round(deal)))
        return records

    @_handles(ev.Conflict)
    def _on_conflict(self, event: ev.Conflict) -> list[Verdict]:
        self._session(event)
        return self._clock_flags(event.t) + [Review(
            ReviewReason.RECOGNITION_CONFLICT, event.t, seat=event.seat, readings=event.readings,
            message=f"the sources disagree on {event.seat}'s play area: confirm the play or correct it")]

    @_handles(ev.Fault)
    def _on_fault(self, event: ev.Fault) -> list[Verdict]:
        """A camera or reader fault: a human looks; the game state is unchanged."""
        deal = self.session.deal if self.session else None
        return [Review(ReviewReason.FAULT, event.t, seat=event.seat, source=event.source,
                       deal=deal.number if deal is not None else None,
                       message=f"{event.source} fault: {event.message}: its reads cannot be trusted until checked")]

    @_handles(ev.DeckAnomaly)
    def _on_deck_anomaly(self, event: ev.DeckAnomaly) -> list[Verdict]:
        """D3 from an RFID deck check (a duplicate tag, a stranger's card, a 109th card)."""
        session = self._session(event)
        deal = session.deal
        window = self._claim_deal(deal) if deal is not None else ClaimWindow(session=True)
        return self._clock_flags(event.t) + [_flag("D3", "warning", event.seat, event.message, event.t, window)]

    # ----------------------------------------------------------------- deal and session end
    def _check_deal_end(self, t: float) -> list[Verdict]:
        deal = self.session.deal
        out = deal.out
        both_out = any(all(s in out for s in seats_of(side)) for side in ("NS", "EW"))
        if len(out) < 3 and not both_out:
            return []
        rest = sorted((s for s in SEATS if s not in out), key=lambda s: (deal.counts[s], SEATS.index(s)))
        return self._end_deal(tuple(out) + tuple(rest), t)

    def _end_deal(self, order: tuple[Seat, ...], t: float, foul_side: Side | None = None) -> list[Verdict]:
        session = self.session
        deal = session.deal
        deal.phase = "over"
        deal.clocks.clear()
        before = dict(session.levels)
        outcome = deal_outcome(order, session.levels, session.level_side, session.a_failures,
                               session.ruleset.a_pass_needs_second, session.ruleset.a_reset_after)
        session.levels, session.a_failures = outcome.levels, outcome.a_failures
        session.level_side = outcome.winner
        session.deals_played += 1
        session.last_order = order
        records: list[Verdict] = [DealEnd(
            deal.number, tuple(order), {outcome.winner: session.levels[outcome.winner] - before[outcome.winner]},
            {side: level_name(v) for side, v in session.levels.items()},
            side_of(order[0]) == side_of(order[1]), t, foul=foul_side)]
        if outcome.passed_a:
            return records + self._session_result(outcome.winner, SessionEnding.PASSED_A, t)
        if session.deciding_deal:
            return records + self._session_result(outcome.winner, SessionEnding.DECIDING_DEAL, t)
        elapsed_min = (t - session.started_at) / 60
        limit = session.ruleset.session_minutes - session.ruleset.no_new_deal_minutes
        if session.deals_played >= session.ruleset.max_deals or elapsed_min >= limit:
            records += self._time_up(t, SessionEnding.DEALS if session.deals_played >= session.ruleset.max_deals
                                     else SessionEnding.TIME)
        return records

    def _time_up(self, t: float, reason: SessionEnding) -> list[Verdict]:
        """W1: higher level wins; equal levels: one more deal decides."""
        levels = self.session.levels
        if levels["NS"] == levels["EW"]:
            if self.session.deciding_deal:
                return self._session_result(None, reason, t)
            self.session.deciding_deal = True
            return [Review(ReviewReason.DECIDING_DEAL, t,
                           message="the round is over at equal levels: one more deal decides (W1)")]
        return self._session_result("NS" if levels["NS"] > levels["EW"] else "EW", reason, t)

    def _session_result(self, winner: Side | None, reason: SessionEnding, t: float,
                        score: dict | None = None) -> list[Verdict]:
        session = self.session
        session.over = True
        if session.deal is not None:
            session.deal.phase = "over"
        d, points = table_score(session.levels, winner)
        return [SessionResult(winner, reason, {side: level_name(v) for side, v in session.levels.items()},
                              d, score or points, dict(session.teams), t)]

    @_handles(ev.SessionEnd)
    def _on_session_end(self, event: ev.SessionEnd) -> list[Verdict]:
        session = self._session(event)
        if session.deal is not None and session.deal.phase != "over":
            raise Rejected(f"deal {session.deal.number} is still in progress: finish it first (W2)")
        return self._time_up(event.t, SessionEnding.SESSION_END)

    # ----------------------------------------------------------------- penalties
    @_handles(ev.Penalty)
    def _on_penalty(self, event: ev.Penalty) -> list[Verdict]:
        session = self._session(event)
        counts = session.penalties[event.side]
        level, escalated = event.level, []
        for lower, higher in (("warning", "violation"), ("violation", "foul"), ("foul", "loss")):
            if level == lower:
                counts[lower] += 1
                if counts[lower] >= 2:
                    counts[lower] = 0
                    escalated.append(f"2nd {lower}")
                    level = higher
        records: list[Verdict] = [Ruling(event.side, event.seat, event.rule, event.level, level, tuple(escalated),
                                         event.by, event.t, dict(counts))]
        deal = session.deal
        in_play = deal is not None and deal.phase != "over"
        if level == "violation" and event.seat and in_play and deal.phase == "play":
            deal.forbidden = event.seat
            if deal.turn == event.seat:
                records += self._advance(deal, event.seat, event.t)
        elif level == "foul":
            session.no_tribute = True
            session.next_leader = next_seat(event.seat) if event.seat else None
            if not in_play:
                # Between deals (a late arrival, K5): the coming deal is the one the foul loses.
                deal = DealState(number=session.deals_played + 1, started_at=event.t, hands=None,
                                 level=deal_level(session.levels, session.level_side))
                session.deal = deal
            winners = seats_of(other_side(event.side))
            first = [s for s in deal.out if s in winners]
            order = tuple(first + [s for s in winners if s not in first]) + seats_of(event.side)
            records += self._end_deal(order, event.t, foul_side=event.side)
        elif level == "loss":
            winner = other_side(event.side)
            if event.rule == "K5":
                records += self._session_result(winner, SessionEnding.FORFEIT, event.t, score={winner: 17, event.side: 0})
            else:
                gap = max(4, session.levels[winner] - session.levels[event.side])
                session.levels[winner] = session.levels[event.side] + gap
                records += self._session_result(winner, SessionEnding.LOSS, event.t)
        return records


class Referee:
    """One table's referee: feed it events, read back its verdicts.

    It keeps the accepted events (the log) so that a ``correction`` can replace one and
    re-derive everything after it; ``snapshot()``/``restore()`` make reopening a long
    table cheap. A rejected event raises :class:`referee.events.EventError` (the reason)
    and changes nothing.
    """

    def __init__(self, ruleset: Ruleset | None = None) -> None:
        self.ruleset = ruleset or load_ruleset("competition")
        self._machine = _Machine(self.ruleset)
        self._log: list[ev.Event] = []
        self._ids: dict[str, ev.Event] = {}
        self._verdicts: list[Verdict] = []
        self._received: list[dict] = []  # every accepted event as received: what a snapshot holds

    @property
    def state(self) -> SessionState | None:
        return self._machine.session

    @property
    def log(self) -> tuple[ev.Event, ...]:
        return tuple(self._log)

    def verdicts(self) -> list[Verdict]:
        """Everything derived so far, typed."""
        return list(self._verdicts)

    def records(self) -> list[dict]:
        """Everything derived so far as JSON records (the ``replay`` contract)."""
        return [v.to_json() for v in self._verdicts]

    def feed(self, obj: dict | ev.Event) -> list[Verdict]:
        """Validate and apply one event; returns what it derives, or raises ``EventError``."""
        event = obj if isinstance(obj, ev.Event) else ev.parse_event(obj)
        if event.id is not None and event.id in self._ids:
            if self._ids[event.id] == event:
                return []  # a resend of an accepted event
            raise Rejected(f"event id {event.id!r} was already used for another event")
        if self._machine.last_t is not None and event.t < self._machine.last_t:
            raise Rejected(f"time goes backwards: t={event.t:g} after t={self._machine.last_t:g}")
        if isinstance(event, ev.Correction):
            verdicts = self._correct(event)
        elif isinstance(event, ev.Dismiss):
            verdicts = [self._dismiss(event)]
            self._accept(event)
        else:
            verdicts = self._machine.apply(event)
            self._accept(event)
        self._verdicts += verdicts
        self._received.append(event.to_json())
        return verdicts

    def _accept(self, event: ev.Event) -> None:
        self._log.append(event)
        self._machine.last_t = event.t
        if event.id is not None:
            self._ids[event.id] = event

    def _dismiss(self, event: ev.Dismiss) -> Dismissed:
        """A referee dismisses a standing flag, named by ``(rule, seat, at)``."""
        key = (event.rule, event.seat, event.at)
        if key not in self._standing_flags():
            raise Rejected(f"dismiss: no standing flag {event.rule} of {event.seat or 'nobody'} at t={event.at:g}")
        return Dismissed(event.rule, event.seat, event.at, event.reason, event.by, event.t)

    def _standing_flags(self) -> set[tuple]:
        """The keys of flags raised and neither withdrawn nor dismissed."""
        keys = {v.key for v in self._verdicts if isinstance(v, Flag)}
        return keys - {(v.rule, v.seat, v.at) for v in self._verdicts if isinstance(v, (Withdrawn, Dismissed))}

    def _correct(self, correction: ev.Correction) -> list[Verdict]:
        """Replace the event ``correction.of`` and re-derive everything from the start."""
        if correction.of not in self._ids:
            raise Rejected(f"correction of unknown event id {correction.of!r}")
        original = self._ids[correction.of]
        # A correction fixes what was read, not when: the replacement keeps the original's time.
        replacement = dataclasses.replace(correction.event, t=original.t, id=original.id)
        fresh = Referee(self.ruleset)
        for event in self._log:
            if isinstance(event, ev.Correction):
                fresh._accept(event)  # already folded into the log
            else:
                try:
                    fresh.feed(replacement if event.id == correction.of else event)
                except ev.EventError:
                    pass
        self._machine, self._verdicts, self._log, self._ids = fresh._machine, fresh._verdicts, fresh._log, fresh._ids
        self._accept(correction)
        return [Rederived(correction.of, correction.by, correction.t)]

    def snapshot(self) -> bytes:
        """Canonical JSON of the ruleset and the accepted events (:mod:`referee.snapshot`)."""
        return snapshot.dumps(self.ruleset, self._received)

    @classmethod
    def restore(cls, blob: bytes) -> Referee:
        """The referee a snapshot describes; raises ``SnapshotError`` (a ``ValueError``)."""
        return snapshot.restore(blob, cls)


def replay(events, ruleset: Ruleset | None = None) -> list[Verdict]:
    """All verdicts derived from an iterable of events (raises on the first rejected one)."""
    referee = Referee(ruleset)
    out: list[Verdict] = []
    for event in events:
        out += referee.feed(event)
    return out
