"""Real photographs (a CC BY 4.0 fixture from ../shared/realtrain): the committed models read
them, and the training side reads their labels, splits and angles right."""

import json
from collections import Counter
from pathlib import Path

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import recognizer.crops as crops_module
import recognizer.reader as reader_module
from recognizer.crops import crop_index, index_rect, light_ink, lightness_turned, turned_index, view_box
from recognizer.reader import CardReader
from recognizer.training.realtrain import load_labelled, series, split_by_blocks, time_blocks, upright_turn
from referee.cards import parse_cards

FIXTURE = Path(__file__).with_name("fixtures") / "realphotos"


@pytest.fixture(scope="module")
def photos():
    return load_labelled(FIXTURE)


def test_labels_give_each_face_once_per_photo(photos):
    assert [p.path.name for p in photos] == sorted(p.path.name for p in photos)
    assert {p.path.name: p.cards for p in photos}["IMG_20220921_194905.jpg"] == tuple(sorted(parse_cards("2D 4S 7H 8S")))
    assert all(0 <= b.box[0] < b.box[2] <= 640 and 0 <= b.box[1] < b.box[3] <= 640 for p in photos for b in p.boxes)


def test_the_committed_reader_reads_every_fixture_photo_exactly(photos):
    reader = CardReader()
    for photo in photos:
        reading = reader.read(cv2.imread(str(photo.path), cv2.IMREAD_COLOR))
        assert Counter(reading.cards) == Counter(photo.cards), photo.path.name
        assert [a[0][0] for a in reading.alternatives] == reading.cards


def test_a_black_decks_indices_are_light_ink_and_a_white_decks_are_not(photos):
    by_name = {p.path.name: p for p in photos}
    for name, light in (("IMG_7791.jpg", True), ("IMG_20220921_194905.jpg", False), ("IMG_20220921_194259.jpg", False)):
        image = cv2.imread(str(by_name[name].path), cv2.IMREAD_COLOR)
        assert light_ink(np.stack([crop_index(image, b.box) for b in by_name[name].boxes])).tolist() == [light] * len(by_name[name].boxes), name


def test_lightness_turned_over_keeps_a_gold_ink_warm():
    crop = np.zeros((48, 32, 3), np.uint8)
    crop[10:38, 12:20] = (60, 170, 210)  # a gold stroke (BGR) on black
    turned = lightness_turned(crop)
    assert turned[0, 0].min() > 240  # black card -> white card
    b, g, r = (int(v) for v in turned[20, 15])
    assert r > b + 40 and max(b, g, r) < 150  # the stroke darker than the card, and still warm
    assert light_ink(np.stack([crop, turned])).tolist() == [True, False]


def test_a_black_decks_white_court_indices_are_read_with_their_lightness_turned_over(photos, monkeypatch):
    photo = next(p for p in photos if p.path.name == "IMG_7791.jpg")
    image = cv2.imread(str(photo.path), cv2.IMREAD_COLOR)
    assert Counter(CardReader().read(image).cards) == Counter(photo.cards) == Counter(parse_cards("JC JS 6H"))
    monkeypatch.setattr(crops_module, "DARK_DECK_SHARE", 1.0)  # no photo a dark deck
    assert not set(parse_cards("JC JS")) & set(CardReader().read(image).cards)


def test_a_black_card_far_off_is_found_only_with_the_photos_lightness_turned_over(photos, monkeypatch):
    """The detector learnt dark ink on light cards and finds no index of a black 7H far off by
    a keyboard; in the photo with its lightness turned over it finds the card's indices, and
    their crops say a dark deck."""
    photo = next(p for p in photos if p.path.name == "IMG_7707.jpg")
    image = cv2.imread(str(photo.path), cv2.IMREAD_COLOR)
    assert CardReader().read(image).cards == list(photo.cards) == parse_cards("7H")
    assert any(c.turned_look for c in CardReader().candidates(image))  # its boxes say where they were found
    monkeypatch.setattr(reader_module, "lightness_turned", lambda image: image)  # not turned over
    assert CardReader().read(image).cards == []


