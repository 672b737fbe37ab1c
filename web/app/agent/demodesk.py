"""The demo's tournament desk: an event of the shipped pair list, its rounds drawn,
signed and ranked by the tournament service, as a tournament's desk does it.

The event takes the first ``2 * tables`` pairs of the list (``examples/demo-pairs.csv``:
Chinese team and player names), so round 1 seats every pair and every later Swiss round
as well. A round is ``deals`` deals (the event's deal limit, W1): the referee ends a table's
round with its session result and 28-point score when the limit is reached (one deal more
when the levels are equal), and the score sheet names the ending ("Deal limit reached").
Once a table has its result the two pairs sign it (S3), so that the next round may be
drawn; the standings count every round all of whose tables have a result.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from referee.rulesets import Ruleset
from web.store import Store
from web.tournament import service, signoff
from web.tournament.pairlist import read_pairs
from web.tournament.service import MatchInfo

PAIRS = Path(__file__).resolve().parents[3] / "examples" / "demo-pairs.csv"
EVENT = "demo"
EVENT_NAME = "掼蛋示范赛 Demo cup"


def round_minutes(deals: int) -> int:
    """The round's time limit (W1) for a round of ``deals`` deals: the competition's 50
    minutes, and 20 minutes a deal beyond two. A simulated deal takes up to about 15
    minutes of the bots' time (9 on average), so the deal limit, not the clock, ends
    every table's round, on the bots' clock and the camera's alike."""
    return max(50, 20 * deals + 10)


@dataclass(frozen=True)
class Desk:
    store: Store
    event: str = EVENT

    @classmethod
    def open(cls, store: Store, tables: int, deals: int, rounds: int, seed: int, pairs: Path = PAIRS) -> Desk:
        """A new event of the first ``2 * tables`` pairs of ``pairs``, ``rounds`` rounds of
        ``deals`` deals; raises ``ValueError`` (the pair list's or the service's) naming the problem."""
        entries, _ = read_pairs(pairs)
        if len(entries) < 2 * tables:
            raise ValueError(f"{pairs}: {len(entries)} pairs, {tables} tables need {2 * tables}")
        if rounds > 2 * tables - 1:
            raise ValueError(f"--rounds {rounds}: {2 * tables} pairs meet each other in at most "
                             f"{2 * tables - 1} rounds")
        service.create(store, EVENT, EVENT_NAME, rounds=rounds, round_minutes=round_minutes(deals),
                       deal_limit=deals, seed=seed)
        service.add_pairs(store, EVENT, entries[:2 * tables])
        return cls(store)

    @property
    def ruleset(self) -> Ruleset:
        """What the event's tables are refereed with (the deal limit and round time included)."""
        return service.ruleset(self.store, self.event)

    def draw(self) -> list[MatchInfo]:
        """The next round's tables (round 1 by the event's seed, later rounds Swiss)."""
        return service.pair_round(self.store, self.event)

    @staticmethod
    def teams(match: MatchInfo) -> dict[str, str]:
        """The teams of the match's session_start: the pairs the draw seated there."""
        return {"NS": match.ns, "EW": match.ew}

    def waiting(self, round_no: int) -> list[str]:
        """The tables of ``round_no`` without a result yet."""
        return [m.table_id for m in service.matches(self.store, self.event, round_no)
                if service.match_state(self.store, m) == "no result"]

    def sign(self, round_no: int) -> int:
        """Each side of each result of ``round_no`` not yet signed signs it through its
        first player (S3); returns the signatures given."""
        players = {p["pair"]: p["players"][0] for p in service.pairs(self.store, self.event)}
        given = 0
        for m in service.matches(self.store, self.event, round_no):
            if m.ew is None or service.match_state(self.store, m) != "pending":
                continue
            status = signoff.status(self.store, m.table_id, signoff.sessions(self.store, m.table_id))
            for side, pair in (("NS", m.ns), ("EW", m.ew)):
                if side not in status.signed:
                    signoff.sign(self.store, m.table_id, side, players[pair],
                                 signoff.sessions(self.store, m.table_id))
                    given += 1
        return given

    def results(self, round_no: int) -> list[str]:
        """One line per table of ``round_no``: the teams, the 28-point score, the sign-off."""
        names = {p["pair"]: p["name"] for p in service.pairs(self.store, self.event)}
        lines = []
        for m in service.matches(self.store, self.event, round_no):
            teams = f"{names[m.ns]} (NS) v {names[m.ew]} (EW)" if m.ew else f"{names[m.ns]}: bye"
            sessions = self.store.records(m.table_id, types=("session_result",))
            score = (f"{sessions[-1]['score']['NS']}:{sessions[-1]['score']['EW']}, levels "
                     f"{sessions[-1]['levels']['NS']}:{sessions[-1]['levels']['EW']}" if sessions else "no result yet")
            lines.append(f"  {m.table_id}  {teams}  {score}  ({service.match_state(self.store, m)})")
        return lines

    def standings(self) -> list[str]:
        """The standings after the rounds all of whose tables have a result."""
        names = {p["pair"]: p["name"] for p in service.pairs(self.store, self.event)}
        rows = service.standings_of(self.store, self.event, require_all=False)
        return [f"  {s.rank:>2}. {names[s.pair]} ({s.pair})  {s.match_points} MP, {s.score} points (28-point), "
                f"level difference {s.level_difference:+d}" for s in rows]
