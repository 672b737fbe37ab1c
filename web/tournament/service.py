"""Tournament operations on the store: pairs, rounds, pairings, clock, forfeits, results.

Each match of a round is one table stream (``<event>-R<round>-T<table>``) in the event
store; its recorded ``session_result`` (and the ``deal_end`` upgrades) is the match
result, unless a forfeit was recorded for it. A match is one session: another at its
table needs the chief referee's ruling, and then counts instead (``sessions``).
Standings are computed from those, round by round: a round counts once every table of it
has a result. A round is drawn only when every result before it is final (S3), unless
the chief referee rules otherwise; forfeits, such draws and another session at a table
are kept as rulings, with who ruled and why.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import insert, select, update
from sqlalchemy.engine import Connection

from referee.rulesets import load_ruleset_spec, tournament_ruleset
from web.store import Store
from web.store.authority import NotAuthorized, check_penalty
from web.store.db import WRITE
from web.store.models import Match, Official, Pair, Round, TableHead, Tournament, TournamentRuling

from . import sessions, signoff, swiss
from .pairlist import MAX_LENGTH, PairEntry
from .rules import TournamentRules, rules_for
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
           chain: str | None = None, rounds: int = 4, round_minutes: int = 50,
           deal_limit: int = 8, seed: int = 0) -> None:
    """A new event; ``chain`` defaults to the one its ruleset's tournament rules name."""
    chain = chain or rules_for(ruleset).chain
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
    add_pairs(store, event_id, [PairEntry(pair_id, name, player1, player2, rating)])


def add_pairs(store: Store, event_id: str, entries: Iterable[PairEntry]) -> int:
    """Add pairs all together or not at all; returns how many were added."""
    entries = list(entries)
    _event(store, event_id)
    problems = []
    for e in entries:
        where = f"line {e.line}: " if e.line else ""
        for col in ("pair", "name", "player1", "player2"):
            value = getattr(e, col)
            if not value.strip() or len(value) > MAX_LENGTH[col]:
                problems.append(f"{where}pair {e.pair!r}: {col} must be 1..{MAX_LENGTH[col]} characters")
    ids = [e.pair for e in entries]
    problems += [f"pair {p!r} is listed twice" for p in sorted({p for p in ids if ids.count(p) > 1})]
    if problems:
        raise TournamentError(f"event {event_id!r}: " + "; ".join(problems))
    with store.engine.connect().execution_options(**WRITE) as conn, conn.begin():
        if conn.execute(select(Match.table_id).where(Match.tournament_id == event_id)).first():
            raise TournamentError(f"event {event_id!r}: pairs are fixed once round 1 is drawn")
        taken = set(conn.execute(select(Pair.pair_id).where(
            Pair.tournament_id == event_id, Pair.pair_id.in_(ids))).scalars())
        if taken:
            lines = {e.pair: e.line for e in entries}
            raise TournamentError(f"event {event_id!r}: " + "; ".join(
                (f"line {lines[p]}: " if lines[p] else "") + f"pair {p!r} exists already" for p in sorted(taken)))
        conn.execute(insert(Pair), [dict(tournament_id=event_id, pair_id=e.pair, name=e.name, player1=e.player1,
                                         player2=e.player2, rating=e.rating) for e in entries])
    return len(entries)


def rules(store: Store, event_id: str) -> TournamentRules:
    """How the event counts forfeits and byes (``rules.rules_for`` of its ruleset)."""
    return rules_for(_event(store, event_id).ruleset)


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


