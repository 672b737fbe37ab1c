"""Rendered training and test data: card faces in many designs, and table scenes.

``card_image(card, design, height_px)`` is the one card renderer of the project (the
table-video renderer composites its output too); ``design`` is a procedural design from
:data:`PROCEDURAL_DESIGNS` or a real deck from :mod:`recognizer.training.synth.decks`.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from recognizer.training.synth.designs import (
    HELD_OUT_PROCEDURAL,
    PROCEDURAL_DESIGNS,
    Box,
    ProceduralDesign,
    procedural_design,
)
from referee.cards import Card


class Design(Protocol):
    """Anything that draws a deck: a name, an aspect ratio, faces and corner-index boxes."""

    name: str
    aspect: float

    def render(self, card: Card, height_px: int) -> np.ndarray: ...

    def index_box(self, card: Card, height_px: int) -> Box: ...


def card_image(card: Card, design: Design, height_px: int) -> np.ndarray:
    """The face of ``card`` in ``design``, ``height_px`` tall, as BGRA (alpha = card shape)."""
    return design.render(card, height_px)


__all__ = [
    "Box",
    "Design",
    "HELD_OUT_PROCEDURAL",
    "PROCEDURAL_DESIGNS",
    "ProceduralDesign",
    "card_image",
    "procedural_design",
]
