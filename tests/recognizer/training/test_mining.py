"""Mined "not an index" crops: the detector's false hits in each of the reader's views, and
crops cut again once the detector they were mined with has changed."""

import numpy as np

from recognizer.orientation import rotate_points
from recognizer.training.chunks import _cached, mining_key
from recognizer.training.mining import false_hits


class Detector:
    """One box per view: the same image patch (x 10-20, y 30-50) as seen in that view's frame."""

    def detect(self, image, angle=0.0):
        corners = rotate_points(np.array([[10, 30], [20, 30], [20, 50], [10, 50]]), angle)
        (x0, y0), (x1, y1) = corners.min(0), corners.max(0)
        return [((float(x0), float(y0), float(x1), float(y1)), 0.5), ((100.0, 100.0, 110.0, 120.0), 0.4)] if angle == 0 else [((float(x0), float(y0), float(x1), float(y1)), 0.5)]


def test_false_hits_are_judged_in_image_pixels_and_returned_in_their_views_frame():
    seen = []

    def known(corners):  # the patch at x 10-20, y 30-50 is a labelled index, in every view
        seen.append(corners)
        (x0, y0), (x1, y1) = corners.min(0), corners.max(0)
        return abs(x0 - 10) < 1e-6 and abs(y0 - 30) < 1e-6 and abs(x1 - 20) < 1e-6 and abs(y1 - 50) < 1e-6

    image = np.zeros((200, 200, 3), np.uint8)
    assert false_hits(Detector(), image, known, views=(0.0, 90.0)) == [((100.0, 100.0, 110.0, 120.0), 0.0)]
    assert len(seen) == 3  # two boxes in the upright view, one in the turned one, each turned back
    assert false_hits(Detector(), image, lambda c: False, views=(0.0, 90.0), most=2) == [
        ((10.0, 30.0, 20.0, 50.0), 0.0), ((100.0, 100.0, 110.0, 120.0), 0.0)]
    turned = false_hits(Detector(), image, lambda c: False, views=(90.0,))
    assert len(turned) == 1 and turned[0][1] == 90.0 and turned[0][0] != (10.0, 30.0, 20.0, 50.0)


def test_crops_are_cut_again_only_for_another_detector(tmp_path):
    made = []

    def make():
        made.append(1)
        return {"x": np.arange(len(made))}

    path = tmp_path / "crops.npz"
    assert _cached(path, make, "a")["x"].tolist() == [0]
    assert _cached(path, make, "a")["x"].tolist() == [0] and len(made) == 1  # read back, not cut again
    assert _cached(path, make, "b")["x"].tolist() == [0, 1] and len(made) == 2  # mined with another detector
    assert _cached(path, make, "b")["x"].tolist() == [0, 1] and len(made) == 2
    one, other = tmp_path / "one.onnx", tmp_path / "other.onnx"
    one.write_bytes(b"weights")
    other.write_bytes(b"weights, trained on")
    assert mining_key(one) != mining_key(other) and mining_key(one) == mining_key(one)