def pair_round(store: Store, event_id: str, by_rating: bool = False, *,
               override_by: str | None = None, reason: str | None = None) -> list[MatchInfo]:
    """Draw the next round: round 1 random or by rating, later rounds Swiss.

    Every match of the rounds before needs a result (or a forfeit), and every result
    must be final (both sides signed, S3). The chief referee may draw over results that
    are not final yet (``override_by``, with a ``reason``), which is kept as a ruling.
    """
    event = _event(store, event_id)
    entrants = {p["pair"]: p["rating"] for p in pairs(store, event_id)}
    if len(entrants) < 2:
        raise TournamentError(f"event {event_id!r}: needs at least two pairs")
    done = matches(store, event_id)
    number = max((m.round for m in done), default=0) + 1
    if number > event.rounds:
        raise TournamentError(f"event {event_id!r}: all {event.rounds} rounds are drawn")
    states = {m: match_state(store, m) for m in done}
    missing = [m for m in done if states[m] == "no result"]
    if missing:
        m = missing[0]
        raise TournamentError(f"round {m.round} table {m.table_no} ({m.table_id}) has no result yet")
    open_results = [f"{m.table_id} {states[m]}" for m in done if states[m] not in ("final", "forfeit", "bye")]
    if open_results and override_by is None:
        raise TournamentError(
            f"event {event_id!r}: round {number} waits for every result to be final (S3): "
            f"{', '.join(open_results)}; the chief referee may draw anyway (--override-by NAME --reason TEXT)")
    if number == 1:
        draw = swiss.first_round(entrants, event.seed, by_rating=by_rating)
    else:
        table = standings_of(store, event_id)
        ns_count: dict[str, int] = {}
        for m in done:
            if m.ew is not None:
                ns_count[m.ns] = ns_count.get(m.ns, 0) + 1
        draw = swiss.swiss_round(
            [s.pair for s in table], {s.pair: s.match_points for s in table},
            {frozenset((m.ns, m.ew)) for m in done if m.ew is not None},
            {m.ns for m in done if m.ew is None}, ns_count)
    with store.engine.connect().execution_options(**WRITE) as conn, conn.begin():
        if override_by is not None:
            _check_chief(conn, override_by, f"draw round {number} before every result is final")
            if not open_results:
                raise TournamentError(f"event {event_id!r}: round {number}: every result is final; "
                                      "there is nothing to override")
            _rule(conn, store, event_id, number, None, "draw", None, override_by,
                  f"{_need_reason(reason, 'a draw over results that are not final')} "
                  f"(not final: {', '.join(open_results)})")
        conn.execute(insert(Round).values(tournament_id=event_id, number=number, started_at=None))
        conn.execute(insert(Match), [
            dict(tournament_id=event_id, round=number, table_no=p.table, ns_pair=p.ns, ew_pair=p.ew,
                 table_id=table_id(event_id, number, p.table)) for p in draw])
    return matches(store, event_id, number)


def match_state(store: Store, m: MatchInfo) -> str:
    """``bye``, ``forfeit``, ``no result``, or the sign-off state of the table's last result
    (``pending``, ``final``, ``disputed``)."""
    if m.ew is None:
        return "bye"
    if m.forfeit is not None:
        return "forfeit"
    with store.engine.connect() as conn:
        counts = sessions.counting(conn, m.table_id)
        if len(signoff.session_results(conn, m.table_id)) < counts:
            return "no result"
        return signoff.status_on(conn, m.table_id, counts).state


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


def record_forfeit(store: Store, event_id: str, round_no: int, pair_id: str, by: str,
                   reason: str | None = None) -> None:
    """Record that ``pair_id`` forfeits its match of ``round_no`` (K5 > 10 min late, X4).

    A forfeit is a loss ruling, so only the chief referee records it (X6); over a result
    the table has already recorded (signed, disputed or not yet signed) it needs a
    reason. A pair forfeits a match once; the chief may forfeit the other pair instead
    (with a reason), which withdraws the first forfeit as a ruling of its own.
    """
    with store.engine.connect().execution_options(**WRITE) as conn, conn.begin():
        match, where = _forfeit_match(conn, event_id, round_no, pair_id, by)
        if match.forfeit == pair_id:
            earlier = _forfeit_ruling(conn, event_id, round_no, match.table_no)
            raise TournamentError(f"{where}: {match.forfeit} already forfeited ({earlier}); "
                                  f"to undo it: event forfeit --withdraw --pair {match.forfeit} --reason TEXT")
        if match.forfeit is not None:
            reason = _need_reason(reason, f"{where}: {match.forfeit} forfeited; forfeiting {pair_id} instead")
            _rule(conn, store, event_id, round_no, match.table_no, "forfeit_withdrawn", match.forfeit, by,
                  f"{pair_id} forfeits instead: {reason}")
        sessions = signoff.session_results(conn, match.table_id)
        if sessions:
            state = signoff.status_on(conn, match.table_id, len(sessions))
            signed = ", ".join(f"{side} by {who}" for side, who in sorted(state.signed.items()))
            reason = _need_reason(reason, f"{where} has a recorded result ({state.state}"
                                  + (f", signed {signed}" if signed else "") + "); a forfeit over it")
        _set_forfeit(conn, match, pair_id, by, where)
        _rule(conn, store, event_id, round_no, match.table_no, "forfeit", pair_id, by, (reason or "").strip())


