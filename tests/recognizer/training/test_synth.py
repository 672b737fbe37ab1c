"""The card renderer and the rendered scenes: what the models learn from must be right."""

import numpy as np
import pytest

from recognizer.training.synth import HELD_OUT_PROCEDURAL, PROCEDURAL_DESIGNS, card_image, procedural_design
from recognizer.training.synth.scenes import render_scene
from referee.cards import BJ, FACES, SJ, CardError, parse_card


def _ink(img, box):
    x0, y0, x1, y1 = (int(round(v)) for v in box)
    patch = img[y0:y1, x0:x1, :3].astype(int)
    return patch


def test_card_image_is_bgra_with_card_shape():
    design = PROCEDURAL_DESIGNS[0]
    img = card_image(parse_card("7H"), design, 200)
    assert img.dtype == np.uint8 and img.shape == (200, round(design.aspect * 200), 4)
    assert img[100, img.shape[1] // 2, 3] == 255  # opaque inside
    assert img[0, 0, 3] < 255  # rounded corner is transparent


def test_rendering_is_deterministic_and_designs_differ():
    card = parse_card("QS")
    a = card_image(card, procedural_design(5), 120)
    assert np.array_equal(a, card_image(card, procedural_design(5), 120))
    assert not np.array_equal(a, card_image(card, procedural_design(6), 120)) or a.shape != card_image(card, procedural_design(6), 120).shape


def test_bad_card_and_size_are_refused():
    with pytest.raises(CardError):
        card_image(99, PROCEDURAL_DESIGNS[0], 100)
    with pytest.raises(ValueError):
        card_image(parse_card("2S"), PROCEDURAL_DESIGNS[0], 4)


@pytest.mark.parametrize("design", PROCEDURAL_DESIGNS[:4] + HELD_OUT_PROCEDURAL)
def test_index_box_holds_the_index_ink_in_suit_colour(design):
    for name in ("TH", "KS", "AD"):
        card = parse_card(name)
        img = card_image(card, design, 240)
        patch = _ink(img, design.index_box(card, 240))
        paper = np.array(design.paper)
        inked = np.abs(patch - paper).sum(-1) > 120
        assert inked.mean() > 0.1, f"{name}: index box in {design.name} holds no ink"
        b, g, r = patch[inked].mean(0)
        red = name[1] == "H" or (name[1] == "D" and not design.four_colour)
        assert (r > b + 40) == red, f"{name} in {design.name}: index colour {b, g, r}"


def test_jokers_big_coloured_small_monochrome():
    design = PROCEDURAL_DESIGNS[1]
    big, small = card_image(BJ, design, 240), card_image(SJ, design, 240)
    chroma = lambda im: np.ptp(im[60:180, 40:120, :3].astype(int), axis=-1).mean()  # noqa: E731
    assert chroma(big) > chroma(small) + 10


def test_scene_is_reproducible_and_labels_lie_inside():
    a, b = render_scene(42), render_scene(42)
    assert np.array_equal(a.image, b.image) and a.labels == b.labels
    h, w = a.image.shape[:2]
    for lab in a.labels:
        x0, y0, x1, y1 = lab.box
        assert 0 <= x0 < x1 <= w and 0 <= y0 < y1 <= h
        assert lab.card in FACES
    assert not np.array_equal(a.image, render_scene(43).image)


def test_scene_with_given_cards_and_design_shows_every_card():
    cards = [parse_card(c) for c in ("7H", "7H", "7S", "SJ")]
    scene = render_scene(3, HELD_OUT_PROCEDURAL[0], size=(640, 320), cards=cards)
    assert sorted(scene.cards) == sorted(cards)
    assert scene.design == HELD_OUT_PROCEDURAL[0].name
    assert {lab.card for lab in scene.labels} <= set(cards)


def test_a_fanned_hand_shows_an_index_of_nearly_every_card_and_draws_no_row():
    cards = [parse_card(c) for c in "3H 4H 5S 6D 7C 8H 9S TD JC QH KS AD".split()]
    shown = 0
    for seed in range(10):
        fan = render_scene(seed, HELD_OUT_PROCEDURAL[seed % 2], size=(640, 400), cards=cards, fanned=True)
        row = render_scene(seed, HELD_OUT_PROCEDURAL[seed % 2], size=(640, 400), cards=cards)
        assert sorted(fan.cards) == sorted(cards) and not np.array_equal(fan.image, row.image)
        h, w = fan.image.shape[:2]
        assert all(0 <= lab.box[0] < lab.box[2] <= w and 0 <= lab.box[1] < lab.box[3] <= h for lab in fan.labels)
        shown += len({lab.card_id for lab in fan.labels})
    assert shown >= 0.85 * 10 * len(cards)  # a sliver of each card, its index in it
    again = render_scene(9, HELD_OUT_PROCEDURAL[1], size=(640, 400), cards=cards, fanned=True)
    assert np.array_equal(again.image, fan.image) and again.labels == fan.labels


@pytest.mark.parametrize("design", [*PROCEDURAL_DESIGNS[:8], *HELD_OUT_PROCEDURAL], ids=lambda d: d.name)
def test_a_big_jokers_picture_keeps_off_its_corner_indices(design):
    """The big joker's picture (its yellow, blue and green blots) never covers a corner
    index, as on a printed deck: drawn over the demo deck's star, it hid the joker."""
    height = 300
    img = design.render(BJ, height)[..., :3].astype(int)
    x0, y0, x1, y1 = (int(round(v)) for v in design.index_box(BJ, height))
    art = np.array([(0, 190, 240), (200, 90, 30), (40, 150, 40)])
    for corner in (img[y0:y1, x0:x1], img[::-1, ::-1][y0:y1, x0:x1]):
        nearest = np.abs(corner[:, :, None, :] - art[None, None]).sum(-1).min(-1)
        assert nearest.min() > 60, design.name
    assert (np.abs(img[:, :, None, :] - art[None, None]).sum(-1).min(-1) < 10).any()  # the picture is there


def test_tossed_cards_lie_apart_each_at_its_angle_and_the_seed_repeats_them():
    from recognizer.training.synth.scenes import tossed_scene
    from referee.cards import parse_cards

    cards = parse_cards("QD 7H 8S")
    image, truth = tossed_scene(5, HELD_OUT_PROCEDURAL[0], cards, angles=(0, 45, -30), height=120)
    assert truth == sorted(cards) and image.dtype == np.uint8 and image.shape == (180, 450, 3)
    again, _ = tossed_scene(5, HELD_OUT_PROCEDURAL[0], cards, angles=(0, 45, -30), height=120)
    assert np.array_equal(image, again)
    drawn, _ = tossed_scene(6, HELD_OUT_PROCEDURAL[0], cards)  # angles and size from the seed
    assert not np.array_equal(drawn[: image.shape[0], : image.shape[1]], image)
