"""A detector's false hits, to be learnt as "not an index".

Why: random boxes rarely land where a detector errs (a court's crown, a pip like a suit
sign, a printed word turned sideways); the boxes a detector proposes clear of every
labelled index are what the classifier paired with it will be shown at the table. The
reader looks in two views a quarter turn apart, so the hits are mined in the views asked.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from recognizer.crops import Box, turned_index
from recognizer.orientation import rotate_points


def false_hits(detector, image: np.ndarray, known: Callable[[np.ndarray], bool], views: tuple[float, ...] = (0.0,), most: int = 4,
               turns: tuple[float, ...] = ()) -> list[tuple[Box, float]]:
    """Up to ``most`` boxes ``detector`` finds in ``image`` looking in each of ``views``
    (each box in that view's frame, returned with the view, as :func:`recognizer.crops.crop_index`
    cuts it) that ``known`` does not take for a labelled index; ``known`` is given the box's
    four corners in ``image`` pixels, since what counts as one differs (a render knows its
    hidden indices, a photo's labels may miss a card). Each hit comes with itself cut again
    at ``turns`` further round (:func:`recognizer.crops.turned_index`), as the reader reads
    an unsure box again: art it never saw at those angles would read as an index there."""
    hits: list[tuple[Box, float]] = []
    for view in views:
        for box, _ in detector.detect(image, view):
            corners = np.array([[box[0], box[1]], [box[2], box[1]], [box[2], box[3]], [box[0], box[3]]], np.float64)
            if known(rotate_points(corners, -view) if view else corners):
                continue
            hits.append((box, view))
            if len(hits) == most:
                return _with_turns(hits, turns)
    return _with_turns(hits, turns)


def _with_turns(hits: list[tuple[Box, float]], turns: tuple[float, ...]) -> list[tuple[Box, float]]:
    return [cut for box, view in hits for cut in [(box, view)] + [turned_index(box, view, t) for t in turns]]
