"""Penalties (RULES.md X1-X4): a referee's ruling, counted per side, with escalation, and
what a violation, a foul or a loss does to the deal and the round."""

from __future__ import annotations

from .. import events as ev
from ..events import PenaltyLevel
from ..scoring import deal_level
from ..seats import next_seat, other_side, seats_of
from ..state import DealPhase, DealState
from ..verdicts import Ruling, SessionEnding, Verdict
from .base import Phase, handles


class PenaltyRules(Phase):
    @handles(ev.Penalty)
    def _on_penalty(self, event: ev.Penalty) -> list[Verdict]:
        session = self._session(event)
        counts = session.penalties[event.side]
        level, escalated = event.level, []
        while (higher := level.escalated()) is not None:
            counts[level] += 1
            if counts[level] < 2:
                break
            counts[level] = 0
            escalated.append(f"2nd {level}")
            level = higher
        records: list[Verdict] = [Ruling(event.side, event.seat, event.rule, event.level, level, tuple(escalated),
                                         event.by, event.t, dict(counts))]
        deal = session.deal
        in_play = deal is not None and deal.phase != DealPhase.OVER
        if level == PenaltyLevel.VIOLATION and event.seat and in_play and deal.phase == DealPhase.PLAY:
            deal.forbidden = event.seat
            if deal.turn == event.seat:
                records += self._advance(deal, event.seat, event.t)
        elif level == PenaltyLevel.FOUL:
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
        elif level == PenaltyLevel.LOSS:
            winner = other_side(event.side)
            at = self.ruleset.late_forfeit_at() if event.rule == "K5" else None
            if at is not None:  # scored as a round won at the ruleset's levels (001 三: A against 6)
                session.levels[winner], session.levels[event.side] = at
                records += self._session_result(winner, SessionEnding.FORFEIT, event.t)
            elif event.rule == "K5":  # 000 第四章 三(四): a forfeit is recorded 17:0
                records += self._session_result(winner, SessionEnding.FORFEIT, event.t, score={winner: 17, event.side: 0})
            else:
                gap = max(4, session.levels[winner] - session.levels[event.side])
                session.levels[winner] = session.levels[event.side] + gap
                records += self._session_result(winner, SessionEnding.LOSS, event.t)
        return records
