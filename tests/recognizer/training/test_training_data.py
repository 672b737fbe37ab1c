"""Training data plumbing that needs no torch: YOLO labels, classifier crops, deck index boxes."""

import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from recognizer.crops import CROP_H, CROP_W, N_CLASSES, NOT_INDEX, class_of, crop_index, decode_class
from recognizer.reader import _session
from recognizer.training.chunks import real_crops
from recognizer.training.realtrain import load_labelled, split_by_blocks
from recognizer.training.synth import PROCEDURAL_DESIGNS, card_image
from recognizer.training.synth.decks import DECKS, HELD_OUT, find_index_boxes, training_design_sampler
from recognizer.training.synth.scenes import render_scene
from recognizer.training.train import PACKAGE_MODELS, render_classifier_set, render_detector_set
from referee.cards import BJ, FACES, SJ, card_name, parse_card


def test_detector_set_is_yolo_format_matching_the_scenes(tmp_path):
    data = render_detector_set(tmp_path, images=4, seed=3)
    assert "names:\n  0: index" in data.read_text()
    labels = sorted(tmp_path.rglob("labels/*.txt"))
    assert len(labels) == 4 and len(list(tmp_path.rglob("images/*.jpg"))) == 4
    for k, path in enumerate(sorted(labels, key=lambda p: p.name)):
        rows = [line.split() for line in path.read_text().splitlines()]
        assert len(rows) == len(render_scene(3 * 1_000_003 + k).labels)
        for cls, *xywh in rows:
            assert cls == "0" and all(0 <= float(v) <= 1 for v in xywh)


def test_classifier_crops_and_classes():
    x, y = render_classifier_set(scenes=3, seed=1)
    assert x.shape[1:] == (CROP_H, CROP_W, 3) and x.dtype == np.uint8 and len(x) == len(y)
    assert (y == NOT_INDEX).any() and (y < NOT_INDEX).any() and y.max() < N_CLASSES


def test_class_numbers_round_trip():
    for face in FACES:
        for inverted in (False, True):
            assert decode_class(class_of(face, inverted)) == (face, inverted)
    assert decode_class(NOT_INDEX) is None


