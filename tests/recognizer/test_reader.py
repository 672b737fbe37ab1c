"""The committed models read rendered play areas; the CLI keeps its JSON contract."""

import json

import cv2
import numpy as np
import pytest

from recognizer.orientation import rotate_points
from recognizer.reader import AreaReading, Candidate, CardReader
from recognizer.training.synth import HELD_OUT_PROCEDURAL, card_image
from recognizer.training.synth.scenes import tossed_scene
from web.app.cli import main
from referee.cards import is_joker, parse_cards


def lay_row(cards, design, height=170, step=0.42, size=(640, 300), cloth=(60, 110, 50)):
    """Cards in one overlapping row, left to right, each on top of the previous (RULES P6)."""
    img = np.zeros((size[1], size[0], 3), np.uint8)
    img[:] = cloth
    w = round(design.aspect * height)
    x = (size[0] - (w + step * w * (len(cards) - 1))) / 2
    y = (size[1] - height) // 2
    for card in cards:
        face = card_image(card, design, height)
        a = face[..., 3:].astype(np.float32) / 255
        x0 = int(x)
        region = img[y : y + height, x0 : x0 + w]
        region[:] = (region * (1 - a) + face[..., :3] * a).astype(np.uint8)
        x += step * w
    return img


@pytest.fixture(scope="module")
def reader():
    return CardReader()


@pytest.mark.parametrize("design", HELD_OUT_PROCEDURAL)
@pytest.mark.parametrize("hand", ["7H 7H 8S", "3S 4D 5C 6H 7S", "QD KD SJ BJ", "TC"])
def test_reads_a_row_in_a_held_out_design(reader, design, hand):
    cards = parse_cards(hand)
    reading = reader.read(lay_row(cards, design))
    assert reading.cards == sorted(cards)
    assert 0 < reading.confidence <= 1
    assert all(0 <= d.box[0] < d.box[2] <= 640 and 0 <= d.box[1] < d.box[3] <= 300 for d in reading.detections)


@pytest.mark.parametrize("design", HELD_OUT_PROCEDURAL)
@pytest.mark.parametrize("hand", ["7H 8S QD", "3D 8C JS", "2C 5S KD"])
def test_a_card_lying_between_the_views_is_read_again_square_on(design, hand):
    """The middle card lies 45 degrees off the two upright ones, so 45 degrees off both of
    the reader's views: a corner read unsurely there is read again at turns from them, at
    its own angle (within the turns' 22.5-degree step and the deskew's degree or two), and
    its two corners count as one card. Unsure here is below 0.99: the installed classifier
    reads one such card's corners 0.93 surely already, 45 degrees off, and is then not asked again."""
    cards = parse_cards(hand)
    reading = CardReader(refine_below=0.99).read(tossed_scene(1, design, cards, angles=(0, 45, 0), height=170)[0])
    assert reading.cards == sorted(cards)
    middle = [d.angle for d in reading.detections if d.card == cards[1]]
    assert len(middle) == 2 and any(abs((a + 45 + 90) % 180 - 90) <= 25 for a in middle)


def test_only_the_surest_turn_of_an_unsure_box_is_framed_again():
    """An unsure box is read at three turns in one framing; the further framing goes to the
    surest turn's crop alone (the others' reads are dropped whatever the framing)."""
    cards = parse_cards("7H 8S QD")
    from recognizer.reader import LOOK_ALWAYS

    reader = CardReader(refine_below=0.99, frame_again_below=LOOK_ALWAYS)  # every crop framed again: the turns' alone are spared
    image = tossed_scene(1, HELD_OUT_PROCEDURAL[0], cards, angles=(0, 45, 0), height=170)[0]
    calls, refining = [], []
    probabilities, refine = reader._probabilities, reader._refine
    reader._probabilities = lambda img, asks, framing, dark: calls.append((bool(refining), framing, len(asks))) or probabilities(img, asks, framing, dark)
    reader._refine = lambda img, out, dark: refining.append(1) or refine(img, out, dark)
    assert reader.read(image).cards == sorted(cards)
    turns = [(framing, n) for in_refine, framing, n in calls if in_refine]
    assert [framing for framing, _ in turns] == [0, 1] and turns[0][1] == 3 * turns[1][1] > 0, calls


