"""``recognize_frames``: whole still frames -> per-seat cards and tokens, or an error."""

import cv2
import numpy as np
import pytest

from recognizer.table.frames import recognize_frames
from recognizer.table.markers import MarkerDetector, REPORT_IDS
from recognizer.training.table_video import Act, Script, TableRenderer


class Recording:
    """A reader that keeps the crops it is shown and reads one ace of spades in each."""

    def __init__(self):
        self.crops = []

    def read(self, image):
        self.crops.append(image)
        return type("Reading", (), {"cards": [48], "confidence": 0.75, "uncertain": True})()


@pytest.fixture(scope="module")
def frame_with_tokens(tmp_path_factory):
    """Report cards in every area, N's pass token: markers the seats' crops must show upright."""
    acts = tuple(Act(0.0, seat, "report", dwell=0.0) for seat in "SENW") + (Act(0.0, "N", "pass", dwell=0.0),)
    renderer = TableRenderer(Script(duration=1.0, acts=acts), size=(1920, 1080), fps=2)
    last = list(renderer.frames())[-1]
    path = tmp_path_factory.mktemp("frames") / "table.png"
    cv2.imwrite(str(path), last.image)
    return str(path)


def test_each_seat_gets_its_area_read_and_its_tokens(frame_with_tokens):
    reader = Recording()
    (result,) = recognize_frames([frame_with_tokens], None, reader=reader)
    assert result["image"] == frame_with_tokens
    assert [result[s]["tokens"] for s in "SENW"] == [["report"], ["report"], ["pass", "report"], ["report"]]
    assert all(result[s]["cards"] == ["AS"] and result[s]["confidence"] == 0.75 and result[s]["uncertain"] for s in "SENW")
    assert "error" not in result


def test_each_crop_shows_its_area_the_way_its_seat_sees_it(frame_with_tokens):
    reader = Recording()
    recognize_frames([frame_with_tokens], None, reader=reader)
    assert len(reader.crops) == 4
    for crop in reader.crops:
        assert crop.shape == (260, 600, 3)
        report = [m for m in MarkerDetector(scale=1.0).detect(cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY)) if m.id in REPORT_IDS]
        assert len(report) == 1
        # The renderer turns tokens only a few degrees from the seat's upright: the
        # marker's printed top-left corner must be the crop's top-left-most corner.
        assert np.argmin(report[0].corners.sum(axis=1)) == 0


def test_unreadable_files_and_frames_without_markers_get_errors(tmp_path, frame_with_tokens):
    blank = tmp_path / "blank.png"
    cv2.imwrite(str(blank), np.full((720, 1280, 3), 90, np.uint8))
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"not a png")
    results = recognize_frames([str(tmp_path / "missing.png"), str(broken), str(blank), frame_with_tokens], None, reader=Recording())
    assert [r.get("error", "").split(":")[0] for r in results[:2]] == ["no such file", "not a readable image"]
    assert results[2]["error"].startswith("table markers not found: saw corner markers []")
    assert "S" in results[3]
