"""Reporting the remaining cards (RULES.md R1-R2, 报牌)."""

from __future__ import annotations

from .. import events as ev
from ..events import PenaltyLevel
from ..seats import Seat
from ..state import DealState
from ..verdicts import Flag, Review, ReviewReason, Verdict
from .base import Phase, claim_round, flag, handles


def _r1(seat: Seat, message: str, t: float, deal: DealState, detail: dict) -> Flag:
    """A missing or wrong report after a play that left the seat at or under the threshold."""
    return flag("R1", PenaltyLevel.WARNING, seat, message, t, claim_round(deal), detail=detail)


def _r2(seat: Seat, message: str, t: float, deal: DealState, detail: dict) -> Flag:
    """Reporting again, or asking for a count after it was reported."""
    return flag("R2", PenaltyLevel.WARNING, seat, message, t, claim_round(deal), detail=detail)


class ReportingRules(Phase):
    def _missing_report(self, deal: DealState, t: float) -> list[Verdict]:
        """R1: the next play or pass came before the due report."""
        seat = deal.report_due
        if seat is None:
            return []
        deal.report_due = None
        if seat in deal.doubted:  # the count rests on a read in question: it cannot show a report was due
            return []
        return [_r1(seat, f"{seat} did not report the remaining {deal.counts[seat]} cards after the play", t, deal,
                    {"what": "not_reported", "count": deal.counts[seat]})]

    @handles(ev.Report)
    def _on_report(self, event: ev.Report) -> list[Verdict]:
        deal = self._deal(event)
        seat = event.seat
        records = self._clock_flags(event.t)
        if seat in deal.reported:
            return records + [_r2(seat, f"{seat} reported the remaining cards again", event.t, deal,
                                  {"what": "reported_again"})]
        if deal.report_due == seat:
            deal.report_due = None
        deal.reported.add(seat)
        if event.count is None or event.count == deal.counts[seat]:
            return records
        if seat in deal.doubted:  # its reads are in question already: the count follows the table
            deal.counts[seat] = event.count
            return records
        if seat in deal.read_by_camera:
            return records + [self._count_contradicts_reads(deal, seat, event)]
        return records + [_r1(seat, f"{seat} reported {event.count} cards but holds {deal.counts[seat]}",
                              event.t, deal, {"what": "wrong_count", "count": event.count,
                                              "holds": deal.counts[seat]})]

    @staticmethod
    def _count_contradicts_reads(deal: DealState, seat: Seat, event: ev.Report) -> Review:
        """A report at a count the camera's reads contradict: a read of the seat's plays is
        suspected (one review), not the player; the count follows the table (the report)."""
        counted = deal.counts[seat]
        deal.counts[seat] = event.count
        deal.doubted.add(seat)
        return Review(ReviewReason.SUSPECT_READ, event.t, seat=seat, deal=deal.number,
                      message=f"{seat} reported {event.count} cards where the reads of its plays leave {counted}: "
                              f"a read of {seat}'s plays is suspect; counting {event.count} from here",
                      detail={"what": "count_contradicts_reads", "count": event.count, "counted": counted})

    @handles(ev.AskCount)
    def _on_ask_count(self, event: ev.AskCount) -> list[Verdict]:
        deal = self._deal(event)
        records = self._clock_flags(event.t)
        if event.of in deal.reported:
            records.append(_r2(event.seat, f"{event.seat} asked for {event.of}'s count after it was reported",
                               event.t, deal, {"what": "asked_after_report", "of": event.of}))
        return records
