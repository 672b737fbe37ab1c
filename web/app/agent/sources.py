"""Where an agent's frames come from, and whether they are worth reading.

A source is an iterator of ``(index, t, frame)`` with ``t`` in seconds: a camera (dated by
a monotonic clock), a video file (dated by its frame rate) or a folder of still frames
(dated by ``--fps``). :func:`paced` plays a recorded source at its own rate (or ``speed``
times faster), so a video drives the agent the way a camera would. :class:`FrameCheck`
tells a black or frozen camera from a table where nothing happens: such frames are
reported as a camera fault and never reach the watcher.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import cv2
import numpy as np

from recognizer.table.capture import camera_frames, video_frames

log = logging.getLogger("web.app.agent")

Frames = Iterator[tuple[int, float, np.ndarray]]
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp")

__all__ = ["FrameCheck", "Frames", "camera_frames", "folder_frames", "paced", "video_frames"]


def folder_frames(folder: str | Path, fps: float) -> Frames:
    """The images of ``folder`` in name order, frame ``i`` dated ``i / fps``; an unreadable
    file is skipped with a warning (its index and time stay unused)."""
    if fps <= 0:
        raise ValueError(f"--fps must be > 0, got {fps}")
    root = Path(folder)
    if not root.is_dir():
        raise ValueError(f"frame folder {str(root)!r} is not a directory")
    paths = sorted(p for p in root.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
    if not paths:
        raise ValueError(f"frame folder {str(root)!r} holds no images ({', '.join(IMAGE_SUFFIXES)})")
    for index, path in enumerate(paths):
        frame = cv2.imread(str(path), cv2.IMREAD_COLOR)
        if frame is None:
            log.warning("skipping %s: not a readable image", path)
            continue
        yield index, index / fps, frame


def paced(
    frames: Iterable[tuple[int, float, np.ndarray]],
    speed: float = 1.0,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Frames:
    """Hand out recorded frames no faster than their own times (divided by ``speed``)."""
    if speed <= 0:
        raise ValueError(f"speed must be > 0, got {speed}")
    start: float | None = None
    first_t = 0.0
    for index, t, frame in frames:
        if start is None:
            start, first_t = clock(), t
        wait = start + (t - first_t) / speed - clock()
        if wait > 0:
            sleep(wait)
        yield index, t, frame


class FrameCheck:
    """Black or frozen frames -> a fault message; back to normal -> ``"ok"``.

    :meth:`check` returns the new status when it changes (``"black"``, ``"frozen"`` or
    ``"ok"``), else ``None``; :attr:`good` says whether the frame may be watched. A frame
    is black when its mean grey level is under ``black_level``; the camera is frozen when
    every pixel of a small grey thumbnail stayed exactly the same for ``frozen_s`` seconds
    (sensor noise makes that impossible for a live camera, however still the table).
    """

    def __init__(self, black_level: float = 12.0, frozen_s: float = 2.0) -> None:
        self.black_level = black_level
        self.frozen_s = frozen_s
        self.status = "ok"
        self._thumb: np.ndarray | None = None
        self._same_since = 0.0

    @property
    def good(self) -> bool:
        return self.status == "ok"

    def check(self, frame: np.ndarray, t: float) -> str | None:
        thumb = cv2.resize(cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY), (64, 36), interpolation=cv2.INTER_AREA)
        if float(thumb.mean()) < self.black_level:
            status = "black"
        else:
            if self._thumb is not None and np.array_equal(thumb, self._thumb):
                pass  # the picture has not changed since _same_since
            else:
                self._same_since = t
            frozen = t - self._same_since >= self.frozen_s
            status = "frozen" if frozen else "ok"
        self._thumb = thumb
        if status == self.status:
            return None
        self.status = status
        return status
