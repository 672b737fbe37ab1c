"""A tournament's own rules, beside the referee's: forfeit scoring, byes, the ranking chain.

The referee ruleset says how a table is played; these say how a round that was not played
counts in the standings. They are keyed by the same ruleset name as the tournament's
tables:

- ``competition`` (source 000): a forfeit is X4, recorded 17:0, the winner 4 levels
  above; the standings rank by the competition chain of S2.
- ``liumoer-2026`` (seed 001, the 2026 六摩尔 cup): a forfeit "counts as the opponents
  winning the round, scored A:6" (art. 3), i.e. levels A and 6: level difference 8,
  22:6 on the 28-point table, 12 and 4 levels climbed from 2; the standings rank by the
  001 chain (match points, opponents' total, level difference, upgrades; art. 5).

Every other ruleset (report6, fast15, a TOML file...) is a variant of the competition
rule book and takes its tournament rules. A bye counts as the setting ``bye`` says, in
every tie-break at once: ``"win"`` (the default) as a forfeit win under the same rules,
``"draw"`` as a 14:14 draw. The seeds say nothing about byes.
"""

from __future__ import annotations

from dataclasses import dataclass

from referee.cards import parse_rank
from referee.scoring import table_score

BYE_COUNTS = ("win", "draw")


@dataclass(frozen=True)
class RoundScore:
    """What one unplayed round (forfeit or bye) gives the pair that wins it and the other.

    Pairs of values are (winner, loser); ``level_difference`` is the winner's (the loser
    gets its negative); ``ld_points`` are on the 26-point scale of S2.
    """

    rule: str
    """Where the scoring comes from (shown on score sheets)."""
    match_points: tuple[int, int]
    score: tuple[int, int]
    level_difference: int
    ld_points: tuple[int, int]
    upgrades: tuple[int, int]
    won: bool = True
    levels: tuple[str, str] | None = None
    """The levels (winner, loser) the round counts as ending at, where the rule names them."""

    @classmethod
    def as_levels(cls, winner: str, loser: str, rule: str) -> RoundScore:
        """A round counted as if it had ended at levels ``winner``:``loser`` (from 2 each)."""
        a, b = parse_rank(winner), parse_rank(loser)
        d, score = table_score({"NS": a, "EW": b}, "NS")
        d13 = min(d, 13)
        return cls(rule, (2, 0), (score["NS"], score["EW"]), d, (13 + d13, 13 - d13), (a, b), levels=(winner, loser))


DRAW = RoundScore("draw", (1, 1), (14, 14), 0, (13, 13), (0, 0), won=False)


@dataclass(frozen=True)
class TournamentRules:
    name: str
    chain: str
    """The default S2 ranking chain (an event may name another)."""
    forfeit: RoundScore
    bye: str = "win"
    """How a bye counts in every tie-break: ``win`` (as a forfeit win) or ``draw``."""

    def __post_init__(self) -> None:
        if self.bye not in BYE_COUNTS:
            raise ValueError(f"bye must be one of {', '.join(BYE_COUNTS)}, not {self.bye!r}")

    @property
    def bye_score(self) -> RoundScore:
        return self.forfeit if self.bye == "win" else DRAW


COMPETITION = TournamentRules(
    "competition", "competition",
    RoundScore("X4", (2, 0), (17, 0), 4, (17, 0), (0, 0)))
LIUMOER_2026 = TournamentRules("liumoer-2026", "001", RoundScore.as_levels("A", "6", "001 art. 3"))

RULES: dict[str, TournamentRules] = {r.name: r for r in (COMPETITION, LIUMOER_2026)}


def rules_for(ruleset: str) -> TournamentRules:
    """The tournament rules of the ruleset a tournament's tables play (see the module doc)."""
    return RULES.get(ruleset, COMPETITION)
