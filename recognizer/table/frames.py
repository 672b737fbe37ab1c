"""Whole still frames -> what each seat's play area shows (``recognize --table``)."""

from __future__ import annotations

from typing import Any

import cv2

from recognizer.images import MAX_PIXELS, ImageError, load_image
from referee.cards import card_name

from .calibration import CalibrationError, fit_homography
from .layout import load_layout
from .markers import MarkerDetector
from .rectify import AreaViews
from .watcher import AreaReader, area_tokens, default_reader


def recognize_frames(
    paths: list[str], calibration: str | None, reader: AreaReader | None = None, max_pixels: int = MAX_PIXELS
) -> list[dict[str, Any]]:
    """One dict per frame: ``image`` and per seat ``{"cards", "tokens", "confidence"}``,
    or ``image`` and ``error`` when the file cannot be read or its markers are not found.

    ``calibration`` is a table layout file (:func:`~.layout.load_layout`; ``None``: the
    default 90 x 90 cm table); ``reader`` defaults to the trained card reader.
    """
    layout = load_layout(calibration)
    reader = reader or default_reader()
    detector = MarkerDetector()
    results: list[dict[str, Any]] = []
    for path in paths:
        try:
            frame = load_image(path, max_pixels)
        except ImageError as exc:
            results.append({"image": path, "error": str(exc)})
            continue
        markers = detector.detect(cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY))
        try:
            homography = fit_homography(markers, layout)
        except CalibrationError as exc:
            results.append({"image": path, "error": str(exc)})
            continue
        tokens = area_tokens(markers, homography, layout)
        views = AreaViews(layout, homography, small_scale=0.25)
        result: dict[str, Any] = {"image": path}
        for area in layout.areas:
            reading = reader.read(views.crop(area.seat, frame))
            result[area.seat] = {
                "cards": [card_name(c) for c in sorted(reading.cards)],
                "tokens": sorted(tokens.get(area.seat, ())),
                "confidence": round(float(reading.confidence), 3),
                "uncertain": bool(reading.uncertain),
            }
        results.append(result)
    return results