def test_the_classifier_file_says_how_unsure_a_read_must_be_to_be_read_again(tmp_path):
    import shutil

    from recognizer.reader import MODELS, REFINE_OFF

    for name in ("index-detector.onnx", "index-detector.json", "index-classifier.onnx"):
        shutil.copyfile(MODELS / name, tmp_path / name)
    image = tossed_scene(1, HELD_OUT_PROCEDURAL[0], parse_cards("7H 8S QD"), angles=(0, 45, 0), height=170)[0]
    plain = CardReader(tmp_path)
    assert plain.refine_below == REFINE_OFF
    assert all(c.angle == c.view for c in plain.candidates(image))
    (tmp_path / "index-classifier.json").write_text(json.dumps({"refine_below": 0.9}))
    again = CardReader(tmp_path)
    assert again.refine_below == 0.9
    assert any(c.angle != c.view for c in again.candidates(image))
    (tmp_path / "index-classifier.json").write_text(json.dumps({"refine_below": 2}))
    with pytest.raises(ValueError, match="refine_below"):
        CardReader(tmp_path)


def test_a_crop_read_surely_in_its_first_framing_is_not_framed_again(tmp_path):
    import shutil

    from recognizer.training.quantize import reader_crops
    from recognizer.reader import LOOK_ALWAYS, MODELS

    image = lay_row(parse_cards("7H 7H 8S QD"), HELD_OUT_PROCEDURAL[0])
    always, sure, never = (CardReader(frame_again_below=v, sure_enough_at=LOOK_ALWAYS) for v in (LOOK_ALWAYS, 0.9, 0.0))  # no box spared a look as such
    cut = {name: len(reader_crops(r, [image])) for name, r in (("always", always), ("sure", sure), ("never", never))}
    assert cut["always"] > cut["sure"] > cut["never"], cut
    assert always.read(image).cards == sure.read(image).cards == sorted(parse_cards("7H 7H 8S QD"))
    for name in ("index-detector.onnx", "index-classifier.onnx"):
        shutil.copyfile(MODELS / name, tmp_path / name)
    assert CardReader(tmp_path).frame_again_below == LOOK_ALWAYS  # no setting: every crop framed again
    (tmp_path / "index-classifier.json").write_text(json.dumps({"frame_again_below": 1.5}))
    with pytest.raises(ValueError, match="frame_again_below must be a number in"):
        CardReader(tmp_path)


def test_each_card_has_its_top_faces_with_probabilities_the_read_one_first(reader):
    cards = parse_cards("7H 7H 8S QD")
    reading = reader.read(lay_row(cards, HELD_OUT_PROCEDURAL[0]))
    assert reading.cards == sorted(cards)
    assert len(reading.alternatives) == len(reading.cards)
    for card, alternatives in zip(reading.cards, reading.alternatives):
        assert len(alternatives) == 3 and alternatives[0][0] == card
        assert len({c for c, _ in alternatives}) == 3
        assert all(0 <= p <= 1 for _, p in alternatives) and sum(p for _, p in alternatives) <= 1.0001
        assert alternatives[0][1] > alternatives[1][1] >= alternatives[2][1]


def test_a_temperature_file_softens_the_alternatives(tmp_path):
    import shutil

    from recognizer.reader import MODELS

    for name in ("index-detector.onnx", "index-detector.json", "index-classifier.onnx", "index-classifier.int8.onnx"):
        shutil.copyfile(MODELS / name, tmp_path / name)
    settings = json.loads((MODELS / "index-classifier.json").read_text())  # the installed reader's, but for the temperature
    (tmp_path / "index-classifier.json").write_text(json.dumps({**settings, "temperature": 3.0}))
    image = lay_row(parse_cards("9C 9D"), HELD_OUT_PROCEDURAL[0])
    sharp, soft = CardReader().read(image), CardReader(tmp_path).read(image)
    assert soft.cards == sharp.cards and soft.card_confidence == sharp.card_confidence
    assert all(s[0][1] < t[0][1] for s, t in zip(soft.alternatives, sharp.alternatives))
    (tmp_path / "index-classifier.json").write_text(json.dumps({"temperature": "hot"}))
    with pytest.raises(ValueError, match="temperature"):
        CardReader(tmp_path)


