"""The index crop the classifier sees, cut the same way in training and at the table.

Classes are the 54 faces upright, the same 54 upside down (a card's bottom-right index,
or a card lying the other way round), and "not an index" for the detector's false hits.
"""

from __future__ import annotations

import cv2
import numpy as np

from recognizer.orientation import rotate_points
from referee.cards import FACES, Card

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
