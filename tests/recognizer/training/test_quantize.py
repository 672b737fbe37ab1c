"""The int8 copy of a classifier: made from the reader's own crops, run by the reader only
while it matches the float file it was made from."""

import shutil
import warnings

import numpy as np
import onnx
import pytest

from recognizer.crops import to_tensor
from recognizer.training.quantize import calibration_scenes, quantize_classifier, reader_crops
from recognizer.reader import FLOAT_DIGEST, MODELS, CardReader, _session, file_digest, int8_classifier
from recognizer.training.synth import HELD_OUT_PROCEDURAL


def _models(folder):
    for name in ("index-detector.onnx", "index-detector.json", "index-classifier.onnx", "index-classifier.json"):
        shutil.copyfile(MODELS / name, folder / name)
    return folder


def _faces(session, crops):
    return session.run(None, {session.get_inputs()[0].name: to_tensor(crops)})[0].argmax(1)


def test_the_committed_int8_classifier_was_made_from_the_committed_float_one():
    session = _session(int8_classifier(MODELS / "index-classifier.onnx"), 1)
    assert session.get_modelmeta().custom_metadata_map[FLOAT_DIGEST] == file_digest(MODELS / "index-classifier.onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert CardReader().classifier.get_modelmeta().custom_metadata_map[FLOAT_DIGEST] == file_digest(MODELS / "index-classifier.onnx")


def test_an_int8_copy_reads_the_crops_as_its_float_classifier_does_and_the_reader_runs_it(tmp_path):
    models = _models(tmp_path)
    float_reader = CardReader(models, threads=1)
    assert FLOAT_DIGEST not in float_reader.classifier.get_modelmeta().custom_metadata_map  # no copy yet: the float file
    design = HELD_OUT_PROCEDURAL[0]
    calibration = reader_crops(float_reader, calibration_scenes(design, 6, seed=1))
    assert calibration.dtype == np.uint8 and calibration.shape[1:] == (48, 32, 3) and len(calibration) >= 50
    out = quantize_classifier(models / "index-classifier.onnx", calibration)
    assert out == models / "index-classifier.int8.onnx"
    assert out.stat().st_size < 0.4 * (models / "index-classifier.onnx").stat().st_size
    fresh = reader_crops(float_reader, calibration_scenes(design, 6, seed=2))  # scenes it was not calibrated on
    same = np.mean(_faces(_session(out, 1), fresh) == _faces(float_reader.classifier, fresh))
    assert same >= 0.97, f"the int8 copy names {same:.1%} of fresh crops as the float network does"
    reader = CardReader(models, threads=1)
    assert reader.classifier.get_modelmeta().custom_metadata_map[FLOAT_DIGEST] == file_digest(models / "index-classifier.onnx")


def test_a_copy_made_from_another_float_file_is_passed_over_with_a_warning(tmp_path):
    models = _models(tmp_path)
    quantize_classifier(models / "index-classifier.onnx", reader_crops(CardReader(models), calibration_scenes(HELD_OUT_PROCEDURAL[1], 2, seed=0)))
    other = onnx.load(str(models / "index-classifier.onnx"))  # the float file replaced (installed again), the copy not made again
    onnx.helper.set_model_props(other, {"made": "again"})
    onnx.save(other, str(models / "index-classifier.onnx"))
    with pytest.warns(UserWarning, match="was not made from .*quantize-classifier"):
        reader = CardReader(models)
    assert FLOAT_DIGEST not in reader.classifier.get_modelmeta().custom_metadata_map


@pytest.mark.parametrize("crops", [np.zeros((0, 48, 32, 3), np.uint8), np.zeros((4, 48, 32, 3), np.float32), np.zeros((4, 48, 32), np.uint8)])
def test_calibration_crops_that_are_not_crops_are_refused_by_what_is_wrong(tmp_path, crops):
    models = _models(tmp_path)
    with pytest.raises(ValueError, match="N x H x W x 3 uint8"):
        quantize_classifier(models / "index-classifier.onnx", crops)
    assert not int8_classifier(models / "index-classifier.onnx").exists()


def test_installing_a_classifier_removes_the_int8_copy_of_the_one_it_replaces(tmp_path):
    from recognizer.training.train import install_models

    dest = tmp_path / "installed"
    dest.mkdir()
    _models(dest)
    shutil.copyfile(int8_classifier(MODELS / "index-classifier.onnx"), int8_classifier(dest / "index-classifier.onnx"))
    trained = tmp_path / "run"
    trained.mkdir()
    for suffix in ("onnx", "pt"):
        shutil.copyfile(MODELS / f"index-classifier.{suffix}", trained / f"index-classifier.{suffix}")
    install_models(None, None, dest)  # nothing installed: the copy stays
    assert int8_classifier(dest / "index-classifier.onnx").exists()
    install_models(None, trained / "index-classifier.onnx", dest)
    assert not int8_classifier(dest / "index-classifier.onnx").exists()


def test_the_command_makes_the_copy_of_a_folders_classifier_from_rendered_scenes_alone(tmp_path, capsys):
    from web.app.cli import main

    models = _models(tmp_path)
    assert reader_crops(CardReader(models), []).shape == (0, 48, 32, 3)  # no image, no crop: still crops' shape
    assert main(["quantize-classifier", "--models", str(models), "--scenes", "2"]) == 0
    assert "calibrated on" in capsys.readouterr().out
    session = _session(int8_classifier(models / "index-classifier.onnx"), 1)
    assert session.get_modelmeta().custom_metadata_map[FLOAT_DIGEST] == file_digest(models / "index-classifier.onnx")
