"""End to end with the trained card reader: a rendered 1080p table clip -> plays.

Unlike the other table tests nothing here knows the ground truth but the final
comparison: the ONNX models read the area crops the watcher hands them. Skipped only
where the models have not been trained and installed into ``recognizer/models`` yet.
"""

from pathlib import Path

import pytest

from referee.cards import parse_cards

from recognizer.training.table_video import Act, Script, TableRenderer
from recognizer.table.watcher import TableWatcher

MODELS = Path(__file__).parents[3] / "recognizer" / "models"
pytestmark = pytest.mark.skipif(
    not (MODELS / "index-detector.onnx").exists() or not (MODELS / "index-classifier.onnx").exists(),
    reason="card reader models not trained yet (guandan-ref train-recognizer --install)",
)


def test_plays_from_a_rendered_clip_with_the_trained_reader():
    from recognizer.reader import CardReader

    script = Script(
        duration=4.0,
        acts=(
            Act(0.8, "S", "lay", tuple(parse_cards("3S 3H"))),
            Act(1.2, "E", "lay", tuple(parse_cards("7D 8C 9D TS JH"))),
            Act(1.6, "N", "lay", tuple(parse_cards("QC QC QD"))),
            Act(2.0, "W", "pass"),
        ),
    )
    watcher = TableWatcher(CardReader())
    events = []
    for frame in TableRenderer(script, size=(1920, 1080), fps=8).frames():
        events += watcher.process(frame.image, frame.t, frame.index)
    got = sorted((e["type"], e["seat"], tuple(e.get("cards", ()))) for e in events if e["type"] != "calibration")
    want = sorted((e["type"], e["seat"], tuple(e.get("cards", ()))) for e in script.expected() if e["type"] != "calibration")
    assert got == want
    assert all(e["confidence"] > 0.3 for e in events if e["type"] == "play")
