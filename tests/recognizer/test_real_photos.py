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

from recognizer.crops import index_rect, turned_index, view_box
from recognizer.reader import CardReader
from recognizer.training.realtrain import load_labelled, split_by_blocks, time_blocks, upright_turn
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


def test_time_blocks_join_shots_seconds_apart_and_split_whole_blocks():
    names = ["IMG_20220921_193915.jpg", "IMG_20220921_193925.jpg", "IMG_20220921_200000.jpg", "IMG_7797.jpg", "IMG_7798.jpg", "IMG_7810.jpg", "scan.jpg"]
    assert sorted(time_blocks(names)) == [["IMG_20220921_193915.jpg", "IMG_20220921_193925.jpg"], ["IMG_20220921_200000.jpg"], ["IMG_7797.jpg", "IMG_7798.jpg"], ["IMG_7810.jpg"], ["scan.jpg"]]  # noqa: E501


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
