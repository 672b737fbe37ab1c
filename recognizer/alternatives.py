"""Other readings of an area: the reader's per-card alternatives as whole readings.

The referee weighs a doubtful read against the deal (:mod:`referee.doubt`); it needs the
readings the reader found plausible besides its best one, each with a probability on the
same scale as the read's ``confidence``. A reading here differs from the read in one card
(the reader names each card on its own, so the likeliest other readings are the ones that
swap the least certain card), and its probability is the read's confidence scaled by how
much likelier the reader found the other face than the read one.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from referee.cards import Card

MAX_READINGS = 8
"""At most this many alternatives go with a play (the event contract's limit)."""
FLOOR = 0.01
"""Readings less likely than this are left out: no context would ever make them the read."""

Readings = tuple[tuple[tuple[Card, ...], float], ...]
"""(cards as a sorted tuple, probability) of each alternative, most likely first."""


def area_alternatives(cards: Sequence[Card], per_card: Sequence[Sequence[tuple[Card, float]]],
                      confidence: float) -> Readings:
    """``cards`` (sorted) and, in the same order, each card's likeliest faces with their
    probabilities (the read face first): the likeliest readings that swap one card."""
    found: dict[tuple[Card, ...], float] = defaultdict(float)
    for i, faces in enumerate(per_card):
        if not faces or faces[0][1] <= 0:
            continue
        read_p = faces[0][1]
        for face, p in faces[1:]:
            swapped = tuple(sorted([*cards[:i], face, *cards[i + 1:]]))
            found[swapped] += confidence * p / read_p
    ranked = sorted(((c, round(min(p, 1.0), 4)) for c, p in found.items() if p >= FLOOR and c != tuple(cards)),
                    key=lambda item: (-item[1], item[0]))
    return tuple(ranked[:MAX_READINGS])


def played_alternatives(area: Readings, before: Sequence[Card]) -> Readings:
    """The alternatives of a play from those of the whole area: the cards each reading
    adds to what the area showed ``before`` (readings that do not hold it are dropped)."""
    out = []
    for cards, p in area:
        rest = list(cards)
        try:
            for card in before:
                rest.remove(card)
        except ValueError:
            continue
        if rest:
            out.append((tuple(rest), p))
    return tuple(out)
