"""Corner indices to a multiset: both corners of one card count once, two decks count twice."""

from recognizer.geometry import IndexHit, cards_from_indices, distinct_indices
from recognizer.training.synth.scenes import render_scene
from referee.cards import parse_card

H = 20.0  # index height in px; a card is ~90 px tall here


def up(card, x, y=10.0):
    return IndexHit(parse_card(card), False, (x, y, x + 9, y + H), 1.0)


def down(card, x, y=90.0):
    return IndexHit(parse_card(card), True, (x, y, x + 9, y + H), 1.0)



def test_one_card_both_corners_counts_once():
    assert cards_from_indices([up("7H", 10), down("7H", 60)]) == [parse_card("7H")]


def test_identical_faces_side_by_side_count_twice():
    # 7H (under) then 7H on top: the first shows its top-left only, the second both corners.
    hits = [up("7H", 10), up("7H", 40), down("7H", 90)]
    assert cards_from_indices(hits) == [parse_card("7H")] * 2


def test_reverse_stack_shows_bottom_corners():
    hits = [up("9S", 10), down("9S", 60), down("9S", 90), down("9S", 120)]
    assert cards_from_indices(hits) == [parse_card("9S")] * 3


def test_far_or_upward_pairs_do_not_merge():
    # An inverted index above-left of the upright one cannot be the same card's far corner.
    assert len(cards_from_indices([up("KD", 100, 90), down("KD", 10, 10)])) == 2
    # Nor one ten card heights away.
    assert len(cards_from_indices([up("KD", 10), down("KD", 900, 300)])) == 2


def test_result_is_sorted_by_rank_then_suit():
    hits = [up("AS", 10), up("3C", 40), up("3H", 70), up("BJ", 100)]
    assert cards_from_indices(hits) == sorted(parse_card(c) for c in ("AS", "3C", "3H", "BJ"))


def test_true_labels_of_rendered_scenes_give_the_laid_cards():
    checked = 0
    for seed in range(40):
        scene = render_scene(50_000 + seed)
        shown = {lab.card_id for lab in scene.labels}
        if len(shown) != len(scene.cards):
            continue  # a card hidden entirely (hand, image edge): nothing to count
        hits = [IndexHit(lab.card, lab.inverted, lab.box, 1.0) for lab in scene.labels]
        assert cards_from_indices(hits) == sorted(scene.cards), f"scene {50_000 + seed}"
        checked += 1
    assert checked >= 25


def test_one_index_read_twice_counts_once():
    # Two overlapping boxes of one face and orientation: the detector's double hit on one index.
    a = up("7H", 10)
    b = IndexHit(a.card, False, (12.0, 12.0, 21.0, 32.0), 0.8)
    assert cards_from_indices([a, b]) == [parse_card("7H")]
    assert distinct_indices([b, a]) == [a]  # the more confident stays


def test_overlapping_boxes_of_different_reads_are_kept():
    a = up("7H", 10)
    assert len(distinct_indices([a, IndexHit(parse_card("7D"), False, a.box, 0.9)])) == 2
    assert len(distinct_indices([a, IndexHit(a.card, True, a.box, 0.9)])) == 2
    # Side by side (touching, not overlapping): two cards of one face.
    assert len(distinct_indices([a, up("7H", 19)])) == 2
