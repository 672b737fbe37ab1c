"""Levels, upgrades and scores (RULES.md U1-U3, S1): small pure functions on plain values."""

from __future__ import annotations

from dataclasses import dataclass

from .cards import ACE, Rank, rank_name
from .seats import Seat, Side, partner, side_of

PASSED_A = ACE + 1
"""S1: the level index of a side that has passed A."""

UPGRADE_BY_PARTNER_PLACE = {1: 3, 2: 2, 3: 1}
"""U1: the 上游's partner finishing 二游 / 三游 / 下游 moves the side up 3 / 2 / 1."""


def level_name(level: int) -> str:
    return "A+" if level >= PASSED_A else rank_name(level)


@dataclass(frozen=True)
class DealOutcome:
    """What a finished deal does to the levels (U1-U3)."""

    order: tuple[Seat, ...]
    winner: Side
    upgrade: int
    levels: dict[Side, int]
    passed_a: bool
    a_failures: dict[Side, int]


def deal_outcome(
    order: tuple[Seat, ...],
    levels: dict[Side, int],
    level_side: Side | None,
    a_failures: dict[Side, int],
    a_pass_needs_second: bool,
    a_reset_after: int,
) -> DealOutcome:
    """Apply U1-U3 to ``levels`` for a deal that finished in ``order`` (上游 first).

    ``level_side`` is the side whose level the deal was played at (None in deal 1, when
    both sides play 2). A side at A passes it only in a deal played at its own A.
    """
    first = order[0]
    winner = side_of(first)
    place = order.index(partner(first))
    upgrade = UPGRADE_BY_PARTNER_PLACE[place]
    new_levels = dict(levels)
    failures = dict(a_failures)
    passed = False
    at_a_deal = level_side is not None and levels[level_side] == ACE
    if at_a_deal and winner == level_side:
        passed = place == 1 if a_pass_needs_second else place != 3
    if passed:
        new_levels[winner] = PASSED_A
    else:
        new_levels[winner] = min(levels[winner] + upgrade, ACE)
        if at_a_deal and a_reset_after:
            failures[level_side] = failures.get(level_side, 0) + 1
            if failures[level_side] >= a_reset_after:
                new_levels[level_side], failures[level_side] = 0, 0
    return DealOutcome(tuple(order), winner, upgrade, new_levels, passed, failures)


def table_score(levels: dict[Side, int], winner: Side | None) -> tuple[int, dict[Side, int]]:
    """S1: level difference d = min(|a - b|, 14); winner 14 + d, loser 14 - d."""
    d = min(abs(levels["NS"] - levels["EW"]), 14)
    if winner is None:
        return d, {"NS": 14, "EW": 14}
    loser = "EW" if winner == "NS" else "NS"
    return d, {winner: 14 + d, loser: 14 - d}


def deal_level(levels: dict[Side, int], level_side: Side | None) -> Rank:
    """The rank played in a deal: the level of the side that won the previous deal."""
    return 0 if level_side is None else min(levels[level_side], ACE)
