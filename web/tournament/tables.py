"""The tournament side of what a table accepts: plugged into the store as its ``TableRules``.

A table a round's draw created (``<event>-R<round>-T<table>``) is refereed with its
tournament's ruleset, with the round's deal limit and time (W1), and its session must be
played by the two pairs the draw seated there; a pair with a bye plays no session, and a
match is one session unless the chief referee rules another (``sessions``).
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.engine import Connection

from referee.rulesets import tournament_ruleset
from web.store.models import Match, Tournament

from . import sessions


class TournamentTables:
    """``web.store.hooks.TableRules`` for tournament tables; other tables are left alone."""

    def ruleset(self, conn: Connection, table_id: str) -> str | None:
        event = conn.execute(
            select(Tournament).join(Match, Match.tournament_id == Tournament.id).where(Match.table_id == table_id)
        ).first()
        if event is None:
            return None
        return tournament_ruleset(event.ruleset, event.deal_limit, event.round_minutes)

    def refusal(self, conn: Connection, table_id: str, event: dict) -> str | None:
        if event["type"] != "session_start":
            return None
        match = conn.execute(select(Match).where(Match.table_id == table_id)).first()
        if match is None:
            return None
        if match.ew_pair is None:
            return f"pair {match.ns_pair} has a bye this round; no session is played"
        want = {"NS": match.ns_pair, "EW": match.ew_pair}
        teams = event.get("teams")
        if not isinstance(teams, dict) or {s: teams.get(s) for s in want} != want:
            return (f"session_start teams {teams!r} do not match the draw {want}; to bring a game file onto "
                    f"this drawn table: guandan-ref import FILE --table {table_id} (its teams become the draw's)")
        return sessions.refusal(conn, match)
