"""A deck drawn from photographs of its faces: the folder read as enrolment reads it, jokers
borrowed and said, faces lit and blurred as a camera shows them, index boxes where the ink is."""

import cv2
import numpy as np
import pytest

from recognizer.training.synth import HELD_OUT_PROCEDURAL
from recognizer.training.synth.photos import JOKER_DESIGN, FacesError, PhotoDeck, face_of, faces_of_design
from recognizer.training.table_video import Act, Script, TableRenderer
from referee.cards import BJ, FACES, SJ, card_name, parse_card, parse_cards

DESIGN = HELD_OUT_PROCEDURAL[1]
"""A design without a frame round its face (heldout-a's frame touches its index: no ink box)."""


@pytest.fixture(scope="module")
def photographed(tmp_path_factory):
    """A deck's 52 suited faces as JPEG photos named like ../shared/realcards' (no jokers),
    its licence one folder up, as that set keeps it."""
    root = tmp_path_factory.mktemp("deck")
    (root / "LICENSES").mkdir()
    (root / "LICENSES" / "deck-LICENSE.txt").write_text("MIT\n")
    folder = root / "images"
    folder.mkdir()
    for card, img in faces_of_design(DESIGN, FACES[:52]).items():
        cv2.imwrite(str(folder / f"deck_card_{card_name(card)}.jpg"), img)
    cv2.imwrite(str(folder / "deck_deal1.jpg"), np.full((40, 40, 3), 200, np.uint8))  # a photo of no one face
    return folder


def test_a_face_is_named_by_the_file_or_its_last_part():
    assert face_of("7H") == parse_card("7H") and face_of("bidly_card_TS") == parse_card("TS")
    assert face_of("deck-sj") == SJ and face_of("my deck QD") == parse_card("QD")
    assert face_of("bidly_deal1") is None and face_of("joker") is None


def test_a_deck_photographed_without_jokers_borrows_them_and_names_its_licence(photographed):
    deck = PhotoDeck.from_folder(photographed)
    assert deck.borrowed == (SJ, BJ)
    assert [p.name for p in deck.notices] == ["deck-LICENSE.txt"]
    line = deck.describe()
    assert f"52 photographed faces in {photographed}" in line and f"SJ and BJ from the packaged design {JOKER_DESIGN!r}" in line
    assert "deck-LICENSE.txt" in line
    assert abs(deck.aspect - DESIGN.aspect) < 0.01


def test_faces_are_card_shaped_lit_and_blurred_the_same_every_time(photographed):
    deck = PhotoDeck.from_folder(photographed)
    face = deck.render(parse_card("KD"), 120)
    assert face.shape == (120, round(deck.aspect * 120), 4)
    assert face[0, 0, 3] == 0 and face[60, 40, 3] == 255  # rounded corners, the card opaque
    assert np.array_equal(face, deck.render(parse_card("KD"), 120))  # one look per face: every frame alike
    other = PhotoDeck.from_folder(photographed, seed=1).render(parse_card("KD"), 120)
    assert not np.array_equal(face[..., :3], other[..., :3])
    sharp = cv2.resize(faces_of_design(DESIGN, [parse_card("KD")])[parse_card("KD")], face.shape[1::-1], interpolation=cv2.INTER_AREA)
    edges = [cv2.Laplacian(cv2.cvtColor(img, cv2.COLOR_BGR2GRAY), cv2.CV_64F).var() for img in (face[..., :3], sharp)]
    assert edges[0] < 0.8 * edges[1]  # blurred like a camera frame, not the photo's own sharpness


def test_index_boxes_lie_on_each_faces_index(photographed):
    deck = PhotoDeck.from_folder(photographed)
    for card in parse_cards("2S 7H TD QC AS SJ BJ"):
        x0, y0, x1, y1 = deck.index_box(card, 300)
        t0, u0, t1, u1 = DESIGN.index_box(card, 300) if card not in (SJ, BJ) else (x0, y0, x1, y1)
        # the true index's centre lies inside the box found from the ink
        assert x0 <= (t0 + t1) / 2 <= x1 and y0 <= (u0 + u1) / 2 <= y1, card_name(card)
        assert x1 < 0.5 * deck.aspect * 300 and y1 < 0.5 * 300  # in the top-left corner


def test_faces_whose_index_is_not_found_draw_but_give_no_index_box(tmp_path):
    for card in FACES[:52]:
        cv2.imwrite(str(tmp_path / f"{card_name(card)}.png"), np.full((88, 63, 3), 240, np.uint8))
    deck = PhotoDeck.from_folder(tmp_path)
    assert deck.render(parse_card("AS"), 88).shape == (88, 63, 4)
    with pytest.raises(FacesError, match="corner index was found on only 0 of 52 faces"):
        deck.index_box(parse_card("AS"), 88)


def test_the_table_renderer_draws_the_photographed_faces(photographed):
    deck = PhotoDeck.from_folder(photographed)
    script = Script(duration=1.5, acts=(Act(0.2, "S", "lay", tuple(parse_cards("3S 9H SJ"))),))
    plain, photo = (list(TableRenderer(script, size=(640, 360), fps=2, design=d).frames())[-1] for d in (None, deck))
    assert photo.visible == plain.visible and photo.visible["S"] == tuple(sorted(parse_cards("3S 9H SJ")))
    assert not np.array_equal(photo.image, plain.image)
