"""Corner indices to a multiset: both corners of one card count once, two decks count twice."""

from collections import Counter
from dataclasses import replace

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from recognizer.geometry import IndexHit, cards_from_indices, distinct_indices, reconcile_corners
from recognizer.orientation import rotate_points
from referee.cards import FACES
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


def test_a_cards_corners_read_in_a_frame_turned_off_the_card_count_once():
    # The reader's second look reads an index up to ~50 degrees off its own upright, so the
    # far corner can lie straight right of the first (a card read 55 degrees off), or a
    # little past straight down, in the frame it was read in; seen so in realtrain's photos.
    assert cards_from_indices([up("7H", 10, 10), down("7H", 60, 12)]) == [parse_card("7H")]
    assert cards_from_indices([up("7H", 10, 10), down("7H", 5, 80)]) == [parse_card("7H")]
    # Up and to the right is no card's far corner, whatever the frame.
    assert len(cards_from_indices([up("7H", 10, 60), down("7H", 60, 20)])) == 2


def _seen_from(card: str, centre: tuple[float, float], angle: float, inverted: bool) -> IndexHit:
    """A hit read in the view turned by ``angle``, lying at ``centre`` in the image."""
    cx, cy = rotate_points(np.array([centre]), angle)[0]
    return IndexHit(parse_card(card), inverted, (cx - 4.5, cy - H / 2, cx + 4.5, cy + H / 2), 1.0, angle)


def test_a_cards_far_corner_read_a_quarter_turn_off_counts_once():
    """The classifier now and then reads a sideways index as upright: the far corner of an
    upright 7H read a quarter turn off its own upright (90 or 270 degrees, not 180) is still
    that card's corner, where it lies."""
    far = (64.5, 90.0 + H / 2)  # where down("7H", 60) lies
    for angle, inverted in ((90.0, False), (-90.0, False), (90.0, True)):
        assert cards_from_indices([up("7H", 10), _seen_from("7H", far, angle, inverted)]) == [parse_card("7H")]
    # Read the same way as the first corner, it is another card of the face (the second deck's).
    assert len(cards_from_indices([up("7H", 10), _seen_from("7H", far, 0.0, False)])) == 2


def test_a_cards_near_corner_twice_the_far_ones_size_counts_once():
    """A camera low over the table: the near corner's index looks up to twice as tall."""
    near = IndexHit(parse_card("JD"), True, (60.0, 90.0, 77.0, 90 + 1.95 * H), 1.0)
    assert cards_from_indices([up("JD", 10), near]) == [parse_card("JD")]
    nearer = IndexHit(parse_card("JD"), True, (60.0, 90.0, 80.0, 90 + 2.2 * H), 1.0)
    assert len(cards_from_indices([up("JD", 10), nearer])) == 2  # more: another card's


def _word(card: str, centre: tuple[float, float], angle: float = 0.0, inverted: bool = False, length: float = 60.0, tall: bool | None = None) -> IndexHit:
    """A joker's word laid across its card (``length`` x 22 px), read in the view turned by
    ``angle``; ``tall``: whether it stands tall in that view (by default, a quarter turn on)."""
    cx, cy = rotate_points(np.array([centre]), angle)[0]
    tall = round(angle / 90) % 2 == 1 if tall is None else tall
    w, h = (22.0, length) if tall else (length, 22.0)
    return IndexHit(parse_card(card), inverted, (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2), 0.9, angle)


def test_a_jokers_word_across_its_card_counts_once():
    """A wizard deck prints "Joker" across the card's top and upside down at its bottom: the far
    word lies square across the first, not down and to the right of it as a rank's far corner
    does. Read a half turn apart, in any view, the two words are one card."""
    top, bottom = (50.0, 20.0), (52.0, 78.0)  # 0.97 word lengths apart, square across the word: nearer than a rank's far corner
    for angle, inverted in ((0.0, (False, True)), (0.0, (True, False)), (90.0, (False, True)), (-90.0, (True, False))):
        hits = [_word("SJ", top, angle, inverted[0]), _word("SJ", bottom, angle, inverted[1])]
        assert cards_from_indices(hits) == [parse_card("SJ")], (angle, inverted)


def test_two_jokers_beside_each_other_or_of_two_faces_stay_two():
    # Read the same way up, two words are two cards: a row of jokers whose word is stacked
    # down the corner shows them side by side, square across their long sides.
    assert len(cards_from_indices([_word("SJ", (50.0, 20.0)), _word("SJ", (52.0, 78.0))])) == 2
    assert len(cards_from_indices([_word("SJ", (50.0, 20.0), 90.0), _word("SJ", (52.0, 78.0), 90.0)])) == 2
    # The big and the small joker, and two ranks' indices, are never one card by this rule.
    assert len(cards_from_indices([_word("BJ", (50.0, 20.0)), _word("SJ", (52.0, 78.0), inverted=True)])) == 2
    assert len(cards_from_indices([_word("7H", (50.0, 20.0)), _word("7H", (52.0, 78.0), inverted=True)])) == 2


