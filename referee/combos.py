"""Combinations (RULES.md C3-C7): every legal reading of a multiset of faces, and comparison.

A *reading* is one way the cards of a play can be taken: its type, its key rank, its size,
and what each wildcard (the two heart level cards, C3) stands for. A play may have several
readings; ``readings()`` returns all of them, strongest first, and ``default_reading()``
picks the one C7 prescribes.

Strength order used everywhere (and the fixed tie-break C7 asks to document):

* bombs above every non-bomb, among them by C6 (``bomb_power``);
* non-bombs by key rank (C2 order: level card above A, jokers above it; sequences by their
  natural top card, A-low lowest);
* then by type, ``plate > tube > straight > full_house > triple > pair > single``.
  Only plays of the same size can tie on key rank, so this only decides plate vs tube
  (6 cards) and straight vs full house (5 cards).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import NamedTuple

from .cards import (
    ACE,
    BIG_JOKER_RANK,
    HEARTS,
    SMALL_JOKER_RANK,
    SUIT_CHARS,
    Card,
    Rank,
    rank_name,
)


class CombType(enum.Enum):
    SINGLE = "single"
    PAIR = "pair"
    TRIPLE = "triple"
    FULL_HOUSE = "full_house"
    STRAIGHT = "straight"
    TUBE = "tube"
    PLATE = "plate"
    BOMB = "bomb"
    STRAIGHT_FLUSH = "straight_flush"
    FOUR_JOKERS = "four_jokers"

    def __repr__(self) -> str:
        return f"CombType.{self.name}"

    @property
    def is_bomb(self) -> bool:
        return self in _BOMB_TYPES


_BOMB_TYPES = frozenset({CombType.BOMB, CombType.STRAIGHT_FLUSH, CombType.FOUR_JOKERS})
TYPE_ORDER: dict[CombType, int] = {
    t: i
    for i, t in enumerate(
        (
            CombType.SINGLE,
            CombType.PAIR,
            CombType.TRIPLE,
            CombType.FULL_HOUSE,
            CombType.STRAIGHT,
            CombType.TUBE,
            CombType.PLATE,
        )
    )
}
"""The fixed tie-break between non-bomb types of equal key rank (higher wins)."""


class ComboError(ValueError):
    """A play that cannot be read as asked (no such combination, unknown declared type)."""


def parse_comb_type(token: str) -> CombType:
    try:
        return CombType(token.strip().lower())
    except (ValueError, AttributeError):
        names = ", ".join(t.value for t in CombType)
        raise ComboError(f"not a combination type: {token!r} (expected one of {names})") from None


def order_value(rank: Rank, level: Rank) -> int:
    """C2 order for singles, pairs, triples, full houses and bombs."""
    if rank == level:
        return 13
    if rank >= SMALL_JOKER_RANK:
        return rank + 1
    return rank


class Reading(NamedTuple):
    """One reading of a play (an immutable value; a named tuple because millions are made).

    ``rank`` is the key rank: the top card of a sequence (``3`` for ``A2345``), the triple
    of a full house, otherwise the common rank (13 = SJ, 14 = BJ; four jokers: BJ).
    ``wild_as`` lists, per wildcard used, the rank it stands for (a wildcard played as
    itself stands for the level rank); ``suit`` is the suit of a straight flush.
    """

    type: CombType
    rank: Rank
    size: int
    level: Rank
    wild_as: tuple[Rank, ...] = ()
    suit: int | None = None

    @property
    def is_bomb(self) -> bool:
        return self.type in _BOMB_TYPES

    @property
    def bomb_power(self) -> int:
        """C6 among bombs: four jokers > 6..10 (size, then rank) > straight flush > 5 > 4."""
        t = self.type
        if t is CombType.FOUR_JOKERS:
            return 1000
        if t is CombType.STRAIGHT_FLUSH:
            return 300 + self.rank
        if t is CombType.BOMB:
            value = order_value(self.rank, self.level)
            return (100 if self.size == 4 else 200 if self.size == 5 else 100 * (self.size - 2)) + value
        return 0

    @property
    def strength(self) -> tuple[int, int, int]:
        """Total order used for C7's "strongest reading" (see the module docstring)."""
        if self.is_bomb:
            return (1, self.bomb_power, 0)
        if self.type in _SEQUENCE_TYPES:
            return (0, self.rank, TYPE_ORDER[self.type])
        return (0, order_value(self.rank, self.level), TYPE_ORDER[self.type])

    def beats(self, other: Reading) -> bool:
        """C6: does this reading beat ``other`` lying on the table?"""
        if self.is_bomb:
            return not other.is_bomb or self.bomb_power > other.bomb_power
        return self.type is other.type and self.strength > other.strength

    def to_json(self) -> dict:
        out = {
            "type": self.type.value,
            "rank": rank_name(self.rank),
            "size": self.size,
            "wild_as": [rank_name(r) for r in self.wild_as],
        }
        if self.suit is not None:
            out["suit"] = SUIT_CHARS[self.suit]
        return out

    def __str__(self) -> str:
        return f"{self.type.value} {rank_name(self.rank)} ({self.size})"