def test_empty_cloth_reads_nothing(reader):
    cloth = np.full((300, 640, 3), (60, 110, 50), np.uint8)
    assert reader.read(cloth) == AreaReading([], [], 1.0)


def test_bad_images_are_refused(reader):
    with pytest.raises(ValueError, match="BGR"):
        reader.read(np.zeros((100, 100), np.uint8))
    with pytest.raises(ValueError, match="too small"):
        reader.read(np.zeros((4, 100, 3), np.uint8))


def test_cli_json_lines_with_an_error_per_bad_file(tmp_path, capsys):
    good = tmp_path / "area.png"
    cv2.imwrite(str(good), lay_row(parse_cards("9C 9D"), HELD_OUT_PROCEDURAL[0]))
    junk = tmp_path / "junk.jpg"
    junk.write_bytes(b"not an image")
    rc = main(["recognize", str(good), str(tmp_path / "missing.png"), str(junk), "--json"])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert rc == 1
    assert [r["image"] for r in lines] == [str(good), str(tmp_path / "missing.png"), str(junk)]
    assert lines[0]["cards"] == ["9D", "9C"]
    assert {d["card"] for d in lines[0]["detections"]} == {"9D", "9C"}
    assert all(len(d["box"]) == 4 and 0 < d["conf"] <= 1 for d in lines[0]["detections"])
    assert [a[0][0] for a in lines[0]["alternatives"]] == ["9D", "9C"]
    assert "no such file" in lines[1]["error"] and "not a readable image" in lines[2]["error"]


def test_cli_refuses_calibration_without_table(tmp_path, capsys):
    assert main(["recognize", str(tmp_path / "x.png"), "--calibration", "c.json"]) == 2
    assert "--table" in capsys.readouterr().err


def test_reading_at_higher_thresholds_equals_a_reader_built_with_them(reader):
    from recognizer.training.synth.scenes import render_scene

    strict = CardReader(det_conf=0.4, min_conf=0.8)
    loose = CardReader(det_conf=0.05, min_conf=0.3)
    for seed in range(6):
        image = render_scene(seed, HELD_OUT_PROCEDURAL[seed % 2]).image
        candidates = loose.candidates(image)
        assert loose.reading(candidates) == loose.read(image)
        assert loose.reading(candidates, 0.4, 0.8) == strict.read(image)
        assert len(candidates) >= len(strict.candidates(image))


def test_views_average_the_classifier_over_framings():
    from recognizer.reader import LOOK_ALWAYS

    one, two = (CardReader(views=v, sure_enough_at=LOOK_ALWAYS) for v in (1, 2))  # no box spared its further framings
    image = lay_row(parse_cards("9D TD JD QD"), HELD_OUT_PROCEDURAL[1])
    first, both = one.candidates(image), two.candidates(image)
    assert [c[0] for c in first] == [c[0] for c in both]  # same boxes, other probabilities
    assert any(not np.allclose(a[2], b[2]) for a, b in zip(first, both))
    assert all(abs(b[2].sum() - 1) < 1e-5 for b in both)
    assert two.read(image).cards == parse_cards("9D TD JD QD")
    with pytest.raises(ValueError, match="views"):
        CardReader(views=0)


def _probs(card, conf, inverted=False):
    from recognizer.crops import N_CLASSES, NOT_INDEX, class_of

    p = np.zeros(N_CLASSES, np.float32)
    p[class_of(parse_cards(card)[0], inverted)] = conf
    p[NOT_INDEX] = 1 - conf
    return p


def test_a_joker_needs_a_sure_read_or_its_other_corner(reader):
    top, far = (10.0, 10.0, 20.0, 40.0), (60.0, 110.0, 70.0, 140.0)  # a card's two corners
    lone = [Candidate(top, 0.9, _probs("SJ", 0.5), 0.0, 0.0)]
    assert reader.reading(lone).cards == []  # art read as a joker, unsurely
    assert reader.reading([Candidate(top, 0.9, _probs("SJ", 0.7), 0.0, 0.0)]).cards == parse_cards("SJ")
    both = lone + [Candidate(far, 0.9, _probs("SJ", 0.5, inverted=True), 0.0, 0.0)]
    assert reader.reading(both).cards == parse_cards("SJ")  # both corners agree
    assert reader.reading([Candidate(top, 0.9, _probs("7H", 0.5), 0.0, 0.0)]).cards == parse_cards("7H")  # other faces: the usual floor


