"""The clock (RULES.md K1-K5): running limits, the referee's countdown, late arrival."""

from __future__ import annotations

from .. import events as ev
from ..events import PenaltyLevel
from ..seats import Seat
from ..state import Clock, DealPhase, DealState
from ..verdicts import ClaimWindow, Verdict
from .base import Phase, claim_round, flag, handles

LIMITS = {
    "tribute": ("K1", "tribute_seconds", "pay the tribute"),
    "return": ("K1", "return_seconds", "return a card"),
    "lead": ("K2", "lead_seconds", "lead the deal"),
    "follow": ("K3", "follow_seconds", "play or pass"),
}
"""What each clock times: its rule, the ruleset's limit, and what the seat owes."""
TASKS = {what: key for key, (_rule, _setting, what) in LIMITS.items()}
"""What a seat owes -> the kind of clock (a key of :data:`LIMITS`), for a flag's detail."""


class ClockRules(Phase):
    def _start_clock(self, deal: DealState, key: str, limit: str, seat: Seat | None, t: float) -> None:
        """Start clock ``key`` of kind ``limit`` (a key of :data:`LIMITS`) for ``seat`` at ``t``."""
        rule, setting, what = LIMITS[limit]
        deal.clocks[key] = Clock(seat, t, getattr(self.ruleset, setting), rule, what)

    def _start_turn_clock(self, deal: DealState, seat: Seat | None, t: float, first_lead: bool = False) -> None:
        self._start_clock(deal, "turn", "lead" if first_lead else "follow", seat, t)

    def _clock_flags(self, t: float) -> list[Verdict]:
        """K1-K4: a limit plus the referee's countdown passed: one warning per clock."""
        deal = self.session.deal if self.session else None
        if deal is None or deal.phase == DealPhase.OVER:
            return []
        out = []
        grace = self.ruleset.countdown_seconds
        for clock in deal.clocks.values():
            if not clock.flagged and t > clock.start + clock.limit + grace:
                clock.flagged = True
                who = clock.seat or "the leader"
                out.append(flag(
                    clock.rule, PenaltyLevel.WARNING, clock.seat,
                    f"{who} took over {clock.limit:g} s (+{grace:g} s countdown) to {clock.what}",
                    t, claim_round(deal), due=clock.start + clock.limit + grace,
                    detail={"what": "over_time", "limit": clock.limit, "countdown": grace,
                            "task": TASKS[clock.what]}))
        return out

    @handles(ev.Tick)
    def _on_tick(self, event: ev.Tick) -> list[Verdict]:
        return self._clock_flags(event.t)

    @handles(ev.Arrival)
    def _on_arrival(self, event: ev.Arrival) -> list[Verdict]:
        """K5: late arrival; the ruleset says what more than 5 minutes costs.

        ``house`` in the detail: the flag's consequence is the ruleset's own (deal 1 with +3,
        a forfeit scored at levels) rather than 000's plain foul or 17:0 forfeit."""
        session = self._session(event)
        rules, minutes = session.ruleset, event.minutes_late
        if minutes <= 0:
            return []
        house = rules.late_foul_deal_one
        if minutes > 10:
            house = bool(rules.late_forfeit_levels)
            at = f" (scored {rules.late_forfeit_levels})" if house else ""
            severity, what = PenaltyLevel.LOSS, "forfeits the round" + at
        elif minutes > 5:
            severity, what = PenaltyLevel.FOUL, "gives the opponents deal 1 with +3" if house else "is a foul"
        else:
            severity, what = PenaltyLevel.WARNING, "is a warning"
        return [flag("K5", severity, None, f"{event.side} arrived {minutes:g} min late: {what}",
                     event.t, ClaimWindow(session=True), side=event.side,
                     detail={"what": "late", "minutes": minutes, "house": house})]
