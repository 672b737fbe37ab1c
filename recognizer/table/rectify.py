"""Warps of a frame into the seats' play areas, seen upright from each seat.

Two resolutions: a coarse grey view (``motion_px_per_mm``) that is cheap enough to
compare every frame for change detection, and the reader's crop
(``layout.read_px_per_mm``), warped only when the card reader is going to look at it.
"""

from __future__ import annotations

import cv2
import numpy as np

from .layout import Area, TableLayout


def _area_transform(area: Area, px_per_mm: float) -> tuple[np.ndarray, tuple[int, int]]:
    """Table mm -> area crop pixels, and the crop size (width, height)."""
    w_mm, h_mm = area.size_mm()
    w, h = max(1, round(w_mm * px_per_mm)), max(1, round(h_mm * px_per_mm))
    dst = np.array([(0, 0), (w, 0), (w, h), (0, h)], np.float32)
    return cv2.getPerspectiveTransform(area.corners(), dst), (w, h)


class AreaViews:
    """Per-area warps for one homography (rebuilt when the camera is recalibrated)."""

    def __init__(
        self,
        layout: TableLayout,
        homography: np.ndarray,
        small_scale: float,
        motion_px_per_mm: float = 0.25,
    ) -> None:
        # The coarse view is warped from a frame downscaled by ``small_scale``.
        unscale = np.diag([1 / small_scale, 1 / small_scale, 1.0])
        half = np.array([[1, 0, 0.5 * (1 / small_scale - 1)], [0, 1, 0.5 * (1 / small_scale - 1)], [0, 0, 1]])
        self._read: dict[str, tuple[np.ndarray, tuple[int, int]]] = {}
        self._small: dict[str, tuple[np.ndarray, tuple[int, int]]] = {}
        for area in layout.areas:
            m, size = _area_transform(area, layout.read_px_per_mm)
            self._read[area.seat] = (m @ homography, size)
            m, size = _area_transform(area, motion_px_per_mm)
            self._small[area.seat] = (m @ homography @ half @ unscale, size)

    def crop(self, seat: str, frame: np.ndarray) -> np.ndarray:
        """The reader's view of ``seat``'s area, from a full-resolution frame."""
        m, size = self._read[seat]
        return cv2.warpPerspective(frame, m, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)

    def small(self, seat: str, small_gray: np.ndarray) -> np.ndarray:
        """The coarse grey view of ``seat``'s area, from the downscaled grey frame."""
        m, size = self._small[seat]
        return cv2.warpPerspective(small_gray, m, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