BLACK_DECK = ("IMG_7707.jpg", "IMG_7791.jpg")


def test_a_white_decks_photo_takes_no_read_turned_over(photos, monkeypatch):
    def refused(crop):
        raise AssertionError("a white deck's crop was turned over")

    monkeypatch.setattr(reader_module, "lightness_turned", refused)
    reader = CardReader()
    for photo in photos:
        if photo.path.name not in BLACK_DECK:
            assert Counter(reader.read(cv2.imread(str(photo.path), cv2.IMREAD_COLOR)).cards) == Counter(photo.cards), photo.path.name
    with pytest.raises(AssertionError, match="turned over"):
        reader.read(cv2.imread(str(FIXTURE / "images" / "IMG_7791.jpg"), cv2.IMREAD_COLOR))


def test_a_red_joker_labelled_as_the_black_one_is_read_as_the_red_one(tmp_path):
    (tmp_path / "images").mkdir()
    labels = {}
    for name in ("IMG_20220921_195324.jpg", "IMG_20220921_195502.jpg"):
        cv2.imwrite(str(tmp_path / "images" / name), np.zeros((64, 64, 3), np.uint8))
        labels[name] = [{"card": "SJ", "box": [0.2, 0.2, 0.1, 0.2]}, {"card": "AD", "box": [0.7, 0.7, 0.1, 0.2]}]
    (tmp_path / "labels.json").write_text(json.dumps(labels))
    relabelled, kept = load_labelled(tmp_path)
    assert relabelled.cards == tuple(sorted(parse_cards("BJ AD"))) and [b.card for b in relabelled.boxes] == parse_cards("BJ AD")
    assert kept.cards == tuple(sorted(parse_cards("SJ AD")))


def _folder(tmp_path, labels: dict[str, list[dict]], size: int = 640) -> Path:
    (tmp_path / "images").mkdir()
    for name in labels:
        cv2.imwrite(str(tmp_path / "images" / name), np.zeros((size, size, 3), np.uint8))
    (tmp_path / "labels.json").write_text(json.dumps(labels))
    return tmp_path


def _box(x0: float, y0: float, x1: float, y1: float, size: int = 640) -> list[float]:
    return [(x0 + x1) / 2 / size, (y0 + y1) / 2 / size, (x1 - x0) / size, (y1 - y0) / size]


def test_a_box_labelled_with_another_face_is_corrected_where_it_lies_only(tmp_path):
    name = "WIN_20240627_17_02_34_Pro.jpg"  # BOXES_RELABELLED: the TH box holding (151, 536) shows 5H
    folder = _folder(tmp_path, {name: [{"card": "TH", "box": _box(141, 506, 161, 566)},
                                       {"card": "TH", "box": _box(300, 500, 320, 560)}]})
    photo, = load_labelled(folder)
    assert [b.card for b in photo.boxes] == parse_cards("5H TH") and photo.cards == tuple(sorted(parse_cards("5H TH")))
    (folder / "labels.json").write_text(json.dumps({name: [{"card": "TH", "box": _box(300, 500, 320, 560)}]}))
    with pytest.raises(ValueError, match=f"{name}: 0 boxes of TH"):
        load_labelled(folder)


def test_an_index_the_labels_leave_out_is_added_once(tmp_path):
    name = "IMG_20220921_195405.jpg"  # UNLABELLED: a queen of spades at the left edge
    folder = _folder(tmp_path, {name: [{"card": "6S", "box": _box(200, 200, 260, 280)}]})
    photo, = load_labelled(folder)
    assert photo.cards == tuple(sorted(parse_cards("6S QS"))) and photo.boxes[-1].box == (0.0, 32.3, 57.5, 119.5)
    (folder / "labels.json").write_text(json.dumps({name: [{"card": "6S", "box": _box(200, 200, 260, 280)},
                                                            {"card": "QS", "box": _box(2, 35, 55, 115)}]}))
    assert len(load_labelled(folder)[0].boxes) == 2  # labelled since: kept as labelled


