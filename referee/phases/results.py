"""Deal and session results: P7's finishing order, levels (U1-U3), the end of a round
(W1-W2) and its 28-point score (S1), from the pure functions of :mod:`referee.scoring`."""

from __future__ import annotations

from .. import events as ev
from ..scoring import DealOutcome, deal_outcome, level_name, table_score
from ..seats import SEATS, Seat, Side, seats_of, side_of
from ..state import DealPhase, DealState
from ..verdicts import DealEnd, Review, ReviewReason, SessionEnding, SessionResult, Verdict
from .base import Phase, Rejected, handles


def _finishing_order(deal: DealState) -> tuple[Seat, ...]:
    """P7: those out in their order, then the rest by the cards they hold."""
    rest = sorted((s for s in SEATS if s not in deal.out), key=lambda s: (deal.counts[s], SEATS.index(s)))
    return tuple(deal.out) + tuple(rest)


def _over_by_count(deal: DealState) -> bool:
    """P7: three seats, or both of a side, are out."""
    return _all_out(deal.out)


def _all_out(out: list[Seat]) -> bool:
    return len(out) >= 3 or any(all(s in out for s in seats_of(side)) for side in ("NS", "EW"))


class ResultRules(Phase):
    def _check_deal_end(self, t: float) -> list[Verdict]:
        """P7: the deal ends once three seats, or both of a side, are out. Not yet when a seat
        is out by a count that rests on a read in question and another deal would follow: a
        card read too many takes a seat out early, and the table then plays on, which brings
        it back in (``_follow_table``); if the table sweeps the last play away with nobody
        acting, or deals again, the deal ends as it showed (``_end_as_the_table_shows``), in
        the same order as now."""
        deal = self.session.deal
        if not _over_by_count(deal):
            return []
        order = _finishing_order(deal)
        if self._end_waits(deal) and not self._ends_session(order, t):
            deal.over_by_count_at = t
            return []
        return self._end_deal(order, t)

    @staticmethod
    def _end_waits(deal: DealState) -> bool:
        """The deal is over by the counts, but one of them rests on a read in question, so it
        waits for the table (:meth:`_check_deal_end`)."""
        return _over_by_count(deal) and bool(deal.doubted.intersection(deal.out))

    def _ends_session(self, order: tuple[Seat, ...], t: float) -> bool:
        """Whether a deal ending in ``order`` at ``t`` would end the session (A passed, the
        deciding deal, the deal limit or the time): nothing would follow to show otherwise."""
        session = self.session
        return (self._outcome(order).passed_a or session.deciding_deal
                or self._round_up(session.deals_played + 1, t) is not None)

    def _outcome(self, order: tuple[Seat, ...]) -> DealOutcome:
        """U1-U3: the levels after a deal ending in ``order``."""
        session, rules = self.session, self.ruleset
        return deal_outcome(order, session.levels, session.level_side, session.a_failures,
                            rules.a_pass_needs_second, rules.a_reset_after)

    @staticmethod
    def _last_play_went_out(deal: DealState) -> bool:
        """Nobody acted after the last play, whose seat a read in question left holding
        cards, and with that seat out the deal would be over: had its count been right, the
        next seat would have acted, so the table shows it went out (a card read too few
        keeps a seat in a play too long as one read too many takes it out early)."""
        seat = deal.table_seat
        return (seat is not None and not deal.passes and seat in deal.doubted and deal.active(seat)
                and not _over_by_count(deal) and _all_out(deal.out + [seat]))

    def _end_as_the_table_shows(self, t: float) -> list[Verdict]:
        """The table dealt again (or swept its last play) while the reads still count cards
        in some hand, or while a deal over by the counts waited on a read in question. It
        ends in the order the reads give (those out, then the rest by cards left; the seat
        of a last play nobody followed out after it, :meth:`_last_play_went_out`), when the
        counts said it was over if they did (the round's time is judged then, not at the
        next deal), else at ``t``; correcting the read in question re-derives it."""
        deal = self.session.deal
        if self._last_play_went_out(deal):
            deal.counts[deal.table_seat] = 0
            deal.out.append(deal.table_seat)
        return self._end_deal(_finishing_order(deal), t if deal.over_by_count_at is None else deal.over_by_count_at)

    def _end_deal(self, order: tuple[Seat, ...], t: float, foul_side: Side | None = None) -> list[Verdict]:
        session = self.session
        deal = session.deal
        deal.phase = DealPhase.OVER
        deal.clocks.clear()
        before = dict(session.levels)
        outcome = self._outcome(order)
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
        if (ending := self._round_up(session.deals_played, t)) is not None:
            records += self._time_up(t, ending)
        return records

    def _round_up(self, deals_played: int, t: float) -> SessionEnding | None:
        """W1: no new deal after ``deals_played`` deals at ``t``: the deal limit or the time."""
        rules = self.ruleset
        if deals_played >= rules.max_deals:
            return SessionEnding.DEALS
        limit = rules.session_minutes - rules.no_new_deal_minutes
        return SessionEnding.TIME if (t - self.session.started_at) / 60 >= limit else None

    def _time_up(self, t: float, reason: SessionEnding) -> list[Verdict]:
        """W1: higher level wins; equal levels: one more deal decides."""
        levels = self.session.levels
        if levels["NS"] == levels["EW"]:
            if self.session.deciding_deal:
                return self._session_result(None, reason, t)
            self.session.deciding_deal = True
            return [Review(ReviewReason.DECIDING_DEAL, t,
                           message="the round is over at equal levels: one more deal decides (W1)",
                           detail={"what": "deciding_deal"})]
        return self._session_result("NS" if levels["NS"] > levels["EW"] else "EW", reason, t)

    def _session_result(self, winner: Side | None, reason: SessionEnding, t: float,
                        score: dict | None = None) -> list[Verdict]:
        session = self.session
        session.over = True
        if session.deal is not None:
            session.deal.phase = DealPhase.OVER
        d, points = table_score(session.levels, winner)
        return [SessionResult(winner, reason, {side: level_name(v) for side, v in session.levels.items()},
                              d, score or points, dict(session.teams), t)]

    @handles(ev.SessionEnd)
    def _on_session_end(self, event: ev.SessionEnd) -> list[Verdict]:
        session = self._session(event)
        if session.deal is not None and session.deal.phase != DealPhase.OVER:
            raise Rejected(f"deal {session.deal.number} is still in progress: finish it first (W2)")
        return self._time_up(event.t, SessionEnding.SESSION_END)
