"""Tournament operations on the store: pairs, rounds, pairings, clock, forfeits, results.

Each match of a round is one table stream (``<event>-R<round>-T<table>``) in the event
store; its recorded ``session_result`` (and the ``deal_end`` upgrades) is the match
result, unless a forfeit was recorded for it. Standings are computed from those.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import insert, select

from web.store import Store
from web.store.authority import check_penalty
from web.store.db import WRITE
from web.store.derive import load_ruleset_spec, tournament_ruleset
from web.store.models import Match, Official, Pair, Round, Tournament

from . import swiss
from .standings import CHAINS, MatchResult, Standing, standings

LAST_DEALS_S = 5 * 60
"""W2: with five minutes left no new deal starts."""


class TournamentError(ValueError):
    """A tournament operation that does not fit the event's state."""


@dataclass(frozen=True)
class MatchInfo:
    round: int
    table_no: int
    ns: str
    ew: str | None
    table_id: str
    forfeit: str | None


def create(store: Store, event_id: str, name: str, *, ruleset: str = "competition",
           chain: str = "competition", rounds: int = 4, round_minutes: int = 50,
           deal_limit: int = 8, seed: int = 0) -> None:
    if chain not in CHAINS:
        raise TournamentError(f"unknown ranking chain {chain!r}: expected one of {', '.join(CHAINS)}")
    if rounds < 1 or round_minutes < 1 or deal_limit < 1:
        raise TournamentError("rounds, round minutes and deal limit must be positive")
    tournament_ruleset(ruleset, deal_limit, round_minutes)  # an unknown ruleset fails here, not at a table
    with store.engine.begin() as conn:
        if conn.execute(select(Tournament.id).where(Tournament.id == event_id)).first():
            raise TournamentError(f"event {event_id!r} exists already")
        conn.execute(insert(Tournament).values(
            id=event_id, name=name, ruleset=ruleset, chain=chain, rounds=rounds,
            round_minutes=round_minutes, deal_limit=deal_limit, seed=seed))


def add_pair(store: Store, event_id: str, pair_id: str, name: str, player1: str, player2: str,
             rating: float = 0.0) -> None:
    _event(store, event_id)
    with store.engine.begin() as conn:
        if conn.execute(select(Match.table_id).where(Match.tournament_id == event_id)).first():
            raise TournamentError(f"event {event_id!r}: pairs are fixed once round 1 is drawn")
        if conn.execute(select(Pair.pair_id).where(Pair.tournament_id == event_id, Pair.pair_id == pair_id)).first():
            raise TournamentError(f"event {event_id!r}: pair {pair_id!r} exists already")
        conn.execute(insert(Pair).values(tournament_id=event_id, pair_id=pair_id, name=name,
                                         player1=player1, player2=player2, rating=rating))


def ruleset(store: Store, event_id: str):
    """The ``Ruleset`` the event's tables are refereed with: the event's ruleset with its
    round time and deal limit (W1)."""
    event = _event(store, event_id)
    return load_ruleset_spec(tournament_ruleset(event.ruleset, event.deal_limit, event.round_minutes))


def pairs(store: Store, event_id: str) -> list[dict]:
    with store.engine.connect() as conn:
        rows = conn.execute(select(Pair).where(Pair.tournament_id == event_id).order_by(Pair.pair_id)).all()
    return [dict(pair=r.pair_id, name=r.name, players=[r.player1, r.player2], rating=r.rating) for r in rows]


def table_id(event_id: str, round_no: int, table_no: int) -> str:
    return f"{event_id}-R{round_no}-T{table_no}"


def matches(store: Store, event_id: str, round_no: int | None = None) -> list[MatchInfo]:
    query = select(Match).where(Match.tournament_id == event_id).order_by(Match.round, Match.table_no)
    if round_no is not None:
        query = query.where(Match.round == round_no)
    with store.engine.connect() as conn:
        return [MatchInfo(r.round, r.table_no, r.ns_pair, r.ew_pair, r.table_id, r.forfeit)
                for r in conn.execute(query)]


def pair_round(store: Store, event_id: str, by_rating: bool = False) -> list[MatchInfo]:
    """Draw the next round: round 1 random or by rating, later rounds Swiss.

    Every match of the previous rounds must have a result (or a forfeit) first.
    """
    event = _event(store, event_id)
    entrants = {p["pair"]: p["rating"] for p in pairs(store, event_id)}
    if len(entrants) < 2:
        raise TournamentError(f"event {event_id!r}: needs at least two pairs")
    done = matches(store, event_id)
    number = max((m.round for m in done), default=0) + 1
    if number > event.rounds:
        raise TournamentError(f"event {event_id!r}: all {event.rounds} rounds are drawn")
    if number == 1:
        draw = swiss.first_round(entrants, event.seed, by_rating=by_rating)
    else:
        table = standings_of(store, event_id)  # raises if a result is missing
        ns_count: dict[str, int] = {}
        for m in done:
            if m.ew is not None:
                ns_count[m.ns] = ns_count.get(m.ns, 0) + 1
        draw = swiss.swiss_round(
            [s.pair for s in table], {s.pair: s.match_points for s in table},
            {frozenset((m.ns, m.ew)) for m in done if m.ew is not None},
            {m.ns for m in done if m.ew is None}, ns_count)
    with store.engine.connect().execution_options(**WRITE) as conn, conn.begin():
        conn.execute(insert(Round).values(tournament_id=event_id, number=number, started_at=None))
        conn.execute(insert(Match), [
            dict(tournament_id=event_id, round=number, table_no=p.table, ns_pair=p.ns, ew_pair=p.ew,
                 table_id=table_id(event_id, number, p.table)) for p in draw])
    return matches(store, event_id, number)


