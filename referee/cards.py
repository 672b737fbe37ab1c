"""Card faces, ranks and suits in the notation of RULES.md.

A card face is a small ``int`` (like python-chess squares) so that hands and plays are
cheap tuples and counting is array indexing:

* natural faces: ``rank * 4 + suit`` with rank ``0..12`` for ``2..A`` and suit ``0..3``
  for ``S H D C``;
* jokers: ``SJ = 13 * 4`` and ``BJ = 14 * 4``, so ``rank_of`` gives 13 and 14.

Two decks mean every face exists twice; the rules only ever look at faces (a multiset).
"""

from __future__ import annotations

from collections.abc import Iterable

Card = int
Rank = int

RANK_CHARS = "23456789TJQKA"
SUIT_CHARS = "SHDC"
SPADES, HEARTS, DIAMONDS, CLUBS = range(4)
ACE: Rank = 12
SMALL_JOKER_RANK: Rank = 13
BIG_JOKER_RANK: Rank = 14
SJ: Card = SMALL_JOKER_RANK * 4
BJ: Card = BIG_JOKER_RANK * 4

FACES: tuple[Card, ...] = tuple(range(52)) + (SJ, BJ)
"""The 54 faces of one deck, in rank-then-suit order."""
COPIES = 2
"""How many of each face the two decks hold (C1)."""
DOUBLE_DECK: tuple[Card, ...] = FACES * COPIES
"""The 108 cards of a Guandan deck (C1), as faces."""
DECK_SIZE = len(DOUBLE_DECK)
"""How many cards a Guandan deck holds: more different cards in one deal is another deck's."""


def over_copies(cards) -> list[Card]:
    """The faces of ``cards`` that occur more often than two decks hold (sorted)."""
    seen: dict[Card, int] = {}
    for card in cards:
        seen[card] = seen.get(card, 0) + 1
    return sorted(card for card, n in seen.items() if n > COPIES)


class CardError(ValueError):
    """A token that is not a card, rank or list of cards in RULES.md notation."""


def rank_of(card: Card) -> Rank:
    return card >> 2


def suit_of(card: Card) -> int:
    return card & 3


def is_joker(card: Card) -> bool:
    return card >= SJ


def make_card(rank: Rank, suit: int) -> Card:
    return rank * 4 + suit


_NAME_TO_CARD = {r + s: i * 4 + j for i, r in enumerate(RANK_CHARS) for j, s in enumerate(SUIT_CHARS)}
_NAME_TO_CARD.update(SJ=SJ, BJ=BJ)
_CARD_TO_NAME = {c: n for n, c in _NAME_TO_CARD.items()}
_RANK_NAMES = {**{c: i for i, c in enumerate(RANK_CHARS)}, "SJ": SMALL_JOKER_RANK, "BJ": BIG_JOKER_RANK}


def parse_card(token: str) -> Card:
    """``"TH"`` -> the 10 of hearts; raises :class:`CardError` naming the bad token."""
    card = _NAME_TO_CARD.get(token.strip().upper()) if isinstance(token, str) else None
    if card is None:
        raise CardError(
            f"not a card: {token!r} (expected rank 2-9TJQKA + suit SHDC, e.g. 'TH', or 'SJ'/'BJ')"
        )
    return card


def card_name(card: Card) -> str:
    try:
        return _CARD_TO_NAME[card]
    except KeyError:
        raise CardError(f"not a card code: {card!r}") from None


def parse_cards(text: str | Iterable[str]) -> list[Card]:
    """Parse ``"3S 4S 5H"`` (spaces or commas) or a list of tokens."""
    tokens = text.replace(",", " ").split() if isinstance(text, str) else list(text)
    return [parse_card(t) for t in tokens]


def cards_name(cards: Iterable[Card]) -> str:
    """Space-separated names, sorted by rank then suit (the order of P6)."""
    return " ".join(card_name(c) for c in sorted(cards))


def parse_rank(token: str) -> Rank:
    """A level or rank: ``"2"``..``"A"`` (``"10"`` is accepted for ``"T"``), ``"SJ"``/``"BJ"``."""
    key = token.strip().upper() if isinstance(token, str) else None
    if key == "10":
        key = "T"
    rank = _RANK_NAMES.get(key) if key is not None else None
    if rank is None:
        raise CardError(f"not a rank: {token!r} (expected one of 2-9 T J Q K A)")
    return rank


def parse_level(token: str) -> Rank:
    """A level is a natural rank ``2``..``A``; jokers are no level."""
    rank = parse_rank(token)
    if rank > ACE:
        raise CardError(f"not a level: {token!r} (levels are 2..A)")
    return rank


def rank_name(rank: Rank) -> str:
    if rank == SMALL_JOKER_RANK:
        return "SJ"
    if rank == BIG_JOKER_RANK:
        return "BJ"
    return RANK_CHARS[rank]


def wildcard(level: Rank) -> Card:
    """The heart level card (C3): two copies are in play each deal."""
    return level * 4 + HEARTS
