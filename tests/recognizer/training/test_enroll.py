"""Enrolling a deck: faces in, the classifier adapted to them, read with --deck."""

import json
import warnings

import cv2
import numpy as np
import pytest

from recognizer.crops import N_CLASSES, to_tensor
from recognizer.reader import FLOAT_DIGEST, MODELS, CardReader, _session, classifier_frame_again_below, classifier_refine_below, classifier_sure_enough_at, file_digest, int8_classifier
from recognizer.training.synth.photos import FacesError, faces_of_design, read_faces
from recognizer.training.synth import HELD_OUT_PROCEDURAL
from recognizer.training.train import render_classifier_set
from referee.cards import FACES, card_name
from web.app.cli import main

DESIGN = HELD_OUT_PROCEDURAL[0]  # never trained on


@pytest.fixture(scope="module")
def faces_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("faces")
    for card, img in faces_of_design(DESIGN).items():
        cv2.imwrite(str(folder / f"{card_name(card)}.png"), img)
    return folder


def accuracy(classifier, crops, labels):
    session = _session(classifier, 1)
    logits = session.run(None, {session.get_inputs()[0].name: to_tensor(crops)})[0]
    return float((logits.argmax(1) == labels).mean())


def test_enrolling_a_held_out_design_reads_its_indices_better(tmp_path, faces_dir, capsys):
    data = tmp_path / "data"
    # 600 scenes: on 60, fine-tuning read fresh scenes mostly a little worse than the
    # committed classifier, by a few crops; at 600 better after every epoch (MODEL.md).
    assert main(["deck", "enroll", "--faces", str(faces_dir), "--name", "club-deck", "--data", str(data), "--scenes", "600", "--epochs", "4"]) == 0
    assert "enrolled deck 'club-deck'" in capsys.readouterr().out
    adapted = data / "enrolled" / "club-deck" / "index-classifier.onnx"
    record = json.loads((adapted.parent / "enrolled.json").read_text())
    assert record["held_out_crop_accuracy"]["after"] > record["held_out_crop_accuracy"]["before"]
    assert 1 <= record["epochs_kept"] <= 4
    # Index crops of fresh scenes of the deck (other seeds than the enrollment's): the
    # adapted classifier names more of them right than the committed one.
    crops, labels = render_classifier_set(100, 424_242, DESIGN)
    base, enrolled = accuracy(MODELS / "index-classifier.onnx", crops, labels), accuracy(adapted, crops, labels)
    assert enrolled > base, (base, enrolled)
    # its int8 copy, which the reader runs, was made from it and reads them better too
    assert accuracy(int8_classifier(adapted), crops, labels) > base
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert CardReader(classifier=adapted).classifier.get_modelmeta().custom_metadata_map[FLOAT_DIGEST] == file_digest(adapted)
    # it reads unsure boxes again at turns, frames crops again and spares sure boxes' further looks exactly as the installed classifier does
    assert classifier_refine_below(adapted) == classifier_refine_below(MODELS / "index-classifier.onnx")
    assert classifier_frame_again_below(adapted) == classifier_frame_again_below(MODELS / "index-classifier.onnx") < 1
    assert classifier_sure_enough_at(adapted) == classifier_sure_enough_at(MODELS / "index-classifier.onnx") < 1
    # recognize and watch take --deck NAME
    photo = tmp_path / "row.png"
    cv2.imwrite(str(photo), np.full((200, 300, 3), 90, np.uint8))
    assert main(["recognize", str(photo), "--deck", "club-deck", "--data", str(data), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["cards"] == []


def test_faces_missing_or_misnamed_are_named(tmp_path, faces_dir):
    for card in FACES[:50]:
        (tmp_path / f"{card_name(card)}.png").write_bytes((faces_dir / f"{card_name(card)}.png").read_bytes())
    (tmp_path / "joker.png").write_bytes(b"x")
    with pytest.raises(FacesError, match=r"faces missing in .*: AD, AC \(.*names not understood: joker.png"):
        read_faces(tmp_path)
    with pytest.raises(FacesError, match="no such folder"):
        read_faces(tmp_path / "nope")


def test_a_deck_without_jokers_borrows_them_and_says_so(tmp_path, faces_dir, capsys):
    from referee.cards import BJ, SJ

    suited = tmp_path / "suited"
    suited.mkdir()
    for card in FACES[:52]:  # named as a photographed set often is: ending in the face
        (suited / f"deck_card_{card_name(card)}.png").write_bytes((faces_dir / f"{card_name(card)}.png").read_bytes())
    (suited / "deck_deal1.png").write_bytes((faces_dir / "2S.png").read_bytes())  # not a face: left alone
    faces, borrowed = read_faces(suited)
    assert borrowed == [SJ, BJ] and set(faces) == set(FACES)
    assert faces[SJ].shape[2] == 3 and not np.array_equal(faces[SJ], faces_of_design(DESIGN, [SJ])[SJ])
    (suited / "BJ.png").write_bytes((faces_dir / "BJ.png").read_bytes())
    faces, borrowed = read_faces(suited)
    assert borrowed == [SJ] and np.array_equal(faces[BJ], cv2.imread(str(faces_dir / "BJ.png"), cv2.IMREAD_COLOR))
    data = tmp_path / "data"
    assert main(["deck", "enroll", "--faces", str(suited), "--name", "no-jokers", "--data", str(data), "--scenes", "10", "--epochs", "1"]) == 0
    assert "no image of SJ in" in capsys.readouterr().out
    assert (data / "enrolled" / "no-jokers" / "index-classifier.onnx").exists()
    record = json.loads((data / "enrolled" / "no-jokers" / "enrolled.json").read_text())
    assert record["borrowed"] == {"faces": ["SJ"], "design": "procedural-0"}


def test_unknown_design_and_bad_names_are_one_line_errors(tmp_path, capsys):
    assert main(["deck", "enroll", "--render", "no-such-design", "--name", "x", "--data", str(tmp_path)]) == 2
    assert "no rendered design named 'no-such-design'" in capsys.readouterr().err
    assert main(["deck", "enroll", "--render", DESIGN.name, "--name", "../up", "--data", str(tmp_path)]) == 2
    assert "bad deck name" in capsys.readouterr().err


def _head_and_features(seed: int = 0):
    from recognizer.training.enroll import _Head

    rng = np.random.default_rng(seed)
    x = rng.normal(size=(600, 32)).astype(np.float32)
    head = _Head(rng.normal(size=(16, 32)), np.zeros(16), rng.normal(size=(N_CLASSES, 16)), np.zeros(N_CLASSES))
    return head, x[:400], x[400:]


def test_fine_tuning_that_reads_held_out_scenes_no_better_keeps_the_weights_it_started_from():
    head, train, val = _head_and_features()
    start = [p.copy() for p in head.params]
    noise = np.random.default_rng(1).integers(0, N_CLASSES, len(train))  # labels nothing can learn from
    assert head.fit(train, noise, 3, 0, val=(val, head.logits(val).argmax(1))) == 0
    assert all(np.array_equal(a, b) for a, b in zip(head.params, start))


def test_fine_tuning_keeps_the_epoch_that_reads_held_out_scenes_best_not_the_last():
    """A learnable rule (class 0 or 7 by one feature's sign) at a step large enough to
    overshoot: some epoch reads the held-out scenes worse than one before it, and the
    weights kept are those of the best epoch seen, which a shorter fit (the same first
    epochs) never beats."""

    def fitted(epochs):
        head, train, val = _head_and_features()
        y_train, y_val = ((x[:, 0] > 0).astype(int) * 7 for x in (train, val))
        before = head.accuracy(val, y_val)
        return head.fit(train, y_train, epochs, 0, val=(val, y_val), lr=1.0), head.accuracy(val, y_val), before

    kept, best, before = fitted(6)
    assert 1 <= kept <= 6 and best > before
    assert best == max(fitted(epochs)[1] for epochs in range(1, 7))


def test_a_deck_enrolled_again_on_a_base_without_reader_settings_keeps_none_of_the_earlier_ones(tmp_path, faces_dir):
    import shutil

    from recognizer.reader import LOOK_ALWAYS, REFINE_OFF
    from recognizer.training.enroll import enroll

    base = tmp_path / "base" / "index-classifier.onnx"
    base.parent.mkdir()
    shutil.copyfile(MODELS / "index-classifier.onnx", base)  # no .json beside it: no reader settings
    faces, _ = read_faces(faces_dir)
    data = tmp_path / "data"
    enroll("club", data, faces, scenes=10, epochs=1)  # on the installed base: its settings copied
    adapted = data / "enrolled" / "club" / "index-classifier.onnx"
    assert classifier_refine_below(adapted) != REFINE_OFF and classifier_frame_again_below(adapted) != LOOK_ALWAYS != classifier_sure_enough_at(adapted)
    enroll("club", data, faces, scenes=10, epochs=1, base=base)
    assert classifier_refine_below(adapted) == REFINE_OFF and classifier_frame_again_below(adapted) == LOOK_ALWAYS == classifier_sure_enough_at(adapted)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # its int8 copy made again from the new file
        CardReader(classifier=adapted)