def test_crop_index_keeps_the_box_content():
    img = np.zeros((100, 100, 3), np.uint8)
    img[20:60, 30:50] = 255
    crop = crop_index(img, (30, 20, 50, 60))
    assert crop[CROP_H // 2, CROP_W // 2].tolist() == [255, 255, 255]
    assert crop[0, 0].tolist() == [0, 0, 0]  # the padding shows the surroundings


def test_ink_heuristic_finds_the_known_index_of_drawn_decks():
    # A procedural deck knows its true index boxes: the heuristic used on real decks must agree.
    design = PROCEDURAL_DESIGNS[3]
    images = {card: card_image(card, design, 320) for card in FACES}
    found = find_index_boxes(images)
    assert len(found) >= 52
    for card in FACES[:52]:
        w = images[card].shape[1]
        x0, y0, x1, y1 = design.index_box(card, 320)
        truth = np.array([x0 / w, y0 / 320, x1 / w, y1 / 320])
        assert np.abs(np.array(found[card]) - truth).max() < 0.04, card


def test_held_out_decks_never_sampled_for_training():
    assert set(HELD_OUT) <= {d.name for d in DECKS if d.standard}
    assert all(d.licence for d in DECKS)
    sample = training_design_sampler([])
    rng = np.random.default_rng(0)
    assert all(sample(rng).name.startswith("procedural-") for _ in range(20))


@pytest.mark.skipif(shutil.which("rsvg-convert") is None, reason="rsvg-convert (librsvg2-bin) not installed")
def test_npm_deck_renders_one_svg_per_card_from_the_unpacked_package(tmp_path):
    from recognizer.training.synth.decks import _npm_faces

    src = next(d for d in DECKS if d.name == "kennard")
    folder = tmp_path / "npm" / src.package.removeprefix("npm:").replace("/", "_").replace("@", "") / "package" / src.file
    folder.mkdir(parents=True)
    for card in FACES[:52]:
        (folder / f"{card_name(card)}.svg").write_text(
            '<svg xmlns="http://www.w3.org/2000/svg" width="70" height="100">'
            f'<rect x="1" y="1" width="68" height="98" fill="white"/><text x="4" y="16" font-size="14">{card_name(card)}</text></svg>'
        )
    faces = _npm_faces(tmp_path, src, fetch=False)  # already unpacked: found without npm
    assert sorted(faces) == sorted(FACES[:52])
    assert all(img.shape[2] == 4 and 95 <= img.shape[0] <= 100 for img in faces.values())


def test_classifier_set_learns_the_detectors_false_hits_but_not_hidden_indices():
    scene = render_scene(1 * 1_000_003 + 500_000)  # the one scene render_classifier_set(1, seed=1) cuts
    assert scene.labels and scene.hidden

    class Detector:  # an index, a half-covered index and the whole image: only the last is a false hit
        def detect(self, image, angle=0.0):
            s = image.shape[1] / scene.image.shape[1]
            scaled = lambda box: tuple(v * s for v in box)  # noqa: E731
            return [(scaled(scene.labels[0].box), 0.9), (scaled(scene.hidden[0].box), 0.5), ((0.0, 0.0, image.shape[1] - 1.0, image.shape[0] - 1.0), 0.2)]

    x0, y0 = render_classifier_set(scenes=1, seed=1)
    x1, y1 = render_classifier_set(scenes=1, seed=1, detector=Detector())
    assert len(y1) == len(y0) + 1 and y1[-1] == NOT_INDEX
    assert np.array_equal(x1[:-1], x0)


def test_every_laid_index_is_either_shown_or_hidden():
    for seed in range(25):
        scene = render_scene(seed, fanned=seed % 2 == 1)
        assert len(scene.labels) + len(scene.hidden) == 2 * len(scene.cards)
        assert not set(scene.labels) & set(scene.hidden)


def test_joker_scenes_add_joker_crops_to_the_rendered_set():
    joker_classes = [class_of(j, inv) for j in (SJ, BJ) for inv in (False, True)]
    x0, y0 = render_classifier_set(scenes=2, seed=1)
    x1, y1 = render_classifier_set(scenes=2, seed=1, jokers=3)
    assert len(y1) > len(y0)
    assert np.isin(y1, joker_classes).sum() >= np.isin(y0, joker_classes).sum() + 3 * 2  # at least one joker, two crops of each index
    assert (y1[: len(y0)] == y0).all()  # the plain scenes come first, cut as before


def test_fanned_scenes_add_crops_after_the_joker_scenes_and_change_none_before():
    x0, y0 = render_classifier_set(scenes=2, seed=1, jokers=1)
    x1, y1 = render_classifier_set(scenes=2, seed=1, jokers=1, fans=1)
    assert len(y1) >= len(y0) + 2 * 6  # a fanned hand shows six indices at least, cut twice each
    assert np.array_equal(x1[: len(x0)], x0) and (y1[: len(y0)] == y0).all()
    assert (y1[len(y0):] != NOT_INDEX).sum() >= 12


def test_a_joker_seen_sideways_is_not_taught_as_not_an_index():
    fixture = Path(__file__).parents[1] / "fixtures" / "realphotos"
    photo = next(p for p in load_labelled(fixture) if p.path.name == "IMG_20220921_193954.jpg")
    queen = parse_card("QS")
    photo = replace(photo, cards=(queen,), boxes=tuple(b for b in photo.boxes if b.card == queen))  # its two corners
    as_joker = replace(photo, cards=(SJ,), boxes=tuple(replace(b, card=SJ) for b in photo.boxes))
    classifier = _session(PACKAGE_MODELS / "index-classifier.onnx", 1)
    _, queen, unknown_q = real_crops([photo], 3, classifier)
    _, joker, unknown_j = real_crops([as_joker], 3, classifier)
    assert unknown_q == unknown_j == 0
    angled = len(photo.boxes)
    assert (joker != NOT_INDEX).sum() == (queen != NOT_INDEX).sum() == angled * 6  # three views upright, three upside down
    assert (queen == NOT_INDEX).sum() - (joker == NOT_INDEX).sum() == angled  # the queen's sideways views only


def test_a_dark_decks_light_crops_are_cut_once_more_turned_over(monkeypatch):
    import recognizer.crops as crops
    from recognizer.crops import light_ink

    fixture = Path(__file__).parents[1] / "fixtures" / "realphotos"
    photos = {p.path.name: p for p in load_labelled(fixture)}
    classifier = _session(PACKAGE_MODELS / "index-classifier.onnx", 1)
    x, y, _ = real_crops([photos["IMG_7791.jpg"]], 3, classifier)
    white, _, _ = real_crops([photos["IMG_20220921_194905.jpg"]], 3, classifier)
    monkeypatch.setattr(crops, "DARK_DECK_SHARE", 2.0)  # no deck dark
    plain, plain_y, _ = real_crops([photos["IMG_7791.jpg"]], 3, classifier)
    white_plain, _, _ = real_crops([photos["IMG_20220921_194905.jpg"]], 3, classifier)
    assert np.array_equal(x[: len(plain)], plain) and (y[: len(plain)] == plain_y).all()
    turned = y[len(plain) :]
    assert len(turned) == light_ink(plain).sum() >= len(plain) / 2  # every light crop again, most of the dark deck's
    assert not light_ink(x[len(plain) :]).any() and sorted(turned) == sorted(plain_y[light_ink(plain)])
    assert light_ink(white).mean() < 0.5  # a white deck's photo: nothing added (its crops are mostly dark ink)
    assert np.array_equal(white, white_plain)


def test_a_dark_decks_photo_gives_the_detectors_false_hits_found_turned_over_too(monkeypatch):
    import cv2

    import recognizer.training.chunks as chunks
    from recognizer.crops import lightness_turned
    from recognizer.reader import IndexDetector
    from recognizer.training.train import MINING_SCORE

    fixture = Path(__file__).parents[1] / "fixtures" / "realphotos"
    photos = {p.path.name: p for p in load_labelled(fixture)}
    detector = IndexDetector(PACKAGE_MODELS / "index-detector.onnx", det_conf=MINING_SCORE)
    classifier = _session(PACKAGE_MODELS / "index-classifier.onnx", 1)
    real_hits, looked = chunks.false_hits, []

    def spy(det, image, known, views, most, turns):
        looked.append((image, views))
        return real_hits(det, image, known, views, most, turns)

    monkeypatch.setattr(chunks, "false_hits", spy)
    cut = {}
    for name in ("IMG_7707.jpg", "IMG_20220921_194905.jpg"):  # a black card by a keyboard; a white deck's photo, its indices found
        looked.clear()
        cut[name] = real_crops([photos[name]], 3, classifier, detector)[1]
        image = cv2.imread(str(photos[name].path), cv2.IMREAD_COLOR)
        turned = [views for seen, views in looked if np.array_equal(seen, lightness_turned(image))]
        assert turned == ([(0.0,)] if name == "IMG_7707.jpg" else []), name  # the reader's first view, as it looks
    monkeypatch.setattr(chunks, "false_hits", lambda det, image, known, views, *a: [] if views == (0.0,) else real_hits(det, image, known, views, *a))
    upright_only = real_crops([photos["IMG_7707.jpg"]], 3, classifier, detector)[1]
    assert (cut["IMG_7707.jpg"] == NOT_INDEX).sum() > (upright_only == NOT_INDEX).sum()  # taught as "not an index"
    assert (cut["IMG_7707.jpg"] != NOT_INDEX).sum() == (upright_only != NOT_INDEX).sum()


def test_detector_set_drawn_again_only_when_the_renders_asked_for_change(tmp_path):
    from recognizer.training.chunks import ChunkConfig, detector_data

    cfg = ChunkConfig(tmp_path, None, 1.0, 3, "detector", 0, 4, 1)
    images = lambda: sorted(p.name for p in (tmp_path / "data" / "detector-data").rglob("images/*.jpg"))  # noqa: E731
    detector_data(cfg)
    drawn = images()
    marker = tmp_path / "data" / "detector-data" / "complete"
    stamp = marker.stat().st_mtime_ns
    assert len(drawn) == 4 and detector_data(cfg) and marker.stat().st_mtime_ns == stamp  # the same ask: kept
    detector_data(replace(cfg, render_jokers=2))
    assert len(images()) == 6 and set(drawn) < set(images())
    rows = [(tmp_path / "data" / "detector-data" / "train" / "labels" / f"{k:06d}.txt").read_text().splitlines() for k in (4, 5)]
    assert all(rows)  # the joker scenes are labelled like the others
    detector_data(replace(cfg, render_jokers=2, render_fans=3))
    assert len(images()) == 9 and (tmp_path / "data" / "detector-data" / "complete").read_text() == "scenes 4 jokers 2 fans 3"


def test_a_real_weight_repeats_each_real_training_photo_in_the_detector_set_and_no_validation_photo(tmp_path):
    from recognizer.training.chunks import ChunkConfig, detector_data

    fixture = Path(__file__).parents[1] / "fixtures" / "realphotos"
    train, val = split_by_blocks([p for p in load_labelled(fixture) if p.boxes])
    assert train and val
    cfg = ChunkConfig(tmp_path, fixture, 1.0, 3, "detector", 0, 2, 1, detector_real_weight=3)
    detector_data(cfg)
    data = tmp_path / "data" / "detector-data"
    real = {split: sorted(p.stem for p in (data / split / "images").glob("real-*.jpg")) for split in ("train", "val")}
    assert len(real["train"]) == 3 * 4 * len(train) and len(real["val"]) == 4 * len(val)
    photo = train[0].path.stem
    copies = [data / "train" / "labels" / f"real-{photo}-1{end}.txt" for end in ("", "-1", "-2")]
    assert len({c.read_text() for c in copies}) == 1 and copies[0].read_text().count("\n") == len(train[0].boxes)
    assert (data / "complete").read_text() == "scenes 2 jokers 0 real 3"
    with pytest.raises(ValueError, match="real weight"):
        ChunkConfig(tmp_path, fixture, 1.0, 3, "detector", 0, 2, 1, detector_real_weight=0)


def test_joker_and_fanned_scenes_of_the_detector_set_come_after_the_others(tmp_path, monkeypatch):
    import recognizer.training.train as train

    laid = []
    scene = train.render_scene
    monkeypatch.setattr(train, "render_scene", lambda seed, sampler=None, cards=None, fanned=False: laid.append((cards, fanned)) or scene(seed, sampler, cards=cards, fanned=fanned))
    render_detector_set(tmp_path, images=3, seed=3, jokers=3, fans=2)
    assert laid[:3] == [(None, False)] * 3
    assert all(any(c in (SJ, BJ) for c in hand) and not fanned for hand, fanned in laid[3:6])
    assert laid[6:] == [(None, True)] * 2  # the fanned hands come last
