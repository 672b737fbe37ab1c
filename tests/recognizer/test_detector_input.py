"""A detector exported with free input sides is fed the image with a margin of grey,
padded to its stride, and finds the same boxes as the same network fed the padded square."""

import onnx
import pytest

from recognizer.reader import MODELS, IndexDetector
from recognizer.training.synth import HELD_OUT_PROCEDURAL
from recognizer.training.synth.scenes import render_scene


def _variant(tmp_path, name, edit):
    model = onnx.load(str(MODELS / "index-detector.onnx"))
    edit(model)
    path = tmp_path / name
    onnx.save(model, str(path))
    return path


def _fixed_square(model):
    dims = model.graph.input[0].type.tensor_type.shape.dim
    dims[0].dim_value, dims[2].dim_value, dims[3].dim_value = 1, 320, 320


def _iou(a, b):
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = w * h
    return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter)


def test_the_installed_detector_takes_free_sides_and_pads_a_play_area_with_a_margin_to_its_stride():
    detector = IndexDetector(MODELS / "index-detector.onnx")
    assert detector.stride and detector.size == (320, 320)
    assert detector.canvas(139, 320) == (176, 320)  # a 600 x 260 play area scaled into 320, 16 px of grey above and below
    assert detector.canvas(320, 240) == (320, 272)  # a 378 x 504 photo
    assert detector.canvas(320, 320) == (320, 320)


@pytest.mark.parametrize("angle", [0.0, 90.0, 30.0])
@pytest.mark.parametrize("seed", [3, 4])
def test_the_margin_and_stride_padded_input_finds_the_boxes_the_square_one_finds(tmp_path, seed, angle):
    free = IndexDetector(MODELS / "index-detector.onnx")
    square = IndexDetector(_variant(tmp_path, "square.onnx", _fixed_square))
    assert square.stride == 0 and square.canvas(139, 320) == (320, 320)
    image = render_scene(seed, HELD_OUT_PROCEDURAL[seed % 2], size=(600, 260)).image
    got, want = free.detect(image, angle), square.detect(image, angle)
    assert len(want) >= 3
    sure = [box for box, score in want if score >= 0.5]
    for box in sure:  # each box the square input finds surely, the smaller input finds where it lies
        assert max(_iou(box, other) for other, _ in got) > 0.8, (box, got)
    assert abs(len(got) - len(want)) <= max(1, len(want) // 5)


def test_a_detector_with_free_sides_must_say_its_size_and_stride(tmp_path):
    path = _variant(tmp_path, "bare.onnx", lambda model: model.metadata_props.clear())
    with pytest.raises(ValueError, match="imgsz and stride"):
        IndexDetector(path)
