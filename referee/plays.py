"""Legal plays from a hand: every distinct play that leads, or that beats the table.

Work happens on rank counts, not on card subsets, so a 27-card hand with two wildcards is
enumerated in a few milliseconds. A *distinct play* is a reading together with the rank
multiset it uses and how many wildcards stand in for each rank; the concrete cards are a
canonical choice among equal faces (suits matter only for straight flushes, which are
enumerated per suit). So ``7S 7D`` and ``7H 7C`` are one play (pair of 7s), but
``7S 7D`` and ``7S`` + wildcard are two.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import product
from typing import NamedTuple

from .cards import ACE, BIG_JOKER_RANK, BJ, HEARTS, SJ, SMALL_JOKER_RANK, Card, Rank, cards_name
from .combos import CombType, Reading, readings


class Play(NamedTuple):
    """Concrete cards and the reading they are played as."""

    cards: tuple[Card, ...]
    reading: Reading

    def __str__(self) -> str:
        return f"{cards_name(self.cards)} as {self.reading}"


class _Hand:
    """A hand split into natural cards per rank (and per suit) and wildcards."""

    def __init__(self, hand: Sequence[Card], level: Rank) -> None:
        self.level = level
        self.wild = level * 4 + HEARTS
        self.wilds = sum(1 for c in hand if c == self.wild)
        self.by_rank: dict[Rank, list[Card]] = {r: [] for r in range(BIG_JOKER_RANK + 1)}
        self.by_suit: list[dict[Rank, list[Card]]] = [{r: [] for r in range(ACE + 1)} for _ in range(4)]
        for card in sorted(hand):
            if card != self.wild:
                self.by_rank[card >> 2].append(card)
                if card < SJ:
                    self.by_suit[card & 3][card >> 2].append(card)

    def count(self, rank: Rank) -> int:
        return len(self.by_rank[rank])


def _usages(need: Sequence[tuple[Rank, int, int]], wilds: int) -> Iterator[tuple[int, ...]]:
    """Ways to cover ``need`` = [(rank, wanted, held)] with at most ``wilds`` wildcards.

    Yields, per rank, how many wildcards stand in for it (at least the shortfall)."""
    base = [max(0, wanted - held) for _, wanted, held in need]
    spare = wilds - sum(base)
    if spare < 0:
        return
    if spare == 0:
        yield tuple(base)
        return
    ranges = [range(b, min(wanted, b + spare) + 1) for b, (_, wanted, _) in zip(base, need)]
    for usage in product(*ranges):
        if sum(usage) <= wilds:
            yield usage


class LegalPlays:
    """Lazy view of the legal plays of ``hand`` at ``level`` (leads, or beating ``table``).

    Supports iteration, ``bool`` (is there any legal play other than passing?) and ``in``
    (is this card multiset, under some reading, a legal play here?).
    """

    def __init__(self, hand: Sequence[Card], level: Rank, table: Reading | None = None) -> None:
        self.hand = tuple(hand)
        self.level = level
        self.table = table

    def __iter__(self) -> Iterator[Play]:
        h = _Hand(self.hand, self.level)
        table = self.table
        seen: set[tuple] = set()
        for play in self._candidates(h):
            reading = play.reading
            key = (play.cards, reading.type, reading.rank)
            if key not in seen and (table is None or reading.beats(table)):
                seen.add(key)
                yield play

    def __bool__(self) -> bool:
        return next(iter(self), None) is not None

    def __contains__(self, cards: object) -> bool:
        if not isinstance(cards, (list, tuple)):
            return False
        remaining = list(self.hand)
        for card in cards:
            if card not in remaining:
                return False
            remaining.remove(card)
        return any(self.table is None or r.beats(self.table) for r in readings(cards, self.level))

    def _wanted_types(self) -> set[CombType] | None:
        """Types worth generating: all for a lead, else the table's type plus bombs."""
        if self.table is None:
            return None
        bombs = {CombType.BOMB, CombType.STRAIGHT_FLUSH, CombType.FOUR_JOKERS}
        return bombs if self.table.is_bomb else bombs | {self.table.type}

    def _candidates(self, h: _Hand) -> Iterator[Play]:
        wanted = self._wanted_types()

        def want(t: CombType) -> bool:
            return wanted is None or t in wanted

        if want(CombType.SINGLE):
            yield from self._groups(h, 1, CombType.SINGLE, jokers=True)
        if want(CombType.PAIR):
            yield from self._groups(h, 2, CombType.PAIR, jokers=True)
        if want(CombType.TRIPLE):
            yield from self._groups(h, 3, CombType.TRIPLE, jokers=False)
        if want(CombType.FULL_HOUSE):
            yield from self._full_houses(h)
        if want(CombType.STRAIGHT):
            yield from self._sequences(h, CombType.STRAIGHT, 5, 1)
        if want(CombType.TUBE):
            yield from self._sequences(h, CombType.TUBE, 3, 2)
        if want(CombType.PLATE):
            yield from self._sequences(h, CombType.PLATE, 2, 3)
        if want(CombType.BOMB):
            for size in range(4, 11):
                yield from self._groups(h, size, CombType.BOMB, jokers=False)
        if want(CombType.STRAIGHT_FLUSH):
            yield from self._straight_flushes(h)
        if want(CombType.FOUR_JOKERS) and h.count(SMALL_JOKER_RANK) == 2 and h.count(BIG_JOKER_RANK) == 2:
            yield Play((SJ, SJ, BJ, BJ), Reading(CombType.FOUR_JOKERS, BIG_JOKER_RANK, 4, h.level))

    def _build(self, h: _Hand, need, usage, ctype: CombType, key: Rank, size: int, suit=None) -> Play:
        pools = h.by_rank if suit is None else h.by_suit[suit]
        cards: list[Card] = []
        wild_as: list[Rank] = []
        for (rank, wanted, _), used in zip(need, usage):
            if wanted > used:
                cards += pools[rank][: wanted - used]
            if used:
                wild_as += [rank] * used
        if wild_as:
            cards += [h.wild] * len(wild_as)
        cards.sort()
        return Play(tuple(cards), Reading(ctype, key, size, h.level, tuple(wild_as), suit))

    def _groups(self, h: _Hand, size: int, ctype: CombType, jokers: bool) -> Iterator[Play]:
        top = BIG_JOKER_RANK if jokers else ACE
        for rank in range(top + 1):
            held = h.count(rank)
            if rank > ACE:
                if held >= size:
                    card = SJ if rank == SMALL_JOKER_RANK else BJ
                    yield Play((card,) * size, Reading(ctype, rank, size, h.level))
                continue
            need = ((rank, size, held),)
            for usage in _usages(need, h.wilds):
                if usage[0] < size or rank == h.level:  # wildcards alone are read as themselves
                    yield self._build(h, need, usage, ctype, rank, size)

    def _full_houses(self, h: _Hand) -> Iterator[Play]:
        for t in range(ACE + 1):
            # Two wildcards as the pair are the same cards whatever rank they stand for:
            # generate them once, as the level rank (or, playing the triple's rank, as 2 or 3).
            wild_pair = h.level if h.level != t else (0 if t != 0 else 1)
            held_t = h.count(t)
            if held_t + h.wilds < 3:
                continue
            for p in range(BIG_JOKER_RANK + 1):
                if p == t:
                    continue
                held_p = h.count(p)
                if p > ACE:
                    if held_p < 2:
                        continue
                    card = SJ if p == SMALL_JOKER_RANK else BJ
                    need = ((t, 3, held_t),)
                    for usage in _usages(need, h.wilds):
                        play = self._build(h, need, usage, CombType.FULL_HOUSE, t, 5)
                        yield Play(tuple(sorted(play.cards + (card, card))), play.reading)
                    continue
                need = ((t, 3, held_t), (p, 2, held_p))
                for usage in _usages(need, h.wilds):
                    if usage[1] < 2 or p == wild_pair:
                        yield self._build(h, need, usage, CombType.FULL_HOUSE, t, 5)

    def _sequences(self, h: _Hand, ctype: CombType, width: int, per: int) -> Iterator[Play]:
        size = width * per
        for start in range(0, 15 - width):
            ranks = [ACE if pos == 0 else pos - 1 for pos in range(start, start + width)]
            need = tuple((r, per, h.count(r)) for r in ranks)
            for usage in _usages(need, h.wilds):
                yield self._build(h, need, usage, ctype, ranks[-1], size)

    def _straight_flushes(self, h: _Hand) -> Iterator[Play]:
        for suit in range(4):
            suited = h.by_suit[suit]
            for start in range(0, 10):
                ranks = [ACE if pos == 0 else pos - 1 for pos in range(start, start + 5)]
                need = tuple((r, 1, len(suited[r])) for r in ranks)
                for usage in _usages(need, h.wilds):
                    yield self._build(h, need, usage, CombType.STRAIGHT_FLUSH, ranks[-1], 5, suit)


def legal_plays(hand: Sequence[Card], level: Rank, table: Reading | None = None) -> LegalPlays:
    """Every distinct legal lead (``table=None``) or follow that beats ``table``."""
    return LegalPlays(hand, level, table)
