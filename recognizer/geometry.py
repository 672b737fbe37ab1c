"""Corner indices -> a multiset of cards (pure; no model, no image).

A card prints its index twice: upright at the top-left and upside down at the
bottom-right. In a row of overlapping cards most show one of the two, the top card shows
both, and two cards of the same face (two decks) show up to four. So for each face the
count is ``upright + inverted - pairs``, where a pair is an upright and an inverted index
of that face placed like the two corners of one card (down and to the right, a card's
diagonal away, given the index size). Pairs are matched maximally, which can only
merge indices that could be one card; it never merges two upright (or two inverted)
indices, so identical faces side by side count twice.

Before counting, two hits of one face and orientation whose boxes overlap are one index
read twice (the detector's boxes around one index that NMS kept apart): the indices of
two different cards never overlap, since a covered index is not visible at all.
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
# Share of the smaller box that another box of the same face and orientation must cover
# to be the same index read twice (visible indices of two cards were measured to overlap
# by up to 0.44 in rendered rows).
SAME_INDEX_OVERLAP = 0.6


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


def _overlap(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> float:
    """Intersection over the smaller box's area."""
    iw = min(a[2], b[2]) - max(a[0], b[0])
    ih = min(a[3], b[3]) - max(a[1], b[1])
    if iw <= 0 or ih <= 0:
        return 0.0
    smaller = min((a[2] - a[0]) * (a[3] - a[1]), (b[2] - b[0]) * (b[3] - b[1]))
    return iw * ih / smaller if smaller > 0 else 0.0


def distinct_indices(hits: Iterable[IndexHit]) -> list[IndexHit]:
    """``hits`` without repeats: of overlapping hits of one face and orientation the most confident stays."""
    kept: list[IndexHit] = []
    for hit in sorted(hits, key=lambda h: -h.conf):
        if not any(k.card == hit.card and k.inverted == hit.inverted and _overlap(k.box, hit.box) > SAME_INDEX_OVERLAP for k in kept):
            kept.append(hit)
    return kept


def cards_from_indices(hits: Iterable[IndexHit]) -> list[Card]:
    """The multiset of cards the indices show, sorted by rank then suit."""
    by_face: dict[Card, tuple[list[IndexHit], list[IndexHit]]] = {}
    for hit in distinct_indices(hits):
        ups, downs = by_face.setdefault(hit.card, ([], []))
        (downs if hit.inverted else ups).append(hit)
    counts = Counter({face: len(u) + len(d) - _max_matching(u, d) for face, (u, d) in by_face.items()})
    return sorted(counts.elements())