_SEQUENCE_TYPES = frozenset({CombType.STRAIGHT, CombType.TUBE, CombType.PLATE, CombType.STRAIGHT_FLUSH})


def _window_fill(counts: dict[Rank, int], width: int, per: int) -> list[tuple[int, tuple[Rank, ...]]]:
    """Windows of ``width`` consecutive positions holding every natural rank of ``counts``
    at most ``per`` times; returns (top rank, ranks the wildcards must supply) per window.
    Positions are 0 = A (low), 1..13 = 2..A (high); no wrap (C5)."""
    if max(counts.values()) > per:
        return []
    found = []
    placements = [[r + 1 for r in counts]]
    if ACE in counts:
        placements.append([0 if r == ACE else r + 1 for r in counts])
    for positions in placements:
        lo, hi = min(positions), max(positions)
        for start in range(max(0, hi - width + 1), min(lo, 14 - width) + 1):
            missing: list[Rank] = []
            for position in range(start, start + width):
                rank = ACE if position == 0 else position - 1
                missing.extend([rank] * (per - counts.get(rank, 0)))
            found.append((start + width - 2, tuple(missing)))  # the top position's rank
    return found


def _classify(cards: tuple[Card, ...], level: Rank) -> tuple[Reading, ...]:
    n = len(cards)
    if not 1 <= n <= 10:
        return ()
    wild = level * 4 + HEARTS
    w = cards.count(wild)
    counts: dict[Rank, int] = {}
    for card in cards:
        if card != wild:
            rank = card >> 2
            counts[rank] = counts.get(rank, 0) + 1
    has_joker = SMALL_JOKER_RANK in counts or BIG_JOKER_RANK in counts
    found: list[Reading] = []

    if len(counts) <= 1:
        rank = next(iter(counts), level)
        if w and rank >= SMALL_JOKER_RANK:
            pass  # a wildcard never stands for a joker
        elif n <= 3 and not (n == 3 and rank >= SMALL_JOKER_RANK):
            found.append(Reading(_SAME_RANK_TYPES[n], rank, n, level, (rank,) * w))
        elif n >= 4 and rank <= ACE:
            found.append(Reading(CombType.BOMB, rank, n, level, (rank,) * w))

    if n == 4 and w == 0 and counts == {SMALL_JOKER_RANK: 2, BIG_JOKER_RANK: 2}:
        found.append(Reading(CombType.FOUR_JOKERS, BIG_JOKER_RANK, 4, level))
    elif n == 5:
        found.extend(_full_houses(counts, w, level))
        if not has_joker and len(counts) == 5 - w:
            suits = {card & 3 for card in cards if card != wild}
            for top, missing in _window_fill(counts, 5, 1):
                found.append(Reading(CombType.STRAIGHT, top, 5, level, missing))
                if len(suits) == 1:
                    found.append(Reading(CombType.STRAIGHT_FLUSH, top, 5, level, missing, next(iter(suits))))
    elif n == 6 and not has_joker and len(counts) <= 3:
        for top, missing in _window_fill(counts, 3, 2):
            found.append(Reading(CombType.TUBE, top, 6, level, missing))
        if len(counts) <= 2:
            for top, missing in _window_fill(counts, 2, 3):
                found.append(Reading(CombType.PLATE, top, 6, level, missing))
    found.sort(key=lambda r: r.strength, reverse=True)
    return tuple(found)


_SAME_RANK_TYPES = {1: CombType.SINGLE, 2: CombType.PAIR, 3: CombType.TRIPLE}


def _full_houses(counts: dict[Rank, int], w: int, level: Rank) -> list[Reading]:
    """Triple + pair of another rank (the pair may be jokers; the triple may not)."""
    if len(counts) == 2:
        (a, ca), (b, cb) = counts.items()
        found = []
        for (t, ct), (p, cp) in (((a, ca), (b, cb)), ((b, cb), (a, ca))):
            if t <= ACE and ct <= 3 and cp <= 2 and (p <= ACE or cp == 2):
                found.append(Reading(CombType.FULL_HOUSE, t, 5, level, (t,) * (3 - ct) + (p,) * (2 - cp)))
        return found
    if len(counts) == 1 and w == 2:
        (t, ct), = counts.items()
        if t <= ACE and ct == 3:
            pair = level if level != t else (0 if t != 0 else 1)
            return [Reading(CombType.FULL_HOUSE, t, 5, level, (pair, pair))]
    return []


def readings(cards: Sequence[Card], level: Rank) -> tuple[Reading, ...]:
    """All legal readings of ``cards`` at ``level``, strongest first; empty if illegal."""
    return _classify(tuple(sorted(cards)), level)


def default_reading(
    cards: Sequence[Card],
    level: Rank,
    table: Reading | None = None,
    declared: CombType | None = None,
) -> Reading | None:
    """C7: the declared reading if given, else the strongest reading (that beats ``table``).

    Returns ``None`` when no reading qualifies: not a combination, the declared type is not
    a reading of these cards, or (with ``table``) nothing beats the table.
    """
    for reading in readings(cards, level):
        if declared is not None and reading.type is not declared:
            continue
        if table is None or reading.beats(table):
            return reading
    return None
