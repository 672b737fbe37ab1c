"""What a seat, or a spectator, may see of a table (DESIGN.md: hidden information never leaks).

Computed from the state by a separate observer (STYLE habit 7), so the dashboard and
the player views cannot reach into hands by accident: a spectator sees played cards and
counts; a seat additionally sees its own hand; nobody sees another seat's hand.
"""

from __future__ import annotations

from .cards import card_name, cards_name
from .phases.play import reading_detail
from .scoring import level_name
from .seats import SEATS, Seat
from .state import SessionState


def view_for(state: SessionState | None, seat: Seat | None = None) -> dict:
    """The public view of a table, plus ``seat``'s own hand when a seat is given."""
    if state is None:
        return {"session": None}
    view: dict = {
        "teams": dict(state.teams),
        "levels": {side: level_name(v) for side, v in state.levels.items()},
        "deals_played": state.deals_played,
        "over": state.over,
        "deal": None,
    }
    deal = state.deal
    if deal is not None:
        view["deal"] = {
            "number": deal.number,
            "level": level_name(deal.level),
            "phase": deal.phase,
            "turn": deal.turn,
            "counts": dict(deal.counts),
            "out": list(deal.out),
            "table": {"seat": deal.table_seat, "cards": [card_name(c) for c in sorted(deal.table_cards)],
                      "reading": str(deal.table), "combination": reading_detail(deal.table)} if deal.table else None,
            "reported": sorted(deal.reported),
        }
        if seat is not None and deal.hands is not None:
            view["deal"]["hand"] = cards_name(deal.hands[seat]).split()
    return view


def spectator_views(state: SessionState | None) -> dict[str, dict]:
    """One view per seat and one for spectators (``"*"``), e.g. to push to each screen."""
    return {"*": view_for(state), **{s: view_for(state, s) for s in SEATS}}