def test_a_joker_found_in_the_photo_turned_over_needs_the_other_views_floor(reader):
    """A laptop's light logo on its dark lid, found with the photo's lightness turned over, read
    as a joker at 0.63: there a joker needs ``other_view_joker_conf``, as in another view; a
    face other than a joker keeps the usual floor."""
    top = (10.0, 10.0, 20.0, 40.0)
    looked = lambda card, conf, turned: reader.reading([Candidate(top, 0.9, _probs(card, conf), 0.0, 0.0, turned)]).cards  # noqa: E731
    assert looked("SJ", 0.8, False) == parse_cards("SJ")
    assert looked("SJ", 0.8, True) == []
    assert looked("SJ", reader.other_view_joker_conf, True) == parse_cards("SJ")
    assert looked("7H", 0.5, True) == parse_cards("7H")


ACE = Candidate((10.0, 10.0, 40.0, 70.0), 0.9, _probs("AS", 0.95), 0.0, 0.0)  # an index 30 px wide, 60 px tall


def _beside_the_ace(reader, box):
    """The cards read from the ace's index and a joker read at 0.8 in ``box``."""
    return reader.reading([ACE, Candidate(box, 0.9, _probs("SJ", 0.8), 0.0, 0.0)]).cards


def test_a_joker_far_smaller_than_the_indices_beside_it_is_printed_text(reader):
    """A maker's address under an ace's index reads as a joker: a third of the index's size,
    it is dropped; a joker two thirds the size of the ranks beside it, or alone, is read."""
    small = (60.0, 80.0, 80.0, 94.0)  # 20 x 14 px: as thick as a joker may be, too short
    assert _beside_the_ace(reader, small) == parse_cards("AS")
    assert _beside_the_ace(reader, (60.0, 80.0, 100.0, 100.0)) == parse_cards("AS SJ")  # 40 px: a word across
    assert reader.reading([Candidate(small, 0.9, _probs("SJ", 0.8), 0.0, 0.0)]).cards == parse_cards("SJ")
    assert _beside_the_ace(CardReader(joker_scale=0.0), small) == parse_cards("AS SJ")


def test_a_joker_far_thinner_than_the_indices_beside_it_is_a_line_of_print(reader):
    """A bookshop's name printed across an ace reads as a joker: as long as the ace's index
    but a third as thick, it is dropped; a word laid across in letters two thirds as tall as
    the index is wide, or a word stacked down the corner, is a joker."""
    line = (60.0, 80.0, 113.0, 90.0)  # 53 x 10 px: long enough, too thin
    assert _beside_the_ace(reader, line) == parse_cards("AS")
    assert _beside_the_ace(reader, (60.0, 80.0, 113.0, 100.0)) == parse_cards("AS SJ")  # 53 x 20 px
    assert _beside_the_ace(reader, (60.0, 80.0, 80.0, 160.0)) == parse_cards("AS SJ")  # 20 x 80 px, stacked
    assert _beside_the_ace(CardReader(joker_width=0.0), line) == parse_cards("AS SJ")


def test_another_view_adds_a_face_read_fairly_surely_but_a_joker_only_surely(reader):
    """The main view reads two cards; a card lying a quarter off it is read in the other
    view at 0.7: kept as a face, dropped as a joker (court art and printed words in a view
    turned off the cards read as jokers), kept as a joker at 0.9."""
    main = [Candidate((10.0, 10.0, 20.0, 40.0), 0.9, _probs("7H", 0.99), 0.0, 0.0), Candidate((40.0, 10.0, 50.0, 40.0), 0.9, _probs("8S", 0.97), 0.0, 0.0)]
    turned = (100.0, 10.0, 130.0, 20.0)  # in the frame of the view a quarter turn on

    def other(card, conf):
        return reader.reading(main + [Candidate(turned, 0.9, _probs(card, conf), 90.0, 90.0)]).cards

    assert other("QD", 0.7) == parse_cards("7H 8S QD")
    assert other("QD", 0.5) == parse_cards("7H 8S")
    assert other("BJ", 0.7) == parse_cards("7H 8S")
    assert other("BJ", 0.9) == parse_cards("7H 8S BJ")
    assert CardReader(other_view_conf=0.85).reading(main + [Candidate(turned, 0.9, _probs("QD", 0.7), 90.0, 90.0)]).cards == parse_cards("7H 8S")


