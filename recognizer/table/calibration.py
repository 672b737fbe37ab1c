"""Camera calibration from the four corner markers: a homography frame -> table mm.

A fixed camera above a table needs no intrinsic calibration: the table is a plane, so a
homography from the corner markers maps every frame pixel to table millimetres. The
:class:`Calibrator` keeps that homography steady (marker jitter must not shift the
rectified image, or every area would look "changed"), notices when the camera was bumped
(visible markers no longer where the homography puts them) and when markers are lost.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from .layout import TableLayout
from .markers import CORNER_IDS, Marker


class CalibrationError(ValueError):
    """The corner markers needed to calibrate are not in the frame."""


def corner_markers(markers: Sequence[Marker]) -> dict[int, Marker]:
    """The corner markers among ``markers`` (first one of each id)."""
    found: dict[int, Marker] = {}
    for m in markers:
        if m.id in CORNER_IDS:
            found.setdefault(m.id, m)
    return found


def fit_homography(markers: Sequence[Marker], layout: TableLayout, min_markers: int = 3) -> np.ndarray:
    """The frame -> table-mm homography from at least ``min_markers`` corner markers.

    Three markers (12 points spread over the table) already pin the plane down well; two
    adjacent ones would leave the far side badly extrapolated, so they are not enough.
    """
    corners = corner_markers(markers)
    if len(corners) < min_markers:
        raise CalibrationError(
            f"table markers not found: saw corner markers {sorted(corners)}, "
            f"need {min_markers} of {list(CORNER_IDS)}"
        )
    src = np.concatenate([m.corners for m in corners.values()])
    dst = np.concatenate([layout.marker_corners(i) for i in corners])
    homography, _ = cv2.findHomography(src, dst, 0)
    if homography is None:
        raise CalibrationError("corner markers are degenerate (collinear or duplicated)")
    return homography


def marker_error_mm(homography: np.ndarray, markers: dict[int, Marker], layout: TableLayout) -> float:
    """How far (mm, worst corner) the visible corner markers are from where they belong."""
    src = np.concatenate([m.corners for m in markers.values()]).reshape(-1, 1, 2)
    mapped = cv2.perspectiveTransform(src, homography).reshape(-1, 2)
    expected = np.concatenate([layout.marker_corners(i) for i in markers])
    return float(np.linalg.norm(mapped - expected, axis=1).max())


class Calibrator:
    """Tracks the homography over a stream of frames and reports status changes.

    :meth:`update` returns ``"ok"`` (first calibration, or markers back where they were),
    ``"lost"`` (no corner marker seen for ``lost_after_s``, or the camera moved while too
    few markers were visible to re-fit), ``"recalibrated"`` (the camera moved and a new
    homography was fitted; one status per movement however many frames it spans) or
    ``None`` when nothing changed. A single visible marker is enough to confirm the
    current homography, so a hand over one corner is no loss.
    """

    def __init__(
        self,
        layout: TableLayout,
        bump_mm: float = 8.0,
        lost_after_s: float = 1.0,
        min_markers: int = 3,
    ) -> None:
        self.layout = layout
        self.bump_mm = bump_mm
        self.lost_after_s = lost_after_s
        self.min_markers = min_markers
        self.homography: np.ndarray | None = None
        self.lost = False
        self._moving = False
        self._last_seen: float | None = None

    @property
    def valid(self) -> bool:
        """Whether the homography can be trusted for this frame."""
        return self.homography is not None and not self.lost

    def update(self, markers: Sequence[Marker], t: float) -> str | None:
        visible = corner_markers(markers)
        if self._last_seen is None:
            self._last_seen = t
        if not visible:
            return self._lose(t)
        if self.homography is None:
            return self._fit(visible, "ok") or self._lose(t)
        self._last_seen = t
        if marker_error_mm(self.homography, visible, self.layout) <= self.bump_mm:
            self._moving = False
            if self.lost:
                self.lost = False
                return "ok"
            return None
        if len(visible) < self.min_markers:
            self._moving = True
            return self._lose(t, now=True)
        status = None if self._moving else "recalibrated"
        self._moving = True
        return self._fit(visible, status)

    def _fit(self, visible: dict[int, Marker], status: str | None) -> str | None:
        if len(visible) < self.min_markers:
            return None
        try:
            self.homography = fit_homography(list(visible.values()), self.layout, self.min_markers)
        except CalibrationError:
            return None
        was_lost, self.lost = self.lost, False
        return "recalibrated" if was_lost and self._moving else status

    def _lose(self, t: float, now: bool = False) -> str | None:
        last_seen = t if self._last_seen is None else self._last_seen
        if self.lost or (not now and t - last_seen < self.lost_after_s):
            return None
        self.lost = True
        return "lost"
