"""Which way the cards in an image lie, and the rotated frames the reader looks in.

The detector and the classifier know indices within about 20 degrees of upright (or
upside down: the classifier tells those apart). Cards at a real table lie at any angle:
the East and West play areas are sideways to an overhead camera and tossed cards lie
crooked. So the reader looks at the image in a few rotated frames ("passes") and keeps,
for each index, the pass that reads it best (:mod:`recognizer.geometry` merges them).

The passes start from the image's dominant edge direction (card outlines are the longest
straight edges in a play area), so a row lying at 30 degrees is read square on rather
than 15 degrees off the nearest fixed pass.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

DESKEW_SIDE = 256
"""The image is shrunk to this longer side before its edge directions are measured."""


def dominant_edge_angle(image_bgr: np.ndarray) -> float:
    """How far the strongest straight edges stand turned from square, in (-45, 45] degrees
    (OpenCV's counter-clockwise sense: turning the image by minus this squares them).

    Measured as a magnitude-weighted histogram of gradient directions (the strongest tenth
    of the pixels): the four sides of a card all vote for one angle modulo 90.
    """
    h, w = image_bgr.shape[:2]
    s = min(1.0, DESKEW_SIDE / max(h, w))
    grey = cv2.cvtColor(cv2.resize(image_bgr, None, fx=s, fy=s, interpolation=cv2.INTER_AREA), cv2.COLOR_BGR2GRAY)
    gx = cv2.Sobel(grey, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(grey, cv2.CV_32F, 0, 1, ksize=3)
    mag = np.hypot(gx, gy).ravel()
    if not mag.any():
        return 0.0
    strong = mag >= np.quantile(mag, 0.9)
    # Gradient direction modulo 90 degrees, in image coordinates (y down).
    ang = np.degrees(np.arctan2(gy.ravel()[strong], gx.ravel()[strong])) % 90.0
    hist = np.bincount(np.minimum((ang * 2).astype(int), 179), weights=mag[strong], minlength=180)
    hist = np.convolve(np.concatenate([hist[-3:], hist, hist[:3]]), np.ones(7) / 7, mode="valid")
    peak = (int(hist.argmax()) + 0.5) / 2  # degrees in [0, 90)
    # An image turned by a (OpenCV's sense) has its edges' gradients at -a modulo 90 in
    # its y-down coordinates.
    angle = -peak if peak <= 45 else 90 - peak
    return float(angle if angle > -45 else angle + 90)


def pass_angles(image_bgr: np.ndarray, passes: int, deskew: bool = True) -> list[float]:
    """The rotations (degrees, OpenCV's counter-clockwise sense) the reader looks in:
    ``passes`` of them evenly over half a turn, starting from the dominant edge
    direction (``deskew``) or from upright. Half a turn is enough: the classifier reads
    an index upside down as well as upright."""
    if passes < 1:
        raise ValueError(f"passes must be at least 1, got {passes}")
    start = -dominant_edge_angle(image_bgr) if deskew else 0.0
    return [round(90.0 - (90.0 - start - k * 180.0 / passes) % 180.0, 2) for k in range(passes)]  # in (-90, 90]


def rotation(shape: tuple[int, ...], angle: float) -> tuple[np.ndarray, tuple[int, int]]:
    """The 2 x 3 affine that turns an image of ``shape`` by ``angle`` degrees (OpenCV's
    sense) onto a canvas that holds all of it, and that canvas's (width, height)."""
    h, w = shape[:2]
    m = cv2.getRotationMatrix2D((0.0, 0.0), angle, 1.0)
    corners = np.array([[0, 0, 1], [w, 0, 1], [0, h, 1], [w, h, 1]], np.float64) @ m.T
    lo, hi = corners.min(0), corners.max(0)
    m[:, 2] -= lo
    size = (max(1, math.ceil(hi[0] - lo[0] - 1e-6)), max(1, math.ceil(hi[1] - lo[1] - 1e-6)))
    return m, size


def rotate_points(points: np.ndarray, angle: float) -> np.ndarray:
    """``points`` (N x 2) turned by ``angle`` degrees about the origin, as OpenCV turns images:
    ``cv2.getRotationMatrix2D``'s matrix about the origin written out, the same doubles laid
    out alike (transposed), so the product is the same to the last bit (the reader turns a
    few points thousands of times a read, and the call cost more than the product)."""
    c, s = math.cos(math.radians(angle)), math.sin(math.radians(angle))
    return np.asarray(points, np.float64) @ np.array([[c, s], [-s, c]]).T


def rotate_image(image: np.ndarray, angle: float) -> np.ndarray:
    """The whole of ``image`` turned by ``angle`` degrees (edges replicated); the benchmark's
    and tests' way of laying a rendered scene at another angle."""
    m, size = rotation(image.shape, angle)
    return cv2.warpAffine(image, m, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