def rule_session(store: Store, event_id: str, round_no: int, table_no: int, by: str, reason: str | None) -> str:
    """The chief referee rules that the match's table plays another session, which counts
    instead of the one recorded there (``sessions``): a replay ordered, or a session
    recorded elsewhere that is the true one. Kept as a ruling; returns its text."""
    with store.engine.connect().execution_options(**WRITE) as conn, conn.begin():
        match = conn.execute(select(Match).where(Match.tournament_id == event_id, Match.round == round_no,
                                                 Match.table_no == table_no)).first()
        if match is None or match.ew_pair is None:
            raise TournamentError(f"event {event_id!r} round {round_no}: no match at table {table_no}"
                                  + (" (a bye: no session is played)" if match is not None else ""))
        where = f"round {round_no} table {table_no} ({match.table_id})"
        _check_chief(conn, by, f"{where}: another session")
        reason = _need_reason(reason, f"{where}: another session")
        conn.execute(select(TableHead.table_id).where(TableHead.table_id == match.table_id).with_for_update())
        played, counts = sessions.begun(conn, match.table_id), sessions.counting(conn, match.table_id)
        if played < counts:
            raise TournamentError(f"{where}: session {counts} may already be played (ruled before); "
                                  "it is not recorded yet")
        if len(signoff.session_results(conn, match.table_id)) < played:
            raise TournamentError(f"{where}: session {played} is still being played; it ends first")
        text = (f"{reason} (session {played + 1} counts instead of session {played}: "
                f"{sessions.latest(conn, match.table_id, played)})")
        _rule(conn, store, event_id, round_no, table_no, sessions.RULING, None, by, text)
    return text


def withdraw_forfeit(store: Store, event_id: str, round_no: int, pair_id: str, by: str, reason: str | None) -> None:
    """The chief referee withdraws a forfeit given by mistake, with a reason (kept as a
    ruling): the table's own result (or none yet) counts again."""
    with store.engine.connect().execution_options(**WRITE) as conn, conn.begin():
        match, where = _forfeit_match(conn, event_id, round_no, pair_id, by)
        if match.forfeit != pair_id:
            raise TournamentError(f"{where}: {pair_id} has no forfeit to withdraw"
                                  + (f" ({match.forfeit} forfeited)" if match.forfeit else " (no forfeit recorded)"))
        reason = _need_reason(reason, f"{where}: withdrawing the forfeit of {pair_id}")
        _set_forfeit(conn, match, None, None, where)
        _rule(conn, store, event_id, round_no, match.table_no, "forfeit_withdrawn", pair_id, by, reason)


def _forfeit_match(conn: Connection, event_id: str, round_no: int, pair_id: str, by: str):
    """The match ``pair_id`` plays in ``round_no``, once ``by`` is found to be the chief referee (X6)."""
    role = conn.execute(select(Official.role).where(Official.name == by)).scalar_one_or_none()
    check_penalty(by, role, "loss")
    match = conn.execute(select(Match).where(
        Match.tournament_id == event_id, Match.round == round_no,
        (Match.ns_pair == pair_id) | (Match.ew_pair == pair_id))).first()
    if match is None or match.ew_pair is None:
        raise TournamentError(f"event {event_id!r} round {round_no}: pair {pair_id!r} has no match to forfeit"
                              + (" (it has the bye)" if match is not None else ""))
    return match, f"round {round_no} table {match.table_no} ({match.table_id})"


def _set_forfeit(conn: Connection, match, pair_id: str | None, by: str | None, where: str) -> None:
    """Change the match's forfeit from what was read, or fail if another ruling came meanwhile."""
    moved = conn.execute(update(Match).where(
        Match.tournament_id == match.tournament_id, Match.round == match.round, Match.table_no == match.table_no,
        Match.forfeit.is_(None) if match.forfeit is None else Match.forfeit == match.forfeit,
    ).values(forfeit=pair_id, forfeit_by=by)).rowcount
    if moved != 1:
        raise TournamentError(f"{where}: another forfeit ruling was recorded meanwhile; look again (event rulings)")


def rulings(store: Store, event_id: str, round_no: int | None = None) -> list[dict]:
    """The event's rulings (forfeits, withdrawn forfeits, draws over open results, another
    session at a table), oldest first."""
    query = select(TournamentRuling).where(TournamentRuling.tournament_id == event_id).order_by(TournamentRuling.id)
    if round_no is not None:
        query = query.where(TournamentRuling.round == round_no)
    with store.engine.connect() as conn:
        return [dict(round=r.round, table_no=r.table_no, kind=r.kind, pair=r.pair, by=r.by, reason=r.reason,
                     at=r.at) for r in conn.execute(query)]


def _check_chief(conn: Connection, by: str, what: str) -> None:
    role = conn.execute(select(Official.role).where(Official.name == by)).scalar_one_or_none()
    if role != "chief":
        raise NotAuthorized(f"{what}: {by!r} is not the chief referee; only the chief referee may")


def _need_reason(reason: str | None, what: str) -> str:
    if reason is None or not reason.strip():
        raise TournamentError(f"{what} needs the chief referee's reason (--reason)")
    return reason.strip()


