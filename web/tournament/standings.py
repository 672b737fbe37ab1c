"""Standings of a multi-round event with the tie-break chains of S2.

Pure: match results in, ranked rows out. Per round a pair scores 2 match points for a
win, 1 for a draw, 0 for a loss, and level-difference points on the 26-point scale
(13 ± d, d capped at 13). Two chains rank equal match points:

- ``competition`` (000): 去首累进分 (the sum of the running match-point totals after
  round 2, 3, ... i.e. leaving out round 1), rounds won, level-difference points, total
  upgrades, then lot;
- ``001``: opponents' total match points, total (signed) level difference, total
  upgrades, then lot.

A forfeit (K5, X4) and a bye count as the tournament's rules say (``rules``): under the
competition rules a forfeit is 17:0, the winner 2 match points and 13 + 4
level-difference points, the forfeiting pair 0 and 0; a bye counts as a forfeit win
(the pair could not play through no fault of its own).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from .rules import COMPETITION, RoundScore, TournamentRules

CHAINS: dict[str, tuple[str, ...]] = {
    "competition": ("match_points", "progressive", "rounds_won", "ld_points", "upgrades"),
    "001": ("match_points", "opponents_points", "level_difference", "upgrades"),
}


@dataclass(frozen=True)
class MatchResult:
    """The outcome of one table of one round, as the standings need it.

    ``winner`` is ``"NS"``, ``"EW"`` or None (draw); ``ew`` None is a bye; ``forfeit``
    names the pair that forfeited; ``upgrades`` counts each side's levels gained;
    ``disputed``: the result is under dispute (it counts as recorded until resolved).
    """

    round: int
    ns: str
    ew: str | None
    winner: str | None = None
    level_difference: int = 0
    score: tuple[int, int] = (14, 14)
    upgrades: tuple[int, int] = (0, 0)
    forfeit: str | None = None
    disputed: bool = False
    session: int = 1
    """The table's session that counts: another than the first only by the chief referee's ruling."""


@dataclass(frozen=True)
class PairRound:
    """One pair's line for one round."""

    round: int
    pair: str
    opponent: str | None
    match_points: int
    won: bool
    score: int
    ld_points: int
    level_difference: int
    upgrades: int


def pair_rounds(m: MatchResult, rules: TournamentRules = COMPETITION) -> list[PairRound]:
    """Split a match into the two pairs' lines (one line for a bye)."""
    if m.ew is None:
        return [_unplayed(m.round, m.ns, None, rules.bye_score, 0)]
    if m.forfeit is not None:
        if m.forfeit not in (m.ns, m.ew):
            raise ValueError(f"round {m.round}: forfeit by {m.forfeit!r}, who is not at this table")
        winner = m.ew if m.forfeit == m.ns else m.ns
        return [_unplayed(m.round, winner, m.forfeit, rules.forfeit, 0),
                _unplayed(m.round, m.forfeit, winner, rules.forfeit, 1)]
    if m.winner not in ("NS", "EW", None):
        raise ValueError(f"round {m.round}: winner must be NS, EW or None, not {m.winner!r}")
    d = min(m.level_difference, 13)
    lines = []
    for side, pair, opp, score, ups in (("NS", m.ns, m.ew, m.score[0], m.upgrades[0]),
                                        ("EW", m.ew, m.ns, m.score[1], m.upgrades[1])):
        sign = 0 if m.winner is None else (1 if m.winner == side else -1)
        mp = 1 if m.winner is None else (2 if sign > 0 else 0)
        lines.append(PairRound(m.round, pair, opp, mp, sign > 0, score, 13 + sign * d,
                               sign * m.level_difference, ups))
    return lines


def _unplayed(rnd: int, pair: str, opponent: str | None, counts: RoundScore, loser: int) -> PairRound:
    """A pair's line for a round not played: ``loser`` 0 takes the winner's values, 1 the loser's."""
    sign = -1 if loser else 1
    return PairRound(rnd, pair, opponent, counts.match_points[loser], counts.won and not loser,
                     counts.score[loser], counts.ld_points[loser], sign * counts.level_difference,
                     counts.upgrades[loser])


@dataclass
class Standing:
    pair: str
    rank: int = 0
    rounds_played: int = 0
    match_points: int = 0
    progressive: int = 0
    rounds_won: int = 0
    ld_points: int = 0
    level_difference: int = 0
    upgrades: int = 0
    opponents_points: int = 0
    score: int = 0
    lot: int = 0
    opponents: list[str] = field(default_factory=list)
    disputed: list[int] = field(default_factory=list)
    """Rounds whose result is under dispute (marked wherever the standings are shown)."""
    byes: list[int] = field(default_factory=list)
    """Rounds the pair had the bye."""
    sessions: list[tuple[int, int]] = field(default_factory=list)
    """(round, session) where the chief referee ruled that a session after the first counts."""

    def as_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items()}


def lots(pairs: list[str], seed: int) -> dict[str, int]:
    """The drawn lot of each pair (1 = best), reproducible from the event's seed."""
    order = sorted(pairs)
    random.Random(f"lot:{seed}").shuffle(order)
    return {p: i + 1 for i, p in enumerate(order)}


def standings(pairs: list[str], results: list[MatchResult], chain: str = "competition",
              seed: int = 0, rules: TournamentRules = COMPETITION) -> list[Standing]:
    """Ranked standings of ``pairs`` after ``results`` under the named S2 chain; forfeits
    and byes count as ``rules`` say."""
    if chain not in CHAINS:
        raise ValueError(f"unknown ranking chain {chain!r}: expected one of {', '.join(CHAINS)}")
    rows = {p: Standing(p) for p in pairs}
    per_round: dict[str, dict[int, int]] = {p: {} for p in pairs}
    for m in results:
        for line in pair_rounds(m, rules):
            if line.pair not in rows:
                raise ValueError(f"round {m.round}: unknown pair {line.pair!r}")
            row = rows[line.pair]
            row.rounds_played += 1
            row.match_points += line.match_points
            row.rounds_won += line.won
            row.ld_points += line.ld_points
            row.level_difference += line.level_difference
            row.upgrades += line.upgrades
            row.score += line.score
            if line.opponent is not None:
                row.opponents.append(line.opponent)
            elif m.ew is None:
                row.byes.append(m.round)
            if m.disputed:
                row.disputed.append(m.round)
            if m.session != 1:
                row.sessions.append((m.round, m.session))
            per_round[line.pair][line.round] = per_round[line.pair].get(line.round, 0) + line.match_points
    first = min((m.round for m in results), default=1)
    for pair, row in rows.items():
        running = 0
        for rnd in sorted(per_round[pair]):
            running += per_round[pair][rnd]
            if rnd != first:
                row.progressive += running
        row.opponents_points = sum(rows[o].match_points for o in row.opponents)
    for pair, lot in lots(pairs, seed).items():
        rows[pair].lot = lot
    keys = CHAINS[chain]
    ranked = sorted(rows.values(), key=lambda r: (*(-getattr(r, k) for k in keys), r.lot))
    for i, row in enumerate(ranked):
        row.rank = i + 1
    return ranked