def start_round(store: Store, event_id: str, round_no: int, at: float) -> None:
    """Start the round clock (wall time ``at``) for W1-W2."""
    _round(store, event_id, round_no)
    with store.engine.begin() as conn:
        conn.execute(Round.__table__.update()
                     .where(Round.tournament_id == event_id, Round.number == round_no)
                     .values(started_at=at))


def round_clock(store: Store, event_id: str, round_no: int, now: float) -> dict:
    """Time left in a timed round, and whether a new deal may still start (W1-W2)."""
    event = _event(store, event_id)
    started = _round(store, event_id, round_no).started_at
    if started is None:
        return {"started": False, "remaining_s": event.round_minutes * 60.0, "new_deals": True,
                "deal_limit": event.deal_limit}
    remaining = started + event.round_minutes * 60.0 - now
    return {"started": True, "remaining_s": max(remaining, 0.0), "new_deals": remaining > LAST_DEALS_S,
            "over": remaining <= 0, "deal_limit": event.deal_limit}


def record_forfeit(store: Store, event_id: str, round_no: int, pair_id: str, by: str) -> None:
    """Record that ``pair_id`` forfeits its match of ``round_no`` (K5 > 10 min late, X4).

    A forfeit is a loss ruling, so only the chief referee records it (X6).
    """
    with store.engine.begin() as conn:
        role = conn.execute(select(Official.role).where(Official.name == by)).scalar_one_or_none()
        check_penalty(by, role, "loss")
        match = conn.execute(select(Match).where(
            Match.tournament_id == event_id, Match.round == round_no,
            (Match.ns_pair == pair_id) | (Match.ew_pair == pair_id))).first()
        if match is None or match.ew_pair is None:
            raise TournamentError(f"event {event_id!r} round {round_no}: pair {pair_id!r} has no match to forfeit")
        conn.execute(Match.__table__.update()
                     .where(Match.tournament_id == event_id, Match.round == round_no,
                            Match.table_no == match.table_no)
                     .values(forfeit=pair_id, forfeit_by=by))


def match_results(store: Store, event_id: str, require_all: bool = True) -> list[MatchResult]:
    """Results of all drawn matches; a match without a result raises (or is skipped)."""
    out = []
    for m in matches(store, event_id):
        if m.ew is None or m.forfeit is not None:
            out.append(MatchResult(m.round, m.ns, m.ew, forfeit=m.forfeit))
            continue
        results = store.records(m.table_id, types=("session_result", "deal_end"))
        sessions = [r for r in results if r["type"] == "session_result"]
        if not sessions:
            if require_all:
                raise TournamentError(f"round {m.round} table {m.table_no} ({m.table_id}) has no result yet")
            continue
        s = sessions[-1]
        ups = {"NS": 0, "EW": 0}
        for r in results:
            if r["type"] == "deal_end":
                for side, k in (r.get("upgrade") or {}).items():
                    ups[side] = ups.get(side, 0) + int(k)
        out.append(MatchResult(m.round, m.ns, m.ew, winner=s.get("winner"),
                               level_difference=int(s["level_difference"]),
                               score=(int(s["score"]["NS"]), int(s["score"]["EW"])),
                               upgrades=(ups["NS"], ups["EW"])))
    return out


def standings_of(store: Store, event_id: str, require_all: bool = True) -> list[Standing]:
    event = _event(store, event_id)
    ids = [p["pair"] for p in pairs(store, event_id)]
    return standings(ids, match_results(store, event_id, require_all), event.chain, event.seed)


def events(store: Store) -> list[dict]:
    with store.engine.connect() as conn:
        return [dict(id=r.id, name=r.name, ruleset=r.ruleset, chain=r.chain, rounds=r.rounds)
                for r in conn.execute(select(Tournament).order_by(Tournament.id))]


def _event(store: Store, event_id: str):
    with store.engine.connect() as conn:
        event = conn.execute(select(Tournament).where(Tournament.id == event_id)).first()
    if event is None:
        raise TournamentError(f"no event {event_id!r}")
    return event


def _round(store: Store, event_id: str, round_no: int):
    with store.engine.connect() as conn:
        row = conn.execute(select(Round).where(Round.tournament_id == event_id, Round.number == round_no)).first()
    if row is None:
        raise TournamentError(f"event {event_id!r} has no round {round_no}")
    return row
