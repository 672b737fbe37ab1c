"""An int8 copy of an index classifier, for the table's CPU (needs the ``enroll`` extra: onnx).

Why: the classifier's crops were over half of a read's CPU (each box is read in two views and
two framings by a blend of three networks), and those networks already ran near what one
core's float units give. onnxruntime's static quantization (weights int8 per channel,
activations int8 per tensor, QDQ nodes its CPU kernels fuse) runs the installed blend on 26
crops in 20 ms against 31, and the reader with it read both real photo sets and the rendered
held-out designs exactly as many right as in float (recognizer/MODEL.md). Three choices
measured here, on an AVX2 CPU without VNNI:

- activations int8, not uint8: uint8 activations against int8 weights saturate in the AVX2
  kernels, and that copy named 6 % of 512 crops otherwise than the float network (int8: 0.2 %);
- static, not dynamic: dynamic quantization, which measures each activation at every call,
  ran the same crops six times slower;
- the detector stays float: its SiLU activations stay float between the int8 convolutions,
  and it ran at 32-38 ms against 21.

The float file stays what training, blending and deck enrolment read and write; the reader
runs the int8 copy that lies beside it while it was made from that very file
(:func:`recognizer.reader.int8_classifier`).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnxruntime.quantization import CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType, quantize_static
from onnxruntime.quantization.shape_inference import quant_pre_process

from recognizer.crops import CROP_H, CROP_W, to_tensor
from recognizer.reader import FLOAT_DIGEST, CardReader, file_digest, int8_classifier
from recognizer.training.synth.scenes import render_scene

CALIBRATION_CROPS = 2048
"""Crops the activation ranges are measured on (a seeded sample of those given): the ranges
of 2,048 crops of real photos and renders read both real sets exactly as the float network."""
BATCH = 256
SCENE_SIZES = ((600, 260), (378, 504))
"""Rendered calibration scenes alternate between a table's play-area crop and a phone photo."""


class _Batches(CalibrationDataReader):
    """The classifier's inputs for ``crops`` (N x H x W x 3 uint8 BGR), a batch at a time."""

    def __init__(self, name: str, crops: np.ndarray) -> None:
        self._feeds = iter({name: to_tensor(crops[i : i + BATCH])} for i in range(0, len(crops), BATCH))

    def get_next(self) -> dict | None:
        return next(self._feeds, None)


def quantize_classifier(classifier: Path, crops: np.ndarray, seed: int = 0) -> Path:
    """Writes the int8 copy of the float ``classifier`` file beside it, its activation ranges
    measured on up to :data:`CALIBRATION_CROPS` of ``crops`` (what the reader cuts: N x H x W
    x 3 uint8 BGR, as :func:`reader_crops` collects them); returns its path."""
    classifier = Path(classifier)
    if crops.ndim != 4 or crops.shape[-1] != 3 or crops.dtype != np.uint8 or not len(crops):
        raise ValueError(f"calibration crops must be N x H x W x 3 uint8 BGR with N >= 1, got {crops.dtype} {crops.shape}")
    pick = np.random.default_rng(seed).permutation(len(crops))[:CALIBRATION_CROPS]
    batches = _Batches("crops", crops[np.sort(pick)])
    out = int8_classifier(classifier)
    with tempfile.TemporaryDirectory() as tmp:
        prepared = Path(tmp) / "prepared.onnx"
        quant_pre_process(str(classifier), str(prepared), skip_symbolic_shape=True)
        made = Path(tmp) / out.name
        quantize_static(str(prepared), str(made), batches, quant_format=QuantFormat.QDQ, per_channel=True,
                        activation_type=QuantType.QInt8, weight_type=QuantType.QInt8, calibrate_method=CalibrationMethod.MinMax)
        model = onnx.load(str(made))
        onnx.helper.set_model_props(model, {**{m.key: m.value for m in model.metadata_props}, FLOAT_DIGEST: file_digest(classifier)})
        onnx.save(model, str(made))
        made.replace(out)
    return out


class _Recording:
    """An onnxruntime session that keeps every input it is run on (the reader's crops)."""

    def __init__(self, session) -> None:
        self.session, self.inputs = session, []

    def get_inputs(self):
        return self.session.get_inputs()

    def run(self, names, feeds: dict):
        self.inputs.append(next(iter(feeds.values())))
        return self.session.run(names, feeds)


def reader_crops(reader: CardReader, images) -> np.ndarray:
    """Every crop ``reader`` hands its classifier while reading ``images`` (views, framings and
    the turns it reads unsure boxes at), as N x H x W x 3 uint8 BGR: calibration data shaped
    as the reader's own asks, not as training's."""
    recording = _Recording(reader.classifier)
    reader.classifier = recording
    try:
        for image in images:
            reader.read(image)
    finally:
        reader.classifier = recording.session
    if not recording.inputs:
        return np.zeros((0, CROP_H, CROP_W, 3), np.uint8)
    x = np.concatenate(recording.inputs)
    return np.round(x.transpose(0, 2, 3, 1) * 255.0).astype(np.uint8)


def calibration_scenes(design, scenes: int, seed: int) -> list[np.ndarray]:
    """``scenes`` rendered images of ``design`` (a design, or a function drawing one from each
    scene's generator, as :func:`render_scene` takes it), for
    :func:`reader_crops`; numbered apart from the scenes training draws with the same seed."""
    return [render_scene(seed * 1_000_003 + 900_000 + k, design, size=SCENE_SIZES[k % 2]).image for k in range(scenes)]
