"""How many cards at least lie in a play area, from the face paper they cover.

The card reader counts cards by their corner indices; when one index hides another (two
equal cards laid one over the other, a big joker's star under the art of the card on top)
it reads a card too few, and a single big joker where two were laid is a legal play. The
cards' paper does not hide that way: each face-up card laid beside another adds paper, so
the area a group of cards covers, over one card's area, bounds from below how many lie
there. A lower bound only: cards stacked closer than the margin, or lying partly outside
the area, count fewer; a face that is not paper-coloured counts none.

Measured on the area crops the watcher hands the reader (rectified, ``px_per_mm``), with
tokens already painted out (:mod:`.tokens`).
"""

from __future__ import annotations

import math

import cv2
import numpy as np

CARD_MM = (63.0, 88.0)
"""A standard (poker-size) card; bridge-size cards (57 x 89 mm) are a little smaller, which
only makes the bound lower."""
PAPER_MAX_SATURATION = 70
"""HSV saturation (0-255) at or below which a pixel may be a card's paper."""
PAPER_MIN_VALUE = 140
"""HSV value (0-255) at or above which it may: the paper is the brightest thing on a felt."""
BLEED = 0.12
"""How much more than its own area one card's paper may measure (blur at its edges, a lit
felt next to it); measured on the rendered designs, one card's paper measures 0.88-1.00
of a card and two laid 22 mm apart 1.23-1.36."""
FILL_AT_LEAST = 0.8
"""A group must fill this much of its bounding rectangle to be counted: cards in a row are
nearly rectangular; a fan of turned cards or paper that is not a card is not measured."""


def cards_at_least(crop_bgr: np.ndarray, px_per_mm: float, card_mm: tuple[float, float] = CARD_MM) -> int:
    """The fewest face-up cards the paper in ``crop_bgr`` can be. Paper that may not be cards
    counts none: a group touching the crop's edge (a pale table, cards partly outside the
    area) or of no card's shape (a fan of turned cards, a pale object)."""
    hsv = cv2.cvtColor(crop_bgr, cv2.COLOR_BGR2HSV)
    paper = ((hsv[..., 1] <= PAPER_MAX_SATURATION) & (hsv[..., 2] >= PAPER_MIN_VALUE)).astype(np.uint8)
    paper = cv2.morphologyEx(paper, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    contours, _ = cv2.findContours(paper, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    card_px = card_mm[0] * card_mm[1] * px_per_mm**2
    short_px = min(card_mm) * px_per_mm
    h, w = paper.shape
    total = 0
    for contour in contours:
        area = cv2.contourArea(contour)  # the outline filled: the art on the faces does not matter
        if area < 0.5 * card_px:
            continue  # a glint, a card mostly outside the area: counts none
        x, y, bw, bh = cv2.boundingRect(contour)
        (_, _), (rw, rh), _ = cv2.minAreaRect(contour)
        if (x <= 0 or y <= 0 or x + bw >= w or y + bh >= h or area < FILL_AT_LEAST * rw * rh
                or not 0.85 * short_px <= min(rw, rh) <= 1.15 * max(card_mm) * px_per_mm):
            continue
        total += math.ceil(area / card_px / (1 + BLEED))
    return total
