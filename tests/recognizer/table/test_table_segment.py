"""The play-segmentation state machine, fed readings directly (no pixels)."""

from referee.cards import parse_cards

from recognizer.table.segment import AreaSegmenter, AreaState


def state(cards: str = "", *tokens: str) -> AreaState:
    return AreaState(tuple(sorted(parse_cards(cards))), frozenset(tokens))


def run(seg: AreaSegmenter, timeline: list[tuple[float, AreaState | None]], fps: float = 10.0):
    """Feed each (duration, state) for that long at ``fps``; return the observations."""
    found, t, frame = [], 0.0, 0
    for duration, s in timeline:
        for _ in range(round(duration * fps)):
            found += seg.feed(round(t, 6), frame, s)
            t += 1 / fps
            frame += 1
    return found


def test_a_stable_new_multiset_is_a_play_dated_when_it_first_showed():
    seg = AreaSegmenter("S", stable_s=0.5)
    found = run(seg, [(1.0, state()), (0.4, None), (1.0, state("7H 7D"))])
    assert [(o.type, o.seat, o.cards, o.frame) for o in found] == [("play", "S", tuple(sorted(parse_cards("7H 7D"))), 14)]
    assert abs(found[0].t - 1.4) < 1e-6


def test_nothing_counts_before_it_has_been_stable_long_enough():
    seg = AreaSegmenter("S", stable_s=0.5)
    assert run(seg, [(1.0, state()), (0.3, state("9S")), (0.1, None)]) == []


def test_what_lay_there_when_watching_began_is_no_play():
    seg = AreaSegmenter("E", stable_s=0.5)
    assert run(seg, [(1.0, state("5D 5C")), (0.3, None), (1.0, state("5D 5C"))]) == []


def test_flicker_and_single_frame_misreads_are_no_plays():
    seg = AreaSegmenter("S", stable_s=0.5)
    found = run(seg, [(1.0, state("3S 3H")), (0.1, state("3S 8H")), (0.1, None), (1.0, state("3S 3H"))])
    assert found == []


def test_a_hand_passing_over_changes_nothing():
    seg = AreaSegmenter("S", stable_s=0.5)
    found = run(seg, [(1.0, state()), (1.0, state("4C")), (0.5, None), (0.2, state()), (0.3, None), (1.0, state("4C"))])
    assert [(o.type, o.cards) for o in found] == [("play", tuple(parse_cards("4C")))]


def test_face_down_or_cleared_cards_are_no_play_and_later_reset_the_area():
    seg = AreaSegmenter("N", stable_s=0.5, hidden_s=3.0)
    found = run(seg, [(1.0, state()), (1.0, state("KS KH")), (4.0, state()), (1.0, state("KS"))])
    # KS long after the area was cleared is a new play, though it is part of the old one.
    assert [(o.type, o.cards) for o in found] == [
        ("play", tuple(sorted(parse_cards("KS KH")))), ("cleared", ()), ("play", tuple(parse_cards("KS")))]


def test_a_play_is_cleared_once_its_cards_stay_gone_for_the_hidden_time():
    seg = AreaSegmenter("N", stable_s=0.5, hidden_s=3.0)
    found = run(seg, [(1.0, state()), (1.0, state("KS KH")), (0.3, None), (8.0, state())])
    # gone at 2.3 s; a hand could rest over the cards until 5.3 s; then, once, it is cleared
    assert [(o.type, o.seat, o.cards) for o in found] == [("play", "N", tuple(sorted(parse_cards("KS KH")))),
                                                        ("cleared", "N", ())]
    assert abs(found[1].t - 5.3) < 1e-6


def test_no_clear_while_the_cards_come_back_within_the_hidden_time():
    seg = AreaSegmenter("N", stable_s=0.5, hidden_s=3.0)
    found = run(seg, [(1.0, state()), (1.0, state("KS KH")), (2.5, state()), (5.0, state("KS KH"))])
    assert [o.type for o in found] == ["play"]


def test_a_hand_resting_over_the_whole_play_does_not_replay_it():
    seg = AreaSegmenter("N", stable_s=0.5, hidden_s=3.0)
    found = run(
        seg,
        [(1.0, state()), (1.0, state("KS KH")), (2.0, state()), (1.0, state("KS KH")), (1.0, state()), (1.0, state("AS AH"))],
    )
    # The pair shows again after 2 s hidden: no play; AA after a short empty spell is one.
    assert [o.cards for o in found] == [tuple(sorted(parse_cards("KS KH"))), tuple(sorted(parse_cards("AS AH")))]


def test_part_of_the_last_play_hidden_is_no_play_and_its_return_neither():
    seg = AreaSegmenter("W", stable_s=0.5)
    found = run(seg, [(1.0, state()), (1.0, state("7S 7S 7D")), (1.0, state("7S")), (1.0, state("7S 7S 7D"))])
    assert [o.cards for o in found] == [tuple(sorted(parse_cards("7S 7S 7D")))]


def test_cards_added_beside_the_last_play_are_a_play_of_the_added_cards():
    seg = AreaSegmenter("S", stable_s=0.5)
    found = run(seg, [(1.0, state()), (1.0, state("3S")), (0.2, None), (1.0, state("3S 9H 9D"))])
    assert [o.cards for o in found] == [tuple(parse_cards("3S")), tuple(sorted(parse_cards("9H 9D")))]


