"""ArUco markers used at a table: four corner markers and the tokens players put down.

One small dictionary (4x4 bits, 50 ids) keeps detection fast and robust at the sizes a
camera above a 90 cm table sees. Ids are fixed here so that printed sheets, the layout
and the detector agree:

* ``0..3``: table corners NW, NE, SE, SW (seen from above with South at the bottom);
* ``10..19``: report cards (报牌卡, RULES.md R1) — several copies may be printed;
* ``20..29``: pass tokens (a player taps it into their area instead of saying 过).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

DICTIONARY_ID = cv2.aruco.DICT_4X4_50
CORNER_IDS: tuple[int, ...] = (0, 1, 2, 3)
REPORT_IDS = range(10, 20)
PASS_IDS = range(20, 30)


def token_kind(marker_id: int) -> str | None:
    """``"report"``, ``"pass"``, or ``None`` for a marker that is no token."""
    if marker_id in REPORT_IDS:
        return "report"
    if marker_id in PASS_IDS:
        return "pass"
    return None


def dictionary() -> cv2.aruco.Dictionary:
    return cv2.aruco.getPredefinedDictionary(DICTIONARY_ID)


def marker_image(marker_id: int, pixels: int) -> np.ndarray:
    """The marker's black-and-white square (no quiet zone), ``pixels`` wide."""
    return cv2.aruco.generateImageMarker(dictionary(), marker_id, pixels)


@dataclass(frozen=True)
class Marker:
    """One detected marker: its id and its four corners in frame pixels.

    Corners are in ArUco order (top-left, top-right, bottom-right, bottom-left of the
    printed marker), shape ``(4, 2)``, float32.
    """

    id: int
    corners: np.ndarray

    @property
    def center(self) -> np.ndarray:
        return self.corners.mean(axis=0)


class MarkerDetector:
    """Finds markers in a grey frame, working on a downscaled copy for speed.

    Full-resolution detection of a 1080p frame costs tens of milliseconds on one core;
    at about 960 pixels wide (``scale=None`` picks that) markers of 4 cm and more are
    still found, and their corners, refined to sub-pixel precision, are scaled back to
    frame pixels.
    """

    def __init__(self, scale: float | None = None, work_width: int = 960) -> None:
        if scale is not None and not 0 < scale <= 1:
            raise ValueError(f"marker detection scale must be in (0, 1], got {scale!r}")
        params = cv2.aruco.DetectorParameters()
        params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
        self.scale = scale
        self.work_width = work_width
        self._detector = cv2.aruco.ArucoDetector(dictionary(), params)

    def detect(self, gray: np.ndarray) -> list[Marker]:
        scale = self.scale or min(1.0, self.work_width / max(gray.shape[:2]))
        small = gray
        if scale != 1:
            small = cv2.resize(gray, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
        corners, ids, _ = self._detector.detectMarkers(small)
        if ids is None:
            return []
        # Pixel centres: a corner at c in the small image lies at (c + 0.5) / s - 0.5.
        return [
            Marker(int(i), ((c.reshape(4, 2) + 0.5) / scale - 0.5).astype(np.float32))
            for c, i in zip(corners, ids.ravel())
        ]