def test_another_view_adds_the_next_index_of_a_fan_but_not_one_the_main_view_read(reader):
    """In a fanned hand the next card's index lies a third of an index height off one the main
    view read (realtrain's webcam frames: a 3H beside an 8H, 16 px apart at 50 px tall). Read
    fairly surely in the other view only, it is a card; read at the main view's index itself, it is
    that index read again."""
    eight = Candidate((235.0, 519.0, 265.0, 575.0), 0.9, _probs("8H", 0.93), 0.0, 0.0)  # 56 px tall

    def other_view_read_at(dx, dy):
        cx, cy = rotate_points(np.array([[250.0 + dx, 547.0 + dy]]), 90.0)[0]
        turned = (cx - 25.0, cy - 14.0, cx + 25.0, cy + 14.0)  # a 28 x 50 index, in the view a quarter turn on
        return reader.reading([eight, Candidate(turned, 0.9, _probs("3H", 0.8), 90.0, 90.0)]).cards

    assert other_view_read_at(-11.0, -12.0) == parse_cards("3H 8H")  # 16 px off: the next card
    assert other_view_read_at(-3.0, -3.0) == parse_cards("8H")  # 4 px off: the 8H's own index


def test_confidence_per_card_and_uncertain_below_the_threshold(reader):
    sure = [Candidate((10.0, 10.0, 20.0, 40.0), 0.9, _probs("7H", 0.99), 0.0, 0.0), Candidate((40.0, 10.0, 50.0, 40.0), 0.9, _probs("8S", 0.97), 0.0, 0.0)]
    reading = reader.reading(sure)
    assert reading.cards == parse_cards("7H 8S") and reading.card_confidence == [0.99, 0.97]
    assert reading.confidence == 0.97 and not reading.uncertain
    unsure = reader.reading(sure[:1] + [Candidate((40.0, 10.0, 50.0, 40.0), 0.9, _probs("8S", 0.8), 0.0, 0.0)])
    assert unsure.confidence == 0.8 and unsure.uncertain
    # A box the detector is sure of that no card explains lowers the confidence too.
    unread = reader.reading(sure + [Candidate((80.0, 10.0, 90.0, 40.0), 0.6, _probs("9D", 0.2), 0.0, 0.0)])
    assert unread.cards == parse_cards("7H 8S") and unread.confidence == 0.4 and unread.uncertain


@pytest.mark.parametrize("hand", ["7H 8S QD", "QD SJ BJ"])
def test_a_box_read_surely_in_the_first_view_is_sure_enough(hand):
    """With ``sure_enough_at``, a box the first view reads at least that surely as a face other
    than a joker is not read a quarter turn on, nor framed again: the other view gets the
    rest of the boxes alone, and the cards read are the same."""
    from recognizer.reader import LOOK_ALWAYS, _face, _turned_box

    image = lay_row(parse_cards(hand), HELD_OUT_PROCEDURAL[0])
    always, sparing = CardReader(sure_enough_at=LOOK_ALWAYS), CardReader(sure_enough_at=0.9)
    assert always.detect_once and sparing.detect_once
    every, some = always.candidates(image), sparing.candidates(image)
    first = some[0].view
    firsts = [c for c in some if c.view == first]
    others = {c.box for c in some if c.view != first}
    assert [c.box for c in firsts] == [c.box for c in every if c.view == first]
    other = next(c.view for c in every if c.view != first)
    enough = [c for c in firsts if sparing._sure_enough(c.probs)]
    assert enough and len(others) == len(firsts) - len(enough) and len(some) < len(every)
    assert not any(is_joker(_face(c.probs)) for c in enough)
    assert {_turned_box(c.box, round((other - first) / 90) * 90) for c in firsts if c not in enough} == others
    assert sparing.reading(some).cards == always.reading(every).cards == sorted(parse_cards(hand))
    if "SJ" in hand:  # a joker read surely in the first view is read in the other view too
        assert any(is_joker(_face(c.probs)) and c.probs.max() > 0.9 and not sparing._sure_enough(c.probs) for c in firsts)


