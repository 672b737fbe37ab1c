import pytest

from referee.cards import (
    BJ,
    DOUBLE_DECK,
    FACES,
    SJ,
    CardError,
    card_name,
    cards_name,
    parse_card,
    parse_cards,
    parse_level,
    rank_of,
    wildcard,
)
from referee.seats import SeatError, next_seat, parse_seat, partner, previous_seat, side_of


def test_every_face_round_trips():
    assert len(FACES) == 54 and len(set(FACES)) == 54
    for card in FACES:
        assert parse_card(card_name(card)) == card


def test_double_deck_has_108_cards_each_face_twice():
    assert len(DOUBLE_DECK) == 108
    assert all(DOUBLE_DECK.count(face) == 2 for face in FACES)


def test_jokers_rank_above_aces():
    assert parse_card("SJ") == SJ and parse_card("BJ") == BJ
    assert rank_of(SJ) == 13 and rank_of(BJ) == 14 and rank_of(parse_card("AS")) == 12


@pytest.mark.parametrize("token", ["1S", "10H", "TX", "", "S", "JJ", "RJ", "TH7"])
def test_bad_tokens_are_named_in_the_error(token):
    with pytest.raises(CardError, match="not a card"):
        parse_card(token)


def test_parse_cards_accepts_spaces_commas_and_lists_and_sorts_names():
    assert parse_cards("th, 2s BJ") == [parse_card("TH"), parse_card("2S"), BJ]
    assert cards_name(parse_cards(["BJ", "2S", "TH"])) == "2S TH BJ"


def test_levels_and_wildcard():
    assert card_name(wildcard(parse_level("5"))) == "5H"
    assert parse_level("10") == parse_level("T")
    with pytest.raises(CardError, match="not a level"):
        parse_level("SJ")


def test_seats_follow_play_order_s_e_n_w():
    assert [next_seat(s) for s in "SENW"] == ["E", "N", "W", "S"]
    assert previous_seat("S") == "W" and partner("E") == "W" and side_of("N") == "NS"
    with pytest.raises(SeatError, match="not a seat"):
        parse_seat("X")
