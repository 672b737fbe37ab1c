"""Corner indices -> a multiset of cards (pure; no model, no image).

A card prints its index twice: upright at the top-left and upside down at the
bottom-right. In a row of overlapping cards most show one of the two, the top card shows
both, and two cards of the same face (two decks) show up to four. So for each face the
count is ``upright + inverted - pairs``, where a pair is an upright and an inverted index
of that face placed like the two corners of one card (down and to the right, a card's
diagonal away, given the index size). Pairs are matched maximally, which can only
merge indices that could be one card; it never merges two upright (or two inverted)
indices, so identical faces side by side count twice.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from referee.cards import Card

# The far corner sits this many index heights away (a card's diagonal across designs; a tall
# stacked JOKER index gives the low end),
# in a direction from "right" (0 degrees) to "down" (90): rows may tilt by up to ~35 degrees.
PAIR_DISTANCE = (1.2, 9.0)
PAIR_ANGLE_DEG = (10.0, 100.0)
PAIR_SIZE_RATIO = 1.8


@dataclass(frozen=True)
class IndexHit:
    """One read corner index: face, upside down or not, pixel box, confidence."""

    card: Card
    inverted: bool
    box: tuple[float, float, float, float]
    conf: float


def _centre(box: tuple[float, float, float, float]) -> tuple[float, float]:
    return (box[0] + box[2]) / 2, (box[1] + box[3]) / 2


def could_pair(up: IndexHit, down: IndexHit) -> bool:
    """True when ``down`` sits where the bottom-right index of ``up``'s card would."""
    hu, hd = up.box[3] - up.box[1], down.box[3] - down.box[1]
    if min(hu, hd) <= 0 or max(hu, hd) / min(hu, hd) > PAIR_SIZE_RATIO:
        return False
    (ux, uy), (dx, dy) = _centre(up.box), _centre(down.box)
    vx, vy = dx - ux, dy - uy
    dist = math.hypot(vx, vy) / ((hu + hd) / 2)
    angle = math.degrees(math.atan2(vy, vx))
    return PAIR_DISTANCE[0] <= dist <= PAIR_DISTANCE[1] and PAIR_ANGLE_DEG[0] <= angle <= PAIR_ANGLE_DEG[1]


def _max_matching(ups: list[IndexHit], downs: list[IndexHit]) -> int:
    """Size of a maximum matching between upright and inverted indices (Kuhn's algorithm)."""
    edges = [[j for j, d in enumerate(downs) if could_pair(u, d)] for u in ups]
    owner: list[int | None] = [None] * len(downs)

    def augment(i: int, seen: set[int]) -> bool:
        for j in edges[i]:
            if j in seen:
                continue
            seen.add(j)
            if owner[j] is None or augment(owner[j], seen):
                owner[j] = i
                return True
        return False

    return sum(augment(i, set()) for i in range(len(ups)))


def cards_from_indices(hits: Iterable[IndexHit]) -> list[Card]:
    """The multiset of cards the indices show, sorted by rank then suit."""
    by_face: dict[Card, tuple[list[IndexHit], list[IndexHit]]] = {}
    for hit in hits:
        ups, downs = by_face.setdefault(hit.card, ([], []))
        (downs if hit.inverted else ups).append(hit)
    counts = Counter({face: len(u) + len(d) - _max_matching(u, d) for face, (u, d) in by_face.items()})
    return sorted(counts.elements())
