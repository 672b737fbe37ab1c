"""The index crop the classifier sees, cut the same way in training and at the table.

Classes are the 54 faces upright, the same 54 upside down (a card's bottom-right index,
or a card lying the other way round), and "not an index" for the detector's false hits.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from recognizer.orientation import rotate_points
from referee.cards import FACES, Card

Box = tuple[float, float, float, float]
"""An axis-aligned box (x0, y0, x1, y1) in pixels."""
CROP_H, CROP_W = 48, 32
PAD = 0.15
"""Each side of a detected box grows by this share, so a loose or tight box still holds the whole index."""
N_FACES = len(FACES)
NOT_INDEX = 2 * N_FACES
N_CLASSES = NOT_INDEX + 1


def crop_index(image: np.ndarray, box: tuple[float, float, float, float], angle: float = 0.0) -> np.ndarray:
    """The ``CROP_H`` x ``CROP_W`` BGR crop around ``box`` (x0, y0, x1, y1), edges replicated.

    With an ``angle``, ``box`` lies in the frame of the image turned by that many degrees
    about its origin (OpenCV's sense), and the crop is cut square to that frame.
    """
    x0, y0, x1, y1 = box
    pw, ph = (x1 - x0) * PAD, (y1 - y0) * PAD
    src = np.float32([[x0 - pw, y0 - ph], [x1 + pw, y0 - ph], [x0 - pw, y1 + ph]])
    if angle:
        src = rotate_points(src, -angle).astype(np.float32)
    dst = np.float32([[0, 0], [CROP_W, 0], [0, CROP_H]])
    M = cv2.getAffineTransform(src, dst)
    return cv2.warpAffine(image, M, (CROP_W, CROP_H), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE)


DARK_DECK_SHARE = 0.5
"""Crops more of which than this share show light ink (:func:`light_ink`) show a dark deck
(:func:`dark_deck`). Of the first view's crops, on ``../shared/realtrain``'s black-and-gold deck
0.6-1.0 do; on its white decks' photos, ``../shared/realcards`` and the rendered designs mostly
none (a card's corner in shadow, an index at a card's edge on a dark cloth), more than half in
one photo of 515 (recognizer/MODEL.md)."""
DARK_DECK_LEAST = 2
"""And at least this many of them: a card shows two corners, and one light crop alone (a red
joker's star beside a hand over the rest of the card, on a green cloth) is no deck."""


def light_ink(crops: np.ndarray) -> np.ndarray:
    """Which of ``crops`` (N x H x W x 3, BGR) may show light ink on a dark card: fewer than half
    their pixels are lighter than their mean, a few light strokes on a dark ground, where dark
    ink on a light card leaves most pixels above it. On ``../shared/realtrain``'s labelled
    indices that holds for 99.7 % of the black-and-gold deck's and 3 % of the white decks'
    (their corners in shadow, an index at a card's edge on a dark cloth). The classifier learnt
    dark ink on light cards, and reads a black deck's white "K" unsurely (0.2-0.4) where the
    same crop with its lightness turned over reads surely (0.6-0.99)."""
    n = len(crops)
    if not n:
        return np.zeros(0, bool)
    grey = cv2.cvtColor(np.ascontiguousarray(crops).reshape(-1, crops.shape[2], 3), cv2.COLOR_BGR2GRAY).reshape(n, -1).astype(np.float32)
    return (grey > grey.mean(1, keepdims=True)).mean(1) < 0.5


def dark_deck(crops: np.ndarray) -> bool:
    """Whether ``crops`` of one photo show a dark deck: more than :data:`DARK_DECK_SHARE` of them
    light ink, and at least :data:`DARK_DECK_LEAST`. The reader decides it on a photo's first view
    and reads the photo's unsure light crops turned over too; training, on a photo's labelled
    index crops, cuts its light crops once more turned over. A deck is dark or white as a whole:
    a white card's corner in shadow is light ink alone, and turned over it reads worse."""
    light = light_ink(crops)
    return int(light.sum()) >= DARK_DECK_LEAST and float(light.mean()) > DARK_DECK_SHARE


def lightness_turned(crop: np.ndarray) -> np.ndarray:
    """``crop`` with its lightness turned over and its hue and saturation kept: light ink on a
    dark card becomes dark ink on a light one, and a gold heart stays a warm colour, not the
    blue a plain negative would make it."""
    lab = cv2.cvtColor(crop, cv2.COLOR_BGR2LAB)
    lab[..., 0] = 255 - lab[..., 0]
    return cv2.cvtColor(lab, cv2.COLOR_LAB2BGR)


def index_rect(box: Box, angle: float) -> tuple[np.ndarray, float, float]:
    """Centre, width and height of the index whose axis-aligned box is ``box`` when it stands
    upright in the image turned by ``angle``: solved from the box's sides where that is well
    posed, else taken at an index's usual width of 0.6 of its height."""
    x0, y0, x1, y1 = box
    bw, bh = x1 - x0, y1 - y0
    c, s = abs(math.cos(math.radians(angle))), abs(math.sin(math.radians(angle)))
    det = c * c - s * s
    if abs(det) > 0.35:
        w, h = (bw * c - bh * s) / det, (bh * c - bw * s) / det
        if w > 0.2 * max(bw, bh) and h > 0.2 * max(bw, bh):
            return np.array([(x0 + x1) / 2, (y0 + y1) / 2]), w, h
    h = (bw + bh) / (1.6 * (c + s))
    return np.array([(x0 + x1) / 2, (y0 + y1) / 2]), 0.6 * h, h


def view_box(centre: np.ndarray, w: float, h: float, angle: float, view: float) -> Box:
    """The box, in the image turned by ``view``, around an index of ``w`` x ``h`` standing
    upright in the image turned by ``angle``: what a detector looking in that view draws."""
    corners = np.array([[-w / 2, -h / 2], [w / 2, -h / 2], [w / 2, h / 2], [-w / 2, h / 2]])
    pts = rotate_points(rotate_points(corners, -angle) + centre, view)
    return (*pts.min(0), *pts.max(0))


def turned_index(box: Box, view: float, turn: float) -> tuple[Box, float]:
    """The box and angle that cut the index detected as ``box`` in the view turned by
    ``view`` square on (:func:`crop_index`), if the index stands ``turn`` degrees further
    round than that view: how the reader reads an unsure box again at other angles."""
    centre, w, h = index_rect(box, turn)
    centre = rotate_points(centre[None], -view)[0]
    return view_box(centre, w, h, view + turn, view + turn), view + turn


def to_tensor(crops: np.ndarray) -> np.ndarray:
    """N x H x W x 3 uint8 BGR -> N x 3 x H x W float32 in [0, 1], the network's input."""
    return np.ascontiguousarray(crops.transpose(0, 3, 1, 2), dtype=np.float32) / 255.0


def class_of(card: Card, inverted: bool) -> int:
    return FACES.index(card) + (N_FACES if inverted else 0)


def decode_class(k: int) -> tuple[Card, bool] | None:
    """``(face, inverted)`` for a class number, ``None`` for "not an index"."""
    if k == NOT_INDEX:
        return None
    return FACES[k % N_FACES], k >= N_FACES
