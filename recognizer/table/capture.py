"""Frame sources: a video file or a camera, as ``(index, t, frame)`` with ``t`` in seconds.

Kept apart from the pipeline so that the watcher never opens a device itself (the camera
is passed in from outside; tests feed rendered frames directly).
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import numpy as np


def video_frames(path: str) -> Iterator[tuple[int, float, np.ndarray]]:
    """Frames of a video file, dated by the file's timestamps (or frame rate)."""
    import cv2

    capture = cv2.VideoCapture(path)
    if not capture.isOpened():
        raise ValueError(f"cannot open video {path!r} (missing file or unknown format)")
    fps = capture.get(cv2.CAP_PROP_FPS) or 0.0
    index = 0
    try:
        while True:
            ok, frame = capture.read()
            if not ok:
                return
            t = index / fps if fps > 0 else capture.get(cv2.CAP_PROP_POS_MSEC) / 1000.0
            yield index, t, frame
            index += 1
    finally:
        capture.release()


def camera_frames(number: int) -> Iterator[tuple[int, float, np.ndarray]]:
    """Frames of camera ``number``, dated by a monotonic clock from the first frame."""
    import cv2

    capture = cv2.VideoCapture(number)
    if not capture.isOpened():
        raise ValueError(f"cannot open camera {number}")
    start = time.monotonic()
    index = 0
    try:
        while True:
            ok, frame = capture.read()
            if not ok:
                raise ValueError(f"camera {number} stopped delivering frames after frame {index}")
            yield index, time.monotonic() - start, frame
            index += 1
    finally:
        capture.release()
