"""Tokens are painted out of an area crop before the card reader sees it."""

import cv2
import numpy as np

from recognizer.table.layout import TableLayout
from recognizer.table.markers import MarkerDetector
from recognizer.table.calibration import fit_homography
from recognizer.table.rectify import AreaViews
from recognizer.table.tokens import mask_tokens
from recognizer.table.watcher import TableWatcher
from recognizer.training.table_video import Act, Script, TableRenderer, TruthReading
from referee.cards import parse_cards


class Recording:
    """A card reader that keeps every image it was asked to read and sees no cards."""

    def __init__(self):
        self.images = []

    def read(self, image):
        self.images.append(image)
        return TruthReading([])


def area_crop(kind):
    script = Script(duration=2.0, acts=(Act(0.1, "S", "lay", tuple(parse_cards("3S 4H 5D"))), Act(0.5, "S", kind)))
    frame = list(TableRenderer(script, size=(1280, 720), fps=4).frames())[-1]
    layout = TableLayout()
    gray = cv2.cvtColor(frame.image, cv2.COLOR_BGR2GRAY)
    return AreaViews(layout, fit_homography(MarkerDetector().detect(gray), layout), 0.25).crop("S", frame.image)


def test_report_card_and_pass_token_are_painted_out_and_the_cards_kept():
    detector = MarkerDetector()
    for kind in ("report", "pass"):
        crop = area_crop(kind)
        assert [m for m in detector.detect(cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY)) if m.id >= 10]
        masked = mask_tokens(crop, detector)
        assert not detector.detect(cv2.cvtColor(masked, cv2.COLOR_BGR2GRAY))
        changed = np.any(masked != crop, axis=2)
        assert 0.03 < changed.mean() < 0.4
        left = crop.shape[1] // 3  # the cards lie left of the tokens: untouched
        assert not changed[:, :left].any()


def test_the_watchers_card_reader_never_sees_a_token():
    script = Script(duration=4.5, acts=(Act(0.5, "S", "report"), Act(2.5, "S", "pass")))
    reader = Recording()
    watcher = TableWatcher(reader)
    found = []
    for frame in TableRenderer(script, size=(1280, 720), fps=8).frames():
        found += watcher.process(frame.image, frame.t, frame.index)
    assert [e["type"] for e in found if e.get("seat") == "S"] == ["report", "pass"]  # the watcher saw both tokens
    detector = MarkerDetector()
    assert reader.images and not any(detector.detect(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)) for image in reader.images)


def test_a_crop_without_tokens_is_read_as_it_is():
    plain = np.full((120, 300, 3), (40, 110, 70), np.uint8)
    assert mask_tokens(plain, MarkerDetector()) is plain
