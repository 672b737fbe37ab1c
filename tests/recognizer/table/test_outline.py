"""The fewest cards an area's paper can be (recognizer.table.outline): never more than lie
there, and more than one where two overlapping cards show one index."""

from pathlib import Path

import cv2
import numpy as np
import pytest

from referee.cards import parse_cards

from recognizer.table.outline import CARD_MM, cards_at_least
from recognizer.table.segment import AreaSegmenter, AreaState
from recognizer.training.table_video import CARD_STEP_MM, Act, Script, TableRenderer
from recognizer.table.watcher import TableWatcher

PX = 2.0
FELT = (60, 120, 40)
MODELS = Path(__file__).parents[3] / "recognizer" / "models"


def area(*cards: tuple[float, float, float], felt=FELT) -> np.ndarray:
    """A 300 x 130 mm area at 2 px/mm with cards (centre u, v in mm, turn in degrees)."""
    img = np.full((260, 600, 3), felt, np.uint8)
    for u, v, turn in cards:
        box = cv2.boxPoints(((u * PX, v * PX), (CARD_MM[0] * PX, CARD_MM[1] * PX), turn))
        cv2.fillConvexPoly(img, np.round(box).astype(np.int32), (235, 240, 245))
        cv2.circle(img, (round(u * PX), round(v * PX)), 30, (20, 20, 200), -1)  # the face's art
    return cv2.GaussianBlur(img, (3, 3), 0)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
def test_cards_in_a_row_are_never_counted_more_than_they_are(n):
    cards = [(40 + i * CARD_STEP_MM, 65, 2.0) for i in range(n)]
    got = cards_at_least(area(*cards), PX)
    assert 1 + (n > 1) <= got <= n  # two or more laid 22 mm apart: at least two


def test_no_paper_counts_none():
    assert cards_at_least(area(), PX) == 0
    assert cards_at_least(area(felt=(235, 240, 245)), PX) == 0  # a pale table touches every edge


def test_paper_of_no_cards_shape_or_partly_outside_the_area_counts_none():
    assert cards_at_least(area((10, 65, 0.0), (40, 65, 0.0)), PX) == 0  # past the left edge
    fan = area(*[(120 + i * 10, 65, -40 + i * 20) for i in range(5)])
    assert cards_at_least(fan, PX) == 0


def test_cards_laid_beside_the_last_play_are_bounded_by_what_they_add():
    seg = AreaSegmenter("S", stable_s=0.0)
    seg.feed(0.0, 0, AreaState(()))
    (first,) = seg.feed(1.0, 1, AreaState(tuple(parse_cards("2C"))), at_least=1)
    assert "min_cards" not in first.to_json()
    (added,) = seg.feed(2.0, 2, AreaState(tuple(sorted(parse_cards("2C BJ")))), at_least=3)
    assert added.cards == tuple(parse_cards("BJ")) and added.to_json()["min_cards"] == 2


@pytest.mark.skipif(not (MODELS / "index-detector.onnx").exists(), reason="card reader models not installed")
def test_two_big_jokers_read_as_one_come_with_the_two_cards_their_paper_shows():
    """The demo design's big joker hides its star under the art of the card on top: the
    reader sees one; the play says the camera saw two cards."""
    from recognizer.reader import CardReader

    pair = tuple(parse_cards("BJ BJ"))
    script = Script(duration=3.0, acts=tuple(Act(0.8, seat, "lay", pair) for seat in "SENW"))
    watcher = TableWatcher(CardReader())
    plays = [e for f in TableRenderer(script, size=(1280, 720), fps=10, seed=2).frames()
             for e in watcher.process(f.image, f.t, f.index) if e["type"] == "play"]
    assert len(plays) == 4 and any(p["cards"] == ["BJ"] for p in plays)
    assert all(p["cards"] == ["BJ", "BJ"] or p.get("min_cards") == 2 for p in plays)
