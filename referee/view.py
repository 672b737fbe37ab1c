"""What a seat, or anyone watching, may see of a table (DESIGN.md: hidden information never leaks).

Computed from the state by a separate observer (STYLE habit 7), so the dashboard and
the player views cannot reach into hands by accident: anyone sees the levels, the cards
played and left on the table, counts, clocks, tribute and penalties; a seat additionally
sees its own hand; nobody sees another seat's hand. This is the one public view of a
table's state: the pages (``web.app.public``) build every view they show on it and take
away what only officials may read (flags nobody confirmed, how sure a read was).
"""

from __future__ import annotations

from .cards import card_name, cards_name
from .phases.clock import TASKS as CLOCK_TASKS
from .phases.play import reading_detail
from .scoring import level_name
from .seats import Seat
from .state import SessionState


def view_for(state: SessionState | None, seat: Seat | None = None) -> dict:
    """The public view of a table as plain data, plus ``seat``'s own hand when a seat is given."""
    if state is None:
        return {"session": None}
    view: dict = {
        "teams": dict(state.teams),
        "levels": {side: level_name(v) for side, v in state.levels.items()},
        "deals_played": state.deals_played,
        "over": state.over,
        "deal": None,
        "penalties": {side: dict(counts) for side, counts in state.penalties.items()},
    }
    deal = state.deal
    if deal is not None:
        level = level_name(deal.level)
        view["deal"] = {
            "number": deal.number,
            "level": level,
            "phase": deal.phase,
            "turn": deal.turn,
            "counts": dict(deal.counts),
            "out": list(deal.out),
            "table": {"seat": deal.table_seat, "cards": [card_name(c) for c in sorted(deal.table_cards)],
                      "reading": str(deal.table), "combination": reading_detail(deal.table)} if deal.table else None,
            "reported": sorted(deal.reported),
            "round": deal.round,
            "wildcard": f"{level}H",
            "clocks": [] if deal.phase == "over" else [
                {"seat": c.seat, "start": c.start, "limit": c.limit, "rule": c.rule, "what": c.what,
                 "task": CLOCK_TASKS.get(c.what)}
                for c in deal.clocks.values()],
            "tribute": {"payers": list(deal.payers), "winner": deal.winner, "returned": sorted(deal.returned),
                        "paid": [{"from": payer, "to": to, "card": card_name(card)}
                                 for payer, (to, card) in sorted(deal.paid.items())]},
        }
        if seat is not None and deal.hands is not None:
            view["deal"]["hand"] = cards_name(deal.hands[seat]).split()
    return view