def test_a_different_multiset_replaces_the_last_play():
    seg = AreaSegmenter("S", stable_s=0.5)
    found = run(seg, [(1.0, state()), (1.0, state("3S 3H")), (0.2, None), (1.0, state("QS QD"))])
    assert [o.cards for o in found][-1] == tuple(sorted(parse_cards("QS QD")))


def _cards(text: str) -> tuple:
    return tuple(sorted(parse_cards(text)))


def hold(seg: AreaSegmenter, t: float, frame: int, seconds: float, s: AreaState | None, **reading) -> list:
    """Feed ``s`` (with the reader's ``confidence``, ``alternatives``, ...) for ``seconds`` at 10 fps from ``t``."""
    return [o for k in range(round(seconds * 10)) for o in seg.feed(round(t + k / 10, 6), frame + k, s, **reading)]


def test_the_same_cards_read_anew_as_an_alternative_of_the_last_read_are_no_second_play():
    # E lays 4C 4C, read 4S 4C (4C 4C its alternative); laying a pass token on them later
    # moves the area, and it reads 4C 4C: the pass alone, not a second play by E.
    seg = AreaSegmenter("E", stable_s=0.5)
    misread = ((_cards("4C 4C"), 0.42), (_cards("4D 4C"), 0.02))
    found = hold(seg, 0.0, 0, 1.0, state()) + hold(seg, 1.0, 10, 1.0, state("4S 4C"), confidence=0.46, alternatives=misread)
    found += hold(seg, 2.0, 20, 0.2, None)
    # the new reading lists the old one among its own alternatives: that alone is enough too
    found += hold(seg, 2.2, 22, 1.0, state("4C 4C", "pass"), confidence=0.48, alternatives=((_cards("4S 4C"), 0.34),))
    assert [(o.type, o.cards) for o in found] == [("play", _cards("4S 4C")), ("pass", ())]
    # a card laid beside them later is a play of that card alone
    found = hold(seg, 3.2, 32, 0.2, None) + hold(seg, 3.4, 34, 1.0, state("4C 4C 9H", "pass"))
    assert [(o.type, o.cards) for o in found] == [("play", _cards("9H"))]


def test_a_new_reading_of_as_many_cards_that_no_read_listed_is_a_play():
    seg = AreaSegmenter("E", stable_s=0.5)
    found = hold(seg, 0.0, 0, 1.0, state()) + hold(seg, 1.0, 10, 1.0, state("4S 4C"), alternatives=((_cards("4C 4C"), 0.42),))
    found += hold(seg, 2.0, 20, 0.2, None) + hold(seg, 2.2, 22, 1.0, state("KS KD"))
    assert [(o.type, o.cards) for o in found] == [("play", _cards("4S 4C")), ("play", _cards("KS KD"))]


def test_two_identical_faces_count_twice():
    seg = AreaSegmenter("S", stable_s=0.5)
    found = run(seg, [(1.0, state()), (1.0, state("9S")), (0.2, None), (1.0, state("9S 9S"))])
    # 9S 9S strictly contains the last play 9S: the second 9S was added.
    assert [o.cards for o in found] == [tuple(parse_cards("9S")), tuple(parse_cards("9S"))]


def test_tokens_appearing_are_observations_once():
    seg = AreaSegmenter("N", stable_s=0.5)
    found = run(
        seg,
        [(1.0, state()), (1.0, state("", "pass")), (0.2, None), (1.0, state("", "pass")), (1.0, state("", "pass", "report"))],
    )
    assert [(o.type, o.seat) for o in found] == [("pass", "N"), ("report", "N")]


def test_a_token_taken_away_and_put_back_is_a_new_observation():
    seg = AreaSegmenter("N", stable_s=0.5)
    found = run(seg, [(1.0, state()), (1.0, state("", "pass")), (1.0, state()), (1.0, state("", "pass"))])
    assert [o.type for o in found] == ["pass", "pass"]


def test_play_confidence_is_the_lowest_reading_while_it_was_stable():
    seg = AreaSegmenter("S", stable_s=0.5)
    run(seg, [(1.0, state())])
    seg.feed(1.0, 10, state("2C"), 0.9)
    seg.feed(1.2, 12, state("2C"), 0.6)
    found = seg.feed(1.6, 16, state("2C"), 0.95)
    assert [(o.type, o.confidence) for o in found] == [("play", 0.6)]
    assert found[0].to_json()["confidence"] == 0.6


def test_observations_serialise_as_table_events_with_evidence():
    seg = AreaSegmenter("S", stable_s=0.0)
    seg.feed(0.0, 0, state())
    (play,) = seg.feed(2.5, 37, state("7H 7D"), 0.8)
    assert play.to_json("crops/000037_S.png") == {
        "type": "play",
        "seat": "S",
        "cards": ["7H", "7D"],
        "t": 2.5,
        "source": "camera",
        "confidence": 0.8,
        "evidence": {"frame": 37, "crop": "crops/000037_S.png"},
    }


def test_a_play_read_uncertain_while_it_stood_still_is_marked_uncertain():
    seg = AreaSegmenter("S", stable_s=0.5)
    run(seg, [(1.0, state())])
    seg.feed(1.0, 10, state("2C"), 0.97)
    seg.feed(1.2, 12, state("2C"), 0.9, uncertain=True)
    (play,) = seg.feed(1.6, 16, state("2C"), 0.99)
    assert play.uncertain and play.to_json()["uncertain"] is True
    seg.feed(2.0, 20, state("2C 3C"), 0.98)
    (sure,) = seg.feed(2.6, 26, state("2C 3C"), 0.99)
    assert not sure.uncertain and "uncertain" not in sure.to_json()
