"""Play alternatives from the reader's per-card alternatives (what the referee weighs)."""

from recognizer.alternatives import area_alternatives, played_alternatives
from recognizer.table.segment import AreaSegmenter, AreaState
from referee.cards import parse_cards
from referee.events import parse_event


def _c(text: str) -> tuple[int, ...]:
    return tuple(sorted(parse_cards(text)))


def test_each_reading_swaps_one_card_scaled_to_the_reads_confidence():
    cards = _c("7H 8S")
    per_card = [((cards[0], 0.9), (parse_cards("7D")[0], 0.09)), ((cards[1], 0.6), (parse_cards("8C")[0], 0.3))]
    found = dict(area_alternatives(cards, per_card, confidence=0.6))
    assert found == {_c("7H 8C"): 0.3, _c("7D 8S"): 0.06}
    assert list(dict(area_alternatives(cards, per_card, 0.6))) == [_c("7H 8C"), _c("7D 8S")]  # likeliest first


def test_unlikely_readings_are_left_out_and_at_most_eight_kept():
    cards = _c("3S")
    faces = parse_cards("4S 5S 6S 7S 8S 9S TS JS QS KS")
    per_card = [((cards[0], 0.5),) + tuple((f, 0.05) for f in faces) + ((parse_cards("AS")[0], 0.001),)]
    found = area_alternatives(cards, per_card, 0.5)
    assert len(found) == 8 and all(p == 0.05 for _, p in found)


def test_a_plays_alternatives_are_what_each_reading_adds_to_the_area():
    area = ((_c("5S 5S 9H"), 0.2), (_c("6S 6S 9D"), 0.1))  # the second does not hold the 5S
    assert played_alternatives(area, _c("5S")) == ((_c("5S 9H"), 0.2),)


def test_the_segmenter_sends_the_alternatives_of_its_weakest_read_with_the_play():
    seg = AreaSegmenter("S", stable_s=0.0)
    seg.feed(0.0, 0, AreaState(()))
    alternatives = ((_c("7D"), 0.3),)
    (obs,) = seg.feed(1.0, 1, AreaState(_c("7H")), confidence=0.6, alternatives=alternatives)
    event = obs.to_json()
    assert event["alternatives"] == [{"cards": ["7D"], "p": 0.3}]
    assert parse_event({**event, "t": 1.0}).alternatives[0].cards == _c("7D")
