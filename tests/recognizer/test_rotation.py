"""Any in-plane rotation: the reader's views turned from the image's dominant edges, merged."""

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recognizer.geometry import IndexHit, cards_from_indices
from recognizer.orientation import dominant_edge_angle, pass_angles, rotate_image, rotate_points
from recognizer.reader import CardReader
from recognizer.training.synth import HELD_OUT_PROCEDURAL
from recognizer.training.synth.scenes import render_scene
from referee.cards import parse_card

SWEEP = tuple(range(0, 360, 45))


@pytest.fixture(scope="module")
def scenes():
    scenes = [render_scene(3_000_000 + k, HELD_OUT_PROCEDURAL[1]) for k in range(30)]
    return [(s.image, Counter(s.cards[i] for i in {lab.card_id for lab in s.labels})) for s in scenes]


def exact_per_angle(reader, scenes):
    return [sum(Counter(reader.read(rotate_image(img, a)).cards) == truth for img, truth in scenes) for a in SWEEP]


def test_rotation_sweep_is_flat_where_the_upright_reader_fails(scenes):
    upright = exact_per_angle(CardReader(passes=1, deskew=False), scenes)
    turned = exact_per_angle(CardReader(), scenes)
    # 30 scenes of a held-out design at 0, 45, ..., 315 degrees (10 had left one scene's
    # luck deciding the spread): 20-23 exact at every angle with the models before the
    # blend and with the blend; 20-24 with chunk 14's detector installed beside it
    # ([24, 20, 24, 24, 23, 23, 22, 20]), 21-25 with chunk 16's.
    assert min(turned) >= 19, turned
    assert max(turned) - min(turned) <= 4, turned
    assert upright[SWEEP.index(90)] <= 3 and upright[SWEEP.index(270)] <= 3, upright  # what it replaces


@pytest.mark.parametrize("angle", [0, 12, 30, -40, 71, 90, 135])
def test_dominant_edge_angle_finds_the_turn_of_a_scene(angle):
    img = render_scene(3_100_000, HELD_OUT_PROCEDURAL[0]).image
    base = dominant_edge_angle(img)
    got = dominant_edge_angle(rotate_image(img, angle))
    diff = (got - base - angle + 45) % 90 - 45  # the edges repeat every quarter turn
    assert abs(diff) <= 5, (angle, base, got)


def test_pass_angles_span_half_a_turn():
    img = np.full((100, 200, 3), 128, np.uint8)
    assert pass_angles(img, 1, deskew=False) == [0.0]
    assert pass_angles(img, 4, deskew=False) == [0.0, 45.0, 90.0, -45.0]
    with pytest.raises(ValueError):
        pass_angles(img, 0)


@settings(max_examples=60, deadline=None)
@given(turn=st.floats(-180, 180), other=st.floats(-45, 45), x=st.floats(-500, 500), y=st.floats(-500, 500))
def test_one_card_counts_once_at_any_angle(turn, other, x, y):
    # A card square to the view turned by ``turn`` (20 px indices on a ~90 px card): its
    # top-left index read in that view, its far corner read in a view ``other`` degrees
    # further round. One card, whatever the angles.
    ax, ay = x, y
    far_in_image = rotate_points(np.array([[x + 50.0, y + 75.0]]), -turn)
    bx, by = rotate_points(far_in_image, turn + other)[0]
    top = IndexHit(parse_card("7H"), False, (ax - 5, ay - 10, ax + 5, ay + 10), 0.9, turn)
    far = IndexHit(parse_card("7H"), True, (bx - 5, by - 10, bx + 5, by + 10), 0.9, turn + other)
    assert cards_from_indices([top, far]) == [parse_card("7H")]
    # Two such cards side by side in one view stay two.
    twin = IndexHit(parse_card("7H"), False, (ax + 25, ay - 10, ax + 35, ay + 10), 0.9, turn)
    assert cards_from_indices([top, far, twin]) == [parse_card("7H")] * 2


def test_one_index_seen_in_two_views_counts_once():
    # The same index read in the upright view and in a view turned by 45 degrees.
    centre = np.array([[100.0, 60.0]])
    turned = rotate_points(centre, 45)[0]
    a = IndexHit(parse_card("9S"), False, (95, 50, 105, 70), 0.95, 0.0)
    b = IndexHit(parse_card("9C"), False, (turned[0] - 5, turned[1] - 10, turned[0] + 5, turned[1] + 10), 0.6, 45.0)
    assert cards_from_indices([a, b]) == [parse_card("9S")]


@given(
    st.floats(-720, 720, allow_nan=False),
    st.lists(st.tuples(st.floats(-5000, 5000, allow_nan=False), st.floats(-5000, 5000, allow_nan=False)), min_size=1, max_size=6),
)
def test_points_turn_exactly_as_opencv_turns_images(angle, points):
    """rotate_points writes out OpenCV's rotation about the origin: the same doubles, so a box
    turned to a view and back lands where the image's pixels do."""
    import cv2

    pts = np.array(points, np.float64)
    assert np.array_equal(rotate_points(pts, angle), pts @ cv2.getRotationMatrix2D((0.0, 0.0), angle, 1.0)[:, :2].T)