def test_the_classifier_file_says_when_a_box_is_sure_enough(tmp_path):
    import shutil

    from recognizer.reader import LOOK_ALWAYS, MODELS

    for name in ("index-detector.onnx", "index-classifier.onnx"):
        shutil.copyfile(MODELS / name, tmp_path / name)
    assert CardReader(tmp_path).sure_enough_at == LOOK_ALWAYS  # no setting: every box read in every view
    (tmp_path / "index-classifier.json").write_text(json.dumps({"sure_enough_at": 0.9}))
    assert CardReader(tmp_path).sure_enough_at == 0.9
    (tmp_path / "index-classifier.json").write_text(json.dumps({"sure_enough_at": -0.5}))
    with pytest.raises(ValueError, match="sure_enough_at must be a number in"):
        CardReader(tmp_path)


def test_a_detector_that_learnt_quarter_turns_looks_once(tmp_path):
    """A detector file marked as trained on quarter-turned images (``index-detector.json``)
    runs in the reader's first view only; the view a quarter turn on classifies the same
    boxes, turned exactly. Unmarked, the same detector looks in both."""
    import shutil

    from recognizer.reader import MODELS, _turned_box

    for look in ("both", "once"):
        (tmp_path / look).mkdir()
        for name in ("index-detector.onnx", "index-classifier.onnx"):
            shutil.copyfile(MODELS / name, tmp_path / look / name)
    (tmp_path / "once" / "index-detector.json").write_text(json.dumps({"quarter_turns": True}))
    image = lay_row(parse_cards("7H 8S QD"), HELD_OUT_PROCEDURAL[0])
    readers = {look: CardReader(tmp_path / look) for look in ("both", "once")}
    assert not readers["both"].detect_once and readers["once"].detect_once
    looks = {}
    for name, r in readers.items():
        detect, calls = r.detector.detect, []
        r.detector.detect = lambda img, angle=0.0, detect=detect, calls=calls: calls.append(angle) or detect(img, angle)
        looks[name] = (calls, r.candidates(image))
    assert len(set(looks["both"][0])) == 2 and len(set(looks["once"][0])) == 1
    views = sorted({c.view for c in looks["once"][1]})
    assert len(views) == 2 and abs(abs(views[1] - views[0]) - 90) < 0.1
    by_view = {v: [c.box for c in looks["once"][1] if c.angle == v] for v in views}
    first = looks["once"][0][0]
    other = next(v for v in views if v != first)
    quarter = round((other - first) / 90) * 90
    assert by_view[other] == [_turned_box(b, quarter) for b in by_view[first]]
    assert all(np.allclose(_turned_box(_turned_box(b, quarter), -quarter), b) for b in by_view[first])
    (tmp_path / "once" / "index-detector.json").write_text(json.dumps({"quarter_turns": "yes"}))
    with pytest.raises(ValueError, match="quarter_turns must be true or false"):
        CardReader(tmp_path / "once")


@pytest.mark.parametrize("light_boxes, dark", [(1, False), (2, True)])
def test_one_light_crop_is_no_dark_deck_and_two_are(monkeypatch, light_boxes, dark):
    """A photo is read as a dark deck, its unsure light crops turned over, when more than half
    of its first view's boxes show light ink and at least two do (a card's two corners)."""
    import recognizer.reader as reader_module

    image = np.full((200, 400, 3), 30, np.uint8)
    boxes = []
    for k in range(light_boxes):
        x = 60 + 160 * k
        cv2.putText(image, "K", (x, 120), cv2.FONT_HERSHEY_SIMPLEX, 2.0, (235, 235, 235), 4)  # white ink on a black card
        boxes.append(((x - 10.0, 60.0, x + 60.0, 135.0), 0.9))
    reader = CardReader(passes=1, deskew=False, refine_below=-1.0)
    monkeypatch.setattr(reader, "_detect_view", lambda img, angle: list(boxes))
    turned = []

    def lightness_turned(pixels):  # counts crops turned over, not the photo (turned over too when its first view finds one box)
        if pixels.shape != image.shape:
            turned.append(pixels)
        return 255 - pixels

    monkeypatch.setattr(reader_module, "lightness_turned", lightness_turned)
    monkeypatch.setattr(reader, "_classify", lambda crops: np.full((len(crops), reader_module.N_CLASSES), 1.0 / reader_module.N_CLASSES, np.float32))
    reader.candidates(image)
    assert bool(turned) == dark