def test_a_large_box_is_a_whole_card_only_around_another_box(tmp_path):
    near = [{"card": "5S", "box": _box(326, 508, 458, 610)}, {"card": "8S", "box": _box(207, 208, 259, 255)},
            {"card": "2D", "box": _box(104, 154, 168, 194)}]  # an index near the camera, two far ones
    card = [{"card": "KH", "box": _box(100, 100, 400, 500)}, {"card": "KH", "box": _box(110, 110, 150, 160)},
            {"card": "3C", "box": _box(500, 500, 540, 550)}]  # a whole card around its own index
    kept, dropped = load_labelled(_folder(tmp_path, {"a.jpg": near, "b.jpg": card}))
    assert kept.cards == tuple(sorted(parse_cards("5S 8S 2D"))) and len(kept.boxes) == 3
    assert [b.box for b in dropped.boxes] == [(110.0, 110.0, 150.0, 160.0), (500.0, 500.0, 540.0, 550.0)]


def test_time_blocks_join_shots_seconds_apart_and_split_whole_blocks():
    names = ["IMG_20220921_193915.jpg", "IMG_20220921_193925.jpg", "IMG_20220921_200000.jpg", "IMG_7797.jpg", "IMG_7798.jpg", "IMG_7810.jpg", "scan.jpg"]
    assert sorted(time_blocks(names)) == [["IMG_20220921_193915.jpg", "IMG_20220921_193925.jpg"], ["IMG_20220921_200000.jpg"], ["IMG_7797.jpg", "IMG_7798.jpg"], ["IMG_7810.jpg"], ["scan.jpg"]]  # noqa: E501


def test_a_photo_belongs_to_the_shoot_its_camera_names():
    assert series("IMG_20220921_193915.jpg") == series("IMG_20220921_201535.jpg") == "IMG_ 2022-09-21"
    assert series("IMG_7702.jpg") == series("IMG_7799.jpg") == "IMG_ numbered"
    assert series("WIN_20240627_11_38_29_Pro.jpg") == "WIN_ 2024-06-27"
    assert series("scan.jpg") == "scan.jpg"


def test_split_keeps_blocks_whole(photos):
    train, val = split_by_blocks(photos, share=0.5)
    assert {p.path.name for p in train}.isdisjoint(p.path.name for p in val)
    assert len(train) + len(val) == len(photos)


@pytest.mark.parametrize("angle", [0.0, 30.0, -45.0, 90.0, 160.0])
def test_an_index_box_turned_back_fits_the_index(angle):
    """The box a detector draws around a 30 x 50 index in another view, and the index
    recovered from an axis-aligned box at its angle."""
    centre = np.array([200.0, 150.0])
    box = view_box(centre, 30, 50, angle, 0.0)
    c, w, h = index_rect(box, angle)
    assert np.allclose(c, centre)
    if abs(np.cos(np.radians(2 * angle))) > 0.35:
        assert (w, h) == pytest.approx((30, 50), abs=1e-6)
    upright = view_box(centre, 30, 50, angle, angle)
    assert np.allclose(np.array(upright[2:]) - upright[:2], (30, 50))


@settings(max_examples=60, deadline=None)
@given(st.floats(-180, 180), st.floats(-30, 30), st.floats(10, 60), st.floats(1.2, 2.5))
def test_a_box_read_again_at_its_index_turn_is_cut_square_on(view, turn, w, ratio):
    """The box a detector draws in one view around an index lying ``turn`` further round,
    read again at that turn, is the index's own upright box in the index's frame."""
    centre, h = np.array([300.0, -120.0]), w * ratio
    seen = view_box(centre, w, h, view + turn, view)
    box, angle = turned_index(seen, view, turn)
    assert angle == pytest.approx(view + turn)
    assert np.allclose(box, view_box(centre, w, h, angle, angle), atol=1e-6 * h)


def test_upright_turn_points_a_direction_up():
    from recognizer.orientation import rotate_points

    for direction in ([0, -1], [1, 0], [-1, 1], [0.3, 0.8]):
        turned = rotate_points(np.array([direction], float), upright_turn(np.array(direction, float)))[0]
        assert abs(turned[0]) < 1e-9 and turned[1] < 0