@given(st.floats(-180.0, 180.0), st.sampled_from([0.0, 90.0, -90.0, 180.0]), st.floats(0.85, 2.3), st.sampled_from(["SJ", "BJ"]))
def test_a_jokers_two_words_count_once_at_any_angle_and_two_read_alike_twice(turn, view, apart, joker):
    """The card turned by any angle on the table and read in any of the reader's views: its two
    words, read a half turn apart, are one card; read alike, two (a row of jokers)."""
    length = 60.0
    top = np.array([200.0, 200.0])
    bottom = top + rotate_points(np.array([[0.0, apart * length]]), -turn)[0]  # square across the word
    read_in, tall = turn + view, view in (90.0, -90.0)  # the card lies square in the view turned by ``turn``
    first, far = _word(joker, tuple(top), read_in, False, length, tall), _word(joker, tuple(bottom), read_in, True, length, tall)
    assert cards_from_indices([first, far]) == [parse_card(joker)]
    assert len(cards_from_indices([first, replace(far, inverted=False)])) == 2


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


def belief(**faces: float) -> np.ndarray:
    """A read's face probabilities: the named faces, the rest spread evenly."""
    p = np.full(len(FACES), (1.0 - sum(faces.values())) / (len(FACES) - len(faces)))
    for card, prob in faces.items():
        p[FACES.index(parse_card(card))] = prob
    return p


def test_one_cards_corners_read_as_spade_and_club_count_once_as_the_likelier():
    # The top-left reads 8S (0.6, 8C 0.35), the bottom-right 8C (0.5, 8S 0.45): one card, 8S.
    hits = [up("8S", 10), down("8C", 60)]
    named = reconcile_corners(hits, [belief(**{"8S": 0.6, "8C": 0.35}), belief(**{"8C": 0.5, "8S": 0.45})])
    assert cards_from_indices(named) == [parse_card("8S")]
    # Its confidence is the two reads' joint belief in 8S (0.27 against 0.175 for 8C), not 1.
    assert [h.conf for h in named] == [0.6067] * 2
    assert [h.inverted for h in named] == [False, True]  # only the face is renamed


def test_two_sure_reads_of_different_faces_stay_two_cards():
    # An 8S under an 8C whose top-left corner was not found: each read is sure of its face.
    hits = [up("8S", 10), down("8C", 60)]
    named = reconcile_corners(hits, [belief(**{"8S": 0.95, "8C": 0.03}), belief(**{"8C": 0.96, "8S": 0.02})])
    assert named == hits


def test_corners_with_a_partner_of_their_own_face_or_far_apart_are_left_alone():
    # 7H's two corners pair; a 7D beside it keeps its face, however unsure.
    hits = [up("7D", 10), up("7H", 40), down("7H", 90)]
    unsure = [belief(**{"7D": 0.5, "7H": 0.4}), belief(**{"7H": 0.5, "7D": 0.4}), belief(**{"7H": 0.5, "7D": 0.4})]
    assert reconcile_corners(hits, unsure) == hits
    # Ten card heights apart they cannot be one card.
    far = [up("8S", 10), down("8C", 900, 300)]
    assert reconcile_corners(far, [belief(**{"8S": 0.5, "8C": 0.5})] * 2) == far


@given(st.lists(st.tuples(st.sampled_from(["8S", "8C", "8H", "8D"]), st.booleans(), st.integers(0, 12), st.integers(0, 6),
                          st.floats(0.05, 0.9)), min_size=1, max_size=7))
def test_reconciling_renames_at_most_and_never_adds_a_card(reads):
    hits = [IndexHit(parse_card(c), inv, (15.0 * x, 15.0 * y, 15.0 * x + 9, 15.0 * y + H), 1.0) for c, inv, x, y, _ in reads]
    faces = [belief(**{c: p, ("8C" if c != "8C" else "8S"): (1 - p) / 2}) for c, _, _, _, p in reads]
    named = reconcile_corners(hits, faces)
    assert len(named) == len(hits)
    assert [(h.box, h.inverted) for h in named] == [(h.box, h.inverted) for h in hits]
    assert len(cards_from_indices(named)) <= len(cards_from_indices(hits))
    renamed = Counter(a.card for a, b in zip(named, hits) if a != b)
    assert all(n % 2 == 0 for n in renamed.values())  # two corners of one card at a time
