"""Which session of a drawn table counts: the first, unless the chief referee rules another.

A match of a round is one session at its table (W1), and its result is what the standings
use once both captains signed it (S3). A second session there (a replay, or another game
file imported onto the table by mistake) would replace that result without anyone ruling
on it. So a drawn table takes another ``session_start`` only after a chief referee's
ruling (kind ``session``, kept with the event's other rulings: who, when, why); each such
ruling lets one more session be played, and that session counts instead of the one
before. Rulings are append-only, so the n-th ruling of a table is the one for its
session n + 1: the score sheet and the standings name the session that counts and the
ruling that made it so.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import func, select
from sqlalchemy.engine import Connection

from web.store.models import Match, TableEvent, TournamentRuling

from . import signoff

RULING = "session"
"""The kind of a chief referee's ruling that another session at a table counts."""


def begun(conn: Connection, table_id: str) -> int:
    """How many sessions the table has begun (its accepted ``session_start`` events)."""
    return conn.execute(select(func.count()).select_from(TableEvent).where(
        TableEvent.table_id == table_id, TableEvent.type == "session_start")).scalar_one()


def ruled(conn: Connection, table_id: str) -> int:
    """How many ``session`` rulings the chief referee made for the drawn table."""
    return conn.execute(select(func.count()).select_from(TournamentRuling).join(Match, (
        Match.tournament_id == TournamentRuling.tournament_id) & (Match.round == TournamentRuling.round) & (
        Match.table_no == TournamentRuling.table_no)).where(
        Match.table_id == table_id, TournamentRuling.kind == RULING)).scalar_one()


def counting(conn: Connection, table_id: str) -> int:
    """The number of the drawn table's session that counts: the first, or the one the
    chief referee's latest ``session`` ruling let be played. A session recorded past it
    (only a store written before this rule could hold one) counts for nothing."""
    return 1 + ruled(conn, table_id)


def refusal(conn: Connection, match: Match) -> str | None:
    """Why the match's table may not begin another session now, or None when it may."""
    sessions = begun(conn, match.table_id)
    if sessions < counting(conn, match.table_id):
        return None
    return (f"{latest(conn, match.table_id, sessions)}; a drawn table records one session and another needs "
            f"the chief referee's ruling first, naming why it counts instead (guandan-ref event session "
            f"{match.tournament_id} --round {match.round} --table {match.table_no} --by CHIEF --reason TEXT)")


def latest(conn: Connection, table_id: str, sessions: int) -> str:
    """The table's latest session in words: still played, or its result's sign-off."""
    results = signoff.session_results(conn, table_id)
    if len(results) < sessions:
        return f"session {sessions} of table {table_id} is still being played"
    state = signoff.status_on(conn, table_id, sessions)
    if state.state == "disputed":
        return f"session {sessions} of table {table_id} is recorded and disputed ({state.dispute})"
    signed = ", ".join(f"{side} by {who} at {signoff.wall_time(state.signed_at[side])}"
                       for side, who in sorted(state.signed.items()))
    if signed:
        return f"session {sessions} of table {table_id} is signed ({signed}; {state.state})"
    return f"session {sessions} of table {table_id} is recorded (not signed yet)"


def by_session(results: Iterable[dict]) -> list[tuple[list[dict], dict | None]]:
    """A table's ``deal_end`` and ``session_result`` records (in their order) grouped by
    session: (its deal ends, its result); the last has no result while it is played."""
    out: list[tuple[list[dict], dict | None]] = []
    deals: list[dict] = []
    for r in results:
        if r["type"] == "deal_end":
            deals.append(r)
        elif r["type"] == "session_result":
            out.append((deals, r))
            deals = []
    if deals:
        out.append((deals, None))
    return out
