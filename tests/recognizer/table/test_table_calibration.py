"""Calibration: homography from corner markers, and the tracker's status changes."""

import cv2
import numpy as np
import pytest

from recognizer.table.calibration import CalibrationError, Calibrator, fit_homography
from recognizer.table.layout import TableLayout
from recognizer.table.markers import Marker, MarkerDetector
from recognizer.training.table_video import Script, TableRenderer

LAYOUT = TableLayout()
# A camera: table mm -> frame pixels (some perspective).
CAMERA = cv2.getPerspectiveTransform(
    np.float32([(0, 0), (900, 0), (900, 900), (0, 900)]),
    np.float32([(500, 60), (1420, 70), (1500, 1040), (430, 1030)]),
)


def seen(ids=(0, 1, 2, 3), camera=CAMERA) -> list[Marker]:
    """Corner markers as a camera with homography ``camera`` would detect them."""
    return [
        Marker(i, cv2.perspectiveTransform(LAYOUT.marker_corners(i).reshape(-1, 1, 2), camera).reshape(4, 2))
        for i in ids
    ]


def nudged(dx: float, dy: float) -> np.ndarray:
    return np.array([[1, 0, dx], [0, 1, dy], [0, 0, 1]]) @ CAMERA


def test_markers_in_a_rendered_frame_give_the_table_to_a_millimetre():
    renderer = TableRenderer(Script(duration=0.1, acts=()), size=(1920, 1080))
    frame = next(renderer.frames()).image
    markers = MarkerDetector().detect(cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY))
    assert sorted(m.id for m in markers) == [0, 1, 2, 3]
    homography = fit_homography(markers, LAYOUT)
    # Centres of the play areas, projected by the renderer's camera and back.
    truth = np.float32([[(450, 665)], [(665, 450)], [(450, 235)], [(235, 450)]])
    back = cv2.perspectiveTransform(cv2.perspectiveTransform(truth, renderer.camera), homography)
    assert np.abs(back - truth).max() < 1.0


def test_three_markers_are_enough_and_two_are_not():
    homography = fit_homography(seen((0, 1, 3)), LAYOUT)
    point = cv2.perspectiveTransform(np.float32([[(700, 800)]]), CAMERA)
    assert np.allclose(cv2.perspectiveTransform(point, homography), [[(700, 800)]], atol=0.01)
    with pytest.raises(CalibrationError, match=r"saw corner markers \[0, 1\], need 3"):
        fit_homography(seen((0, 1)) + [Marker(12, np.zeros((4, 2), np.float32))], LAYOUT)


def test_status_ok_then_quiet_while_a_hand_covers_some_markers():
    cal = Calibrator(LAYOUT)
    assert cal.update(seen(), 0.0) == "ok"
    assert [cal.update(seen((2,)), t) for t in (0.1, 0.2, 5.0)] == [None, None, None]
    assert cal.valid


def test_lost_after_a_second_without_markers_and_ok_when_they_return():
    cal = Calibrator(LAYOUT, lost_after_s=1.0)
    cal.update(seen(), 0.0)
    assert [cal.update([], t) for t in (0.5, 0.9, 1.1, 2.0)] == [None, None, "lost", None]
    assert not cal.valid
    assert cal.update(seen((1, 2)), 2.5) == "ok"
    assert cal.valid


def test_marker_jitter_keeps_the_homography():
    cal = Calibrator(LAYOUT)
    cal.update(seen(), 0.0)
    before = cal.homography.copy()
    assert cal.update(seen(camera=nudged(1.0, -1.0)), 0.1) is None
    assert np.array_equal(cal.homography, before)


def test_a_bump_recalibrates_once_however_many_frames_it_takes():
    cal = Calibrator(LAYOUT, bump_mm=8.0)
    cal.update(seen(), 0.0)
    statuses = [cal.update(seen(camera=nudged(10 * k, 5 * k)), 0.1 * k) for k in range(1, 5)]
    statuses += [cal.update(seen(camera=nudged(40, 20)), 0.5 + 0.1 * k) for k in range(3)]
    assert statuses == ["recalibrated"] + [None] * 6
    point = cv2.perspectiveTransform(np.float32([[(450, 450)]]), nudged(40, 20))
    assert np.allclose(cv2.perspectiveTransform(point, cal.homography), [[(450, 450)]], atol=0.05)


def test_a_bump_seen_with_too_few_markers_is_lost_until_they_show():
    cal = Calibrator(LAYOUT)
    cal.update(seen(), 0.0)
    assert cal.update(seen((0, 1), camera=nudged(60, 0)), 0.1) == "lost"
    assert not cal.valid
    assert cal.update(seen(camera=nudged(60, 0)), 0.2) == "recalibrated"
    assert cal.valid


def test_never_calibrated_is_reported_lost():
    cal = Calibrator(LAYOUT, lost_after_s=1.0)
    assert [cal.update(seen((3,)), t) for t in (0.0, 0.5, 1.0)] == [None, None, "lost"]
    assert cal.update(seen(), 1.5) == "ok"