def _rule(conn: Connection, store: Store, event_id: str, round_no: int, table_no: int | None, kind: str,
          pair: str | None, by: str, reason: str) -> None:
    conn.execute(insert(TournamentRuling).values(
        tournament_id=event_id, round=round_no, table_no=table_no, kind=kind, pair=pair, by=by,
        reason=reason, at=store.clock()))


def _forfeit_ruling(conn: Connection, event_id: str, round_no: int, table_no: int) -> str:
    row = conn.execute(select(TournamentRuling).where(
        TournamentRuling.tournament_id == event_id, TournamentRuling.round == round_no,
        TournamentRuling.table_no == table_no, TournamentRuling.kind == "forfeit")
        .order_by(TournamentRuling.id.desc())).first()
    if row is None:
        return "no ruling kept"
    return f"ruled by {row.by} at {signoff.wall_time(row.at)}" + (f": {row.reason}" if row.reason else "")


def match_results(store: Store, event_id: str, require_all: bool = True) -> list[MatchResult]:
    """Results of all drawn matches; a match without a result raises (or is skipped).

    A forfeit counts one way however it was recorded: the event's forfeit ruling, or the
    table's own K5 loss (a result that ended by forfeit) both count as the event's forfeit
    scoring. A result under dispute counts as recorded, marked ``disputed``. The session
    that counts is the table's first, or the one a chief referee's ruling let be played
    (``sessions``); the deal ends of no other session add to the upgrades.
    """
    out = []
    for m in matches(store, event_id):
        if m.ew is None or m.forfeit is not None:
            out.append(MatchResult(m.round, m.ns, m.ew, forfeit=m.forfeit))
            continue
        counts, deals, s = counted_session(store, m.table_id)
        if s is None:
            if require_all:
                raise TournamentError(f"round {m.round} table {m.table_no} ({m.table_id}) has no result yet"
                                      + (f" (session {counts}, ruled by the chief referee)" if counts > 1 else ""))
            continue
        disputed = signoff.status(store, m.table_id, counts).state == "disputed"
        if s.get("reason") == "forfeit" and s.get("winner") in ("NS", "EW"):
            out.append(MatchResult(m.round, m.ns, m.ew, forfeit=m.ew if s["winner"] == "NS" else m.ns,
                                   disputed=disputed, session=counts))
            continue
        ups = {"NS": 0, "EW": 0}
        for r in deals:
            for side, k in (r.get("upgrade") or {}).items():
                ups[side] = ups.get(side, 0) + int(k)
        out.append(MatchResult(m.round, m.ns, m.ew, winner=s.get("winner"),
                               level_difference=int(s["level_difference"]),
                               score=(int(s["score"]["NS"]), int(s["score"]["EW"])),
                               upgrades=(ups["NS"], ups["EW"]), disputed=disputed, session=counts))
    return out


def counted_session(store: Store, table_id: str) -> tuple[int, list[dict], dict | None]:
    """The drawn table's session that counts (``sessions.counting``): its number, its deal
    ends and its result (None while it has none)."""
    with store.engine.connect() as conn:
        counts = sessions.counting(conn, table_id)
    played = [(deals, result) for deals, result in
              sessions.by_session(store.records(table_id, types=("session_result", "deal_end")))
              if result is not None]
    return (counts, *played[counts - 1]) if counts <= len(played) else (counts, [], None)


def played_rounds(results: list[MatchResult], drawn: list[MatchInfo]) -> list[MatchResult]:
    """The results of the rounds every table of which has a result (a bye counts with its
    round, not before it is played)."""
    have: dict[int, int] = {}
    tables: dict[int, int] = {}
    for m in drawn:
        tables[m.round] = tables.get(m.round, 0) + 1
    for r in results:
        have[r.round] = have.get(r.round, 0) + 1
    complete = {rnd for rnd, n in tables.items() if have.get(rnd, 0) == n}
    return [r for r in results if r.round in complete]


def standings_of(store: Store, event_id: str, require_all: bool = True,
                 after_round: int | None = None) -> list[Standing]:
    """Standings after the rounds played (or after ``after_round``): forfeits and byes count
    as the event's tournament rules say. ``require_all``: a drawn match without a result
    raises instead of leaving its round out."""
    event = _event(store, event_id)
    ids = [p["pair"] for p in pairs(store, event_id)]
    results = played_rounds(match_results(store, event_id, require_all), matches(store, event_id))
    if after_round is not None:
        results = [r for r in results if r.round <= after_round]
    return standings(ids, results, event.chain, event.seed, rules_for(event.ruleset))


def event_info(store: Store, event_id: str) -> dict:
    e = _event(store, event_id)
    return dict(id=e.id, name=e.name, ruleset=e.ruleset, chain=e.chain, rounds=e.rounds)


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
