"""Session and deal start (who leads deal 1, T4/T5 at a deal's start), and the observations
that change no game state: camera/reader faults and recognition conflicts."""

from __future__ import annotations

from .. import events as ev
from ..cards import BJ
from ..rulesets import RulesetError, session_ruleset
from ..scoring import deal_level
from ..seats import SEATS, side_of
from ..state import DealPhase, DealState, SessionState
from ..verdicts import Review, ReviewReason, Verdict
from .base import Phase, Rejected, handles


class SessionRules(Phase):
    @handles(ev.SessionStart)
    def _on_session_start(self, event: ev.SessionStart) -> list[Verdict]:
        if self.session is not None and not self.session.over:
            raise Rejected("a session is already in progress at this table (session_end first)")
        try:
            ruleset = session_ruleset(self.table_ruleset, event.ruleset)
        except RulesetError as exc:
            raise Rejected(f"session_start.ruleset: {exc}") from None
        self.session = SessionState(ruleset=ruleset, teams=dict(event.teams), started_at=event.t)
        return []

    @handles(ev.DealStart)
    def _on_deal_start(self, event: ev.DealStart) -> list[Verdict]:
        session = self._session(event)
        records: list[Verdict] = []
        if session.deal is not None and session.deal.phase != DealPhase.OVER:
            if not session.deal.doubted:
                raise Rejected(f"deal {session.deal.number} is still in progress")
            records = self._end_as_the_table_shows(event.t)
            if session.over:
                return records
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
        records += self._check_deck(deal, event.t)
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
        deal.phase = DealPhase.TRIBUTE
        for payer in deal.payers:
            self._start_clock(deal, f"tribute:{payer}", "tribute", payer, event.t)
        return records

    @handles(ev.Fault)
    def _on_fault(self, event: ev.Fault) -> list[Verdict]:
        """A camera or reader fault: a human looks; the game state is unchanged."""
        deal = self.session.deal if self.session else None
        return [Review(ReviewReason.FAULT, event.t, seat=event.seat, source=event.source,
                       deal=deal.number if deal is not None else None,
                       message=f"{event.source} fault: {event.message}: its reads cannot be trusted until checked",
                       detail={"what": "fault", "text": event.message})]

    @handles(ev.Conflict)
    def _on_conflict(self, event: ev.Conflict) -> list[Verdict]:
        self._session(event)
        return self._clock_flags(event.t) + [Review(
            ReviewReason.RECOGNITION_CONFLICT, event.t, seat=event.seat, readings=event.readings,
            message=f"the sources disagree on {event.seat}'s play area: confirm the play or correct it",
            detail={"what": "sources_disagree"})]
