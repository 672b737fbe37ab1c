"""Corner indices -> a multiset of cards (no model, no image).

A card prints its index twice: upright at the top-left and upside down at the
bottom-right. In a row of overlapping cards most show one of the two, the top card shows
both, and two cards of the same face (two decks) show up to four. So for each face the
count is ``upright + inverted - pairs``, where a pair is an upright and an inverted index
of that face placed like the two corners of one card (down and to the right, a card's
diagonal away, given the index size). Pairs are matched maximally, which can only
merge indices that could be one card; it never merges two upright (or two inverted)
indices, so identical faces side by side count twice. A joker whose word is printed across
the card, not down its corner, shows it at the card's top and bottom instead
(:func:`words_across`).

Before counting, two hits of one face and orientation whose boxes overlap are one index
read twice (the detector's boxes around one index that NMS kept apart): the indices of
two different cards never overlap, since a covered index is not visible at all.

Hits may come from several rotated views of one image (:mod:`recognizer.orientation`):
each carries the ``angle`` of its view, and its box is in that view's frame (the image
turned by ``angle`` about its origin). Two hits of different views whose centres lie
within :data:`SAME_PLACE` index heights are one index seen twice: the most confident
read stays, whatever face the others named (a view turned far from the index misreads
it). Pairing the two corners of one card then happens in the frame where the first
corner reads upright, so a card counts once at any angle.

The two corners of one card can also be read as two different faces: at a camera's reading
scale a spade and a club, or a heart and a diamond, differ by a few pixels, and each corner
is classified on its own. Counted as they were read, one card would become two.
:func:`reconcile_corners` names both corners by the face the two reads agree on best
when the two reads leave room for it.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from recognizer.orientation import rotate_points
from referee.cards import FACES, Card, is_joker

# The far corner sits this many index heights away (a card's diagonal across designs; a tall
# stacked JOKER index gives the low end),
# in a direction from a little above "right" (0 degrees) to a little past "down" (90), seen in
# the frame where the first corner reads upright: a card's diagonal lies about 55 degrees down,
# and that frame is the view's or a turn's (the reader's second look), which the classifier
# reads up to ~50 degrees off the index's own upright. Real photos of cards read at such
# turns put the far corner at -7 to 101 degrees (realtrain's held-out photos).
PAIR_DISTANCE = (1.2, 9.0)
PAIR_ANGLE_DEG = (-15.0, 115.0)
# The larger of a card's two indices is at most this many times the other: a camera low over
# the table (realtrain's webcam frames) shows the near corner 1.83-1.97 times the far one's
# size; at 1.8 such a card counted twice in 7 of the 524 training-split photos.
PAIR_SIZE_RATIO = 2.0
# Share of the smaller box that another box of the same face and orientation must cover
# to be the same index read twice (visible indices of two cards were measured to overlap
# by up to 0.44 in rendered rows).
SAME_INDEX_OVERLAP = 0.6
# Centres of two hits from different views closer than this share of the smaller index
# height are one index (two cards' visible indices lie at least ~0.3 heights apart).
SAME_PLACE = 0.25
# The far corner's index reads upside down relative to the first: its view angle differs
# by half a turn, up to this many degrees. Views 45 degrees apart can read the two corners,
# and the classifier reads a sideways index as upright or upside down now and then: on
# realtrain's webcam frames and realcards' deals, a card's two corners read a quarter turn
# apart were counted as two cards in 10 photos at 50 degrees; at 95 no photo of either set
# lost a card (recognizer/MODEL.md, "A card's corners read a quarter turn apart").
PAIR_TURN_TOLERANCE = 95.0
# Two corners read as different faces are one card only where each read gives the face they
# agree on at least this probability: two confident reads of different faces are two cards.
AGREE_FLOOR = 0.1
# A joker's word printed across the card (a wizard deck's "Joker", bellot's JOKER), not down
# its corner, stands at the top and upside down at the bottom: the far word lies square across
# the first, this many word lengths off (photographed wizard jokers: 0.96-1.29), nearer than a
# rank's far corner and not down and to the right of it. The two reads must still lie a half
# turn apart: two jokers whose word runs down the corner, side by side in a row, lie square
# across their long sides too, read alike.
ACROSS_DISTANCE = (0.8, 2.5)
# How far from square across, and from parallel, two such words may lie (degrees), and how
# much longer than wide a word across is (the wizard joker's: 2.6).
ACROSS_SLANT_DEG = 30.0
ACROSS_ELONGATION = 1.5


@dataclass(frozen=True)
class IndexHit:
    """One read corner index: face, upside down or not (in its view), box in its view's
    frame, confidence, and the view's rotation (degrees, OpenCV's counter-clockwise sense)."""

    card: Card
    inverted: bool
    box: tuple[float, float, float, float]
    conf: float
    angle: float = 0.0

    @property
    def height(self) -> float:
        return self.box[3] - self.box[1]

    @property
    def size(self) -> float:
        """The index's longer side: its height, but the width of a joker's word laid across."""
        return max(self.box[3] - self.box[1], self.box[2] - self.box[0])

    @property
    def width(self) -> float:
        """The index's shorter side: its width, but the height of a joker's word laid across."""
        return min(self.box[3] - self.box[1], self.box[2] - self.box[0])

    @property
    def upright_angle(self) -> float:
        """The rotation that shows this index upright (its view's, or half a turn more)."""
        return (self.angle + (180.0 if self.inverted else 0.0)) % 360.0

    def centre(self) -> np.ndarray:
        """The box centre in the image's own pixel frame."""
        return rotate_points(np.array([box_centre(self.box)]), -self.angle)[0]


def box_centre(box: tuple[float, float, float, float]) -> tuple[float, float]:
    """The centre of an axis-aligned box (x0, y0, x1, y1)."""
    return (box[0] + box[2]) / 2, (box[1] + box[3]) / 2


def _turn(a: float, b: float) -> float:
    """The smaller angle between two directions, in degrees."""
    d = abs(a - b) % 360.0
    return min(d, 360.0 - d)


def _long_axis(hit: IndexHit) -> np.ndarray:
    """The unit direction of the box's longer side, in the image's own pixel frame."""
    x0, y0, x1, y1 = hit.box
    ends = np.array([[x0, y0], [x1, y0]] if x1 - x0 >= y1 - y0 else [[x0, y0], [x0, y1]], np.float64)
    a, b = rotate_points(ends, -hit.angle)
    return (b - a) / max(float(np.hypot(*(b - a))), 1e-9)


def words_across(a: IndexHit, b: IndexHit) -> bool:
    """True when two reads of one joker lie as its word printed across one card's top and
    bottom: both long and narrow, parallel, the second square across the first and
    :data:`ACROSS_DISTANCE` word lengths off (their sizes and which way up each was read,
    :func:`could_pair` checks)."""
    if a.card != b.card or not is_joker(a.card) or min(a.width, b.width) <= 0:
        return False
    if min(a.size / a.width, b.size / b.width) < ACROSS_ELONGATION:
        return False
    axis, offset = _long_axis(a), b.centre() - a.centre()
    dist = float(np.hypot(*offset))
    slant = math.sin(math.radians(ACROSS_SLANT_DEG))
    return (abs(float(axis @ _long_axis(b))) >= math.cos(math.radians(ACROSS_SLANT_DEG))
            and ACROSS_DISTANCE[0] <= dist / ((a.size + b.size) / 2) <= ACROSS_DISTANCE[1]
            and abs(float(axis @ offset)) / dist <= slant)


def could_pair(up: IndexHit, down: IndexHit) -> bool:
    """True when ``down`` sits where the far (bottom-right) index of ``up``'s card would,
    seen in the frame where ``up`` reads upright, or the two, read a half turn apart, are one
    joker's word across its card (:func:`words_across`)."""
    hu, hd = up.size, down.size
    if min(hu, hd) <= 0 or max(hu, hd) / min(hu, hd) > PAIR_SIZE_RATIO:
        return False
    if abs(_turn(up.upright_angle, down.upright_angle) - 180.0) > PAIR_TURN_TOLERANCE:
        return False
    if words_across(up, down):
        return True
    vx, vy = rotate_points((down.centre() - up.centre())[None], up.upright_angle)[0]
    dist = math.hypot(vx, vy) / ((hu + hd) / 2)
    angle = math.degrees(math.atan2(vy, vx))
    return PAIR_DISTANCE[0] <= dist <= PAIR_DISTANCE[1] and PAIR_ANGLE_DEG[0] <= angle <= PAIR_ANGLE_DEG[1]


def _max_matching(hits: list[IndexHit]) -> int:
    """Size of a maximum matching among ``hits`` of one face, an edge joining the two
    corners one card could show. Exact (memoised over subsets): a face shows at most a
    handful of indices; past 16 the matching is greedy."""
    n = len(hits)
    partners = [[j for j in range(n) if j != i and (could_pair(hits[i], hits[j]) or could_pair(hits[j], hits[i]))] for i in range(n)]
    if n > 16:
        used: set[int] = set()
        for i in range(n):
            j = next((j for j in partners[i] if j not in used and i not in used), None)
            if j is not None:
                used |= {i, j}
        return len(used) // 2

    @lru_cache(maxsize=None)
    def best(free: int) -> int:
        if not free:
            return 0
        i = (free & -free).bit_length() - 1
        rest = free & ~(1 << i)
        return max([best(rest)] + [1 + best(rest & ~(1 << j)) for j in partners[i] if rest >> j & 1])

    return best((1 << n) - 1)


def _overlap(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> float:
    """Intersection over the smaller box's area."""
    iw = min(a[2], b[2]) - max(a[0], b[0])
    ih = min(a[3], b[3]) - max(a[1], b[1])
    if iw <= 0 or ih <= 0:
        return 0.0
    smaller = min((a[2] - a[0]) * (a[3] - a[1]), (b[2] - b[0]) * (b[3] - b[1]))
    return iw * ih / smaller if smaller > 0 else 0.0


def same_place(a: IndexHit, b: IndexHit) -> bool:
    """True when two hits of different views lie where one index would, whatever they read:
    their centres closer than :data:`SAME_PLACE` of the smaller index height."""
    return float(np.hypot(*(a.centre() - b.centre()))) < SAME_PLACE * min(a.height, b.height)


def _same_index(a: IndexHit, b: IndexHit) -> bool:
    if a.angle == b.angle:
        return a.card == b.card and a.inverted == b.inverted and _overlap(a.box, b.box) > SAME_INDEX_OVERLAP
    return same_place(a, b)


def distinct_indices(hits: Iterable[IndexHit]) -> list[IndexHit]:
    """``hits`` without repeats: of overlapping hits of one face and orientation in one
    view, or of hits at one place in different views, the most confident stays."""
    kept: list[IndexHit] = []
    for hit in sorted(hits, key=lambda h: -h.conf):
        if not any(_same_index(k, hit) for k in kept):
            kept.append(hit)
    return kept


def cards_from_indices(hits: Iterable[IndexHit]) -> list[Card]:
    """The multiset of cards the indices show, sorted by rank then suit."""
    by_face: dict[Card, list[IndexHit]] = {}
    for hit in distinct_indices(hits):
        by_face.setdefault(hit.card, []).append(hit)
    counts = Counter({face: len(h) - _max_matching(h) for face, h in by_face.items()})
    return sorted(counts.elements())


def has_partner(hit: IndexHit, hits: list[IndexHit]) -> bool:
    """True when another index of ``hit``'s face in ``hits`` could be its card's other corner."""
    return any(o is not hit and o.card == hit.card and (could_pair(hit, o) or could_pair(o, hit)) for o in hits)


def reconcile_corners(hits: list[IndexHit], faces: Sequence[np.ndarray], floor: float = AGREE_FLOOR) -> list[IndexHit]:
    """``hits`` with the two corners of one card that were read as different faces renamed
    to one face. ``faces[i]``: the 54 face probabilities (``FACES`` order) of ``hits[i]``.

    Only corners no index of their own face could pair with are considered, two at a time
    where they lie as one card's two corners (:func:`could_pair`). Their face is the one
    that makes both reads likeliest (the product of the two probabilities: independent
    reads, no face favoured), taken when each read gives it at least ``floor``; each
    corner's confidence becomes that face's share of the product (the two reads' joint
    belief), so a doubtful card stays doubtful. The pairs most sure of their face go first;
    a corner joins one pair at most. The number of hits never changes, so the count can
    only fall where two reads were one card.
    """
    lone = [i for i, h in enumerate(hits) if not has_partner(h, hits)]
    options = []
    for a in lone:
        for b in lone:
            if a < b and hits[a].card != hits[b].card and (could_pair(hits[a], hits[b]) or could_pair(hits[b], hits[a])):
                joint = faces[a] * faces[b]
                best = int(joint.argmax())
                if min(faces[a][best], faces[b][best]) >= floor:
                    options.append((float(joint[best]), a, b, best, float(joint[best] / joint.sum())))
    out, used = list(hits), set()
    for _, a, b, best, share in sorted(options, reverse=True):
        if a not in used and b not in used:
            used |= {a, b}
            for i in (a, b):
                out[i] = replace(hits[i], card=FACES[best], conf=round(share, 4))
    return out
